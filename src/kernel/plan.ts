// Steps 6–8 of invoke (docs/concepts.md, "Invoke, step by step"), cached per tool: authority chain → cascade → toolKeys → auto-static
// demotion (Tarjan SCC) → ordered chain entries. Nothing here depends on the invocation, so the
// result is shared by every call of the tool until the registry is invalidated.
import { placeOf, resolveCascade, type CascadeLevel, type CascadeResult } from './cascade.ts';
import { ContextRun, sealShared } from './context.ts';
import { deepFreeze } from '../core/path.ts';
import { ConfigurationError, formatSchemaErrors, type Place, type SchemaError } from '../core/errors.ts';
import { DEFAULT_AFTER, DEFAULT_BEFORE, sortEntries } from './order.ts';
import { check } from './schema.ts';
import { stronglyConnected } from './scc.ts';
import type { Context, JsonObject, LoadedTool } from '../core/types.ts';
import type { Registry } from '../loader/registry.ts';
import type { IndexEntry } from '../loader/scan.ts';

export interface ChainEntry {
  name: string;
  args: unknown;
  before?: readonly string[];
  after?: readonly string[];
  /** Called directly instead of invoking a tool (injected continuations, programmatic entries). */
  fn?: (ctx: Context, args: unknown) => unknown;
  /** `$dynamic`: resolved when the chain reaches it, skipped silently if still absent. */
  dynamic?: boolean;
  /** Where the key came from in the cascade (for `describe`). */
  from?: string;
  /** The file (or source) and key of the cascade level that set the entry's value. */
  place?: Place;
  /** Where its `$order` lists were declared, to name them in a cycle. */
  orderFrom?: { before?: Place; after?: Place };
}

export interface HookRef {
  name: string;
  /** The hook's own value in the cascade (`debug: { break: [...] }`). */
  args: unknown;
  /** The file whose `$hook` bound it, when one did (a workspace's hook that runs commands needs its trust). */
  file?: string;
}

export interface HookPlan {
  next: HookRef[];
  invoke: HookRef[];
}

export interface Plan {
  cascade: CascadeResult;
  entries: readonly ChainEntry[];
  /** null when no hook is declared: then there is no wrapper at all. */
  hooks: HookPlan | null;
}

interface Partial {
  cascade: CascadeResult;
  /** toolKeys before SCC demotion, and which of them bind as hooks. */
  candidates: string[];
  hookKeys: Map<string, ('$next' | '$invoke')[]>;
}

export interface PlanEnv {
  registry: Registry;
  overrides: JsonObject;
  workspace: string;
  cwd: string;
}

export class Planner {
  private env: PlanEnv;
  private partials = new WeakMap<LoadedTool, Map<readonly string[], Partial>>();
  private plans = new WeakMap<LoadedTool, Map<readonly string[], Plan>>();
  private components = new WeakMap<readonly string[], Map<string, number>>();
  private generation = -1;
  private sccRuns = 0;

  constructor(env: PlanEnv) {
    this.env = env;
  }

  private sync(): void {
    if (this.generation !== this.env.registry.structure) {
      this.generation = this.env.registry.structure;
      this.partials = new WeakMap();
      this.plans = new WeakMap();
      this.components = new WeakMap();
    }
  }

  /** The cached plan, or undefined if it must be computed (lets the hot path stay synchronous). */
  peek(tool: LoadedTool, paths: readonly string[]): Plan | undefined {
    if (this.generation !== this.env.registry.structure) return undefined;
    return this.plans.get(tool)?.get(paths);
  }

  async plan(tool: LoadedTool, paths: readonly string[]): Promise<Plan> {
    this.sync();
    const hit = this.plans.get(tool)?.get(paths);
    if (hit) return hit;
    // run.tool's schemas and tags are this declaration's, shared by every invocation: frozen once, here.
    sealShared(tool.decl);
    const own = await this.partial(tool, paths);
    const component = await this.componentsFor(tool, paths);
    const mine = component.get(tool.name);
    const { cascade } = own;
    const entries: ChainEntry[] = [];
    for (const key of own.candidates) {
      // Auto-static: a toolKey whose tool shares the current tool's SCC is demoted to data.
      if (!cascade.dynamic.has(key) && mine !== undefined && component.get(key) === mine) continue;
      const order = cascade.order[key];
      entries.push({
        name: key,
        args: deepFreeze(cascade.metadata[key]),
        before: order ? (order.before ?? []) : DEFAULT_BEFORE,
        after: order ? (order.after ?? []) : DEFAULT_AFTER,
        dynamic: cascade.dynamic.has(key) && !this.env.registry.has(key, paths),
        from: cascade.from[key],
        place: placeOf(cascade, key),
        orderFrom: cascade.orderFrom[key],
      });
    }
    let hooks: HookPlan | null = null;
    for (const [key, triggers] of own.hookKeys) {
      if (mine !== undefined && component.get(key) === mine) continue;
      hooks ??= { next: [], invoke: [] };
      const args = deepFreeze(cascade.metadata[key]);
      const file = cascade.hookFiles[key] ?? placeOf(cascade, key)?.file;
      const ref: HookRef = file ? { name: key, args, file } : { name: key, args };
      if (triggers.includes('$next')) hooks.next.push(ref);
      if (triggers.includes('$invoke')) hooks.invoke.push(ref);
    }
    // A cycle names the files that declared its edges; failing that, the tool's own file.
    const sorted = sortEntries(entries, { defaultSlot: true, chain: tool.name, place: tool.file ? { file: tool.file } : { source: tool.uri ?? `${tool.kind}:${tool.name}` } });
    const plan: Plan = { cascade, entries: Object.freeze(sorted), hooks };
    deepFreeze(cascade.metadata);
    cascades.set(cascade.metadata, cascade);
    let byPaths = this.plans.get(tool);
    if (!byPaths) this.plans.set(tool, (byPaths = new Map()));
    byPaths.set(paths, plan);
    return plan;
  }

