// The onion (docs/concepts.md, docs/middleware.md): one pipeline's chain of
// entries, run one `next()` at a time. Like koa-compose it is *handed* what it runs — the
// `ChainHost` invokes an entry's tool, a hook, or the served tool's own function — and imports
// nothing above it. The rules it enforces, each where it happens:
// - a second `next()` from the same entry is a no-op that logs `next-called-twice`;
// - an entry that returns `undefined` without `next()`, `finish()` or `abort()` while entries
//   remain logs `E_PIPELINE_SHORT_CIRCUITED` and ends the chain;
// - an entry's return value is the served context's result and ends the chain;
// - an entry whose tool already serves this pipeline's ancestry is skipped (runtime cycle skip);
// - a `$dynamic` entry whose tool is still absent is skipped;
// - when the chain runs out and no executor ran the tool, its function runs (leaf fallback) —
//   at most once per invocation;
// - an AbortError from an entry is refusal: the chain stops, upstream post-steps run.
import { AbortError, AgentAppsError } from '../core/errors.ts';
import { sortEntries } from './order.ts';
import { runHooks, type HookFrame, type HookInfo } from './hooks.ts';
import { withEntryPlace, type ChainEntry, type HookRef } from './plan.ts';
import type { ChainEntryInput, Context, LogInput } from '../core/types.ts';

/** What a chain needs from the context it serves. */
export interface ChainHost {
  /** The served context: entries with an `fn` are called with it; its `locals.result` is the result. */
  readonly ctx: Context;
  /**
   * Invokes an entry's tool as middleware serving this context (docs/concepts.md: middleware are
   * skills). The kernel may settle `run` itself, in the last step of the entry's own pipeline
   * (`run.settled`, see EntryRun): then the promise it returns is the entry's whole step.
   */
  invokeEntry(entry: ChainEntry, run: EntryRun): Promise<unknown>;
  /** Invokes a `$hook` tool serving this context (docs/events.md). */
  invokeHook(hook: HookRef, info: HookInfo): Promise<unknown>;
  /** The served tool has a function of its own. */
  readonly hasFn: boolean;
  /** Calls the served tool's own function (with the context and its args). */
  callFn(): unknown;
  /** Is a `$dynamic` entry's tool on the paths now? */
  has(name: string): boolean;
  /** Does `name` already serve this pipeline or one it serves? */
  inAncestry(name: string): boolean;
  /** `nonlocals.debug === false`: this subtree runs without hooks. */
  hooksSilenced(): boolean;
  isAborted(): boolean;
  abort(reason: unknown): void;
  log(event: LogInput): void;
}

/** Which tool's own function threw an error first: only that tool's entry may place it. */
const thrownBy = new WeakMap<object, string>();

/** Marks an error as thrown by `tool`'s own function (the first tool only); returns it. */
export function markThrown(err: unknown, tool: string): unknown {
  if (err !== null && typeof err === 'object' && !thrownBy.has(err)) thrownBy.set(err, tool);
  return err;
}

/**
 * A running chain entry: its frame on the chain's stack (whether it called next()), and what
 * settles it. The chain applies the return-value rules when the entry's promise settles — in a
 * `then` of its own, or, when the kernel marks `settled` while invoking the entry, in the one
 * `then` that ends the entry's own pipeline (a middleware's, run as a leaf): one promise, its
 * reaction, two closures and their context fewer per entry in flight (docs/events.md, "Performance").
 */
export class EntryRun implements HookFrame {
  readonly chain: Chain;
  readonly entry: ChainEntry;
  calledNext = false;
  /** The kernel calls `chain.entryDone` / `chain.entryFailed` for this run: the chain adds no `then`. */
  settled = false;
  constructor(chain: Chain, entry: ChainEntry) {
    this.chain = chain;
    this.entry = entry;
  }
}

export class Chain {
  #entries: readonly ChainEntry[];
  #pos = 0;
  /** The chain ran out or was stopped: further `next()` calls return the result. */
  finished = false;
  /** The tool's own function has run (at most once per invocation). */
  #fnRan = false;
  /** The entries (and hooks) running now, innermost last: whose `next()` is being called. */
  #frames: HookFrame[] | undefined;
  /** `$next` hooks from the plan (docs/events.md); undefined means no wrapper at all. */
  nextHooks: readonly HookRef[] | undefined;
  readonly #host: ChainHost;

  constructor(host: ChainHost, entries: readonly ChainEntry[]) {
    this.#host = host;
    this.#entries = entries;
  }

  get entries(): readonly ChainEntry[] {
    return this.#entries;
  }

