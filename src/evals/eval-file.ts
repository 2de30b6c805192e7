// An eval file (docs/ci.md): `*.test.yaml` — a skill and its cases. Parsed with yaml's
// parseDocument so that every problem — bad YAML, a shape the JSON schema below rejects, a regex
// or schema that does not compile, two cases of one name — is a message with a place
// (file:line:col), all of them at once, never a stack trace.
import fs from 'node:fs';
import path from 'node:path';
import type { Document, Node } from 'yaml';
import { yaml } from '../core/yaml.ts';
import { check, validator } from '../kernel/schema.ts';
import type { SchemaError } from '../core/errors.ts';
import type { JsonObject } from '../core/types.ts';

/** What a case expects of its invocation; several keys must all hold. */
export interface Expect {
  /** Deep equality with the result (compared as JSON). */
  equals?: unknown;
  /** A regular expression the result must match: the string itself, or its JSON. */
  match?: string;
  /** A JSON Schema the result must satisfy. */
  schema?: object | boolean;
  /** The error code the invocation must fail with. */
  error?: string;
  /** A skill invoked with `{ result, error, args, case }`: the case passes when it returns `true`. */
  check?: string;
  /**
   * A grader skill (docs/ci.md, "Graded by a skill") invoked with `{ output, rubric, input }`; it
   * returns `{ pass, score?, reason }`. Without `by`, the grader is `--grader SKILL`.
   */
  grade?: { by?: string; rubric: string | string[] };
}

export interface EvalCase {
  name: string;
  args: JsonObject;
  /** Absolute path of the cassette to replay (written relative to the eval file). */
  cassette?: string;
  expect: Expect;
  /** Milliseconds before the invocation is aborted. */
  timeout?: number;
  /** Not run: `true`, or the reason. */
  skip?: true | string;
  /** How many times it runs (its own `trials:`; the file's and --trials come after it). */
  trials?: number;
  /** The share of its trials that must pass (its own `pass.rate`; the file's comes after it). */
  passRate?: number;
  /** 1-based line of the case in its file. */
  line: number;
  /** Places of its values, for problems found after parsing (an unknown check skill, a missing cassette). */
  places: { cassette?: Place; check?: Place; grade?: Place };
  /** The case as written in the file (what `check` skills receive as `case`). */
  raw: JsonObject;
  /** What a grader is given as `input`: the case's args, or an Agent Skills eval's prompt. */
  input?: unknown;
  /**
   * Runs in a temporary workspace of its own (an Agent Skills eval, docs/ci.md): these files
   * (absolute paths) are copied into it at their path relative to `from`.
   */
  workspace?: { from: string; files: string[] };
}

export interface EvalFile {
  /** Absolute path. */
  file: string;
  /** `NAME.test.yaml`, or an Agent Skills `evals/evals.json` (src/evals/agent-skills.ts). */
  format: 'test-yaml' | 'evals-json';
  /** The skill's ref as written (a path ref is made absolute, relative to the file). */
  skill: string;
  skillPlace: Place;
  cases: EvalCase[];
  /** The file's `trials:` (a case's own wins; --trials comes after it). */
  trials?: number;
  /** The file's `pass.rate` (a case's own wins; default 1). */
  passRate?: number;
  /** An Agent Skills file's `skill_name`: it must be the folder's skill's. */
  skillName?: string;
}

export interface Place {
  line: number;
  column: number;
}

/** One problem of an eval file: printed as `FILE:LINE:COL: error: MESSAGE`. */
export interface EvalProblem extends Place {
  file: string;
  message: string;
}

export const EVAL_SUFFIXES = ['.test.yaml', '.test.yml'] as const;

const EXPECT_KEYS = ['equals', 'match', 'schema', 'error', 'check', 'grade'] as const;
const CASE_KEYS = ['name', 'args', 'cassette', 'expect', 'timeout', 'skip', 'trials', 'pass'] as const;
const FILE_KEYS = ['skill', 'description', 'trials', 'pass', 'cases'] as const;

/** `trials:` — how many times a case runs (docs/ci.md, "Flaky or broken: trials and pass rates"). */
const TRIALS_SCHEMA = { type: 'integer', minimum: 1 } as const;
/** `pass: { rate }` — the share of a case's trials that must pass. */
const PASS_SCHEMA = {
  type: 'object',
  required: ['rate'],
  additionalProperties: false,
  properties: { rate: { type: 'number', minimum: 0, maximum: 1 } },
} as const;

