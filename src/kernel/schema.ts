// JSON Schema validation with ajv (+ ajv-formats), loaded on first use so that skills without
// schemas never pay for it. Validators are compiled once per schema object.
import { existsSync } from 'node:fs';
import { AgentAppsError, type SchemaError } from '../core/errors.ts';

type Validate = ((data: unknown) => boolean) & { errors?: SchemaError[] | null };
interface Ajv {
  compile(schema: object | boolean): Validate;
  validateSchema(schema: object | boolean, throwOrLogError?: boolean): boolean | Promise<unknown>;
  errors?: SchemaError[] | null;
  errorsText(): string;
}
/** ajv as loaded: the build's bundle (scripts/build.js) adds draft-07's meta-schema check, precompiled. */
interface AjvModule {
  Ajv: new (o: object) => Ajv;
  addFormats: (a: Ajv) => void;
  draft07?: Validate;
}
/** The options of our ajv; scripts/build.js precompiles the meta-schema check with the same. */
export const AJV_OPTIONS = { allErrors: true, strict: false, useDefaults: false } as const;
const DRAFT_07 = new Set([undefined, 'http://json-schema.org/draft-07/schema', 'http://json-schema.org/draft-07/schema#']);
let ajv: Ajv | undefined;
const compiled = new WeakMap<object, Validate>();
const byText = new Map<string, Validate>();

async function instance() {
  if (!ajv) {
    const { Ajv, addFormats, draft07 } = await loadAjv();
    const a = new Ajv(AJV_OPTIONS);
    addFormats(a);
    if (draft07) checkSchemasWith(a, draft07);
    ajv = a;
  }
  return ajv;
}

/**
 * ajv and ajv-formats: from the build's one-file bundle (dist/bundles/ajv.js) when built — about
 * 40 ms sooner ready, half in loading ~70 modules, half in the meta-schema check below — else
 * from the packages.
 */
async function loadAjv(): Promise<AjvModule> {
  const bundle = new URL(import.meta.url.endsWith('.ts') ? '../../dist/bundles/ajv.js' : '../bundles/ajv.js', import.meta.url);
  if (existsSync(bundle)) return (await import(bundle.href)) as AjvModule;
  const [{ default: Ajv }, { default: addFormats }] = await Promise.all([import('ajv'), import('ajv-formats')]);
  return { Ajv: Ajv as unknown as AjvModule['Ajv'], addFormats: addFormats as unknown as AjvModule['addFormats'] };
}

/**
 * ajv checks a schema against its meta-schema before compiling it, and compiles draft-07's
 * meta-schema to do so the first time: most of the cost of a process's first schema. `draft07`
 * is that check compiled at build time (ajv's standalone code, same options); a schema on draft-07
 * is checked with it exactly as ajv's own validateSchema would, with its message; any other
 * `$schema` is left to ajv.
 */
function checkSchemasWith(a: Ajv, draft07: Validate): void {
  const own = a.validateSchema.bind(a);
  a.validateSchema = (schema, throwOrLogError) => {
    if (typeof schema !== 'object' || schema === null || !DRAFT_07.has((schema as { $schema?: string }).$schema)) return own(schema, throwOrLogError);
    const valid = draft07(schema);
    a.errors = draft07.errors ?? null;
    if (!valid && throwOrLogError) throw new Error('schema is invalid: ' + a.errorsText());
    return valid;
  };
}

// ── schemas from outside ─────────────────────────────────────────────────────────────────────
// An MCP server's inputSchema / outputSchema or a downloaded SKILL.md's params are not ours: a
// `pattern` like `^(a|aa)+$` run by a backtracking engine on 60 `a`s and a `!` blocks the event
// loop for minutes (no timeout or Ctrl-C can interrupt it). Such schemas compile with RE2's
// linear-time matching (the re2js port: pure JavaScript, nothing to build or download); one whose
// patterns RE2 cannot run (lookarounds, backreferences) is refused, never run with backtracking.

/** Marks by JSON text (a copy of a marked schema is marked too): the code and label a refusal names. */
const untrusted = new Map<string, { code: string; label: string }>();
let safeAjv: Promise<Ajv> | undefined;
type Re2 = { compile(pattern: string, flags?: number): { matcher(s: string): { find(): boolean } } ; CASE_INSENSITIVE: number };

/** Validates `schema` with linear-time patterns from now on; `label` says where it came from ("MCP server 'x', tool 'y', inputSchema"). */
export function markUntrusted(schema: object | boolean, code: 'E_MCP' | 'E_CONFIG', label: string): void {
  untrusted.set(JSON.stringify(schema), { code, label });
}

function safeInstance(): Promise<Ajv> {
  safeAjv ??= (async () => {
    const [{ Ajv, addFormats }, { RE2JS }] = await Promise.all([loadAjv(), import('re2js') as Promise<{ RE2JS: Re2 }>]);
    const regExp = Object.assign((pattern: string, flags: string) => {
      const re = RE2JS.compile(pattern, flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0);
      return { test: (text: string) => re.matcher(text).find() };
    }, { code: 're2js' });
    const a = new Ajv({ ...AJV_OPTIONS, code: { regExp } });
    addFormats(a);
    return a;
  })();
  return safeAjv;
}

/** The first `pattern` (or patternProperties key) of `schema` that RE2 refuses, with its key path. */
async function refusedPattern(schema: unknown): Promise<{ at: string; why: string } | undefined> {
  const { RE2JS } = (await import('re2js')) as { RE2JS: Re2 };
  const stack: { v: unknown; at: string }[] = [{ v: schema, at: '' }];
  while (stack.length) {
    const { v, at } = stack.pop()!;
    if (!v || typeof v !== 'object') continue;
    for (const [k, child] of Object.entries(v)) {
      const here = at ? `${at}.${k}` : k;
      const patterns = k === 'pattern' && typeof child === 'string' ? [[here, child]] : k === 'patternProperties' && child && typeof child === 'object' ? Object.keys(child).map((p) => [`${here}[${JSON.stringify(p)}]`, p]) : [];
      for (const [where, p] of patterns) {
        try {
          RE2JS.compile(p!);
        } catch (err) {
          return { at: where!, why: (err as Error).message };
        }
      }
      stack.push({ v: child, at: here });
    }
  }
  return undefined;
}

export async function validator(schema: object | boolean): Promise<Validate> {
  if (typeof schema === 'object') {
    const hit = compiled.get(schema);
    if (hit) return hit;
  }
  const text = JSON.stringify(schema);
  let v = byText.get(text);
  if (!v) {
    const mark = untrusted.get(text);
    if (mark) {
      const refused = await refusedPattern(schema);
      if (refused) throw new AgentAppsError(mark.code, `${mark.label}: ${refused.at} is refused: ${refused.why} — patterns in schemas from outside run in linear time (RE2), without lookarounds or backreferences`);
      v = (await safeInstance()).compile(schema);
    } else {
      v = (await instance()).compile(schema);
    }
    byText.set(text, v);
  }
  if (typeof schema === 'object') compiled.set(schema, v);
  return v;
}

/** Validates and returns ajv's error list (empty when valid). */
export async function check(schema: object | boolean, data: unknown, opts: { untrusted?: { code: 'E_MCP' | 'E_CONFIG'; label: string } } = {}): Promise<SchemaError[]> {
  // A schema from a folder someone else wrote: marked before its first compile (see markUntrusted).
  if (opts.untrusted) markUntrusted(schema, opts.untrusted.code, opts.untrusted.label);
  const v = await validator(schema);
  return v(data) ? [] : [...(v.errors ?? [])];
}
