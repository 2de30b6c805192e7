// The ContextManager (docs/concepts.md): the thin facade a context's code talks to. The chain runner is
// `chain.ts`, hooks `hooks.ts`, the composed signal `signal.ts`; the manager holds one of each
// for its context, plus its abort state, and reaches the rest of the runtime only through the
// `KernelServices` it was handed (the orchestrator), so nothing here imports upward.
import { AgentAppsError, toError } from '../core/errors.ts';
import { getPath, setPath } from '../core/path.ts';
import { Chain, markThrown, type ChainHost, type EntryRun } from './chain.ts';
import { ComposedSignal, type SignalSources } from './signal.ts';
import type { HookInfo } from './hooks.ts';
import type { ChainEntry, HookRef } from './plan.ts';
import { sealShared, type ContextImpl } from './context.ts';
import type { Logger } from './log.ts';
import type { Registry } from '../loader/registry.ts';
import { askDesk, normalizeChoices, notInteractive, runDesk } from './asking.ts';
import type { AskOptions } from '../core/ask.ts';
import type { ChainEntryInput, ConfigureOptions, Context, ContextManager, InvokeOptions, LoadedTool, LogInput, LogLevel, LogSettings, TailOptions, ToolDef, LogEvent } from '../core/types.ts';

/** What a manager needs from the kernel that created it (the orchestrator provides it). */
export interface KernelServices {
  readonly registry: Registry;
  readonly logger: Logger;
  invoke(caller: Context, ref: string | ToolDef, args?: unknown, options?: InvokeOptions): Promise<unknown>;
  invokeEntry(served: ContextImpl, entry: ChainEntry, run?: EntryRun): Promise<unknown>;
  invokeHook(served: ContextImpl, hook: HookRef, info: HookInfo): Promise<unknown>;
}

const NO_ENTRIES: readonly ChainEntry[] = Object.freeze([]);

export class Manager implements ContextManager, ChainHost, SignalSources {
  readonly ctx: ContextImpl;
  readonly kernel: KernelServices;
  tool: LoadedTool;
  aborted = false;
  abortReason: unknown;
  seedSignal: AbortSignal | undefined;
  /** Made on first need (a read of run.signal): most contexts never read theirs. */
  #signal: ComposedSignal | undefined;
  /** This context's pipeline (docs/concepts.md), made on first need: see `chain`. */
  #chain: Chain | undefined;
  /** startLeaf's mark: 0 not run as a leaf, 1 run as one without its function, 2 with it. */
  #leaf: 0 | 1 | 2 = 0;

  constructor(ctx: ContextImpl, kernel: KernelServices, tool: LoadedTool) {
    this.ctx = ctx;
    this.kernel = kernel;
    this.tool = tool;
  }

