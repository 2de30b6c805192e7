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

/**
 * Every code the runtime and its built-in skills throw, one line each (docs/cli.md, "Exit
 * codes"; the exit code each maps to is exitCodeFor's, below). A skill may throw a code of its
 * own (`E_DEMO`): AgentAppsError's `code` stays a string, and its constructor takes
 * `ErrorCode | (string & {})` so that the runtime's own codes are checked and completed.
 */
export type ErrorCode =
  /** A skill ref that names nothing loaded (exit 2). */
  | 'E_TOOL_NOT_FOUND'
  /** Malformed frontmatter or configuration, unknown interpolation variables, `$order` cycles (exit 2). */
  | 'E_CONFIG'
  /** A command line or call that cannot be run as given (exit 2). */
  | 'E_USAGE'
  /** Args (exit 2) or a result (exit 1) that violate their JSON Schema. */
  | 'E_VALIDATION'
  /** A refusal, not a failure: `ctx.manager.abort(reason)` (exit 3). */
  | 'E_ABORTED'
  /** A call outside the caller's `allowed-tools`. */
  | 'E_ALLOWED_TOOLS'
  /** A ref the trust policy does not let this caller reach (a downloaded skill, an untrusted source). */
  | 'E_UNTRUSTED_REF'
  /** The sandbox refused or failed an operation (a path, a process, a network host). */
  | 'E_SANDBOX'
  /** A skill threw something without a code of its own. */
  | 'E_SKILL'
  /** An MCP server could not be started, reached or spoken to. */
  | 'E_MCP'
  /** An MCP server's tool answered with an error. */
  | 'E_MCP_TOOL'
  /** The agent provider (a model, an ACP agent) failed. */
  | 'E_MODEL'
  /** A replayed model turn whose request is not the recorded one (with a diff in `detail`). */
  | 'E_CASSETTE_DRIFT'
  /** A resumed run cannot go on from its journal: an unverified call nobody let run again, or a journal the run no longer matches (exit 1; docs/runs.md). */
  | 'E_RESUME'
  /** An agent's limit (maxSteps …) is exhausted. */
  | 'E_AGENT_LIMIT'
  /** The person running agent-apps denied an approval. */
  | 'E_DENIED'
  /** A question for a person, and no person to ask (exit 2). */
  | 'E_NOT_INTERACTIVE'
  /** The workspace's own skills or configuration are not trusted yet (exit 2). */
  | 'E_UNTRUSTED_WORKSPACE'
  /** A write to a part of the context that is read-only (`args`, `run`, `locals.history`). */
  | 'E_IMMUTABLE'
  /** `target.manager.next()` outside a middleware invocation. */
  | 'E_NOT_MIDDLEWARE'
  /** A middleware returned without next(), finish() or abort() (logged, not thrown). */
  | 'E_PIPELINE_SHORT_CIRCUITED'
  /** A middleware called next() twice (logged, not thrown). */
  | 'E_NEXT_CALLED_TWICE'
  /** A worker's request that is unsigned or badly signed. */
  | 'E_SIGNATURE'
  /** The event bus (NATS) failed: connection, authentication, an emit. */
  | 'E_EVENTS'
  /** An event handler threw without a code of its own (logged). */
  | 'E_HANDLER'
  /** A remote call with no result in time, or a worker's run over --max-ms. */
  | 'E_TIMEOUT'
  /** A remote call that failed without an error. */
  | 'E_REMOTE'
  /** A worker's malformed request. */
  | 'E_BAD_REQUEST'
  /** A worker's result over the size a reply may carry. */
  | 'E_RESULT_TOO_LARGE'
  /** A request redelivered too often, moved to the dead-letter queue. */
  | 'E_DEAD_LETTER'
  /** The run was interrupted (SIGINT, exit 130). */
  | 'E_INTERRUPTED'
  /** The run was terminated (SIGTERM, exit 143). */
  | 'E_TERMINATED'
  /** A broken invariant inside the runtime. */
  | 'E_INTERNAL'
  /** Built-in skills' own: file-read cannot read a file. */
  | 'E_FILE'
  /** Built-in skills' own: shell cannot start its command. */
  | 'E_SHELL'
  /** Built-in skills' own: event-ack names a message that is not pending. */
  | 'E_UNKNOWN_EVENT'
  /** Built-in skills' own: context-manager called without a calling context. */
  | 'E_CONTEXT'
  /** Built-in skills' own: session's record of a failure without a code. */
  | 'E_FAILED';

export class AgentAppsError extends Error {
  /** An ErrorCode, or a skill's own code (`E_DEMO`). */
  code: string;
  place?: Place;
  /**
   * Lines for a person under the one-line message — the unified diff of E_CASSETTE_DRIFT (a
   * replayed turn whose request is not the recorded one, exit 1). The CLI prints them after the
   * error line.
   */
  detail?: string;
  constructor(code: ErrorCode | (string & {}), message: string, options?: { cause?: unknown; place?: Place; detail?: string }) {
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
export function toError(value: unknown, code: ErrorCode | (string & {}) = 'E_SKILL'): Error & { code?: string } {
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

/** The CLI's exit codes (docs/cli.md, "Exit codes"). */
export const EXIT = { ok: 0, failed: 1, usage: 2, refused: 3, interrupted: 130, terminated: 143 } as const;

/** Codes that mean "not run as asked" (exit 2), commander's parse errors among them. */
const USAGE_CODES = new Set<string>(['E_TOOL_NOT_FOUND', 'E_CONFIG', 'E_USAGE', 'E_NOT_INTERACTIVE', 'E_UNTRUSTED_WORKSPACE', 'commander.unknownOption', 'commander.missingArgument', 'commander.unknownCommand', 'commander.invalidArgument', 'commander.optionMissingArgument', 'commander.excessArguments', 'commander.missingMandatoryOptionValue'] satisfies (ErrorCode | `commander.${string}`)[]);

/** The exit code of an error: kept beside the codes so a new code is mapped where it is declared. */
export function exitCodeFor(err: unknown): number {
  if (err instanceof AbortError || (err as { code?: string })?.code === 'E_ABORTED') return EXIT.refused;
  if (err instanceof ValidationError) return err.phase === 'args' ? EXIT.usage : EXIT.failed;
  const code = (err as { code?: string })?.code;
  if (code && USAGE_CODES.has(code)) return EXIT.usage;
  return EXIT.failed;
}
