// Dotted-path access for `ctx.manager.get/set` (docs/concepts.md). Dotted look-ups only: no expressions.
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

/**
 * Sets `path` (dotted) under `root`, creating plain objects for missing steps. Shared, frozen data
 * on the way — a tool's schemas and tags under `run.tool`, `locals.config.paths` — is copied on
 * write: the frozen object or array that would change is replaced, in its writable parent, by a
 * copy with the change (and so on up, if that parent is frozen too), so `set('run.tool.tags.0', x)`
 * changes this invocation's `run.tool.tags` and never the shared one (docs/concepts.md, "The
 * context"). Only frozen data that is not a plain object or array, or a property that refuses a
 * new value (`locals.history`), is E_IMMUTABLE.
 */
export function setPath(root: object, path: string, value: unknown): void {
  const parts = path.split('.');
  for (const part of parts) {
    if (part === '__proto__' || part === 'constructor' || part === 'prototype') throw new AgentAppsError('E_IMMUTABLE', `refusing to set '${path}': prototype paths are not data`);
  }
  if (put(root, parts, 0, value, path) !== root) throw frozen(path, []);
}

/** Writes `parts[i…]` into `cur`; returns `cur`, or a copy of it with the write when `cur` is frozen. */
function put(cur: any, parts: string[], i: number, value: unknown, path: string): any {
  const part = parts[i]!;
  let child = value;
  if (i < parts.length - 1) {
    const existing = cur[part];
    child = put(existing !== null && typeof existing === 'object' ? existing : {}, parts, i + 1, value, path);
    // Changed in place below: nothing to write here.
    if (child === existing) return cur;
  }
  // Reflect.set reports a frozen object or a read-only property instead of throwing a bare TypeError.
  if (Reflect.set(cur, part, child)) return cur;
  if (!Object.isFrozen(cur) || !(Array.isArray(cur) || isPlainObject(cur))) throw frozen(path, parts.slice(0, i));
  const copy: any = Array.isArray(cur) ? [...cur] : { ...cur };
  copy[part] = child;
  return copy;
}

/** E_IMMUTABLE for a write into frozen data that cannot be copied, saying what to set instead. */
function frozen(path: string, container: string[]): AgentAppsError {
  const where = container.join('.');
  if (!where) return new AgentAppsError('E_IMMUTABLE', `refusing to set '${path}': it is read-only`);
  return new AgentAppsError('E_IMMUTABLE', `refusing to set '${path}': '${where}' is read-only, and not plain data that could be copied — set a new value for '${where}' instead`);
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
