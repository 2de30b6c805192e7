// Keys that would reach an object's prototype when input is copied by assignment (docs/security.md): CLI
// input holding one is refused where it enters, not copied.
export const UNSAFE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * The path (`a.b.__proto__`) of the first key in `value` — a parsed JSON or YAML value, at any
 * depth — that is one of UNSAFE_KEYS; undefined when there is none.
 */
export function findUnsafeKey(value: unknown, depth = 0): string | undefined {
  if (value === null || typeof value !== 'object' || depth > 256) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const inner = findUnsafeKey(value[i], depth + 1);
      if (inner !== undefined) return `${i}.${inner}`;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (UNSAFE_KEYS.has(key)) return key;
    const inner = findUnsafeKey((value as Record<string, unknown>)[key], depth + 1);
    if (inner !== undefined) return `${key}.${inner}`;
  }
  return undefined;
}

