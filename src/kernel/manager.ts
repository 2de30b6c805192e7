// The ContextManager of seed 001 and the chain runner of seed 000 / SPEC §6.6. One manager per
// context; it owns that context's chain position, its abort state and its lazily composed signal.
import { AbortError, AgentAppsError, toError } from './errors.ts';
import { sortEntries } from './order.ts';
import { getPath, setPath } from './path.ts';
import type { ChainEntry, HookRef } from './plan.ts';
import type { ContextImpl } from './context.ts';
import type { Kernel } from './orchestrator.ts';
import type { ChainEntryInput, ConfigureOptions, Context, ContextManager, InvokeOptions, LoadedTool, LogInput, LogLevel, LogSettings, TailOptions, ToolDef, LogEvent } from './types.ts';

interface Frame {
  entry: ChainEntry;
  calledNext: boolean;
  /** For hook frames: what the hook's `target.manager.next()` runs (the wrapped entry or pipeline). */
  onNext?: () => Promise<unknown>;
}

export class Manager implements ContextManager {
  readonly ctx: ContextImpl;
  readonly kernel: Kernel;
  tool: LoadedTool;
  /** Shared with the plan until `inject` or extra middleware make a private copy. */
  chain: readonly ChainEntry[];
  pos = 0;
  /** The chain ran out or was stopped: further `next()` calls return the result. */
  finished = false;
  /** The tool's own function has run (at most once per invocation). */
  fnRan = false;
  aborted = false;
  abortReason: unknown;
  seedSignal: AbortSignal | undefined;
  private frames: Frame[] = [];
  /** `$next` hooks from the plan (seed 003); undefined means no wrapper at all. */
  nextHooks: HookRef[] | undefined;
  private ownsChain = false;
  private controller: AbortController | undefined;
  private release: (() => void)[] | undefined;

  constructor(ctx: ContextImpl, kernel: Kernel, tool: LoadedTool, chain: readonly ChainEntry[]) {
    this.ctx = ctx;
    this.kernel = kernel;
    this.tool = tool;
    this.chain = chain;
  }

  // ── the chain ────────────────────────────────────────────────────────────────────────────

  next(): Promise<unknown> {
    const top = this.frames.length ? this.frames[this.frames.length - 1]! : undefined;
    if (top) {
      if (top.calledNext) {
        this.log({ type: 'next-called-twice', tag: 'pipeline', level: 'warn', code: 'E_NEXT_CALLED_TWICE', text: `'${top.entry.name}' called next() more than once; the second call is a no-op`, entry: top.entry.name });
        return Promise.resolve(this.ctx.locals.result);
      }
      top.calledNext = true;
      if (top.onNext) return top.onNext();
    }
    return this.dispatch();
  }

  /**
   * Runs `hooks[i]` as middleware serving this context; its `target.manager.next()` runs the
   * next hook, and the last one runs `inner` — so hooks form an onion around one operation.
   */
  runHooks(hooks: readonly HookRef[], i: number, inner: () => Promise<unknown>, info: { trigger: '$next' | '$invoke'; entry?: string; args: unknown }): Promise<unknown> {
    if (i >= hooks.length) return inner();
    const hook = hooks[i]!;
    const frame: Frame = { entry: { name: hook.name, args: hook.args }, calledNext: false, onNext: () => this.runHooks(hooks, i + 1, inner, info) };
    this.frames.push(frame);
    const done = () => {
      const at = this.frames.lastIndexOf(frame);
      if (at !== -1) this.frames.splice(at, 1);
    };
    return this.kernel.invokeHook(this.ctx, hook, info).then(
      async (value) => {
        done();
        // A hook that never called next() still lets the wrapped operation run: hooks observe, they do not gate.
        if (!frame.calledNext) await inner();
        return value;
      },
      (err) => {
        done();
        throw err;
      },
    );
  }

  /** Starts the chain from the pipeline's side (not a middleware's next()): `$invoke` hooks wrap this. */
  startChain(): Promise<unknown> {
    return this.dispatch();
  }

  private async dispatch(): Promise<unknown> {
    const ctx = this.ctx;
    for (;;) {
      if (this.finished || this.isAborted()) return ctx.locals.result;
      if (this.pos >= this.chain.length) {
        this.finished = true;
        // Leaf fallback: no executor ran the tool (built-in middleware, whose own pipelines are
        // demoted by the SCC rule), so the kernel calls the tool's function directly.
        if (!this.fnRan && this.tool.fn) {
          const value = await this.runFunction();
          if (value !== undefined) ctx.locals.result = value;
        }
        return ctx.locals.result;
      }
      const entry = this.chain[this.pos++]!;
      if (!entry.fn) {
        if (this.inAncestry(entry.name)) {
          // Runtime cycle skip (seed 000): the entry's tool already serves this pipeline.
          this.log({ type: 'cycle-skip', tag: 'pipeline', level: 'warn', text: `skipped '${entry.name}': it already appears in this pipeline's ancestry`, entry: entry.name });
          continue;
        }
        if (entry.dynamic && !this.kernel.registry.has(entry.name, ctx.locals.config.paths)) continue;
      }
      if (this.nextHooks && ctx.nonlocals.debug !== false) {
        await this.runHooks(this.nextHooks, 0, () => this.runEntry(entry), { trigger: '$next', entry: entry.name, args: entry.args });
        return ctx.locals.result;
      }
      return this.runEntry(entry);
    }
  }

