// The cascade (SPEC §6.1–6.3): metadata merged from the library's main, the tool's authority
// chain, the tool's own metadata and the CLI level, lowest precedence first. Annotations (`$`
// keys) are extracted per level and never reach the merged metadata.
import { interpolate, type InterpolationVars } from './interpolate.ts';
import { isPlainObject } from './path.ts';
import type { JsonObject, LoadedTool } from './types.ts';
import { ConfigurationError } from './errors.ts';
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
  const order: Record<string, OrderConstraint> = {};
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
    const privateKeys = level.kind === 'authority' || level.kind === 'library' ? asStringList(meta.$private, file, '$private') : [];

    // Annotations first: $remove applies to what the lower levels gave.
    for (const key of asStringList(meta.$remove, file, '$remove')) {
      delete acc[key];
      delete from[key];
    }
    if (meta.$order !== undefined) {
      if (!isPlainObject(meta.$order)) throw bad(file, '$order', 'must be a map of key → { before, after }');
      for (const [k, c] of Object.entries(meta.$order)) {
        if (!isPlainObject(c)) throw bad(file, `$order.${k}`, 'must be { before?: [...], after?: [...] }');
        order[k] = {
          before: c.before === undefined ? order[k]?.before : asStringList(c.before, file, `$order.${k}.before`),
          after: c.after === undefined ? order[k]?.after : asStringList(c.after, file, `$order.${k}.after`),
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
      acc[key] = mergeValue(acc[key], value, policies[key]);
      from[key] = level.label;
    }
  }
  return { metadata: acc, order, static: statics, dynamic: dynamics, hook, hookFiles, from, inherit };
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
