// `invoke`, exactly as the eight steps of docs/concepts.md ("Invoke, step by step"): $NAME extraction → findTool → child context and
// its seed → origin / prompt / tool → history frame → authority and cascade (cached in the
// Planner) → chain entries → run the chain. The kernel knows only how to invoke, cascade, sort
// and run a chain; every middleware is a skill.
import { AbortError, AgentAppsError, toError } from '../core/errors.ts';
import { ContextImpl, ContextLocals, ContextRun, isContext } from './context.ts';
import { Manager } from './manager.ts';
import { applyDefaults, hasDefaults } from './defaults.ts';
import { isPlainObject } from '../core/path.ts';
import { DEFAULT_AFTER, DEFAULT_BEFORE, sortEntries } from './order.ts';
import { parseAllowedTools } from './allowed-tools.ts';
import { Planner, type ChainEntry, type HookRef, type Plan } from './plan.ts';
import type { EntryRun } from './chain.ts';
import type { Logger } from './log.ts';
import type { Registry } from '../loader/registry.ts';
import type { Context, ContextSeed, ExtraMiddleware, Globals, InvokeOptions, JsonObject, LoadedTool, LocalConfig, Locals, Nonlocals, ToolDef, ToolDescription, ToolSummary } from '../core/types.ts';
import { isPathRef } from '../loader/names.ts';

export interface KernelOptions {
  registry: Registry;
  logger: Logger;
  globals: Globals;
  base: LocalConfig;
  overrides: JsonObject;
}

const SEED_SKIP = new Set(['envelope', 'parent', 'target', 'signal', 'args', 'manager', 'globals', 'middleware']);
const defaultsCache = new WeakMap<LoadedTool, boolean>();

export class Kernel {
  readonly registry: Registry;
  readonly logger: Logger;
  readonly globals: Globals;
  readonly base: LocalConfig;
  readonly planner: Planner;

  constructor(opts: KernelOptions) {
    this.registry = opts.registry;
    this.logger = opts.logger;
    this.globals = opts.globals;
    this.base = opts.base;
    this.planner = new Planner({ registry: opts.registry, overrides: opts.overrides, workspace: opts.base.workspace, cwd: opts.base.cwd });
  }

  /** The root context: no tool, no pipeline; every invocation of a runtime descends from it. */
  createRoot(tool: LoadedTool, nonlocals: Nonlocals = {}, signal?: AbortSignal, interactive = false): ContextImpl {
    const ctx = new ContextImpl(null, undefined, Object.freeze({}), this.newLocals(null, tool, {}), nonlocals, this.globals, new ContextRun(tool.uri, tool.frontmatter, tool.decl, interactive));
    const manager = new Manager(ctx, this, tool);
    manager.seedSignal = signal;
    ctx.bind(manager);
    ctx.nonlocals.rootContextId = ctx.envelope.id;
    manager.chain.finished = true;
    return ctx;
  }

  invoke(caller: Context, ref: string | ToolDef, args?: unknown, options?: InvokeOptions): Promise<unknown> {
    // Step 1: $NAME extraction — `$context` etc. become invoke options; explicit options win.
    let effective = args;
    let opts = options;
    if (isPlainObject(args)) {
      let clean: Record<string, unknown> | undefined;
      for (const key in args) {
        if (key.charCodeAt(0) !== 36 /* $ */) continue;
        clean ??= { ...args };
        delete clean[key];
        opts = mergeOption(opts, key.slice(1), args[key]);
      }
      if (clean) effective = clean;
    }
    if (opts?.detached) {
      const { detached: _, ...rest } = opts;
      this.run(caller, ref, effective, rest).catch((err) => {
        // A refusal is not a failure: it was logged as `abort` where it happened.
        if (err instanceof AbortError) return;
        (caller.manager as Manager).log({ type: 'error', tag: 'pipeline', level: 'warn', code: err?.code, text: `detached invocation of '${typeof ref === 'string' ? ref : (ref.name ?? 'anonymous')}' failed: ${err?.message ?? err}` });
      });
      return Promise.resolve(undefined);
    }
    return this.run(caller, ref, effective, opts);
  }