  /** One chain entry: invoke it (or call its fn), then apply seed 000's return-value rules. */
  private async runEntry(entry: ChainEntry): Promise<unknown> {
    const ctx = this.ctx;
    const frame: Frame = { entry, calledNext: false };
    this.frames.push(frame);
    let value: unknown;
    try {
      value = entry.fn ? await entry.fn(ctx, entry.args) : await this.kernel.invokeEntry(ctx, entry);
    } catch (err) {
      if (err instanceof AbortError) {
        // Refusal unwinds like a return (seed 002): upstream post-steps run, and the pipeline
        // rejects with the AbortError at its end. A middleware refusing through its own context
        // refuses the served tool; an abort from above is logged once, where it happened.
        if (!this.isAborted()) this.abort(err.reason);
        return ctx.locals.result;
      }
      throw err;
    } finally {
      const i = this.frames.lastIndexOf(frame);
      if (i !== -1) this.frames.splice(i, 1);
    }
    if (value !== undefined) {
      // A chain entry's return value is the served context's result and ends the chain.
      ctx.locals.result = value;
      this.finished = true;
    } else if (!frame.calledNext && !this.finished && !this.isAborted() && this.pos < this.chain.length) {
      // Type and code are both the seed's name for it, so it can be found either way.
      this.log({ type: 'E_PIPELINE_SHORT_CIRCUITED', tag: 'pipeline', level: 'warn', code: 'E_PIPELINE_SHORT_CIRCUITED', text: `'${entry.name}' returned without calling next(), finish() or abort(); ${this.chain.length - this.pos} entr${this.chain.length - this.pos === 1 ? 'y' : 'ies'} did not run`, entry: entry.name });
      this.finished = true;
    }
    return ctx.locals.result;
  }

  /** Runs the tool's own function once (the `execute` middleware and the leaf fallback). */
  async runFunction(): Promise<unknown> {
    if (this.fnRan) return this.ctx.locals.result;
    this.fnRan = true;
    const fn = this.tool.fn;
    if (!fn) return undefined;
    return fn(this.ctx, this.ctx.args);
  }

  private inAncestry(name: string): boolean {
    // Only chain links count: an independent invoke starts a fresh pipeline (seed 000).
    for (let c: Context | null = this.ctx; c; ) {
      if (c.run.tool.name === name) return true;
      c = c.envelope.hasOtherTarget ? c.envelope.target : null;
    }
    return false;
  }

  inject(input: ChainEntryInput[] | ChainEntryInput): void {
    const list = Array.isArray(input) ? input : [input];
    if (!list.length) return;
    const entries: ChainEntry[] = list.map((e) => {
      if (!e || typeof e.name !== 'string') throw new AgentAppsError('E_CONFIG', 'inject() takes entries of the form { name, args?, before?, after?, fn? }');
      return { name: e.name, args: e.args, before: e.before, after: e.after, fn: e.fn };
    });
    const done = this.chain.slice(0, this.pos);
    let rest = [...entries, ...this.chain.slice(this.pos)];
    // Entries with explicit constraints re-sort the remaining chain; executed names are gone, so
    // constraints naming them are ignored by the sort.
    if (entries.some((e) => e.before?.length || e.after?.length)) rest = sortEntries(rest);
    this.chain = [...done, ...rest];
    this.ownsChain = true;
  }

  /** Replaces the chain before it starts (extra middleware, SPEC §6.5). */
  setChain(chain: ChainEntry[]): void {
    this.chain = chain;
    this.ownsChain = true;
  }

  finish(value?: unknown): unknown {
    this.ctx.locals.result = value;
    this.finished = true;
    return value;
  }

  fail(error: unknown): never {
    const err = toError(error);
    this.ctx.locals.error = err;
    throw err;
  }

  abort(reason?: unknown, quiet = false): void {
    if (this.aborted) return;
    this.aborted = true;
    this.abortReason = reason;
    if (!quiet) this.log({ type: 'abort', tag: 'pipeline', level: 'info', text: `aborted${reason === undefined ? '' : `: ${reason instanceof Error ? reason.message : String(reason)}`}`, ...(reason === undefined ? {} : { reason }) });
    this.controller?.abort(reason);
  }

