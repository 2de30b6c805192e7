// `run SKILL --PARAM VALUE …` (SPEC §12): Node's own `util.parseArgs` tokenizes; the skill's
// `params` schema decides types. `--flag` alone is true, a repeated flag is an array,
// `--obj.key v` nests, `--args-json '{…}'` (or `-` for stdin) supplies JSON.
import { parseArgs } from 'node:util';
import { AgentAppsError } from '../kernel/errors.ts';
import { isPlainObject, setPath, getPath } from '../kernel/path.ts';
import type { JsonObject } from '../kernel/types.ts';

type Schema = Record<string, unknown>;

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
    // `--flag` alone is true; an unknown or non-boolean flag takes the following word as value.
    if (typeOf(prop) !== 'boolean' && next && next.kind === 'positional' && !(name.startsWith('no-') && !prop)) {
      add(name, next.value);
      i++;
    } else if (name.startsWith('no-') && typeOf(propFor(props, name.slice(3))) === 'boolean') {
      add(name.slice(3), false);
    } else add(name, true);
  }
  for (const [name, values] of seen) {
    if (name === 'args-json') continue;
    const prop = propFor(props, name);
    const isArray = typeOf(prop) === 'array';
    const coerced = values.map((v) => coerce(v, isArray ? (isPlainObject(prop?.items) ? (prop!.items as Schema) : undefined) : prop, name));
    const value = isArray || coerced.length > 1 ? coerced : coerced[0];
    if (name.includes('.')) {
      const existing = getPath(out, name);
      setPath(out, name, existing === undefined ? value : value);
    } else out[name] = value;
  }
  if (positionals.length) {
    throw new AgentAppsError('E_USAGE', `unexpected argument${positionals.length > 1 ? 's' : ''} ${positionals.map((p) => `'${p}'`).join(' ')} — pass args as --NAME VALUE`);
  }
  return out;
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
    case 'integer': {
      const n = Number(value);
      // Leave it as a string so validate-args reports the violation with the schema's words.
      return value.trim() !== '' && Number.isFinite(n) ? n : value;
    }
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
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new AgentAppsError('E_USAGE', `--args-json: not valid JSON (${(err as Error).message})`);
  }
  if (!isPlainObject(parsed)) throw new AgentAppsError('E_USAGE', '--args-json must be a JSON object');
  return parsed as JsonObject;
}
