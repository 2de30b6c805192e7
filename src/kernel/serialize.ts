// serializeContext (docs/concepts.md): on demand; functions and other non-serializable
// values become undefined, cycles "[Circular]", nesting is cut at `depth` (default 8).
import type { Context } from '../core/types.ts';

export function serializeContext(ctx: Context, opts: { depth?: number } = {}): Record<string, unknown> {
  const depth = opts.depth ?? 8;
  const seen = new WeakSet<object>();
  const walk = (value: unknown, level: number): unknown => {
    if (value === null) return null;
    const t = typeof value;
    if (t === 'string' || t === 'number' || t === 'boolean') return t === 'number' && !Number.isFinite(value as number) ? null : value;
    if (t === 'bigint') return String(value);
    if (t !== 'object') return undefined; // functions, symbols, undefined
    const obj = value as object;
    if (seen.has(obj)) return '[Circular]';
    if (level >= depth) return undefined;
    if (obj instanceof Date) return obj.toISOString();
    if (obj instanceof Error) return { name: obj.name, message: obj.message, code: (obj as { code?: unknown }).code };
    if (isContextLike(obj) && level > 0) return { envelope: { id: (obj as Context).envelope.id }, tool: (obj as Context).run?.tool?.name };
    seen.add(obj);
    try {
      if (Array.isArray(obj)) return obj.map((v) => walk(v, level + 1) ?? null);
      if (obj instanceof Map) return walk(Object.fromEntries(obj), level);
      if (obj instanceof Set) return walk([...obj], level);
      const proto = Object.getPrototypeOf(obj);
      if (proto !== Object.prototype && proto !== null && typeof (obj as { toJSON?: unknown }).toJSON !== 'function' && !isContextLike(obj) && !isPartOfContext(obj)) {
        // Sockets, streams, signals: not data.
        return undefined;
      }
      const source = typeof (obj as { toJSON?: unknown }).toJSON === 'function' && !isContextLike(obj) ? (obj as { toJSON(): unknown }).toJSON() : obj;
      if (source !== obj) return walk(source, level);
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(obj)) {
        const v = walk((obj as Record<string, unknown>)[key], level + 1);
        if (v !== undefined) out[key] = v;
      }
      return out;
    } finally {
      seen.delete(obj);
    }
  };
  return walk(ctx, 0) as Record<string, unknown>;
}

function isContextLike(obj: object): boolean {
  return 'envelope' in obj && 'manager' in obj && 'locals' in obj;
}

function isPartOfContext(obj: object): boolean {
  const name = obj.constructor?.name;
  return name === 'ContextRun' || name === 'ContextEnvelope';
}
