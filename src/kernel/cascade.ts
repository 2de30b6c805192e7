// The cascade (docs/concepts.md): metadata merged from the library's main, the tool's authority
// chain, the tool's own metadata and the CLI level, lowest precedence first. Annotations (`$`
// keys) are extracted per level and never reach the merged metadata.
import { interpolate, type InterpolationVars } from './interpolate.ts';
import { isPlainObject } from '../core/path.ts';
import type { JsonObject, LoadedTool } from '../core/types.ts';
import { ConfigurationError, type Place } from '../core/errors.ts';
import path from 'node:path';

export type MergePolicy = 'replace' | 'deep' | 'append';

export interface OrderConstraint {
  before?: string[];
  after?: string[];
}

export interface CascadeLevel {
  /** The tool whose metadata this level is (a `main`, the tool itself), or null for the CLI level. */
  tool: LoadedTool | null;
  metadata: JsonObject;
  /** `library`, `authority`, `self` or `cli`. */
  kind: 'library' | 'authority' | 'self' | 'cli';
  label: string;
}

/** One level's contribution to a key of the merged metadata: where it came from, and its value there. */
export interface KeySource {
  /** The level's file, when it has one. */
  file?: string;
  /** The level's name where it has no file: its URI, `--set`, `programmatic:NAME`. */
  label: string;
  value: unknown;
}

export interface HookBinding {
  /** The tool that hooks, and where it binds. */
  tool: string;
  triggers: ('$next' | '$invoke')[];
}

export interface CascadeResult {
  metadata: JsonObject;
  order: Record<string, OrderConstraint>;
  static: Set<string>;
  dynamic: Set<string>;
  /** `$hook` declarations gathered from every level: tool name → triggers. */
  hook: Record<string, string | string[]>;
  /** Named bindings (`$hook: { my-tool: … }`, not `$self`): tool name → the file that declared it. */
  hookFiles: Record<string, string | undefined>;
  /** Where each key of `metadata` was last set. */
  from: Record<string, string>;
  /** Every level that contributed to each key of `metadata`, lowest first (see `placeOf`). */
  sources: Record<string, KeySource[]>;
  /** Where each `$order` list was declared: key → { before, after } as places (`$order.KEY.before`). */
  orderFrom: Record<string, { before?: Place; after?: Place }>;
  inherit: boolean;
}

const ANNOTATIONS = new Set(['$order', '$merge', '$remove', '$static', '$dynamic', '$inherit', '$private', '$hook']);

export interface CascadeEnv {
  workspace: string;
  cwd: string;
}