/** The shape of an eval file; what a schema cannot say (regexes, schemas, names) is checked below it. */
export const EVAL_FILE_SCHEMA = {
  type: 'object',
  required: ['skill', 'cases'],
  additionalProperties: false,
  properties: {
    skill: { type: 'string', minLength: 1 },
    description: { type: 'string' },
    trials: TRIALS_SCHEMA,
    pass: PASS_SCHEMA,
    cases: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['name'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', minLength: 1 },
          args: { type: 'object' },
          cassette: { type: 'string', minLength: 1 },
          timeout: { type: 'integer', minimum: 1 },
          skip: { anyOf: [{ type: 'boolean' }, { type: 'string', minLength: 1 }] },
          trials: TRIALS_SCHEMA,
          pass: PASS_SCHEMA,
          expect: {
            type: 'object',
            minProperties: 1,
            additionalProperties: false,
            properties: {
              equals: true,
              match: { type: 'string', minLength: 1 },
              schema: { type: ['object', 'boolean'] },
              error: { type: 'string', minLength: 1 },
              check: { type: 'string', minLength: 1 },
              grade: {
                type: 'object',
                required: ['rubric'],
                additionalProperties: false,
                properties: {
                  by: { type: 'string', minLength: 1 },
                  rubric: { anyOf: [{ type: 'string', minLength: 1 }, { type: 'array', minItems: 1, items: { type: 'string' } }] },
                },
              },
            },
          },
        },
      },
    },
  },
} as const;

/** A file read with the places of its values: what both eval formats are parsed into. */
export interface PlacedData {
  data: unknown;
  /** The place of the value at `segments` (or of its key `key`), else of its nearest ancestor. */
  place: (segments: (string | number)[], key?: string) => Place;
}

/**
 * Parses YAML — or JSON, which YAML 1.2 reads — keeping a place for every value. `json` parses
 * with JSON.parse first, so that what JSON does not allow (a trailing comma) is a problem too.
 */
export function parsePlaced(file: string, text: string, json = false): { parsed: PlacedData } | { problems: EvalProblem[] } {
  const { LineCounter, parseDocument } = yaml();
  const lines = new LineCounter();
  if (json) {
    try {
      JSON.parse(text);
    } catch (err) {
      const message = (err as Error).message;
      const m = /line (\d+) column (\d+)/.exec(message);
      return { problems: [{ file, line: m ? Number(m[1]) : 1, column: m ? Number(m[2]) : 1, message: `invalid JSON: ${firstLine(message).replace(/ in JSON at position \d+.*$/, '')}` }] };
    }
  }
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const at = (offset: number | undefined): Place => {
    const pos = lines.linePos(offset ?? 0);
    return { line: pos.line, column: pos.col };
  };
  if (doc.errors.length) {
    return { problems: doc.errors.map((e) => ({ file, ...at(e.pos[0]), message: `invalid ${json ? 'JSON' : 'YAML'}: ${firstLine(e.message)}` })) };
  }
  const data: unknown = doc.toJS({ maxAliasCount: 100 });
  return { parsed: { data, place: (segments, key) => at(offsetOf(doc, segments, key)) } };
}

