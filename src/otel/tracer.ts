/**
 * The tracer (docs/ci.md, "Tracing") on the official OpenTelemetry SDK's batch processor and
 * OTLP/HTTP protobuf exporter: the invoke path only makes and ends spans — encoding and sending
 * happen off it, a batch at a time. The spans themselves are ours (OtelSpan, the SDK's
 * ReadableSpan): the SDK's tracer and span cost most of what tracing added to an invocation
 * (docs/decisions.md, "Traces any OpenTelemetry backend can read"). Loaded (dynamically, by
 * src/runtime.ts) only when tracing is on: a run without it never loads a file of OpenTelemetry.
 *
 * Parents come from the context tree, not from an async context: a span is kept by the context
 * it belongs to (on its locals, under a symbol), and a new one's parent is the span of its nearest
 * traced ancestor — or, at the top, the traceparent its request brought (core/tracing.ts,
 * TRACE_PARENT). No context manager is registered, and no global tracer provider: libraries that
 * trace through the global API (the Strands SDK) stay silent, so a span is never counted twice.
 */
import { randomFillSync } from 'node:crypto';
import { SpanKind, SpanStatusCode, TraceFlags, type HrTime, type Link, type SpanContext, type SpanStatus } from '@opentelemetry/api';
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter, type TimedEvent } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { detectResources, envDetector, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import { ATTR_ERROR_TYPE, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { redact } from '../core/redact.ts';
import { VERSION } from '../core/version.ts';
import { parseTraceParent, traceParentOf, type AttributeValue, type Attributes, type SpanOptions, type TraceSpan, type Tracer } from '../core/tracing.ts';
import type { Context as RunContext, LoadedTool } from '../core/types.ts';
import type { TracingConfig } from './config.ts';

/** How long runtime.close() waits for the last spans to be sent (an unreachable collector must not hold the run's exit). */
const SHUTDOWN_MS = 3000;
/** Content attributes are cut here (a backend refuses, or silently drops, a span far larger). */
const MAX_CONTENT = 16_384;
const KINDS = { internal: SpanKind.INTERNAL, server: SpanKind.SERVER, client: SpanKind.CLIENT, producer: SpanKind.PRODUCER, consumer: SpanKind.CONSUMER } as const;
/** A tool call's id (GenAI). */
const CALL_ID = 'gen_ai.tool.call.id';
const UNSET: SpanStatus = Object.freeze({ code: SpanStatusCode.UNSET });
const NOT_ENDED: HrTime = Object.freeze([0, 0]) as unknown as HrTime;
const NO_LINKS: Link[] = Object.freeze([]) as unknown as Link[];
const NO_EVENTS: TimedEvent[] = Object.freeze([]) as unknown as TimedEvent[];

// ── ids and times, cheaply ─────────────────────────────────────────────────────────────────
// Random bytes drawn from the OS 4 KiB at a time and written out as hex once: an id is a slice of
// that text, not a Buffer filled and converted per id (the SDK's RandomIdGenerator).
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolHex = '';
let used = POOL_BYTES * 2;
const ZERO_SPAN = '0'.repeat(16);
const ZERO_TRACE = '0'.repeat(32);
function randomHex(bytes: number): string {
  const chars = bytes * 2;
  for (;;) {
    if (used + chars > poolHex.length) {
      poolHex = randomFillSync(pool).toString('hex');
      used = 0;
    }
    const id = poolHex.slice(used, (used += chars));
    if (id !== (chars === 16 ? ZERO_SPAN : ZERO_TRACE)) return id; // all-zero ids are invalid (W3C trace context)
  }
}

// A span keeps performance.now() readings; only one that is exported is written as OpenTelemetry's
// [seconds, nanoseconds] since the epoch — from performance.now()'s origin, split so that adding
// a reading keeps the nanoseconds.
const ORIGIN_S = Math.floor(performance.timeOrigin / 1000);
const ORIGIN_NS = Math.round((performance.timeOrigin - ORIGIN_S * 1000) * 1e6);
function hrTime(reading: number): HrTime {
  const ns = ORIGIN_NS + Math.round(reading * 1e6);
  const s = Math.floor(ns / 1e9);
  return [ORIGIN_S + s, ns - s * 1e9];
}

/** Where ended spans go: the batch processor, with the resource and scope every span of the runtime shares. */
interface SpanSink {
  readonly processor: BatchSpanProcessor;
  readonly resource: Resource;
  readonly scope: { name: string; version: string };
}

/**
 * One span: what the runtime's parts hold (TraceSpan) and, ended, what the SDK's batch processor
 * and OTLP exporter take (its ReadableSpan) — made here rather than by the SDK's tracer, whose
 * span cost most of an invocation's time (docs/decisions.md, "Traces any OpenTelemetry backend
 * can read"). A span under a parent that is not sampled is not sampled either (the SDK's default
 * sampler, parent-based always-on) and is never exported; it still carries its context on.
 */
class OtelSpan implements TraceSpan, ReadableSpan {
  name: string;
  readonly kind: SpanKind;
  readonly parentSpanContext: SpanContext | undefined;
  status: SpanStatus = UNSET;
  readonly attributes: Record<string, AttributeValue>;
  events: TimedEvent[] = NO_EVENTS;
  ended = false;
  /** Set on a model's tool call (`execute_tool` from the agent trace). */
  readonly callId: string | undefined;
  readonly #context: SpanContext;
  readonly #sink: SpanSink;
  /** performance.now() when it started and ended (-1: not yet). */
  readonly #start: number;
  #end = -1;
  #traceparent: string | undefined;

  constructor(sink: SpanSink, name: string, kind: SpanKind, context: SpanContext, parent: SpanContext | undefined, attributes: Record<string, AttributeValue>, callId: string | undefined) {
    this.#sink = sink;
    this.name = name;
    this.kind = kind;
    this.#context = context;
    this.parentSpanContext = parent;
    this.attributes = attributes;
    this.callId = callId;
    this.#start = performance.now();
  }

  spanContext(): SpanContext {
    return this.#context;
  }
  get links(): Link[] {
    return NO_LINKS;
  }
  get resource(): Resource {
    return this.#sink.resource;
  }
  get instrumentationScope(): { name: string; version: string } {
    return this.#sink.scope;
  }
  get droppedAttributesCount(): number {
    return 0;
  }
  get droppedEventsCount(): number {
    return 0;
  }
  get droppedLinksCount(): number {
    return 0;
  }
  get startTime(): HrTime {
    return hrTime(this.#start);
  }
  get endTime(): HrTime {
    return this.#end < 0 ? NOT_ENDED : hrTime(this.#end);
  }
  get duration(): HrTime {
    if (this.#end < 0) return [-1, -1];
    const ns = Math.round((this.#end - this.#start) * 1e6);
    const s = Math.floor(ns / 1e9);
    return [s, ns - s * 1e9];
  }

  get traceparent(): string {
    if (this.#traceparent === undefined) {
      const c = this.#context;
      this.#traceparent = `00-${c.traceId}-${c.spanId}-${c.traceFlags & TraceFlags.SAMPLED ? '01' : '00'}`;
    }
    return this.#traceparent;
  }
  set(attributes: Attributes): void {
    if (this.ended) return;
    for (const key in attributes) {
      const v = attributes[key];
      if (v !== undefined) this.attributes[key] = v;
    }
  }
  /** One attribute (a content value, the result): as `set`, without an object for it. */
  setOne(key: string, value: AttributeValue): void {
    if (!this.ended) this.attributes[key] = value;
  }
  rename(name: string): void {
    if (!this.ended) this.name = name;
  }
  event(name: string, attributes?: Attributes): void {
    if (this.ended) return;
    if (this.events === NO_EVENTS) this.events = [];
    this.events.push({ name, attributes: attributes ? defined(attributes) : {}, time: hrTime(performance.now()), droppedAttributesCount: 0 });
  }
  end(error?: unknown): void {
    if (this.ended) return;
    if (error !== undefined) {
      const e = error as { code?: unknown; name?: unknown; message?: unknown } | null;
      const code = typeof e?.code === 'string' ? e.code : typeof e?.name === 'string' ? e.name : 'Error';
      this.status = { code: SpanStatusCode.ERROR, message: String(e?.message ?? error).slice(0, 1024) };
      this.attributes[ATTR_ERROR_TYPE] = code;
    }
    this.#end = performance.now();
    this.ended = true;
    // The batch processor leaves out a span that is not sampled itself.
    this.#sink.processor.onEnd(this);
  }
}

function defined(attributes: Attributes): Record<string, string | number | boolean | string[]> {
  const out: Record<string, string | number | boolean | string[]> = {};
  for (const key in attributes) {
    const v = attributes[key];
    if (v !== undefined) out[key] = v;
  }
  return out;
}

/** A value as a content attribute: JSON, secrets redacted (src/core/redact.ts), cut at MAX_CONTENT. */
export function contentOf(value: unknown): string {
  let text: string;
  try {
    const clean = redact(value);
    text = typeof clean === 'string' ? clean : (JSON.stringify(clean) ?? 'null');
  } catch {
    text = String(value);
  }
  return text.length > MAX_CONTENT ? `${text.slice(0, MAX_CONTENT)}…` : text;
}

/** The exporter, and a warning the first time it cannot send (the run goes on: spans are never worth a failure). */
class WarningExporter implements SpanExporter {
  readonly #inner: SpanExporter;
  readonly #warn: (text: string) => void;
  readonly #url: string;
  warned = false;
  constructor(inner: SpanExporter, url: string, warn: (text: string) => void) {
    this.#inner = inner;
    this.#url = url;
    this.#warn = warn;
  }
  export(spans: ReadableSpan[], done: Parameters<SpanExporter['export']>[1]): void {
    this.#inner.export(spans, (result) => {
      // ExportResultCode.SUCCESS is 0 (@opentelemetry/core).
      if (result.code !== 0) this.fail(result.error?.message ?? 'the export failed');
      done(result);
    });
  }
  fail(why: string): void {
    if (this.warned) return;
    this.warned = true;
    this.#warn(`tracing: could not send spans to ${this.#url} (${why}); the run goes on without them — is the collector up? (OTEL_TRACES_EXPORTER=none turns tracing off)`);
  }
  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }
  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }
}

/**
 * The span a traced context runs under (its invocation's own, or one attached to it), kept on its
 * `locals` under a symbol: not a key a skill lists, copies or serializes, and no WeakMap — a
 * WeakMap entry per invocation cost more than the span itself (bench/otel.js).
 */
const SPAN = Symbol('agent-apps.span');

export class OtelTracing implements Tracer {
  readonly content: boolean;
  readonly #sink: SpanSink;
  readonly #exporter: WarningExporter;

  constructor(config: TracingConfig, warn: (text: string) => void, env: NodeJS.ProcessEnv = process.env) {
    this.content = config.content;
    const url = config.url ?? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() ?? (env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() ? `${env.OTEL_EXPORTER_OTLP_ENDPOINT.trim().replace(/\/+$/, '')}/v1/traces` : 'http://localhost:4318/v1/traces');
    // The file's headers under the variables' (the exporter lets its own config win: leave out what a variable sets).
    const fromEnv = new Set(`${env.OTEL_EXPORTER_OTLP_HEADERS ?? ''},${env.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? ''}`.split(',').map((p) => p.split('=')[0]!.trim().toLowerCase()).filter(Boolean));
    const headers = Object.fromEntries(Object.entries(config.headers).filter(([k]) => !fromEnv.has(k.toLowerCase())));
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (envDetector) over our defaults.
    const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'agent-apps', [ATTR_SERVICE_VERSION]: VERSION }).merge(detectResources({ detectors: [envDetector] }));
    const otlp = new OTLPTraceExporter({ ...(config.url ? { url: config.url } : {}), ...(Object.keys(headers).length ? { headers } : {}) });
    this.#exporter = new WarningExporter(otlp, url, warn);
    // The SDK's batch processor (OTEL_BSP_* as it reads them) and exporter; the spans are ours (OtelSpan).
    this.#sink = { processor: new BatchSpanProcessor(this.#exporter), resource, scope: { name: 'agent-apps', version: VERSION } };
  }

  invocation(ctx: RunContext, tool: LoadedTool): ((running: Promise<unknown>) => Promise<unknown>) | undefined {
    // The runtime's own machinery (the agent and its provider, callback refs, middleware skills
    // invoked by name) has spans of its own kind or none; the context agent code or an untrusted
    // caller runs as (agent-code, ingress) is plumbing.
    if (tool.decl.tags.includes('meta-internal') || ctx.locals.internals?.untrustedRef) return undefined;
    const parent = this.#parentOf(ctx.envelope.parent, ctx);
    const name = tool.name;
    // Called by agent code, inside a model's tool call: a tool execution (GenAI), named for the skill.
    const fromAgent = parent instanceof OtelSpan && parent.callId !== undefined;
    const attributes: Record<string, AttributeValue> = fromAgent
      ? { 'agent_apps.skill': name, 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name, 'gen_ai.tool.type': 'function', [CALL_ID]: ctx.envelope.id }
      : { 'agent_apps.skill': name };
    if (this.content) attributes[fromAgent ? 'gen_ai.tool.call.arguments' : 'agent_apps.args'] = contentOf(ctx.args);
    const span = this.#start(fromAgent ? `execute_tool ${name}` : `invoke ${name}`, parent, SpanKind.INTERNAL, attributes, undefined);
    (ctx.locals as unknown as Record<symbol, unknown>)[SPAN] = span;
    const content = this.content;
    return (running) =>
      running.then(
        (value) => {
          if (content) span.setOne(fromAgent ? 'gen_ai.tool.call.result' : 'agent_apps.result', contentOf(value));
          span.end();
          return value;
        },
        (err: unknown) => {
          span.end(err);
          throw err;
        },
      );
  }

  span(name: string, options: SpanOptions = {}): TraceSpan {
    const p = options.parent;
    const parent = p === undefined || typeof p === 'string' || p instanceof OtelSpan ? p : 'envelope' in p ? this.#parentOf(p, p) : undefined;
    const attributes = options.attributes ? defined(options.attributes) : {};
    if (options.toolCall !== undefined) attributes[CALL_ID] = options.toolCall;
    return this.#start(name, parent, KINDS[options.kind ?? 'internal'], attributes, options.toolCall);
  }

  attach(ctx: RunContext, span: TraceSpan | undefined): void {
    (ctx.locals as unknown as Record<symbol, unknown>)[SPAN] = span instanceof OtelSpan ? span : undefined;
  }

  traceparent(ctx: RunContext): string | undefined {
    const parent = this.#parentOf(ctx, ctx);
    return parent instanceof OtelSpan ? parent.traceparent : parent;
  }

  async shutdown(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const sent = await Promise.race([
      // Sends what is buffered, then shuts the exporter down.
      this.#sink.processor.shutdown().then(() => true, () => false),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), SHUTDOWN_MS);
        // The export's own sockets and retry timers keep the process up while it sends; this wait does not.
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
    if (!sent) this.#exporter.fail(`not sent within ${SHUTDOWN_MS / 1000} s`);
  }

  /** The span of `from` or its nearest traced ancestor, else the traceparent `request`'s nonlocals brought. */
  #parentOf(from: RunContext | null, request: RunContext): OtelSpan | string | undefined {
    for (let c: RunContext | null = from; c !== null; c = c.envelope.parent) {
      const span = (c.locals as unknown as Record<symbol, unknown>)[SPAN];
      if (span !== undefined) return span as OtelSpan;
    }
    return traceParentOf(request.nonlocals);
  }

  #start(name: string, parent: OtelSpan | string | undefined, kind: SpanKind, attributes: Record<string, AttributeValue>, toolCall: string | undefined): OtelSpan {
    let up: SpanContext | undefined;
    if (parent instanceof OtelSpan) up = parent.spanContext();
    else if (parent !== undefined) {
      const remote = parseTraceParent(parent);
      if (remote) up = { traceId: remote.traceId, spanId: remote.spanId, traceFlags: remote.flags, isRemote: true };
    }
    // Parent-based always-on (the SDK's default sampler): a root is sampled, a child as its parent.
    const context: SpanContext = up
      ? { traceId: up.traceId, spanId: randomHex(8), traceFlags: up.traceFlags & TraceFlags.SAMPLED }
      : { traceId: randomHex(16), spanId: randomHex(8), traceFlags: TraceFlags.SAMPLED };
    return new OtelSpan(this.#sink, name, kind, context, up, attributes, toolCall);
  }
}

export function startTracer(config: TracingConfig, warn: (text: string) => void): Tracer {
  return new OtelTracing(config, warn);
}