export function resolveCascade(levels: CascadeLevel[], env: CascadeEnv): CascadeResult {
  const acc: JsonObject = {};
  const from: Record<string, string> = {};
  const sources: Record<string, KeySource[]> = {};
  const order: Record<string, OrderConstraint> = {};
  const orderFrom: Record<string, { before?: Place; after?: Place }> = {};
  const policies: Record<string, MergePolicy> = {};
  const statics = new Set<string>();
  const dynamics = new Set<string>();
  const hook: Record<string, string | string[]> = {};
  const hookFiles: Record<string, string | undefined> = {};
  let inherit = true;

  for (const level of levels) {
    const file = level.tool?.file;
    const vars: InterpolationVars = {
      dir: file ? path.dirname(file) : env.cwd,
      root: level.tool?.root ?? env.workspace,
      workspace: env.workspace,
      cwd: env.cwd,
      name: level.tool?.name ?? '',
    };
    const meta = level.metadata;
    // What a place says when the level has no file: the flag, or the tool's label.
    const source = level.kind === 'cli' ? '--set' : level.label;
    const privateKeys = level.kind === 'authority' || level.kind === 'library' ? asStringList(meta.$private, file, '$private') : [];

    // Annotations first: $remove applies to what the lower levels gave.
    for (const key of asStringList(meta.$remove, file, '$remove')) {
      delete acc[key];
      delete from[key];
      delete sources[key];
    }
    if (meta.$order !== undefined) {
      if (!isPlainObject(meta.$order)) throw bad(file, '$order', 'must be a map of key → { before, after }');
      for (const [k, c] of Object.entries(meta.$order)) {
        if (!isPlainObject(c)) throw bad(file, `$order.${k}`, 'must be { before?: [...], after?: [...] }');
        order[k] = {
          before: c.before === undefined ? order[k]?.before : asStringList(c.before, file, `$order.${k}.before`),
          after: c.after === undefined ? order[k]?.after : asStringList(c.after, file, `$order.${k}.after`),
        };
        const declared = (list: 'before' | 'after'): Place => (file ? { file, key: `$order.${k}.${list}` } : { source, key: `$order.${k}.${list}` });
        orderFrom[k] = {
          before: c.before === undefined ? orderFrom[k]?.before : declared('before'),
          after: c.after === undefined ? orderFrom[k]?.after : declared('after'),
        };
      }
    }
    if (meta.$merge !== undefined) {
      if (!isPlainObject(meta.$merge)) throw bad(file, '$merge', 'must be a map of key → replace | deep | append');
      for (const [k, p] of Object.entries(meta.$merge)) {
        if (p !== 'replace' && p !== 'deep' && p !== 'append') throw bad(file, `$merge.${k}`, `must be replace, deep or append (got ${JSON.stringify(p)})`);
        policies[k] = p;
      }
    }
    for (const k of asStringList(meta.$static, file, '$static')) statics.add(k);
    for (const k of asStringList(meta.$dynamic, file, '$dynamic')) dynamics.add(k);
    if (meta.$hook !== undefined) {
      if (!isPlainObject(meta.$hook)) throw bad(file, '$hook', 'must be a map of tool → "$next" | "$invoke" | [both]');
      for (const [k, v] of Object.entries(meta.$hook)) {
        const triggers = typeof v === 'string' ? [v] : Array.isArray(v) ? v : null;
        if (!triggers || triggers.some((t) => t !== '$next' && t !== '$invoke')) throw bad(file, `$hook.${k}`, 'must be "$next", "$invoke" or a list of them');
        // `$self` means "this level's tool, when it appears as a metadata key elsewhere".
        const name = k === '$self' ? (level.tool?.name ?? k) : k;
        hook[name] = v as string | string[];
        if (k !== '$self') hookFiles[name] = file;
      }
    }
    if (level.kind === 'self' && meta.$inherit === false) inherit = false;

    for (const key of Object.keys(meta)) {
      if (key.startsWith('$')) {
        if (!ANNOTATIONS.has(key)) throw bad(file, key, `unknown annotation — use one of ${[...ANNOTATIONS].join(', ')}`);
        continue;
      }
      if (privateKeys.includes(key)) continue;
      const value = interpolate(meta[key], vars, { file, key });
      // A value that replaces what the levels below gave leaves them nothing to answer for.
      const lower = acc[key];
      const replaces = lower === undefined || policies[key] === 'replace' || (policies[key] !== 'append' && !(isPlainObject(lower) && isPlainObject(value)));
      acc[key] = mergeValue(acc[key], value, policies[key]);
      from[key] = level.label;
      const contribution: KeySource = file ? { file, label: source, value } : { label: source, value };
      if (replaces || !sources[key]) sources[key] = [contribution];
      else sources[key].push(contribution);
    }
  }
  return { metadata: acc, order, static: statics, dynamic: dynamics, hook, hookFiles, from, sources, orderFrom, inherit };
}

/**
 * The place of the level that set `key` — or, given a path inside its value (`sandbox.timeoutMs`),
 * of the highest level whose value has that path: with deep merges, a sub-key may come from a
 * level below the one that set the key last. Undefined for a key no level set.
 */
export function placeOf(cascade: CascadeResult, key: string, subPath: readonly string[] = []): Place | undefined {
  const list = cascade.sources[key];
  if (!list?.length) return undefined;
  let found = list[list.length - 1]!;
  if (subPath.length) {
    for (let i = list.length - 1; i >= 0; i--) {
      if (hasPath(list[i]!.value, subPath)) {
        found = list[i]!;
        break;
      }
    }
  }
  const full = [key, ...subPath].join('.');
  return found.file ? { file: found.file, key: full } : { source: found.label, key: full };
}

function hasPath(value: unknown, path: readonly string[]): boolean {
  let cur = value;
  for (const part of path) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, part)) return false;
    cur = (cur as Record<string, unknown>)[part];
  }
  return true;
}

/** Default merge: plain objects merge deeply (higher level wins on conflict); arrays and scalars are replaced. */
export function mergeValue(lower: unknown, higher: unknown, policy?: MergePolicy): unknown {
  if (lower === undefined || policy === 'replace') return higher;
  if (policy === 'append' && !(isPlainObject(lower) && isPlainObject(higher))) {
    // Lower level first; a scalar on either side counts as a one-item list.
    return [...(Array.isArray(lower) ? lower : [lower]), ...(Array.isArray(higher) ? higher : [higher])];
  }
  if (isPlainObject(lower) && isPlainObject(higher)) {
    const out: JsonObject = { ...lower };
    for (const k of Object.keys(higher)) out[k] = mergeValue(lower[k], higher[k], policy === 'append' ? 'append' : undefined);
    return out;
  }
  return higher;
}

function asStringList(value: unknown, file: string | undefined, key: string): string[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return value.split(/[\s,]+/).filter(Boolean);
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value as string[];
  throw bad(file, key, 'must be a list of names');
}

function bad(file: string | undefined, key: string, message: string): ConfigurationError {
  return new ConfigurationError(`${key} ${message}`, { place: { file, key } });
}

/** Peeks a tool's own `$inherit: false` without resolving anything. */
export function inherits(metadata: JsonObject): boolean {
  return metadata.$inherit !== false;
}