  /** Cascade levels for a tool, lowest precedence first (docs/concepts.md). */
  async levels(tool: LoadedTool): Promise<CascadeLevel[]> {
    const { registry, overrides } = this.env;
    const levels: CascadeLevel[] = [];
    if (tool.metadata.$inherit !== false) {
      const lib = registry.libraryMain();
      if (lib && lib.file !== tool.file) levels.push(await this.level(lib, 'library'));
      for (const auth of registry.authorities(tool)) levels.push(await this.level(auth, 'authority'));
    }
    levels.push({ tool, metadata: tool.metadata, kind: 'self', label: tool.uri ?? `${tool.kind}:${tool.name}` });
    if (Object.keys(overrides).length) levels.push({ tool: null, metadata: overrides, kind: 'cli', label: 'cli (--set)' });
    return levels;
  }

  private async level(entry: IndexEntry, kind: 'library' | 'authority'): Promise<CascadeLevel> {
    const main = await this.env.registry.load(entry);
    return { tool: main, metadata: main.metadata, kind, label: main.uri ?? main.name };
  }

  private async partial(tool: LoadedTool, paths: readonly string[]): Promise<Partial> {
    let byPaths = this.partials.get(tool);
    const hit = byPaths?.get(paths);
    if (hit) return hit;
    const cascade = resolveCascade(await this.levels(tool), { workspace: this.env.workspace, cwd: this.env.cwd });
    const { registry } = this.env;
    const candidates: string[] = [];
    const hookKeys = new Map<string, ('$next' | '$invoke')[]>();
    for (const key of Object.keys(cascade.metadata)) {
      if (key === tool.name || cascade.static.has(key)) continue;
      // `KEY: false` turns a middleware off — any middleware, user ones as the built-ins (issue 8).
      if (cascade.metadata[key] === false) continue;
      const exists = registry.has(key, paths);
      if (!exists && !cascade.dynamic.has(key)) continue;
      // A tool that declares `$hook: { $self: … }` binds as a hook, not as a chain entry (docs/events.md).
      let triggers: ('$next' | '$invoke')[] | undefined;
      const declared = cascade.hook[key];
      if (declared !== undefined) triggers = (Array.isArray(declared) ? declared : [declared]) as ('$next' | '$invoke')[];
      else if (exists) {
        const target = await registry.find(key, paths, this.env.cwd).catch(() => undefined);
        const self = target?.metadata.$hook as Record<string, unknown> | undefined;
        if (self && typeof self === 'object' && self.$self !== undefined) {
          const v = self.$self;
          triggers = (Array.isArray(v) ? v : [v]).filter((t) => t === '$next' || t === '$invoke') as ('$next' | '$invoke')[];
        }
      }
      if (triggers && triggers.length) hookKeys.set(key, triggers);
      else candidates.push(key);
    }
    // A named binding (`$hook: { my-tool: "$invoke" }`) binds my-tool even with no `my-tool:` key
    // (its config is then undefined); naming a tool that does not exist is a configuration error.
    for (const [name, file] of Object.entries(cascade.hookFiles)) {
      if (name === tool.name || hookKeys.has(name) || cascade.static.has(name)) continue;
      if (!registry.has(name, paths)) {
        if (cascade.dynamic.has(name)) continue;
        throw new ConfigurationError(`no skill named '${name}' on the search paths to bind as a hook`, { place: { file, key: `$hook.${name}` } });
      }
      if (name in cascade.metadata) continue; // a key that is there but did not bind: the loop above decided
      const declared = cascade.hook[name]!;
      hookKeys.set(name, (Array.isArray(declared) ? declared : [declared]) as ('$next' | '$invoke')[]);
    }
    const partial: Partial = { cascade, candidates, hookKeys };
    if (!byPaths) this.partials.set(tool, (byPaths = new Map()));
    byPaths.set(paths, partial);
    return partial;
  }