/** Reads and checks one eval file: the file, or every problem found in it. */
export async function loadEvalFile(file: string): Promise<{ file: EvalFile } | { problems: EvalProblem[] }> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    return { problems: [{ file, line: 1, column: 1, message: `cannot read the file: ${(err as Error).message}` }] };
  }
  const out = parsePlaced(file, text);
  if ('problems' in out) return out;
  const { data, place } = out.parsed;
  if (data === null || data === undefined) {
    return { problems: [{ file, line: 1, column: 1, message: 'the file is empty: an eval file has `skill:` and a list of `cases:`' }] };
  }

  const errors = await check(EVAL_FILE_SCHEMA, data);
  if (errors.length) return { problems: inOrder(dedupe(errors).map((e) => ({ file, ...schemaPlace(e, place), message: schemaMessage(e, data, allowedKeys) }))) };

  const top = data as { skill: string; cases: JsonObject[]; trials?: number; pass?: { rate: number } };
  const problems: EvalProblem[] = [];
  const dir = path.dirname(file);
  const seen = new Map<string, number>();
  const cases: EvalCase[] = [];
  for (const [i, raw] of top.cases.entries()) {
    const c = raw as { name: string; args?: JsonObject; cassette?: string; expect?: Expect; timeout?: number; skip?: boolean | string; trials?: number; pass?: { rate: number } };
    const casePlace = place(['cases', i]);
    const problem = (segments: (string | number)[], message: string) => problems.push({ file, ...place(['cases', i, ...segments]), message: `cases[${i}] (${c.name}): ${message}` });
    const before = seen.get(c.name);
    if (before !== undefined) problem(['name'], `another case has this name (cases[${before}]): names tell cases apart in reports, so each is used once`);
    else seen.set(c.name, i);
    const expect: Expect = { ...(c.expect ?? {}) };
    if (expect.check !== undefined) expect.check = skillRef(expect.check, dir);
    if (expect.grade !== undefined) expect.grade = { ...expect.grade, ...(expect.grade.by !== undefined ? { by: skillRef(expect.grade.by, dir) } : {}) };
    if (expect.match !== undefined) {
      try {
        new RegExp(expect.match);
      } catch (err) {
        problem(['expect', 'match'], `expect.match is not a valid regular expression: ${(err as Error).message}`);
      }
    }
    if (expect.schema !== undefined) {
      try {
        await validator(expect.schema);
      } catch (err) {
        problem(['expect', 'schema'], `expect.schema is not a valid JSON Schema: ${firstLine((err as Error).message)}`);
      }
    }
    if (expect.error !== undefined) {
      const clash = (['equals', 'match', 'schema', 'grade'] as const).filter((k) => k in expect);
      if (clash.length) problem(['expect', clash[0]!], `expect.error cannot be combined with ${clash.join(', ')}: a run that fails has no result (use check: to look at both)`);
    }
    cases.push({
      name: c.name,
      args: c.args ?? {},
      ...(c.cassette !== undefined ? { cassette: path.resolve(dir, c.cassette) } : {}),
      expect,
      ...(c.timeout !== undefined ? { timeout: c.timeout } : {}),
      ...(c.skip === true || typeof c.skip === 'string' ? { skip: c.skip } : {}),
      ...(c.trials !== undefined ? { trials: c.trials } : {}),
      ...(c.pass !== undefined ? { passRate: c.pass.rate } : {}),
      line: casePlace.line,
      places: {
        ...(c.cassette !== undefined ? { cassette: place(['cases', i, 'cassette']) } : {}),
        ...(expect.check !== undefined ? { check: place(['cases', i, 'expect', 'check']) } : {}),
        ...(expect.grade !== undefined ? { grade: place(['cases', i, 'expect', 'grade', ...(expect.grade.by !== undefined ? ['by'] : [])]) } : {}),
      },
      raw,
    });
  }
  if (problems.length) return { problems: inOrder(problems) };
  return {
    file: {
      file,
      format: 'test-yaml',
      skill: skillRef(top.skill, dir),
      skillPlace: place(['skill']),
      cases,
      ...(top.trials !== undefined ? { trials: top.trials } : {}),
      ...(top.pass !== undefined ? { passRate: top.pass.rate } : {}),
    },
  };
}

/** The keys allowed where an unknown one was found (for its message). */
function allowedKeys(where: string, parent: string | number | undefined): readonly string[] {
  if (where === '') return FILE_KEYS;
  if (where.endsWith('expect.grade')) return ['by', 'rubric'];
  if (where.endsWith('expect')) return EXPECT_KEYS;
  if (where.endsWith('pass')) return ['rate'];
  return typeof parent === 'number' ? CASE_KEYS : [];
}

/** A bare name stays a name; a path ref (`./greet.skill.ts`) is relative to the eval file. */
export function skillRef(ref: string, dir: string): string {
  if (/^[a-z0-9][a-z0-9-]*$/.test(ref) || /^[a-z][a-z0-9+.-]*:/i.test(ref) || path.isAbsolute(ref)) return ref;
  return path.resolve(dir, ref);
}

