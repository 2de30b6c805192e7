// `run SKILL --PARAM VALUE …` (docs/cli.md): Node's own `util.parseArgs` tokenizes; the skill's
// `params` schema decides types. `--flag` alone is true, a repeated flag is an array,
// `--obj.key v` nests, `--args-json '{…}'` (or `-` for stdin) supplies JSON. Global options may
// follow the skill name too (`run greet --name Ada --json`); `splitRunTokens` separates them.
import { parseArgs } from 'node:util';
import { AgentAppsError, ValidationError } from '../../core/errors.ts';
import { isPlainObject, setPath } from '../../core/path.ts';
import type { JsonObject } from '../../core/types.ts';
import type { GlobalOptions } from './runtime-options.ts';
import { UNSAFE_KEYS, findUnsafeKey } from './unsafe-keys.ts';
import { closest } from './suggest.ts';

export { UNSAFE_KEYS, findUnsafeKey } from './unsafe-keys.ts';

type Schema = Record<string, unknown>;

/**
 * Global options also accepted after `run SKILL` — unless the skill declares a param of that name.
 * `ours`: the CLI's even then (docs/ci.md: --output-format after the skill name is never a skill arg).
 */
const LATE_OPTIONS: Record<string, { key: keyof GlobalOptions | 'argsJson' | 'help' | 'record' | 'resume' | 'rerunUnverified'; kind: 'flag' | 'value' | 'list'; ours?: true }> = {
  json: { key: 'json', kind: 'flag' },
  debug: { key: 'debug', kind: 'flag' },
  profile: { key: 'profile', kind: 'flag' },
  'no-color': { key: 'color', kind: 'flag' },
  'log-level': { key: 'logLevel', kind: 'value' },
  set: { key: 'set', kind: 'list' },
  path: { key: 'path', kind: 'list' },
  cwd: { key: 'cwd', kind: 'value' },
  approve: { key: 'approve', kind: 'list' },
  'output-format': { key: 'outputFormat', kind: 'value', ours: true },
  'fail-on-denial': { key: 'failOnDenial', kind: 'flag', ours: true },
  'approvals-via': { key: 'approvalsVia', kind: 'value', ours: true },
  'trust-workspace': { key: 'trustWorkspace', kind: 'flag' },
  record: { key: 'record', kind: 'value', ours: true },
  resume: { key: 'resume', kind: 'value', ours: true },
  'rerun-unverified': { key: 'rerunUnverified', kind: 'flag', ours: true },
  'args-json': { key: 'argsJson', kind: 'value', ours: true },
  help: { key: 'help', kind: 'flag', ours: true },
};

export interface RunTokens {
  /** Global options found among the skill's tokens (`run greet --name Ada --json`). */
  globals: GlobalOptions;
  argsJson?: string;
  /** `--record PATH`: `--set model.record=PATH` (docs/ci.md). */
  record?: string;
  /** `--resume ID` and `--rerun-unverified` (docs/runs.md). */
  resume?: string;
  rerunUnverified?: boolean;
  help: boolean;
  /** What is left: the skill's own `--PARAM VALUE` tokens. */
  tokens: string[];
}

/** Whether any token before `--` could be a global option or `--help` (else there is nothing to split). */
export function mentionsRunOption(tokens: string[]): boolean {
  for (const t of tokens) {
    if (t === '--') return false;
    if (t === '-h' || Object.hasOwn(LATE_OPTIONS, /^--([a-z][a-z-]*)/.exec(t)?.[1] ?? '')) return true;
  }
  return false;
}

/**
 * Splits what follows `run SKILL` into global options and the skill's args. A name the skill's
 * params declare (`--path` for file-read) is always the skill's; `--args-json` and `--help`
 * always the CLI's; nothing after `--` is the CLI's.
 */
