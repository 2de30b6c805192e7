// Dotted-path access for `ctx.manager.get/set` (seed 001). Dotted look-ups only: no expressions.
import { AgentAppsError } from './errors.ts';

export function getPath(root: unknown, path: string): unknown {
  if (path === '' ) return root;
  let cur: any = root;
  for (const part of path.split('.')) {
    if (cur === null || cur === undefined) return undefined;
    cur = cur[part];
  }
  return cur;
}

export function setPath(root: object, path: string, value: unknown): void {
  const parts = path.split('.');
  let cur: any = root;
  for (let i = 0; i < parts.length - 1; i++) {
    const part = parts[i]!;
    if (part === '__proto__' || part === 'constructor' || part === 'prototype') throw new AgentAppsError('E_IMMUTABLE', `refusing to set '${path}': prototype paths are not data`);
    let next = cur[part];
    if (next === null || typeof next !== 'object') {
      next = {};
      if (!Reflect.set(cur, part, next)) throw frozen(path, parts.slice(0, i));
    }
    cur = next;
  }
  const last = parts[parts.length - 1]!;
  if (last === '__proto__' || last === 'constructor' || last === 'prototype') throw new AgentAppsError('E_IMMUTABLE', `refusing to set '${path}': prototype paths are not data`);
  // Reflect.set reports a frozen object or a read-only property instead of throwing a bare TypeError.
  if (!Reflect.set(cur, last, value)) throw frozen(path, parts.slice(0, -1));
}

/** E_IMMUTABLE for a write into frozen data, saying what to set instead. */
function frozen(path: string, container: string[]): AgentAppsError {
  const where = container.join('.');
  if (!where) return new AgentAppsError('E_IMMUTABLE', `refusing to set '${path}': it is read-only`);
  return new AgentAppsError('E_IMMUTABLE', `refusing to set '${path}': '${where}' is shared, frozen data and is never changed in place — set a new value for '${where}' instead (a copy with your change)`);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Freezes plain objects and arrays all the way down; used on cached cascade values shared by every invocation. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/**
 * A deep copy of plain objects and arrays; anything else (functions, class instances) is kept
 * by reference. What a context is given as its own copy of shared, frozen data.
 */
export function copyData<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(copyData) as T;
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    // An own `__proto__` key (JSON, YAML) stays a key: assigning it would set the prototype.
    if (key === '__proto__') Object.defineProperty(out, key, { value: copyData(value[key]), enumerable: true, writable: true, configurable: true });
    else out[key] = copyData(value[key]);
  }
  return out as T;
}
