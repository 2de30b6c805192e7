// A real OTLP/HTTP trace receiver for the tracing tests (docs/ci.md, "Tracing"): node:http on
// 127.0.0.1, POST /v1/traces decoded as protobuf with the official OTLP definitions
// (test/fixtures/otlp-proto: opentelemetry-proto v1.11.0's collector, trace, resource and common
// files, Apache-2.0) through protobufjs — what a collector or Jaeger reads, not our own encoding.
import http from 'node:http';
import path from 'node:path';
import protobuf from 'protobufjs';
import { TEST_DIR } from './helpers.ts';

const PROTO_ROOT = path.join(TEST_DIR, 'fixtures', 'otlp-proto');

let requestType: protobuf.Type | undefined;
function exportRequest(): protobuf.Type {
  if (!requestType) {
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) => path.join(PROTO_ROOT, target);
    root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto', { keepCase: false });
    requestType = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
  }
  return requestType;
}

export type AttrValue = string | number | boolean | AttrValue[] | undefined;

export interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  kind: number;
  attributes: Record<string, AttrValue>;
  events: { name: string; attributes: Record<string, AttrValue> }[];
  status: { code: number; message: string };
  /** Start and end, nanoseconds since the epoch. */
  start: bigint;
  end: bigint;
  /** The resource's attributes (service.name …). */
  resource: Record<string, AttrValue>;
}

function hex(bytes: Uint8Array | undefined): string {
  return bytes && bytes.length ? Buffer.from(bytes).toString('hex') : '';
}

function value(v: any): AttrValue {
  if (!v) return undefined;
  if (v.stringValue !== undefined && v.stringValue !== null) return v.stringValue;
  if (v.boolValue !== undefined && v.boolValue !== null) return v.boolValue;
  if (v.intValue !== undefined && v.intValue !== null) return Number(v.intValue);
  if (v.doubleValue !== undefined && v.doubleValue !== null) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(value);
  return undefined;
}

function attrs(list: any[] | undefined): Record<string, AttrValue> {
  const out: Record<string, AttrValue> = {};
  for (const kv of list ?? []) out[kv.key] = value(kv.value);
  return out;
}

/** The spans of one ExportTraceServiceRequest body. */
export function decodeSpans(body: Buffer): ReceivedSpan[] {
  const type = exportRequest();
  const message = type.toObject(type.decode(body), { longs: String, defaults: false, oneofs: false }) as any;
  const spans: ReceivedSpan[] = [];
  for (const rs of message.resourceSpans ?? []) {
    const resource = attrs(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        spans.push({
          name: s.name,
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: hex(s.parentSpanId),
          kind: s.kind ?? 0,
          attributes: attrs(s.attributes),
          events: (s.events ?? []).map((e: any) => ({ name: e.name, attributes: attrs(e.attributes) })),
          status: { code: s.status?.code ?? 0, message: s.status?.message ?? '' },
          start: BigInt(s.startTimeUnixNano ?? 0),
          end: BigInt(s.endTimeUnixNano ?? 0),
          resource,
        });
      }
    }
  }
  return spans;
}

export interface Receiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** Requests received (any path), with their content types and headers. */
  requests: { path: string; contentType: string; headers: http.IncomingHttpHeaders }[];
  /** Resolves once `pred` holds for the spans received, or rejects after `ms`. */
  waitFor(pred: (spans: ReceivedSpan[]) => boolean, ms?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

/** An OTLP/HTTP receiver on 127.0.0.1 (a free port). */
export async function startReceiver(): Promise<Receiver> {
  const spans: ReceivedSpan[] = [];
  const requests: Receiver['requests'] = [];
  const waiters = new Set<() => void>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ path: req.url ?? '', contentType: String(req.headers['content-type'] ?? ''), headers: req.headers });
      if (req.method === 'POST' && req.url === '/v1/traces') {
        try {
          spans.push(...decodeSpans(Buffer.concat(chunks)));
        } catch (err) {
          res.writeHead(400).end(String(err));
          return;
        }
        // An empty ExportTraceServiceResponse.
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        for (const w of waiters) w();
        return;
      }
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    waitFor(pred, ms = 15_000) {
      if (pred(spans)) return Promise.resolve(spans);
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!pred(spans)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(spans);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`spans not received within ${ms} ms; have: ${spans.map((s) => s.name).join(', ') || 'none'}`));
        }, ms);
        waiters.add(check);
      });
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** The spans as an indented tree (children under parents, in the order they were received), for messages and the docs. */
export function spanTree(spans: ReceivedSpan[], show: (s: ReceivedSpan) => string = (s) => s.name): string {
  const ids = new Set(spans.map((s) => s.spanId));
  const lines: string[] = [];
  const walk = (s: ReceivedSpan, depth: number) => {
    lines.push(`${'  '.repeat(depth)}${show(s)}`);
    for (const c of spans.filter((x) => x.parentSpanId === s.spanId)) walk(c, depth + 1);
  };
  for (const root of spans.filter((s) => !ids.has(s.parentSpanId))) walk(root, 0);
  return lines.join('\n');
}
