// JSON Schema validation with ajv (+ ajv-formats), loaded on first use so that skills without
// schemas never pay for it. Validators are compiled once per schema object.
import type { SchemaError } from '../core/errors.ts';

type Validate = ((data: unknown) => boolean) & { errors?: SchemaError[] | null };
let ajv: { compile(schema: object | boolean): Validate } | undefined;
const compiled = new WeakMap<object, Validate>();
const byText = new Map<string, Validate>();

async function instance() {
  if (!ajv) {
    const [{ default: Ajv }, { default: addFormats }] = await Promise.all([import('ajv'), import('ajv-formats')]);
    const a = new (Ajv as unknown as new (o: object) => { compile(s: object | boolean): Validate })({ allErrors: true, strict: false, useDefaults: false });
    (addFormats as unknown as (a: unknown) => void)(a);
    ajv = a;
  }
  return ajv;
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
