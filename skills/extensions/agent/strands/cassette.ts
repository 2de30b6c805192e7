// The cassette format (docs/agents.md): the model's side of an agent run, one entry per model
// response. Shared by the replay model (reads) and the recorder (writes). No SDK import here,
// so reading or writing a cassette stays cheap.

import { readFile } from 'node:fs/promises';
import { ConfigurationError } from 'agent-apps';
import type { RecordedRequest } from './request.ts';
import { yaml } from './yaml.ts';

export interface CassetteTurn {
  /** Assistant text of this model response. */
  text?: string;
  /** The code the model passed to the `invoke` tool; absent = the turn ends (endTurn). */
  invoke?: string;
  /** What the model was sent for this response (recorded cassettes; docs/ci.md): replay checks it. */
  request?: RecordedRequest;
}

/** The comment a recorded cassette starts with: what `request` is. */
export const RECORDED_HEADER = [
  ' Recorded by agent-apps (model.record): one entry per model response — its text, the code of its',
  ' invoke call, and the request it answered. Replay checks request.sha256 and fails with',
  ' E_CASSETTE_DRIFT when the skill sends something else (model.replay: loose skips the check).',
  ' request.text is the whole request; request.more is what it adds to the previous one.',
].join('\n');

export interface Cassette {
  turns: CassetteTurn[];
}

/** Parses and checks cassette YAML; `file` names the source in errors. */
export function parseCassette(source: string, file = 'cassette'): Cassette {
  const doc = yaml().parseDocument(source);
  if (doc.errors.length > 0) {
    const err = doc.errors[0]!;
    const line = err.linePos?.[0]?.line;
    const what = err.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    throw new ConfigurationError(`malformed cassette YAML: ${what}`, {
      place: { file, ...(line !== undefined ? { line } : {}) },
    });
  }
  const value: unknown = doc.toJS();
  // A cassette is a list of model turns (docs/agents.md): a bare list is read as `turns`.
  const turns = Array.isArray(value) ? value : isRecord(value) ? value.turns : undefined;
  if (!Array.isArray(turns)) {
    throw new ConfigurationError("a cassette needs a 'turns' list: turns: [{ text?, invoke? }, …]", {
      place: { file, key: 'turns' },
    });
  }
  const out: CassetteTurn[] = [];
  turns.forEach((turn: unknown, i) => {
    if (!isRecord(turn)) throw bad(file, i, 'must be a mapping with text and/or invoke');
    const entry: CassetteTurn = {};
    for (const [k, v] of Object.entries(turn)) {
      if (k === 'request') {
        if (v !== null && v !== undefined) entry.request = parseRequest(v, file, i);
        continue;
      }
      if (k !== 'text' && k !== 'invoke') throw bad(file, i, `unknown key '${k}' (use text and/or invoke)`);
      if (v === null || v === undefined) continue;
      if (typeof v !== 'string') throw bad(file, i, `'${k}' must be a string`);
      entry[k] = v;
    }
    out.push(entry);
  });
  return { turns: out };
}

export async function loadCassette(file: string): Promise<Cassette> {
  let source: string;
  try {
    source = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : (err as Error).message;
    throw new ConfigurationError(`cannot read replay cassette: ${why} — check model.cassette`, {
      place: { file },
      cause: err,
    });
  }
  return parseCassette(source, file);
}

/** YAML text of a cassette; multi-line code and requests come out as block literals. */
export function stringifyCassette(cassette: Cassette): string {
  const turns = cassette.turns.map((t) => {
    const o: CassetteTurn = {};
    if (t.text !== undefined) o.text = t.text;
    if (t.invoke !== undefined) o.invoke = t.invoke;
    if (t.request !== undefined) {
      const { sha256, text, more } = t.request;
      o.request = { sha256, ...(text !== undefined ? { text } : {}), ...(more !== undefined ? { more } : {}) };
    }
    return o;
  });
  const doc = new (yaml().Document)({ turns });
  if (turns.some((t) => t.request)) doc.commentBefore = RECORDED_HEADER;
  return doc.toString({ lineWidth: 0, blockQuote: 'literal' });
}

/**
 * The recorded text of turn `index`'s request: its `text`, or the turns before it put together
 * with their `more`. Undefined when a turn on the way has no request.
 */
export function recordedRequestText(turns: readonly CassetteTurn[], index: number): string | undefined {
  const parts: string[] = [];
  for (let j = index; j >= 0; j--) {
    const r = turns[j]?.request;
    if (!r) return undefined;
    if (r.text !== undefined) return [r.text, ...parts].join('');
    if (r.more === undefined) return undefined;
    parts.unshift(r.more);
  }
  return undefined;
}

function parseRequest(v: unknown, file: string, i: number): RecordedRequest {
  if (!isRecord(v)) throw bad(file, i, "'request' must be a mapping: { sha256, text | more }");
  const out: RecordedRequest = { sha256: '' };
  for (const [k, x] of Object.entries(v)) {
    if (k !== 'sha256' && k !== 'text' && k !== 'more') throw bad(file, i, `request has an unknown key '${k}' (sha256, text, more)`);
    if (typeof x !== 'string') throw bad(file, i, `request.${k} must be a string`);
    out[k] = x;
  }
  if (!/^[0-9a-f]{64}$/.test(out.sha256)) throw bad(file, i, 'request.sha256 must be 64 hex digits (the sha256 agent-apps recorded)');
  return out;
}

function bad(file: string, index: number, what: string): ConfigurationError {
  return new ConfigurationError(`cassette turn ${index + 1} ${what}`, { place: { file, key: `turns[${index}]` } });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