export function splitRunTokens(tokens: string[], params: unknown): RunTokens {
  const props = isPlainObject(params) && isPlainObject(params.properties) ? (params.properties as Record<string, unknown>) : {};
  const out: RunTokens = { globals: {}, help: false, tokens: [] };
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token === '--') {
      out.tokens.push(...tokens.slice(i));
      break;
    }
    const m = /^--([a-z][a-z-]*)(?:=(.*))?$/s.exec(token);
    const name = token === '-h' ? 'help' : m?.[1];
    const spec = name === undefined ? undefined : LATE_OPTIONS[name];
    const declared = name !== undefined && (Object.hasOwn(props, name) || (name === 'no-color' && Object.hasOwn(props, 'color')));
    if (!spec || (declared && !spec.ours)) {
      out.tokens.push(token);
      continue;
    }
    if (spec.kind === 'flag') {
      if (m?.[2] !== undefined) throw new AgentAppsError('E_USAGE', `--${name} takes no value`);
      if (spec.key === 'help') out.help = true;
      else if (spec.key === 'rerunUnverified') out.rerunUnverified = true;
      else if (spec.key === 'color') out.globals.color = false;
      else (out.globals as Record<string, unknown>)[spec.key] = true;
      continue;
    }
    let value = m?.[2];
    if (value === undefined) {
      if (i + 1 >= tokens.length) throw new AgentAppsError('E_USAGE', `--${name} needs a value`);
      value = tokens[++i]!;
    }
    if (spec.key === 'argsJson') out.argsJson = value;
    else if (spec.key === 'record') out.record = value;
    else if (spec.key === 'resume') out.resume = value;
    else if (spec.kind === 'list') {
      const key = spec.key as 'set' | 'path' | 'approve';
      out.globals[key] = [...(out.globals[key] ?? []), value];
    } else (out.globals as Record<string, unknown>)[spec.key] = value;
  }
  return out;
}

export function parseSkillArgs(tokens: string[], params: unknown): JsonObject {
  const schema = isPlainObject(params) ? (params as Schema) : undefined;
  const props = isPlainObject(schema?.properties) ? (schema!.properties as Record<string, Schema>) : {};
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> = {};
  for (const [name, prop] of Object.entries(props)) {
    const t = typeOf(prop);
    options[name] = t === 'boolean' ? { type: 'boolean' } : { type: 'string', multiple: true };
  }
  const { tokens: parsed } = parseArgs({ args: tokens, options, strict: false, allowPositionals: true, tokens: true });
  const out: JsonObject = {};
  const positionals: string[] = [];
  const seen = new Map<string, unknown[]>();
  const add = (name: string, value: unknown) => {
    const list = seen.get(name) ?? [];
    list.push(value);
    seen.set(name, list);
  };
  for (let i = 0; i < parsed.length; i++) {
    const t = parsed[i]!;
    if (t.kind === 'option' && t.value === undefined && typeOf(propFor(props, t.name)) !== 'boolean') {
      // `--offset -5`: parseArgs reads `-5` as short options; a negative number is the value.
      const next = parsed[i + 1];
      const raw = next ? tokens[next.index] : undefined;
      if (next?.kind === 'option' && raw !== undefined && NEGATIVE_NUMBER.test(raw)) {
        add(t.name, raw);
        while (parsed[i + 1]?.index === next.index) i++;
        continue;
      }
    }
    if (t.kind === 'positional') {
      positionals.push(t.value);
      continue;
    }
    if (t.kind === 'option-terminator') continue;
    const name = t.name;
    if (t.value !== undefined) {
      add(name, t.value);
      continue;
    }
    const prop = propFor(props, name);
    const next = parsed[i + 1];
    // `--flag` alone is true (`--flag true|false` spelled out works too); an unknown or
    // non-boolean flag takes the following word as its value.
    if (typeOf(prop) === 'boolean' && next?.kind === 'positional' && (next.value === 'true' || next.value === 'false')) {
      add(name, next.value === 'true');
      i++;
    } else if (typeOf(prop) !== 'boolean' && next && next.kind === 'positional' && !(name.startsWith('no-') && !prop)) {
      add(name, next.value);
      i++;
    } else if (name.startsWith('no-') && typeOf(propFor(props, name.slice(3))) === 'boolean') {
      add(name.slice(3), false);
    } else if (needsValue(prop)) {
      // A declared string, number … param given as a bare flag: say so, not "/name must be string".
      throw new AgentAppsError('E_USAGE', `--${name} needs a value (${describeType(prop!)})`);
    } else add(name, true);
  }
  for (const [name, values] of seen) {
    if (name === 'args-json') continue;
    if (name.split('.').some((part) => !part || UNSAFE_KEYS.has(part))) throw new AgentAppsError('E_USAGE', `--${name}: not a usable arg name`);
    const prop = propFor(props, name);
    if (!prop) refuseMisspelled(name, props, schema);
    // A repeated flag is an array — unless the param takes one value: then repeating it is a
    // mistake to report, not a choice to make silently (docs/cli.md, "repeated flags").
    if (values.length > 1 && prop && !admitsArray(prop)) {
      throw new AgentAppsError('E_USAGE', `--${name} was given ${values.length} times, but it takes one value (${describeType(prop)}) — give it once`);
    }
    const isArray = typeOf(prop) === 'array';
    const items = isArray && isPlainObject(prop?.items) ? (prop!.items as Schema) : undefined;
    // An array param given once as a JSON array (`--tags '["a","b"]'`) is that array.
    const whole = isArray && values.length === 1 ? jsonArray(values[0]) : undefined;
    const coerced = whole ?? values.map((v) => coerce(v, isArray ? items : prop, name));
    const value = isArray || coerced.length > 1 ? coerced : coerced[0];
    refuseUnsafeKeys(value, `--${name}`, name);
    if (name.includes('.')) setPath(out, name, value);
    else out[name] = value;
  }
  if (positionals.length) {
    throw new AgentAppsError('E_USAGE', `unexpected argument${positionals.length > 1 ? 's' : ''} ${positionals.map((p) => `'${p}'`).join(' ')} — pass args as --NAME VALUE`);
  }
  return out;
}

