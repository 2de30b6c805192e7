// The cassette format (SPEC §11): the model's side of an agent run, one entry per model
// response. Shared by the replay model (reads) and the recorder (writes). No SDK import here,
// so reading or writing a cassette stays cheap.

import { readFile } from 'node:fs/promises';
import { parseDocument, stringify } from 'yaml';
import { ConfigurationError } from 'agent-apps';

export interface CassetteTurn {
  /** Assistant text of this model response. */
  text?: string;
  /** The code the model passed to the `invoke` tool; absent = the turn ends (endTurn). */
  invoke?: string;
}

export interface Cassette {
  turns: CassetteTurn[];
}

/** Parses and checks cassette YAML; `file` names the source in errors. */
export function parseCassette(source: string, file = 'cassette'): Cassette {
  const doc = parseDocument(source);
  if (doc.errors.length > 0) {
    const err = doc.errors[0]!;
    const line = err.linePos?.[0]?.line;
    const what = err.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    throw new ConfigurationError(`malformed cassette YAML: ${what}`, {
      place: { file, ...(line !== undefined ? { line } : {}) },
    });
  }
  const value: unknown = doc.toJS();
  // SPEC §11 calls a cassette "a list of model turns": a bare list is read as `turns`.
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

/** YAML text of a cassette; multi-line code comes out as block literals. */
export function stringifyCassette(cassette: Cassette): string {
  const turns = cassette.turns.map((t) => {
    const o: CassetteTurn = {};
    if (t.text !== undefined) o.text = t.text;
    if (t.invoke !== undefined) o.invoke = t.invoke;
    return o;
  });
  return stringify({ turns }, { lineWidth: 0 });
}

function bad(file: string, index: number, what: string): ConfigurationError {
  return new ConfigurationError(`cassette turn ${index + 1} ${what}`, { place: { file, key: `turns[${index}]` } });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
