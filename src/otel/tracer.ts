/**
 * The tracer (docs/ci.md, "Tracing") on the official OpenTelemetry SDK: spans go through a batch
 * processor to the OTLP/HTTP protobuf exporter, so the invoke path only starts and ends spans —
 * encoding and sending happen off it, a batch at a time. Loaded (dynamically, by src/runtime.ts)
 * only when tracing is on: a run without it never loads a file of OpenTelemetry.
 *
 * Parents come from the context tree, not from an async context: a span is kept by the context
 * it belongs to (a WeakMap), and a new one's parent is the span of its nearest traced ancestor —
 * or, at the top, the traceparent its request brought (core/tracing.ts, TRACE_PARENT). No
 * context manager is registered, and no global tracer provider: libraries that trace through
 * the global API (the Strands SDK) stay silent, so a span is never counted twice.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer as OtelTracer } from '@opentelemetry/api';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { ATTR_ERROR_TYPE, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { redact } from '../core/redact.ts';
import { VERSION } from '../core/version.ts';
import { parseTraceParent, traceParentOf, type Attributes, type SpanOptions, type TraceSpan, type Tracer } from '../core/tracing.ts';
import type { Context as RunContext, LoadedTool } from '../core/types.ts';
import type { TracingConfig } from './config.ts';

/** How long runtime.close() waits for the last spans to be sent (an unreachable collector must not hold the run's exit). */
const SHUTDOWN_MS = 3000;
/** Content attributes are cut here (a backend refuses, or silently drops, a span far larger). */
const MAX_CONTENT = 16_384;
const KINDS = { internal: SpanKind.INTERNAL, server: SpanKind.SERVER, client: SpanKind.CLIENT, producer: SpanKind.PRODUCER, consumer: SpanKind.CONSUMER } as const;
/** A tool call's id (GenAI). */
const CALL_ID = 'gen_ai.tool.call.id';

class OtelSpan implements TraceSpan {
  readonly span: Span;
  /** Set on a model's tool call (`execute_tool` from the agent trace). */
  readonly callId: string | undefined;
  #traceparent: string | undefined;
  #context: Context | undefined;
  constructor(span: Span, callId?: string) {
    this.span = span;
    this.callId = callId;
  }
  /** An OpenTelemetry context holding this span: its children's parent (made once, shared by them). */
  get context(): Context {
    return (this.#context ??= trace.setSpan(ROOT_CONTEXT, this.span));
  }
  get traceparent(): string {
    if (this.#traceparent === undefined) {
      const c = this.span.spanContext();
      this.#traceparent = `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
    }
    return this.#traceparent;
  }
  set(attributes: Attributes): void {
    for (const key in attributes) {
      const v = attributes[key];
      if (v !== undefined) this.span.setAttribute(key, v);
    }
  }
  rename(name: string): void {
    this.span.updateName(name);
  }
  event(name: string, attributes?: Attributes): void {
    this.span.addEvent(name, attributes ? defined(attributes) : undefined);
  }
  end(error?: unknown): void {
    if (error !== undefined) {
      const e = error as { code?: unknown; name?: unknown; message?: unknown } | null;
      const code = typeof e?.code === 'string' ? e.code : typeof e?.name === 'string' ? e.name : 'Error';
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: String(e?.message ?? error).slice(0, 1024) });
      this.span.setAttribute(ATTR_ERROR_TYPE, code);
    }
    this.span.end();
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
  readonly #provider: BasicTracerProvider;
  readonly #tracer: OtelTracer;
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
    this.#provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(this.#exporter)] });
    this.#tracer = this.#provider.getTracer('agent-apps', VERSION);
  }

  invocation(ctx: RunContext, tool: LoadedTool): ((running: Promise<unknown>) => Promise<unknown>) | undefined {
    // The runtime's own machinery (the agent and its provider, callback refs, middleware skills
    // invoked by name) has spans of its own kind or none; the context agent code or an untrusted
    // caller runs as (agent-code, ingress) is plumbing.
    if (tool.decl.tags.includes('meta-internal') || ctx.locals.internals?.untrustedRef) return undefined;
    const parent = this.#parentOf(ctx.envelope.parent, ctx);
    const name = tool.name;
    const attributes: Attributes = { 'agent_apps.skill': name };
    // Called by agent code, inside a model's tool call: a tool execution (GenAI), named for the skill.
    const fromAgent = parent instanceof OtelSpan && parent.callId !== undefined;
    if (fromAgent) Object.assign(attributes, { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name, 'gen_ai.tool.type': 'function', [CALL_ID]: ctx.envelope.id });
    if (this.content) attributes[fromAgent ? 'gen_ai.tool.call.arguments' : 'agent_apps.args'] = contentOf(ctx.args);
    const span = this.#start(fromAgent ? `execute_tool ${name}` : `invoke ${name}`, parent, SpanKind.INTERNAL, attributes);
    (ctx.locals as unknown as Record<symbol, unknown>)[SPAN] = span;
    const content = this.content;
    return (running) =>
      running.then(
        (value) => {
          if (content) span.span.setAttribute(fromAgent ? 'gen_ai.tool.call.result' : 'agent_apps.result', contentOf(value));
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
    const attributes = options.toolCall !== undefined ? { ...options.attributes, [CALL_ID]: options.toolCall } : (options.attributes ?? {});
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
      this.#provider.shutdown().then(() => true, () => false),
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

  #start(name: string, parent: OtelSpan | string | undefined, kind: SpanKind, attributes: Attributes, toolCall?: string): OtelSpan {
    let context = ROOT_CONTEXT;
    if (parent instanceof OtelSpan) context = parent.context;
    else if (parent !== undefined) {
      const remote = parseTraceParent(parent);
      if (remote) context = trace.setSpanContext(ROOT_CONTEXT, { traceId: remote.traceId, spanId: remote.spanId, traceFlags: remote.flags, isRemote: true });
    }
    // Attributes as they are: the SDK leaves out an undefined value itself.
    return new OtelSpan(this.#tracer.startSpan(name, { kind, attributes: attributes as Record<string, string | number | boolean | string[]> }, context), toolCall);
  }
}

export function startTracer(config: TracingConfig, warn: (text: string) => void): Tracer {
  return new OtelTracing(config, warn);
}