const NEGATIVE_NUMBER = /^-(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** The JSON Schema types a param admits ([] when it does not say). */
function typesOf(prop: Schema): string[] {
  if (typeof prop.type === 'string') return [prop.type];
  if (Array.isArray(prop.type)) return prop.type.filter((t): t is string => typeof t === 'string');
  if (Array.isArray(prop.enum)) return [...new Set(prop.enum.map((e) => (e === null ? 'null' : Array.isArray(e) ? 'array' : typeof e === 'number' ? 'number' : typeof e)))];
  return [];
}

/** A declared param that a bare `--flag` (true) cannot satisfy. */
function needsValue(prop: Schema | undefined): boolean {
  if (!prop) return false;
  const types = typesOf(prop);
  return types.length > 0 && !types.includes('boolean');
}

function admitsArray(prop: Schema): boolean {
  const types = typesOf(prop);
  return types.length === 0 || types.includes('array');
}

function describeType(prop: Schema): string {
  if (Array.isArray(prop.enum)) return `one of ${prop.enum.map((e) => (typeof e === 'string' ? e : JSON.stringify(e))).join(', ')}`;
  const types = typesOf(prop).filter((t) => t !== 'null');
  return types.length ? `a ${types.join(' or ')}` : 'a value';
}

/**
 * An undeclared flag that is a declared one mis-cased (`--Name`), or — where the schema allows no
 * other properties — a near miss (`--nmae`), is a usage error that names the flag it meant.
 */
function refuseMisspelled(name: string, props: Record<string, Schema>, schema: Schema | undefined): void {
  const match = closest(name, declaredFlags(props), { nearMisses: schema?.additionalProperties === false }) ?? closest(name, Object.keys(LATE_OPTIONS), { nearMisses: false });
  if (match !== undefined) throw new AgentAppsError('E_USAGE', `unknown flag --${name} — did you mean --${match}?`);
}

/** Every flag a schema declares, nested properties dotted (`opts.format`). */
function declaredFlags(props: Record<string, Schema>, prefix = '', depth = 0): string[] {
  return Object.entries(props).flatMap(([k, p]) => {
    const nested = depth < 4 && isPlainObject(p) && isPlainObject(p.properties) ? declaredFlags(p.properties as Record<string, Schema>, `${prefix}${k}.`, depth + 1) : [];
    return [prefix + k, ...nested];
  });
}

/** Keys that copying with assignment semantics (`o[k] = v`, Object.assign, a deep merge) would turn into a prototype. */
/**
 * CLI args are refused, not copied, when they hold a `__proto__` / `constructor` / `prototype`
 * key (docs/security.md): E_VALIDATION in the args phase (exit 2), naming where.
 */
function refuseUnsafeKeys(value: unknown, what: string, prefix = ''): void {
  const at = findUnsafeKey(value);
  if (at === undefined) return;
  const full = prefix ? `${prefix}.${at}` : at;
  const key = full.slice(full.lastIndexOf('.') + 1);
  throw new ValidationError(what, [
    { instancePath: `/${full.split('.').join('/')}`, keyword: 'propertyNames', params: { propertyName: key }, schemaPath: '#/propertyNames', message: `the key '${key}' is not allowed in args (it could set a prototype)` },
  ]);
}

function jsonArray(value: unknown): unknown[] | undefined {
  if (typeof value !== 'string' || !value.trimStart().startsWith('[')) return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function propFor(props: Record<string, Schema>, name: string): Schema | undefined {
  if (!name.includes('.')) return props[name];
  let cur: Schema | undefined = { properties: props };
  for (const part of name.split('.')) {
    const p: unknown = isPlainObject(cur?.properties) ? (cur!.properties as Record<string, unknown>)[part] : undefined;
    cur = isPlainObject(p) ? (p as Schema) : undefined;
    if (!cur) return undefined;
  }
  return cur;
}

function typeOf(prop: Schema | undefined): string | undefined {
  if (!prop) return undefined;
  const t = prop.type;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) return t.find((x) => x !== 'null') as string | undefined;
  if (prop.enum && Array.isArray(prop.enum) && prop.enum.every((e) => typeof e === 'string')) return 'string';
  return undefined;
}

function coerce(value: unknown, prop: Schema | undefined, name: string): unknown {
  if (typeof value !== 'string') return value;
  const t = typeOf(prop);
  switch (t) {
    case 'string':
      return value;
    case 'number':
    case 'integer':
      // Decimal only (Number() would also take 0x10, 0b1, ' 1 ' and ''); anything else stays a
      // string, so validate-args reports the violation in the schema's words.
      return DECIMAL.test(value) ? Number(value) : value;
    case 'boolean':
      if (value === 'true') return true;
      if (value === 'false') return false;
      return value;
    case 'object':
    case 'array':
      try {
        return JSON.parse(value);
      } catch {
        throw new AgentAppsError('E_USAGE', `--${name}: expected JSON for an ${t}, got '${value}'`);
      }
    default:
      // No schema: numbers, booleans and JSON stay strings unless they are obviously JSON.
      return value;
  }
}

/** `--args-json '{…}'`, or `-` to read JSON from stdin. */
export async function readArgsJson(value: string | undefined, stdin: NodeJS.ReadableStream = process.stdin): Promise<JsonObject | undefined> {
  if (value === undefined) return undefined;
  let text = value;
  if (value === '-') {
    const chunks: Buffer[] = [];
    for await (const c of stdin) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
    text = Buffer.concat(chunks).toString('utf8');
    if (text.trim() === '') throw new AgentAppsError('E_USAGE', `--args-json -: stdin was empty — pipe a JSON object into it, e.g. echo '{"name":"Ada"}' | agent-apps run SKILL --args-json -`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new AgentAppsError('E_USAGE', `--args-json: not valid JSON (${(err as Error).message})`);
  }
  if (!isPlainObject(parsed)) throw new AgentAppsError('E_USAGE', '--args-json must be a JSON object');
  refuseUnsafeKeys(parsed, '--args-json');
  return parsed as JsonObject;
}