/** Where ajv's error points: the offending key for an unknown one, else the value (or its parent). */
export function schemaPlace(e: SchemaError, place: (segments: (string | number)[], key?: string) => Place): Place {
  const segments = pointer(e.instancePath);
  if (e.keyword === 'additionalProperties') return place(segments, String(e.params.additionalProperty));
  return place(segments);
}

/** `/cases/0/expect` → `cases[0].expect`, the way a person reads the file. */
function readable(segments: (string | number)[]): string {
  let out = '';
  for (const s of segments) out += typeof s === 'number' ? `[${s}]` : out ? `.${s}` : s;
  return out;
}

/** A message for one of ajv's errors, as a person reads the file; `allowed` lists the keys of the map an unknown key is in. */
export function schemaMessage(e: SchemaError, data: unknown, allowed: (where: string, parent: string | number | undefined) => readonly string[]): string {
  const segments = pointer(e.instancePath);
  const where = readable(segments);
  const inside = where ? `${where}: ` : '';
  const parent = segments[segments.length - 1];
  const value = valueAt(data, segments);
  // trials and pass.rate: what they may be, and what was given (docs/ci.md, "Flaky or broken: trials and pass rates").
  if (parent === 'trials' && ['type', 'minimum'].includes(e.keyword)) return `${inside}must be a whole number of runs, at least 1 (got ${JSON.stringify(value)})`;
  if (parent === 'rate' && ['type', 'minimum', 'maximum'].includes(e.keyword)) return `${inside}must be a share of the trials from 0 to 1, e.g. 0.8 (got ${JSON.stringify(value)})`;
  switch (e.keyword) {
    case 'additionalProperties': {
      const key = String(e.params.additionalProperty);
      const keys = allowed(where, parent);
      return `${inside}unknown key '${key}'${keys.length ? ` (allowed: ${keys.join(', ')})` : ''}`;
    }
    case 'required':
      return `${inside}missing '${String(e.params.missingProperty)}'`;
    case 'minProperties':
      return `${inside}expect needs one of ${EXPECT_KEYS.join(', ')} (or leave expect out: the case then passes when the skill succeeds)`;
    case 'minItems':
      return where === 'cases' || where === 'evals' ? `${inside}has no cases: add at least one { name, args, expect }` : `${inside}must not be empty`;
    case 'anyOf':
      return parent === 'rubric' ? `${inside}must be a text or a list of texts` : `${inside}must be true or a reason (a string)`;
    default:
      return `${where || 'the file'} ${e.message ?? e.keyword}`;
  }
}

function valueAt(data: unknown, segments: (string | number)[]): unknown {
  let v = data;
  for (const s of segments) v = v !== null && typeof v === 'object' ? (v as Record<string | number, unknown>)[s] : undefined;
  return v;
}

/** ajv reports an anyOf's branches and the anyOf itself: keep the anyOf. */
export function dedupe(errors: SchemaError[]): SchemaError[] {
  const anyOf = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  return errors.filter((e) => e.keyword === 'anyOf' || !anyOf.has(e.instancePath) || !e.schemaPath.includes('/anyOf/'));
}

function pointer(instancePath: string): (string | number)[] {
  if (!instancePath) return [];
  return instancePath
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

/** The source offset of the node at `segments` (or of its key `key`), else of its nearest ancestor. */
function offsetOf(doc: Document, segments: (string | number)[], key?: string): number {
  const { isMap, isPair, isScalar } = yaml();
  let node: unknown = doc.contents;
  let offset = rangeStart(node) ?? 0;
  for (const seg of segments) {
    if (!isNode(node)) break;
    const child = (node as Node & { get?: (k: unknown, keep: boolean) => unknown }).get?.(seg, true);
    if (child === undefined) break;
    node = child;
    offset = rangeStart(child) ?? offset;
  }
  if (key !== undefined && isMap(node)) {
    const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && p.key.value === key);
    offset = rangeStart(pair?.key) ?? offset;
  }
  return offset;
}

function rangeStart(node: unknown): number | undefined {
  return isNode(node) && node.range ? node.range[0] : undefined;
}

function isNode(node: unknown): node is Node {
  return yaml().isNode(node);
}

export function inOrder(problems: EvalProblem[]): EvalProblem[] {
  return problems.sort((a, b) => a.line - b.line || a.column - b.column);
}

export function firstLine(message: string): string {
  return message.split('\n')[0]!.trim();
}
