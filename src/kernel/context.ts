// The context (docs/concepts.md): a plain data object (envelope, args, run, locals, nonlocals,
// globals) with a non-enumerable, immutable `manager`. Ids and signals are created lazily —
// most contexts never need either, and the invoke benchmark shows the difference.
import { uniqueId } from '../core/ids.ts';
import { AgentAppsError } from '../core/errors.ts';
import { copyData, deepFreeze } from '../core/path.ts';
import type { Context, ContextManager, Envelope, Frontmatter, Globals, HistoryFrame, JsonObject, LocalConfig, Locals, Nonlocals, RunState, ToolDecl } from '../core/types.ts';

export class ContextEnvelope implements Envelope {
  // Immutable (docs/concepts.md): private fields behind getters — assigning throws, and it costs nothing
  // on the invoke path (Object.freeze / defineProperty per context doubled invoke.overhead).
  #id: string | undefined;
  #parent: Context | null;
  #target: Context;
  #hasOtherTarget: boolean;
  constructor(self: Context, parent: Context | null, target: Context | undefined) {
    this.#parent = parent;
    this.#target = target ?? self;
    this.#hasOtherTarget = target !== undefined && target !== self;
  }
  get parent(): Context | null {
    return this.#parent;
  }
  get target(): Context {
    return this.#target;
  }
  get hasOtherTarget(): boolean {
    return this.#hasOtherTarget;
  }
  get id(): string {
    return (this.#id ??= uniqueId());
  }
  toJSON() {
    return { id: this.id, parent: this.parent ? this.parent.envelope.id : null, target: this.target.envelope.id, hasOtherTarget: this.hasOtherTarget };
  }
}

/** Provides `run.signal` on demand (see Manager.signal). */
export interface SignalSource {
  readonly signal: AbortSignal;
}

/** `run.origin`: where the tool came from. */
export interface Origin {
  uri: string | null;
  frontmatter: Frontmatter;
}

/**
 * `run.origin` (docs/concepts.md: mutable) as this context's own. The frontmatter it is handed is the
 * tool's, shared by every invocation: the context's copy is made on first read of
 * `frontmatter`, so a write never reaches the next invocation (docs/concepts.md: no side channels), and
 * reading `uri` — what skills usually want — copies nothing. A frontmatter assigned is taken as
 * it is. `JSON.stringify` and `serializeContext` see both fields (`toJSON`); a spread sees `uri`.
 */
export class ContextOrigin implements Origin {
  uri: string | null;
  #shared: Frontmatter | undefined;
  #own: Frontmatter | undefined;
  constructor(uri: string | null, frontmatter: Frontmatter) {
    this.uri = uri;
    this.#shared = frontmatter;
  }
  get frontmatter(): Frontmatter {
    if (this.#own === undefined) {
      this.#own = copyData(this.#shared!);
      this.#shared = undefined;
    }
    return this.#own;
  }
  set frontmatter(value: Frontmatter) {
    this.#own = value;
    this.#shared = undefined;
  }
  toJSON() {
    return { uri: this.uri, frontmatter: this.#own ?? this.#shared };
  }
}

export class ContextRun implements RunState {
  /** The tool's declaration, shared by every invocation: `tool` copies it on first read. */
  #decl: ToolDecl | undefined;
  #tool: ToolDecl | undefined;
  #uri: string | null;
  /** The tool's frontmatter, shared by every invocation of it. */
  #frontmatter: Frontmatter;
  #origin: ContextOrigin | undefined;
  /** `run.middleware` as assigned (by the orchestrator: the plan's, frozen and shared). */
  #cascade: JsonObject;
  #middleware: JsonObject | undefined;
  #interactive: boolean;
  #source: SignalSource | undefined;
  /** `decl`: the tool's declaration, shared — `run.tool` is this context's copy of it, made on first read. */
  constructor(uri: string | null, frontmatter: Frontmatter, decl: ToolDecl, interactive: boolean) {
    this.#uri = uri;
    this.#frontmatter = frontmatter;
    this.#cascade = EMPTY;
    this.#decl = decl;
    this.#interactive = interactive;
  }

  /**
   * Mutable (docs/concepts.md): this context's own copy of the tool's declaration (see sealShared:
   * its schemas and tags stay shared and frozen). Copied on first read, as Hono builds its
   * Context's fields: a middleware's own context is rarely asked for its tool, and 5 of the 6
   * contexts of a no-op invocation in flight are middleware (docs/events.md, "Performance").
   * Declarations are never changed in place, so the copy is what it would have been at creation.
   */
  get tool(): ToolDecl {
    const decl = this.#decl;
    if (decl !== undefined) {
      this.#tool = { ...decl, tags: decl.tags };
      this.#decl = undefined;
    }
    return this.#tool!;
  }
  set tool(value: ToolDecl) {
    this.#tool = value;
    this.#decl = undefined;
  }