  /** SCC ids for every tool reachable from `start` through toolKeys. */
  private async componentsFor(start: LoadedTool, paths: readonly string[]): Promise<Map<string, number>> {
    let known = this.components.get(paths);
    if (!known) this.components.set(paths, (known = new Map()));
    if (known.has(start.name)) return known;
    const edges = new Map<string, string[]>();
    const queue: LoadedTool[] = [start];
    edges.set(start.name, []);
    while (queue.length) {
      const tool = queue.shift()!;
      const p = await this.partial(tool, paths);
      const out = [...p.candidates, ...p.hookKeys.keys()].filter((k) => this.env.registry.has(k, paths));
      edges.set(tool.name, out);
      for (const name of out) {
        if (edges.has(name)) continue;
        edges.set(name, []);
        try {
          queue.push(await this.env.registry.find(name, paths, this.env.cwd));
        } catch {
          // A broken tool has no outgoing edges; invoking it reports its own error.
        }
      }
    }
    const comp = stronglyConnected(edges.keys(), (n) => edges.get(n) ?? []);
    const base = ++this.sccRuns * 1_000_000;
    // Only fill names not yet known: an earlier run already gave them consistent ids.
    for (const [name, id] of comp) if (!known.has(name)) known.set(name, base + id);
    return known;
  }
}

// ——— configuration errors with a place (docs/middleware.md, "Errors": a middleware's
// configuration error names the cascade level's file and the key) ———

/** Each plan's frozen metadata → its cascade: what a served context's `run.middleware` was assigned from. */
const cascades = new WeakMap<object, CascadeResult>();

/**
 * Where the value a middleware serves with was set: the file (or source) and key of the cascade
 * level, for `ctx` invoked as a chain entry of a planned pipeline. `subPath` points inside the
 * value (`['sandbox', 'timeoutMs']`). Undefined when the value did not come from the cascade
 * (extra middleware, a directive, an inject) or `ctx` is not a chain entry.
 */
export function entryPlace(ctx: Context, subPath: readonly string[] = []): Place | undefined {
  const served = ctx.envelope.target;
  if (served === ctx || !(served.run instanceof ContextRun)) return undefined;
  const cascade = cascades.get(ContextRun.assignedMiddleware(served.run));
  const name = ctx.run.tool.name;
  if (!cascade || !sameValue(ctx.args, cascade.metadata[name])) return undefined;
  return placeOf(cascade, name, subPath);
}

/** A ConfigurationError about the value `ctx` (a middleware) serves with, placed by `entryPlace`. */
export function configError(ctx: Context, message: string, subPath: readonly string[] = []): ConfigurationError {
  const place = entryPlace(ctx, subPath);
  if (place) return new ConfigurationError(message, { place });
  return new ConfigurationError(`${[ctx.run.tool.name, ...subPath].join('.')}: ${message}`);
}

/**
 * Checks a middleware's value against a JSON Schema (its own `params` by default) and throws a
 * placed ConfigurationError for the first problem, listing the others — for middleware that
 * turn `validate-args` off to say where a bad value was set.
 */
export async function checkConfig(ctx: Context, value: unknown, schema: object | boolean | undefined = ctx.run.tool.params): Promise<void> {
  if (schema === undefined) return;
  const errors = await check(schema, value);
  if (!errors.length) return;
  const [first, ...rest] = errors as [SchemaError, ...SchemaError[]];
  const subPath = first.instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const name = ctx.run.tool.name;
  const more = rest.length ? `; also ${formatSchemaErrors(rest.map((e) => ({ ...e, instancePath: name + e.instancePath.replace(/\//g, '.') })))}` : '';
  throw configError(ctx, `${describeSchemaError(first)}${more}`, subPath);
}

function describeSchemaError(e: SchemaError): string {
  if (e.keyword === 'enum' && Array.isArray(e.params.allowedValues)) return `must be one of ${e.params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  if (e.keyword === 'additionalProperties') return `has an unknown key '${String(e.params.additionalProperty)}'`;
  if (e.keyword === 'required') return `needs '${String(e.params.missingProperty)}'`;
  return e.message ?? e.keyword;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  try {
    return JSON.stringify(a) === JSON.stringify(b);
  } catch {
    return false;
  }
}

/**
 * For the chain runner: a ConfigurationError without a place, thrown by a chain entry, is about
 * the entry's configuration — give it the place of the cascade level that set the entry.
 */
export function withEntryPlace(err: unknown, entry: ChainEntry): unknown {
  if (!(err instanceof ConfigurationError) || err.place || !entry.place) return err;
  return new ConfigurationError(err.message, { place: entry.place, cause: err });
}
