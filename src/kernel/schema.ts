// JSON Schema validation with ajv (+ ajv-formats), loaded on first use so that skills without
// schemas never pay for it. Validators are compiled once per schema object.
import { existsSync } from 'node:fs';
import type { SchemaError } from '../core/errors.ts';

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

export async function validator(schema: object | boolean): Promise<Validate> {
  if (typeof schema === 'object') {
    const hit = compiled.get(schema);
    if (hit) return hit;
  }
  const text = JSON.stringify(schema);
  let v = byText.get(text);
  if (!v) {
    v = (await instance()).compile(schema);
    byText.set(text, v);
  }
  if (typeof schema === 'object') compiled.set(schema, v);
  return v;
}

/** Validates and returns ajv's error list (empty when valid). */
export async function check(schema: object | boolean, data: unknown): Promise<SchemaError[]> {
  const v = await validator(schema);
  return v(data) ? [] : [...(v.errors ?? [])];
}
