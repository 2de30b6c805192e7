// JSON-Schema defaults from the tool's own `params`, applied once when the context is created
// (docs/concepts.md): nothing later changes `args`. Only `properties.*.default`, recursively, as ajv's
// `useDefaults` would — without compiling a validator on the hot path.
import { isPlainObject } from '../core/path.ts';

export function hasDefaults(schema: unknown): boolean {
  if (!isPlainObject(schema) || !isPlainObject(schema.properties)) return false;
  for (const prop of Object.values(schema.properties)) {
    if (isPlainObject(prop) && ('default' in prop || hasDefaults(prop))) return true;
  }
  return false;
}

export function applyDefaults(schema: unknown, value: unknown): unknown {
  if (!isPlainObject(schema) || !isPlainObject(schema.properties)) return value;
  if (value === undefined) value = {};
  if (!isPlainObject(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const [key, prop] of Object.entries(schema.properties)) {
    if (!isPlainObject(prop)) continue;
    const current = (out ?? value)[key];
    let next = current;
    if (current === undefined && 'default' in prop) next = structuredClone(prop.default);
    if (next !== undefined && isPlainObject(next)) next = applyDefaults(prop, next);
    if (next !== current) (out ??= { ...value })[key] = next;
  }
  return out ?? value;
}