  /** Replaces the entries before the chain starts (a plan computed late, extra middleware). */
  set entries(entries: readonly ChainEntry[]) {
    this.#entries = entries;
  }

  /** `ctx.manager.next()`: runs the rest of the chain from the calling entry. */
  next(): Promise<unknown> {
    const frames = this.#frames;
    const top = frames?.length ? frames[frames.length - 1]! : undefined;
    if (top) {
      if (top.calledNext) {
        this.#host.log({ type: 'next-called-twice', tag: 'pipeline', level: 'warn', code: 'E_NEXT_CALLED_TWICE', text: `'${top.entry.name}' called next() more than once; the second call is a no-op`, entry: top.entry.name });
        return Promise.resolve(this.#host.ctx.locals.result);
      }
      top.calledNext = true;
      if (top.onNext) return top.onNext();
    }
    return this.#dispatch();
  }

  /** Starts the chain from the pipeline's side (not a middleware's `next()`): `$invoke` hooks wrap this. */
  start(): Promise<unknown> {
    return this.#dispatch();
  }

  /** `hooks` as an onion around `inner` (docs/events.md), on this chain's frames. */
  wrap(hooks: readonly HookRef[], inner: () => Promise<unknown>, info: HookInfo): Promise<unknown> {
    return runHooks((this.#frames ??= []), hooks, 0, inner, info, (hook) => this.#host.invokeHook(hook, info));
  }

  // Not an async function: the chain steps once per entry of every invocation, and an async
  // frame here was one more promise and tick per step (docs/serve.md, "Performance"). What
  // throws is still a rejection, never a synchronous throw.
  #dispatch(): Promise<unknown> {
    const host = this.#host;
    try {
      for (;;) {
        if (this.finished || host.isAborted()) return Promise.resolve(host.ctx.locals.result);
        if (this.#pos >= this.#entries.length) {
          this.finished = true;
          // Leaf fallback: no executor ran the tool (built-in middleware, whose own pipelines are
          // demoted by the SCC rule), so the kernel calls the tool's function directly.
          if (!this.#fnRan && host.hasFn) return this.#leaf();
          return Promise.resolve(host.ctx.locals.result);
        }
        const entry = this.#entries[this.#pos++]!;
        if (!entry.fn) {
          if (host.inAncestry(entry.name)) {
            // Runtime cycle skip (docs/concepts.md): the entry's tool already serves this pipeline.
            host.log({ type: 'cycle-skip', tag: 'pipeline', level: 'warn', text: `skipped '${entry.name}': it already appears in this pipeline's ancestry`, entry: entry.name });
            continue;
          }
          if (entry.dynamic && !host.has(entry.name)) continue;
        }
        if (this.nextHooks && !host.hooksSilenced()) {
          return this.wrap(this.nextHooks, () => this.#runEntry(entry), { trigger: '$next', entry: entry.name, args: entry.args }).then(() => host.ctx.locals.result);
        }
        return this.#runEntry(entry);
      }
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * One chain entry: invoke it (or call its fn), then apply the return-value rules
   * (docs/middleware.md). Written with `then` rather than as an async function, as are
   * runFunction and the orchestrator's execute: these run once per entry of every invocation,
   * and an async frame costs an object of its own and more ticks (docs/serve.md, "Performance").
   */
  #runEntry(entry: ChainEntry): Promise<unknown> {
    const host = this.#host;
    const run = new EntryRun(this, entry);
    (this.#frames ??= []).push(run);
    let pending: unknown;
    try {
      pending = entry.fn ? entry.fn(host.ctx, entry.args) : host.invokeEntry(entry, run);
    } catch (err) {
      // Thrown at once: handled at once, as an await in a try block would.
      try {
        return Promise.resolve(this.entryFailed(run, err));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    // Its pipeline's last step applies the rules below (the kernel's execute, a leaf pipeline).
    if (run.settled) return pending as Promise<unknown>;
    return Promise.resolve(pending).then(
      (value) => this.entryDone(run, value),
      (err) => this.entryFailed(run, err),
    );
  }

  /** The entry's frame leaves the stack of running entries. */
  #drop(frame: HookFrame): void {
    const frames = this.#frames!;
    // Almost always the innermost frame: pop it, without the array splice() returns.
    if (frames[frames.length - 1] === frame) frames.pop();
    else {
      const i = frames.lastIndexOf(frame);
      if (i !== -1) frames.splice(i, 1);
    }
  }

  /** An entry that failed: a refusal unwinds like a return; any other error goes on up. */
  entryFailed(run: EntryRun, err: unknown): unknown {
    const host = this.#host;
    const entry = run.entry;
    try {
      if (err instanceof AbortError) {
        // Refusal unwinds like a return (docs/middleware.md): upstream post-steps run, and the pipeline
        // rejects with the AbortError at its end. A middleware refusing through its own context
        // refuses the served tool; an abort from above is logged once, where it happened.
        if (!host.isAborted()) host.abort(err.reason);
        return host.ctx.locals.result;
      }
      // A middleware's own configuration error without a place gets the place of the cascade level
      // that set the entry (docs/middleware.md: errors with a place) — not an error that only passed through it.
      throw !entry.fn && thrownBy.get(err as object) === entry.name ? withEntryPlace(err, entry) : err;
    } finally {
      this.#drop(run);
    }
  }

  /** An entry that returned: its value ends the chain; returning nothing without next() short-circuits it. */
  entryDone(run: EntryRun, value: unknown): unknown {
    const host = this.#host;
    const entry = run.entry;
    this.#drop(run);
    if (value !== undefined) {
      // A chain entry's return value is the served context's result and ends the chain.
      host.ctx.locals.result = value;
      this.finished = true;
    } else if (!run.calledNext && !this.finished && !host.isAborted() && this.#pos < this.#entries.length) {
      const left = this.#entries.length - this.#pos;
      // Type and code are both the documented name for it, so it can be found either way.
      host.log({ type: 'E_PIPELINE_SHORT_CIRCUITED', tag: 'pipeline', level: 'warn', code: 'E_PIPELINE_SHORT_CIRCUITED', text: `'${entry.name}' returned without calling next(), finish() or abort(); ${left} entr${left === 1 ? 'y' : 'ies'} did not run`, entry: entry.name });
      this.finished = true;
    }
    return host.ctx.locals.result;
  }

  /** Runs the tool's own function once (the `execute` middleware and the leaf fallback). */
  runFunction(): Promise<unknown> {
    if (this.#fnRan) return Promise.resolve(this.#host.ctx.locals.result);
    this.#fnRan = true;
    const host = this.#host;
    if (!host.hasFn) return Promise.resolve(undefined);
    let value: unknown;
    try {
      value = host.callFn();
    } catch (err) {
      return Promise.reject(this.#thrown(err));
    }
    return Promise.resolve(value).then(undefined, (err: unknown) => {
      throw this.#thrown(err);
    });
  }

  /** The leaf fallback: runFunction, its value (if any) the result — in one step, not two. */
  #leaf(): Promise<unknown> {
    this.#fnRan = true;
    const host = this.#host;
    let value: unknown;
    try {
      value = host.callFn();
    } catch (err) {
      return Promise.reject(this.#thrown(err));
    }
    return Promise.resolve(value).then(
      (v: unknown) => {
        if (v !== undefined) host.ctx.locals.result = v;
        return host.ctx.locals.result;
      },
      (err: unknown) => {
        throw this.#thrown(err);
      },
    );
  }

  /** Marks an error as thrown by this tool's own function (the first tool only). */
  #thrown(err: unknown): unknown {
    return markThrown(err, this.#host.ctx.run.tool.name);
  }

  /**
   * A chain made after its pipeline ran as a leaf without one (Manager.startLeaf): finished, and
   * the tool's function marked as run if it did — as #dispatch would have left it.
   */
  leafDone(fnRan: boolean): void {
    this.finished = true;
    this.#fnRan = fnRan;
  }

  /** `ctx.manager.inject()`: entries run next, re-sorting the rest when they carry constraints. */
  inject(input: ChainEntryInput[] | ChainEntryInput): void {
    const list = Array.isArray(input) ? input : [input];
    if (!list.length) return;
    const entries: ChainEntry[] = list.map((e) => {
      if (!e || typeof e.name !== 'string') throw new AgentAppsError('E_CONFIG', 'inject() takes entries of the form { name, args?, before?, after?, fn? }');
      return { name: e.name, args: e.args, before: e.before, after: e.after, fn: e.fn };
    });
    const done = this.#entries.slice(0, this.#pos);
    let rest = [...entries, ...this.#entries.slice(this.#pos)];
    // Entries with explicit constraints re-sort the remaining chain; executed names are gone, so
    // constraints naming them are ignored by the sort.
    if (entries.some((e) => e.before?.length || e.after?.length)) rest = sortEntries(rest);
    this.#entries = [...done, ...rest];
  }

  /** `ctx.manager.finish(value)`: the result, and no further entry runs. */
  finish(value: unknown): unknown {
    this.#host.ctx.locals.result = value;
    this.finished = true;
    return value;
  }
}