  private run(caller: Context, ref: string | ToolDef, args: unknown, options: InvokeOptions | undefined): Promise<unknown> {
    try {
      const callerLocals = caller.locals;
      const internals = callerLocals.internals;
      // untrustedRef (docs/agents.md): agent code may name tools, never load code by URI or path.
      if (internals?.untrustedRef && isPathRef(ref)) {
        throw new AgentAppsError('E_UNTRUSTED_REF', `agent code may only invoke tools by name; '${typeof ref === 'string' ? ref.slice(0, 80) : 'an inline ToolDef'}' is a path, URI or definition`);
      }
      // Step 2: resolve the ref on the caller's current paths — without the look-up's promises
      // when the registry holds the tool already (the same tool `resolve` would give:
      // Registry.findLoaded). Either way the callee starts on a later tick, never inside this
      // call: an invoke returns before its tool runs, and a skill that invokes itself N deep
      // does not grow one stack N invocations tall.
      const config = callerLocals.config;
      const loaded = this.registry.findLoaded(ref, config.paths);
      const tool = loaded ? Promise.resolve(loaded) : this.resolve(ref, config.paths, config.cwd);
      return tool.then((t) => this.resolved(caller, t, args, options));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Step 2's end, for a resolved tool: the caller's allowed-tools, then steps 3–8. */
  private resolved(caller: Context, tool: LoadedTool, args: unknown, options: InvokeOptions | undefined): Promise<unknown> {
    const internals = caller.locals.internals;
    if (internals?.allowedTools !== undefined) this.checkAllowed(caller, tool, args, internals.allowedTools as string);
    const seed = options?.context;
    // A seed from JSON (`$context` in CLI or agent args) cannot carry a real context: only a live one is a target.
    return this.start(caller, tool, args, seed, isContext(seed?.target) ? seed!.target : undefined, false);
  }

  /**
   * A chain entry: the tool invoked with `target` set to the served context (docs/concepts.md).
   * `run`, the chain's record of the entry, is settled by the entry's own pipeline when it can
   * be at once (execute, a leaf pipeline): only on this path, where nothing waits first.
   */
  invokeEntry(served: ContextImpl, entry: ChainEntry, run?: EntryRun): Promise<unknown> {
    const paths = served.locals.config.paths;
    const hit = this.registry.lookup(entry.name, paths);
    const loaded = hit === undefined ? undefined : 'decl' in hit ? hit : this.registry.loaded(hit);
    if (loaded) return this.start(served, loaded, entry.args, undefined, served, true, run);
    return this.resolve(entry.name, paths, served.locals.config.cwd).then((tool) => this.start(served, tool, entry.args, undefined, served, true));
  }

  async resolve(ref: string | ToolDef, paths: readonly string[], cwd: string): Promise<LoadedTool> {
    return this.registry.find(ref, paths, cwd);
  }

  private checkAllowed(caller: Context, tool: LoadedTool, args: unknown, spec: string): void {
    const name = tool.name;
    // Path constraints resolve against the caller's cwd, with the callee's params telling which args are paths.
    if (!parseAllowedTools(spec).allows(name, args, { cwd: caller.locals.config.cwd, params: tool.decl.params })) {
      throw new AgentAppsError('E_ALLOWED_TOOLS', `'${caller.run.tool.name}' may not invoke '${name}'${isPlainObject(args) && Object.keys(args).length ? ' with these args' : ''}: allowed-tools is '${spec}'`);
    }
  }

  /** Steps 3–8 for a resolved tool. */
  private start(parent: Context, tool: LoadedTool, rawArgs: unknown, seed: ContextSeed | undefined, target: Context | undefined, isEntry: boolean, run?: EntryRun): Promise<unknown> {
    // Step 3: the child context. Args are frozen; the tool's own params defaults apply now.
    let args = rawArgs;
    let hasDefs = defaultsCache.get(tool);
    if (hasDefs === undefined) defaultsCache.set(tool, (hasDefs = hasDefaults(tool.decl.params)));
    if (hasDefs) args = applyDefaults(tool.decl.params, args);
    if (args === undefined) args = isEntry ? undefined : {};
    // docs/concepts.md: args are frozen after creation — a chain entry's too (cascade values already are).
    if (isPlainObject(args) && !Object.isFrozen(args)) args = Object.freeze(args === rawArgs ? { ...args } : args);
    const nonlocals: Nonlocals = { ...parent.nonlocals };
    const locals = this.newLocals(parent, tool, args);
    // Step 4 (with the context): origin, prompt, tool declaration.
    const state = new ContextRun(tool.uri, tool.frontmatter, tool.decl, seed?.run?.interactive === true);
    const ctx = new ContextImpl(parent, target, args, locals, nonlocals, this.globals, state);
    // The new context's config is the runtime's base until read (ContextLocals): its paths are the base's.
    const paths = this.base.paths;
    const cached = this.planner.peek(tool, paths);
    const manager = new Manager(ctx, this, tool);
    ctx.bind(manager);
    if (tool.prompt !== undefined) locals.prompt = { raw: tool.prompt };
    if (seed) this.applySeed(ctx, manager, seed);
    // Tracing (docs/ci.md, "Tracing"): a span per invocation, when a tracer is on — one read of an
    // absent property when it is off.
    const traced = isEntry ? undefined : this.globals.internals.tracer?.invocation(ctx, tool);
    const running = cached
      ? this.execute(ctx, manager, cached, run)
      : this.planner.plan(tool, paths).then((plan) => this.execute(ctx, manager, plan));
    return traced === undefined ? running : traced(running);
  }

  private newLocals(parent: Context | null, tool: LoadedTool, args: unknown): Locals {
    // Step 5: the history frame — a child starts with its parent's stack plus its own frame. The
    // runtime's root context was not invoked, so it has none: the stack starts at the first tool.
    // Append-only (docs/concepts.md), built frozen on first read: most contexts never read theirs.
    return parent ? ContextLocals.invoked(parent.locals, tool.name, args, this.base) : new ContextLocals(undefined, undefined, this.base, true);
  }

  private applySeed(ctx: ContextImpl, manager: Manager, seed: ContextSeed): void {
    // The seed signal (docs/concepts.md, run.signal): `{ signal }`, or `{ run: { signal } }` by its path.
    const signal = seed.signal ?? seed.run?.signal;
    if (signal instanceof AbortSignal) manager.seedSignal = signal;
    for (const key of Object.keys(seed)) {
      if (SEED_SKIP.has(key)) continue;
      const value = seed[key];
      if (key === 'locals' && isPlainObject(value)) {
        // The history is the kernel's (append-only): a seed cannot bring its own.
        const { history: _history, ...rest } = value;
        Object.assign(ctx.locals, rest);
      }
      else if (key === 'nonlocals' && isPlainObject(value)) Object.assign(ctx.nonlocals, value);
      // `run` is set by the orchestrator (origin, tool, middleware); a seed only chooses `interactive`, at creation.
    }
    // `$context: { middleware }` is shorthand for `{ locals: { middleware } }`.
    if (seed.middleware !== undefined) ctx.locals.middleware = { ...(ctx.locals.middleware ?? {}), ...seed.middleware };
  }

  // Steps 7–8: the chain entries, then the chain. With `then`, not as an async function (see
  // chain.ts, #runEntry): on the way out the manager is disposed and a failure is the context's
  // `locals.error` — as a try / catch / finally would. A pipeline with no entries and no `$invoke`
  // hook — a middleware's own (the SCC rule) — runs as a leaf, without a Chain, its function's
  // value and the pipeline's end settled in one `then` (settleLeaf; docs/events.md, "Performance").
  private execute(ctx: ContextImpl, manager: Manager, plan: Plan, run?: EntryRun): Promise<unknown> {
    ctx.run.middleware = plan.cascade.metadata;
    const extra = ctx.locals.middleware;
    const inherited = ctx.envelope.hasOtherTarget ? undefined : ctx.nonlocals.middleware;
    let running: Promise<unknown>;
    try {
      const entries = extra || inherited ? mergeExtra(plan.entries, inherited, extra) : plan.entries;
      const hooks = plan.hooks && ctx.nonlocals.debug !== false ? plan.hooks : null;
      if (entries.length === 0 && !hooks?.invoke.length) {
        const value = manager.startLeaf();
        if (run === undefined) return settleLeaf(manager, value);
        run.settled = true;
        return settleEntryLeaf(manager, value, run);
      }
      const chain = manager.chain;
      chain.entries = entries;
      if (hooks?.next.length) chain.nextHooks = hooks.next;
      running = hooks?.invoke.length ? chain.wrap(hooks.invoke, () => chain.start(), { trigger: '$invoke', args: ctx.args }) : manager.next();
    } catch (err) {
      try {
        return Promise.reject(failed(ctx, manager, err));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return running.then(
      () => settled(manager),
      (err: unknown) => {
        throw failed(manager.ctx, manager, err);
      },
    );
  }

  /** `list` (docs/cli.md): every tool on the paths. */
  list(paths: readonly string[], opts?: { all?: boolean }): Promise<ToolSummary[]> {
    return this.registry.list(paths, opts);
  }

  /** `describe`: declaration, origin, resolved cascade and the ordered chain with provenance. */
  async describe(ref: string, paths: readonly string[] = this.base.paths, cwd = this.base.cwd): Promise<ToolDescription> {
    const tool = await this.registry.find(ref, paths, cwd);
    const plan = await this.planner.plan(tool, paths);
    const description: ToolDescription & { hooks?: unknown; kind?: string } = {
      tool: { ...tool.decl },
      origin: { uri: tool.uri },
      metadata: plan.cascade.metadata,
      chain: plan.entries.map((e) => ({ name: e.name, args: e.args, ...(e.from ? { from: e.from } : {}) })),
    };
    if (plan.hooks) description.hooks = plan.hooks;
    return description;
  }

  /**
   * A `$hook` binding (docs/events.md): the hook tool runs as middleware serving `served`. Per the
   * seed it receives the wrapped entry's args ($next) or the tool's args ($invoke); its own
   * cascade value and what it wraps are on `ctx.locals.hook`.
   */
  invokeHook(served: ContextImpl, hook: HookRef, info: { trigger: '$next' | '$invoke'; entry?: string; args: unknown }): Promise<unknown> {
    const seed: ContextSeed = { locals: { hook: { trigger: info.trigger, entry: info.entry, config: hook.args, tool: served.run.tool.name } } };
    return this.resolve(hook.name, served.locals.config.paths, served.locals.config.cwd).then(async (tool) => {
      // A hook that runs commands (`shell`), bound by a workspace's own file, runs only in a trusted
      // workspace (docs/security.md, "What a cloned workspace can do"): it would run on every call.
      if (tool.decl.tags.includes('process')) await this.globals.internals.workspaceTrust?.require({ kind: 'hook', name: hook.name, command: `${hook.name} as a ${info.trigger} hook`, ...(hook.file ? { file: hook.file } : {}) });
      return this.start(served, tool, info.args, seed, served, true);
    });
  }
}

/** A pipeline that ran to its end: refused if a context on the way up was, else its result; the manager disposed. */
function settled(manager: Manager): unknown {
  const ctx = manager.ctx;
  if (manager.isAborted()) throw failed(ctx, manager, new AbortError(manager.effectiveAbortReason()));
  const result = ctx.locals.result;
  manager.dispose();
  return result;
}

/** A leaf pipeline's end (execute): its function's value, if any, is the result — then as `settled`. */
function settleLeaf(manager: Manager, value: unknown): Promise<unknown> {
  return Promise.resolve(value).then(
    (v: unknown) => {
      if (v !== undefined) manager.ctx.locals.result = v;
      return settled(manager);
    },
    (err: unknown) => {
      throw failed(manager.ctx, manager, manager.leafThrew(err));
    },
  );
}

/**
 * settleLeaf and the serving chain's step for the entry (`run`, chain.ts) in one `then`: what
 * settleLeaf resolves to goes to `entryDone`, what it throws to `entryFailed` — as the chain's own
 * `then` on settleLeaf's promise would, a tick later.
 */
function settleEntryLeaf(manager: Manager, value: unknown, run: EntryRun): Promise<unknown> {
  return Promise.resolve(value).then(
    (v: unknown) => {
      let result: unknown;
      try {
        if (v !== undefined) manager.ctx.locals.result = v;
        result = settled(manager);
      } catch (err) {
        return run.chain.entryFailed(run, err);
      }
      return run.chain.entryDone(run, result);
    },
    (err: unknown) => {
      let error: unknown;
      try {
        error = failed(manager.ctx, manager, manager.leafThrew(err));
      } catch (thrown) {
        error = thrown;
      }
      return run.chain.entryFailed(run, error);
    },
  );
}

/** A failed invocation: its error on `locals.error` (the first one only), the manager disposed. */
function failed(ctx: ContextImpl, manager: Manager, err: unknown): Error {
  try {
    const error = toError(err);
    if (ctx.locals.error === undefined) ctx.locals.error = error;
    return error;
  } finally {
    manager.dispose();
  }
}

function mergeOption(opts: InvokeOptions | undefined, name: string, value: unknown): InvokeOptions {
  const out: Record<string, unknown> = { ...(opts ?? {}) };
  const existing = out[name];
  if (name === 'context' && isPlainObject(value)) {
    // `$context` fills in what the explicit option left out, without overwriting it.
    out.context = isPlainObject(existing) ? fillIn(existing, value) : value;
  } else if (existing === undefined) out[name] = value;
  else if (isPlainObject(existing) && isPlainObject(value)) out[name] = fillIn(existing, value);
  return out as InvokeOptions;
}

function fillIn(primary: Record<string, unknown>, secondary: Record<string, unknown>): Record<string, unknown> {
  const out = { ...primary };
  for (const [k, v] of Object.entries(secondary)) {
    if (out[k] === undefined) out[k] = v;
    else if (isPlainObject(out[k]) && isPlainObject(v)) out[k] = fillIn(out[k] as Record<string, unknown>, v);
  }
  return out;
}

/**
 * Extra middleware (docs/middleware.md): `name → args` or `name → { args, before, after, remove, fn }`.
 * Same name as a cascade entry overrides it (keeping its ordering as fallback); `remove: true`
 * suppresses it; a new name is appended with the default ordering.
 */
export function mergeExtra(entries: readonly ChainEntry[], ...sources: (ExtraMiddleware | undefined)[]): ChainEntry[] {
  const chain: ChainEntry[] = [...entries];
  for (const source of sources) {
    if (!source) continue;
    for (const [name, raw] of Object.entries(source)) {
      const spec = normalizeSpec(raw);
      const i = chain.findIndex((e) => e.name === name);
      if (spec.remove) {
        if (i !== -1) chain.splice(i, 1);
        continue;
      }
      if (i !== -1) {
        const old = chain[i]!;
        chain[i] = { name, args: spec.args, fn: spec.fn ?? old.fn, before: spec.before ?? old.before, after: spec.after ?? old.after, from: 'middleware' };
      } else {
        // Like `$order`: the default slot only for an entry with no constraint at all.
        const own = spec.before !== undefined || spec.after !== undefined;
        chain.push({ name, args: spec.args, fn: spec.fn, before: spec.before ?? (own ? [] : DEFAULT_BEFORE), after: spec.after ?? (own ? [] : DEFAULT_AFTER), from: 'middleware' });
      }
    }
  }
  // docs/middleware.md: an entry whose constraints all name absent entries keeps the default slot.
  return sortEntries(chain, { defaultSlot: true });
}

const EXTRA_ENTRY_KEYS = new Set(['args', 'before', 'after', 'remove', 'fn']);

function normalizeSpec(raw: unknown): { args: unknown; before?: string[]; after?: string[]; remove?: boolean; fn?: ChainEntry['fn'] } {
  if (typeof raw === 'function') return { args: undefined, fn: raw as ChainEntry['fn'] };
  if (isPlainObject(raw) && Object.keys(raw).length > 0 && Object.keys(raw).every((k) => EXTRA_ENTRY_KEYS.has(k))) {
    const list = (v: unknown) => (v === undefined ? undefined : Array.isArray(v) ? (v as string[]) : [String(v)]);
    return { args: raw.args, before: list(raw.before), after: list(raw.after), remove: raw.remove === true, fn: raw.fn as ChainEntry['fn'] };
  }
  return { args: raw };
}

