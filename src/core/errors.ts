// Errors are values with a code and a place (docs/middleware.md, "Errors"). Every error the runtime throws
// extends AgentAppsError and carries a stable `code`; the CLI maps codes to exit codes.

export interface Place {
  file?: string;
  line?: number;
  column?: number;
  key?: string;
  /** Where the value came from when no file did: `--set`, `programmatic:NAME`. */
  source?: string;
}

export class AgentAppsError extends Error {
  code: string;
  place?: Place;
  /**
   * Lines for a person under the one-line message — the unified diff of E_CASSETTE_DRIFT (a
   * replayed turn whose request is not the recorded one, exit 1). The CLI prints them after the
   * error line.
   */
  detail?: string;
  constructor(code: string, message: string, options?: { cause?: unknown; place?: Place; detail?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    if (options?.place) this.place = options.place;
    if (options?.detail) this.detail = options.detail;
  }
}

/** Malformed frontmatter, unknown interpolation variables, `$order` cycles … (exit 2). */
export class ConfigurationError extends AgentAppsError {
  constructor(message: string, options?: { cause?: unknown; place?: Place }) {
    super('E_CONFIG', withPlace(message, options?.place), options);
  }
}

export class ToolNotFoundError extends AgentAppsError {
  ref: string;
  suggestions: string[];
  constructor(ref: string, suggestions: string[] = [], detail?: string) {
    const hint = suggestions.length ? ` — did you mean ${suggestions.map((s) => `'${s}'`).join(', ')}?` : '';
    super('E_TOOL_NOT_FOUND', `unknown skill '${ref}'${detail ? ` (${detail})` : ''}${hint}`);
    this.ref = ref;
    this.suggestions = suggestions;
  }
}

export interface SchemaError {
  instancePath: string;
  message?: string;
  keyword: string;
  params: Record<string, unknown>;
  schemaPath: string;
}

/** Args or a result that violate a JSON Schema; `.errors` is ajv's list (docs/architecture.md). */
export class ValidationError extends AgentAppsError {
  errors: SchemaError[];
  /** `args` (a usage error, exit 2) or `returns` (the skill failed, exit 1). */
  phase: 'args' | 'returns';
  constructor(what: string, errors: SchemaError[], phase: 'args' | 'returns' = 'args') {
    super('E_VALIDATION', `${what}: ${formatSchemaErrors(errors)}`);
    this.errors = errors;
    this.phase = phase;
  }
}

/** Refusal, not failure (docs/middleware.md): `ctx.manager.abort(reason)` makes `invoke` reject with this. */
export class AbortError extends AgentAppsError {
  reason: unknown;
  constructor(reason?: unknown) {
    super('E_ABORTED', `aborted${reason === undefined ? '' : `: ${describeReason(reason)}`}`);
    this.reason = reason;
  }
}

export function formatSchemaErrors(errors: SchemaError[]): string {
  return errors
    .map((e) => {
      const where = e.instancePath || '(root)';
      if (e.keyword === 'additionalProperties') return `${where}: unknown property '${String(e.params.additionalProperty)}'`;
      if (e.keyword === 'required') return `${where}: missing required property '${String(e.params.missingProperty)}'`;
      return `${where} ${e.message ?? e.keyword}`;
    })
    .join('; ');
}

function withPlace(message: string, place?: Place): string {
  if (!place?.file) {
    if (!place?.source) return message;
    // A flag reads as written (`--set model.provider: …`); a tool without a file as `programmatic:x (key): …`.
    if (!place.key) return `${place.source}: ${message}`;
    return place.source.startsWith('--') ? `${place.source} ${place.key}: ${message}` : `${place.source} (${place.key}): ${message}`;
  }
  let where = place.file;
  if (place.line !== undefined) where += `:${place.line}${place.column !== undefined ? `:${place.column}` : ''}`;
  if (place.key) where += ` (${place.key})`;
  return `${where}: ${message}`;
}

function describeReason(reason: unknown): string {
  if (reason instanceof Error) return reason.message;
  if (typeof reason === 'string') return reason;
  try {
    return JSON.stringify(reason);
  } catch {
    return String(reason);
  }
}

/**
 * Anything a skill threw, as an Error with a code: a non-Error becomes one, and an Error without a
 * string code (a plain `throw new Error('x')`) is given `code` (E_SKILL) in place, so that the
 * same failure has the same code in every output — the stderr line, --json, stream-json, MCP, a
 * worker's result and `agent-apps test`'s `expect: { error }` (docs/concepts.md, "Errors and exit
 * codes"). The error itself is kept (its class, stack and cause), only its code is added.
 */
export function toError(value: unknown, code = 'E_SKILL'): Error & { code?: string } {
  if (value instanceof Error) {
    const own = (value as { code?: unknown }).code;
    if (typeof own !== 'string' || !own) {
      try {
        Object.defineProperty(value, 'code', { value: code, writable: true, enumerable: true, configurable: true });
      } catch {
        // A frozen error cannot take a code: it stays as it was.
      }
    }
    return value;
  }
  return new AgentAppsError(code, typeof value === 'string' ? value : describeReason(value));
}

/** No person to ask: not a terminal, and no asker given to createRuntime. */
export function notInteractive(what: string): AgentAppsError {
  return new AgentAppsError('E_NOT_INTERACTIVE', `${what}, but there is no person to ask (not a terminal)`);
}
