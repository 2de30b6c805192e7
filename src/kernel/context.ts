// The context of seed 001: a plain data object (envelope, args, run, locals, nonlocals,
// globals) with a non-enumerable, immutable `manager`. Ids and signals are created lazily —
// most contexts never need either, and the invoke benchmark shows the difference.
import { randomUUID } from 'node:crypto';
import type { Context, ContextManager, Envelope, Frontmatter, Globals, JsonObject, Locals, Nonlocals, RunState, ToolDecl } from './types.ts';

export class ContextEnvelope implements Envelope {
  #id: string | undefined;
  readonly parent: Context | null;
  readonly target: Context;
  readonly hasOtherTarget: boolean;
  constructor(self: Context, parent: Context | null, target: Context | undefined) {
    this.parent = parent;
    this.target = target ?? self;
    this.hasOtherTarget = target !== undefined && target !== self;
    // Immutable (seed 001): the lazily created id lives in a private field, which freezing allows.
    Object.freeze(this);
  }
  get id(): string {
    return (this.#id ??= randomUUID());
  }
  toJSON() {
    return { id: this.id, parent: this.parent ? this.parent.envelope.id : null, target: this.target.envelope.id, hasOtherTarget: this.hasOtherTarget };
  }
}

/** Provides `run.signal` on demand (see Manager.signal). */
export interface SignalSource {
  readonly signal: AbortSignal;
}

export class ContextRun implements RunState {
  origin: { uri: string | null; frontmatter: Frontmatter };
  middleware: JsonObject;
  tool: ToolDecl;
  readonly interactive: boolean;
  #source: SignalSource;
  constructor(source: SignalSource, uri: string | null, frontmatter: Frontmatter, tool: ToolDecl, interactive: boolean) {
    this.#source = source;
    this.origin = { uri, frontmatter };
    this.middleware = EMPTY;
    this.tool = tool;
    this.interactive = interactive;
    Object.defineProperty(this, 'interactive', { writable: false, configurable: false });
  }
  get signal(): AbortSignal {
    return this.#source.signal;
  }
}
const EMPTY: JsonObject = Object.freeze({}) as JsonObject;

export class ContextImpl implements Context {
  declare readonly envelope: ContextEnvelope;
  declare readonly args: any;
  run!: ContextRun;
  locals: Locals;
  nonlocals: Nonlocals;
  globals: Globals;
  #manager!: ContextManager;

  constructor(parent: Context | null, target: Context | undefined, args: unknown, locals: Locals, nonlocals: Nonlocals, globals: Globals) {
    // `envelope` is immutable and `args` set-once (seed 001): neither can be reassigned.
    Object.defineProperty(this, 'envelope', { value: new ContextEnvelope(this, parent, target), enumerable: true, writable: false, configurable: false });
    Object.defineProperty(this, 'args', { value: args, enumerable: true, writable: false, configurable: false });
    this.locals = locals;
    this.nonlocals = nonlocals;
    this.globals = globals;
  }

  /** Called once by the orchestrator right after construction; the manager never changes after. */
  bind(manager: ContextManager, run: ContextRun): void {
    this.#manager = manager;
    this.run = run;
  }

  get manager(): ContextManager {
    return this.#manager;
  }
}

export function isContext(value: unknown): value is Context {
  return value instanceof ContextImpl;
}