  /**
   * This context's pipeline (docs/concepts.md): entries, position, the one-next() frames. Made on
   * first read: a middleware's own pipeline has no entries (the SCC rule) and runs as a leaf
   * (startLeaf) without one — 5 of the 6 contexts of a no-op invocation parked in flight
   * (docs/events.md, "Performance"). A chain made after a leaf run starts as that run left it.
   */
  get chain(): Chain {
    if (this.#chain === undefined) {
      this.#chain = new Chain(this, NO_ENTRIES);
      if (this.#leaf !== 0) this.#chain.leafDone(this.#leaf === 2);
    }
    return this.#chain;
  }

  /**
   * A pipeline with no entries and no `$invoke` hook (the orchestrator's execute), started as the
   * chain's #dispatch would start it: nothing if a context above was refused, else the tool's
   * function (the leaf fallback), at most once. Its value is handed back as it is — a rejection
   * for a synchronous throw — for the orchestrator's one `then` (#leaf's and the pipeline's own,
   * folded into one).
   */
  startLeaf(): unknown {
    if (this.#chain !== undefined) return this.#chain.start();
    if (this.#leaf !== 0 || this.isAborted()) return this.ctx.locals.result;
    if (!this.hasFn) {
      this.#leaf = 1;
      return this.ctx.locals.result;
    }
    this.#leaf = 2;
    try {
      return this.callFn();
    } catch (err) {
      return Promise.reject(markThrown(err, this.ctx.run.tool.name));
    }
  }

  /** startLeaf's function rejected: the error is marked as this tool's own (see chain.ts). */
  leafThrew(err: unknown): unknown {
    return markThrown(err, this.ctx.run.tool.name);
  }

  // ── what the chain is handed (ChainHost): methods, not closures — one manager per invocation ──

  invokeEntry(entry: ChainEntry, run: EntryRun): Promise<unknown> {
    return this.kernel.invokeEntry(this.ctx, entry, run);
  }

  invokeHook(hook: HookRef, info: HookInfo): Promise<unknown> {
    return this.kernel.invokeHook(this.ctx, hook, info);
  }

  /** The tool has a function of its own (refresh() may change the tool: read at each call). */
  get hasFn(): boolean {
    return !!this.tool.fn;
  }

  /** Calls the tool's function with this context and its args — a method, not a closure per context. */
  callFn(): unknown {
    const fn = this.tool.fn!;
    const ctx = this.ctx;
    return fn(ctx, ctx.args);
  }

  has(name: string): boolean {
    return this.kernel.registry.has(name, this.ctx.locals.config.paths);
  }

  inAncestry(name: string): boolean {
    // Only chain links count: an independent invoke starts a fresh pipeline (docs/concepts.md).
    for (let c: Context | null = this.ctx; c; ) {
      if (c.run.tool.name === name) return true;
      c = c.envelope.hasOtherTarget ? c.envelope.target : null;
    }
    return false;
  }

  hooksSilenced(): boolean {
    return this.ctx.nonlocals.debug === false;
  }

  // ── the chain (chain.ts) ─────────────────────────────────────────────────────────────────

  next(): Promise<unknown> {
    return this.chain.next();
  }

  /** Runs the tool's own function once (the `execute` middleware and the leaf fallback). */
  runFunction(): Promise<unknown> {
    return this.chain.runFunction();
  }

  inject(input: ChainEntryInput[] | ChainEntryInput): void {
    this.chain.inject(input);
  }

  finish(value?: unknown): unknown {
    return this.chain.finish(value);
  }

  fail(error: unknown): never {
    const err = toError(error);
    this.ctx.locals.error = err;
    throw err;
  }

  // ── refusal and the signal (signal.ts) ──────────────────────────────────────────────────

  abort(reason?: unknown, quiet = false): void {
    if (this.aborted) return;
    this.aborted = true;
    this.abortReason = reason;
    if (!quiet) this.log({ type: 'abort', tag: 'pipeline', level: 'info', text: `aborted${reason === undefined ? '' : `: ${reason instanceof Error ? reason.message : String(reason)}`}`, ...(reason === undefined ? {} : { reason }) });
    this.#signal?.abort(reason);
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

  /** The parent context's signal, composed now if need be (SignalSources: the manager is this signal's sources). */
  parentSignal(): AbortSignal | undefined {
    return this.parentManager()?.signal;
  }

  get signal(): AbortSignal {
    const composed = (this.#signal ??= new ComposedSignal());
    return composed.current ?? composed.get(this);
  }

  /** Called when the invocation settles: this context's signal stops following others. */
  dispose(): void {
    this.#signal?.release();
  }

  // ── invoke, refresh ─────────────────────────────────────────────────────────────────────

  invoke(ref: string | ToolDef, args?: unknown, options?: InvokeOptions): Promise<unknown> {
    return this.kernel.invoke(this.ctx, ref, args, options);
  }

  async refresh(): Promise<void> {
    this.kernel.registry.invalidate();
    const ctx = this.ctx;
    const ref = this.tool.uri && this.tool.kind !== 'inline' ? (this.tool.file ? this.tool.name : this.tool.uri) : null;
    if (!ref || this.tool.kind === 'programmatic' || this.tool.kind === 'builtin' || this.tool.kind === 'registered') return;
    let tool: LoadedTool;
    try {
      tool = await this.kernel.registry.find(ref, ctx.locals.config.paths, ctx.locals.config.cwd);
    } catch {
      // The tool is not on the new paths by name: keep the definition we have, re-read from its file.
      if (!this.tool.file) return;
      tool = await this.kernel.registry.find(this.tool.file, ctx.locals.config.paths, ctx.locals.config.cwd);
    }
    this.tool = tool;
    ctx.run.tool = sealShared({ ...tool.decl });
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

  // ── asking a person (ask.ts, asking.ts) ─────────────────────────────────────────────────

  async ask(question: string, options?: AskOptions): Promise<string> {
    if (typeof question !== 'string' || !question.trim()) throw new AgentAppsError('E_VALIDATION', 'ask needs a question (a non-empty string)');
    const choices = normalizeChoices(options?.choices);
    const tool = this.ctx.run?.tool?.name ?? this.tool.name;
    const desk = runDesk(this.ctx.nonlocals) ?? askDesk(this.ctx.globals);
    if (!desk) throw notInteractive(`'${tool}' asked ${JSON.stringify(question.length > 80 ? question.slice(0, 80) + '…' : question)}`);
    const answer = await desk.ask({ kind: 'question', text: question, ...(choices.length ? { choices } : {}), tool }, this.signal);
    return answer.value;
  }
}

/** The kernel's manager behind a context (every context the kernel makes has one): the one cast, here. */
export function managerOf(ctx: Context): Manager {
  return ctx.manager as Manager;
}