  /** Mutable (docs/concepts.md); see ContextOrigin. Created on first read: most contexts never look. */
  get origin(): Origin {
    return (this.#origin ??= new ContextOrigin(this.#uri, this.#frontmatter));
  }
  set origin(value: Origin) {
    // The kernel assigns a tool's shared frontmatter here too (manager.refresh): it is copied on first read.
    if (value === null || typeof value !== 'object') throw new AgentAppsError('E_VALIDATION', `run.origin is { uri, frontmatter }, got ${value === null ? 'null' : typeof value}`);
    this.#origin = new ContextOrigin(value.uri, value.frontmatter);
  }

  /**
   * Mutable (docs/concepts.md): the resolved cascade metadata, this context's own. The orchestrator
   * assigns the plan's, frozen and shared by every invocation of the tool: it is copied on first
   * read, so only a context whose skill looks pays for the copy, and a write never reaches the
   * plan. An unfrozen value assigned is taken as it is.
   */
  get middleware(): JsonObject {
    return (this.#middleware ??= Object.isFrozen(this.#cascade) ? copyData(this.#cascade) : this.#cascade);
  }
  set middleware(value: JsonObject) {
    // The check waits for the first read: this setter runs on every invocation.
    this.#cascade = value;
    this.#middleware = undefined;
  }

  /** One key of `run.middleware`, read without the copy a first `run.middleware` read makes (frozen where shared: read, do not write). */
  static middlewareKey(run: ContextRun, key: string): unknown {
    return (run.#middleware ?? run.#cascade)[key];
  }

  /** `run.middleware` as it was assigned: for the orchestrator's assignment, the plan's frozen metadata (plan.ts finds its provenance by it). */
  static assignedMiddleware(run: ContextRun): JsonObject {
    return run.#cascade;
  }

  /** Immutable: chosen when the context is created (docs/concepts.md). */
  get interactive(): boolean {
    return this.#interactive;
  }
  get signal(): AbortSignal {
    return this.#source!.signal;
  }
  /** Called once by ContextImpl.bind: the manager composes the signal on demand. */
  setSource(source: SignalSource): void {
    this.#source ??= source;
  }
  toJSON() {
    return {
      origin: this.#origin?.toJSON() ?? { uri: this.#uri, frontmatter: this.#frontmatter },
      middleware: this.#middleware ?? this.#cascade,
      tool: this.tool,
      interactive: this.#interactive,
    };
  }
}
const EMPTY: JsonObject = Object.freeze({}) as JsonObject;

/**
 * `run.tool` is the context's own object, but its schemas and tags are the tool's declaration,
 * shared by every invocation: they are frozen, so a write cannot reach the next invocation —
 * to change one, assign a new value (`run.tool.params = …`). The planner seals a tool's
 * declaration once, when it plans the tool (so the invoke path only copies `decl`); code that
 * assigns another tool's declaration to `run.tool` later (manager.refresh) seals it too:
 * `ctx.run.tool = sealShared({ ...tool.decl })`.
 */
export function sealShared(tool: ToolDecl): ToolDecl {
  if (tool.params !== undefined && !Object.isFrozen(tool.params)) deepFreeze(tool.params);
  if (tool.returns !== undefined && !Object.isFrozen(tool.returns)) deepFreeze(tool.returns);
  if (!Object.isFrozen(tool.tags)) Object.freeze(tool.tags);
  return tool;
}

export class ContextImpl implements Context {
  readonly envelope: ContextEnvelope;
  readonly args: any;
  readonly run: ContextRun;
  readonly locals: Locals;
  readonly nonlocals: Nonlocals;
  readonly globals: Globals;
  #manager!: ContextManager;

  constructor(parent: Context | null, target: Context | undefined, args: unknown, locals: Locals, nonlocals: Nonlocals, globals: Globals, run: ContextRun) {
    this.envelope = new ContextEnvelope(this, parent, target);
    this.args = args;
    this.run = run;
    this.locals = locals;
    this.nonlocals = nonlocals;
    this.globals = globals;
    // Plain locals (an object literal) get their history frozen now; ContextLocals freezes its own on first read.
    if (!(locals instanceof ContextLocals)) freezeHistory(locals.history);
    // Seed 001: `envelope` is immutable and `args` set-once — assigning either throws. The other
    // properties are mutable through their contents (ctx.locals.x = …), never replaced whole.
    Object.freeze(this);
  }

  /** Called once by the orchestrator right after construction; the manager never changes after. */
  bind(manager: ContextManager & SignalSource): void {
    this.#manager = manager;
    this.run.setSource(manager);
  }

  get manager(): ContextManager {
    return this.#manager;
  }
}

/**
 * `locals.history` is append-only (docs/concepts.md): its frames and the array are frozen, so no frame
 * can be removed or rewritten, and a child — which starts from a new array, its caller's frames
 * plus its own (docs/concepts.md) — cannot change its caller's. Frames already frozen (the caller's) are
 * not visited again.
 */
export function freezeHistory(history: HistoryFrame[]): readonly HistoryFrame[] {
  if (Array.isArray(history) && !Object.isFrozen(history)) {
    for (let i = history.length - 1; i >= 0 && !Object.isFrozen(history[i]); i--) Object.freeze(history[i]);
    Object.freeze(history);
  }
  return history;
}

const NO_HISTORY: readonly HistoryFrame[] = Object.freeze([]);

/**
 * A context's `locals` whose append-only `history` costs nothing until it is read: the array —
 * the caller's frames plus this invocation's frame, all frozen — is built on first read, from
 * the caller's `locals` (itself built then, if need be). History is fixed when the context is
 * made, so building it late changes nothing a skill can see; most contexts (chain entries)
 * never read theirs, and then never pay for freezing it. `history` cannot be replaced
 * (E_IMMUTABLE). The other fields are plain, mutable data; `JSON.stringify` and
 * `serializeContext` see `history` through `toJSON`.
 */
export class ContextLocals implements Locals {
  [key: string]: unknown;
  result: unknown = undefined;
  error: unknown = undefined;
  #config: LocalConfig | undefined;
  /** The runtime's base config, shared: `config` is this context's copy of it, made on first read. */
  #base: LocalConfig | undefined;
  #caller: Locals | undefined;
  /** This invocation's frame, kept as its fields until `history` is read (none for the runtime's root). */
  #tool: string | undefined;
  #args: unknown;
  #timestamp: number | undefined;
  #history: readonly HistoryFrame[] | undefined;
  /**
   * `caller`: the calling context's `locals`; `frame`: this invocation's (neither for the runtime's
   * root); `config` taken as it is — or, with `shared`, the runtime's base, copied on first read.
   */
  constructor(caller: Locals | undefined, frame: HistoryFrame | undefined, config: LocalConfig, shared = false) {
    this.#caller = caller;
    if (frame) {
      this.#tool = frame.tool;
      this.#args = frame.args;
      this.#timestamp = frame.timestamp;
    }
    if (shared) this.#base = config;
    else this.#config = config;
  }
  /**
   * Mutable (docs/concepts.md): this context's own `{ ...base }`, made on first read (the kernel's
   * base is never changed after the runtime starts, so it is the copy creation would have made).
   * Most middleware contexts never read theirs (docs/events.md, "Performance").
   */
  /**
   * An invoked context's locals: the caller's, this invocation's frame (tool, args, now) — held as
   * fields, the frame object made only when `history` is read (docs/events.md, "Performance") —
   * and the runtime's base config, copied on first read.
   */
  static invoked(caller: Locals, tool: string, args: unknown, base: LocalConfig): ContextLocals {
    const locals = new ContextLocals(caller, undefined, base, true);
    locals.#tool = tool;
    locals.#args = args;
    locals.#timestamp = Date.now();
    return locals;
  }

  get config(): LocalConfig {
    const base = this.#base;
    if (base !== undefined) {
      this.#config = { ...base };
      this.#base = undefined;
    }
    return this.#config!;
  }
  set config(value: LocalConfig) {
    this.#config = value;
    this.#base = undefined;
  }
  get history(): HistoryFrame[] {
    if (this.#history === undefined) {
      const caller = this.#caller ? freezeHistory(this.#caller.history) : NO_HISTORY;
      this.#history = this.#tool !== undefined ? Object.freeze([...caller, Object.freeze({ tool: this.#tool, args: this.#args, timestamp: this.#timestamp! })]) : caller;
      this.#caller = undefined;
      this.#args = undefined;
    }
    return this.#history as HistoryFrame[];
  }
  set history(_value: HistoryFrame[]) {
    throw new AgentAppsError('E_IMMUTABLE', "locals.history is append-only: the kernel adds each invocation's frame, and it cannot be replaced");
  }
  toJSON(): Record<string, unknown> {
    // The keys in the order they had as own fields: result, error, config, the rest, history.
    const out: Record<string, unknown> = { result: this.result, error: this.error, config: this.config };
    Object.assign(out, this);
    out.history = this.history;
    return out;
  }
}

export function isContext(value: unknown): value is Context {
  return value instanceof ContextImpl;
}
