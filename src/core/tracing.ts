// Tracing (docs/ci.md, "Tracing"): what the runtime's parts ask of the tracer. The tracer itself
// (src/otel/tracer.ts, on the OpenTelemetry SDK) is loaded only when tracing is on; everything
// else reads `ctx.globals.internals.tracer` — undefined when it is off — and does nothing more.
// Spans are found by the context tree (a context's nearest traced ancestor is its parent span),
// not by an async context: nothing here needs AsyncLocalStorage.
import type { Context, LoadedTool, Nonlocals } from './types.ts';

export type SpanKind = 'internal' | 'server' | 'client' | 'producer' | 'consumer';
export type AttributeValue = string | number | boolean | string[];
export type Attributes = Record<string, AttributeValue | undefined>;

/** One span, as the runtime's parts hold it. */
export interface TraceSpan {
  /** This span as a W3C `traceparent`: what a request to another process carries. */
  readonly traceparent: string;
  set(attributes: Attributes): void;
  /** A better name found later (the model a call answered with). */
  rename(name: string): void;
  event(name: string, attributes?: Attributes): void;
  /** Ends the span; with an error, its status is ERROR and `error.type` is the error's code. */
  end(error?: unknown): void;
}

export interface SpanOptions {
  /**
   * The parent: a span, a context (its nearest traced invocation, else the traceparent its
   * request brought), a W3C traceparent from another process, or none: a new trace.
   */
  parent?: TraceSpan | Context | string;
  kind?: SpanKind;
  attributes?: Attributes;
  /**
   * This span is a model's tool call with this id (`gen_ai.tool.call.id`): the invocations made
   * under it (by the agent's code) are its tool executions, `execute_tool <skill>`.
   */
  toolCall?: string;
}

export interface Tracer {
  /** `otel.content` (docs/ci.md): prompts, args and results may go on spans. Off by default. */
  readonly content: boolean;
  /**
   * The kernel's one hook: an invocation (not a chain entry) is about to run in `ctx`. Returns
   * what to wrap its promise with — the span ends when it settles — or undefined when this
   * invocation is not traced (the runtime's own machinery: meta-internal tools, agent code).
   */
  invocation(ctx: Context, tool: LoadedTool): ((running: Promise<unknown>) => Promise<unknown>) | undefined;
  span(name: string, options?: SpanOptions): TraceSpan;
  /**
   * `span` is the parent of what `ctx` and its descendants start, until another is attached
   * (the agent's run, then each tool call in flight); `undefined` detaches it.
   */
  attach(ctx: Context, span: TraceSpan | undefined): void;
  /** The traceparent of the span `ctx` runs under, to carry to another process. */
  traceparent(ctx: Context): string | undefined;
  /** Sends what is pending and stops (runtime.close()). */
  shutdown(): Promise<void>;
}

/** Where a request's incoming traceparent rides on the nonlocals of the invocation it starts (inherited, never serialized). */
export const TRACE_PARENT: unique symbol = Symbol.for('agent-apps.traceparent') as never;

/** `nonlocals` with `traceparent` as the parent of the invocation they seed (mcp serve, serve, the NATS worker). */
export function withTraceParent<T extends Nonlocals>(nonlocals: T, traceparent: string | undefined): T {
  if (traceparent) (nonlocals as Record<symbol, unknown>)[TRACE_PARENT] = traceparent;
  return nonlocals;
}

/** The traceparent a context's request brought, if any. */
export function traceParentOf(nonlocals: Nonlocals): string | undefined {
  const tp = (nonlocals as Record<symbol, unknown>)[TRACE_PARENT];
  return typeof tp === 'string' ? tp : undefined;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A W3C traceparent's parts (version 00), or undefined for anything else, an all-zero id included. */
export function parseTraceParent(value: unknown): { traceId: string; spanId: string; flags: number } | undefined {
  if (typeof value !== 'string' || value.length !== 55) return undefined;
  const m = TRACEPARENT.exec(value.toLowerCase());
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return undefined;
  return { traceId: m[1]!, spanId: m[2]!, flags: parseInt(m[3]!, 16) };
}

declare module './types.ts' {
  interface RuntimeState {
    /** The tracer, when tracing is on (docs/ci.md, "Tracing"); src/runtime.ts sets it. */
    tracer?: Tracer;
  }
}