  isAborted(): boolean {
    for (let m: Manager | undefined = this; m; m = m.parentManager()) {
      if (m.aborted || m.seedSignal?.aborted) return true;
    }
    return false;
  }

  /** The reason of the nearest aborted context on the way up. */
  effectiveAbortReason(): unknown {
    for (let m: Manager | undefined = this; m; m = m.parentManager()) {
      if (m.aborted) return m.abortReason;
      if (m.seedSignal?.aborted) return m.seedSignal.reason;
    }
    return undefined;
  }

  private parentManager(): Manager | undefined {
    const p = this.ctx.envelope.parent;
    return p ? (p.manager as Manager) : undefined;
  }

  // ── signals: own controller + parent + seed, composed by listeners (SPEC §5) ────────────

  get signal(): AbortSignal {
    if (this.controller) return this.controller.signal;
    const controller = new AbortController();
    this.controller = controller;
    if (this.isAborted()) {
      controller.abort(this.effectiveAbortReason());
      return controller.signal;
    }
    const follow = (source: AbortSignal) => {
      const onAbort = () => controller.abort(source.reason);
      source.addEventListener('abort', onAbort, { once: true });
      (this.release ??= []).push(() => source.removeEventListener('abort', onAbort));
    };
    const parent = this.parentManager();
    if (parent) follow(parent.signal);
    if (this.seedSignal) follow(this.seedSignal);
    return controller.signal;
  }

  /** Called when the invocation settles: drop the listeners this context put on others. */
  dispose(): void {
    if (this.release) {
      for (const r of this.release) r();
      this.release = undefined;
    }
  }

  // ── invoke, refresh ─────────────────────────────────────────────────────────────────────

  invoke(ref: string | ToolDef, args?: unknown, options?: InvokeOptions): Promise<unknown> {
    return this.kernel.invoke(this.ctx, ref, args, options);
  }

  async refresh(): Promise<void> {
    this.kernel.registry.invalidate();
    const ctx = this.ctx;
    const ref = this.tool.uri && this.tool.kind !== 'inline' ? (this.tool.file ? this.tool.name : this.tool.uri) : null;
    if (!ref || this.tool.kind === 'programmatic' || this.tool.kind === 'builtin') return;
    let tool: LoadedTool;
    try {
      tool = await this.kernel.registry.find(ref, ctx.locals.config.paths, ctx.locals.config.cwd);
    } catch {
      // The tool is not on the new paths by name: keep the definition we have, re-read from its file.
      if (!this.tool.file) return;
      tool = await this.kernel.registry.find(this.tool.file, ctx.locals.config.paths, ctx.locals.config.cwd);
    }
    this.tool = tool;
    ctx.run.tool = { ...tool.decl };
    ctx.run.origin = { uri: tool.uri, frontmatter: tool.frontmatter };
    if (tool.prompt !== undefined) ctx.locals.prompt = { raw: tool.prompt };
  }

  // ── data access and logging ─────────────────────────────────────────────────────────────

  get(path: string): unknown {
    return getPath(this.ctx, path);
  }

  set(path: string, value: unknown): void {
    const head = path.split('.', 1)[0]!;
    if (head === 'manager' || head === 'envelope' || head === 'args' || path === 'run.signal' || path.startsWith('run.signal.') || path === 'run.interactive') {
      throw new AgentAppsError('E_IMMUTABLE', `'${path}' is immutable`);
    }
    // The context's own properties are never replaced whole (the context is frozen); their contents are mutable.
    if (path === head && head in this.ctx) throw new AgentAppsError('E_IMMUTABLE', `'${path}' cannot be replaced; set its fields instead ('${path}.KEY')`);
    setPath(this.ctx, path, value);
  }

  log(event: string | LogInput): void {
    const input: LogInput = typeof event === 'string' ? { text: event } : event;
    // Hooks report on the context they serve, so an explicit tool / contextId wins.
    const full: LogEvent = {
      ...input,
      type: input.type ?? 'message',
      tag: input.tag ?? 'user',
      level: (input.level as LogLevel | undefined) ?? 'error',
      timestamp: Date.now(),
      rootContextId: this.ctx.nonlocals.rootContextId,
      contextId: typeof input.contextId === 'string' ? input.contextId : this.ctx.envelope.id,
      tool: typeof input.tool === 'string' ? input.tool : (this.ctx.run?.tool?.name ?? this.tool.name),
    };
    this.kernel.logger.emit(full);
  }

  tail(opts?: TailOptions): LogEvent[] {
    return this.kernel.logger.tail(this.ctx.nonlocals.rootContextId, opts);
  }

  configure(opts?: ConfigureOptions): LogSettings {
    return this.kernel.logger.configure(this.ctx.nonlocals.rootContextId, opts);
  }
}
