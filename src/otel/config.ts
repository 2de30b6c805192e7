/**
 * Whether tracing is on, and where spans go (docs/ci.md, "Tracing"): the standard OpenTelemetry
 * variables — OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, the headers,
 * OTEL_SERVICE_NAME, OTEL_TRACES_EXPORTER=none to force it off — or `otel: { endpoint, headers,
 * content }` in the `main` of a search root. A variable wins over the file.
 *
 * Plain data and checks: reading it loads nothing of OpenTelemetry (src/otel/tracer.ts does,
 * only when this says tracing is on), so a run without tracing pays for a look at the
 * environment and at the root mains the planner reads anyway.
 */
import path from 'node:path';
import { ConfigurationError } from '../core/errors.ts';
import { isPlainObject } from '../core/path.ts';
import type { Kernel } from '../kernel/orchestrator.ts';
import { interpolate } from '../kernel/interpolate.ts';

export interface TracingConfig {
  /** The OTLP/HTTP traces URL from `otel.endpoint` (…/v1/traces), when no OTEL_ variable names one. */
  url?: string;
  /** `otel.headers`: sent with every export, under the ones of OTEL_EXPORTER_OTLP_(TRACES_)HEADERS. */
  headers: Record<string, string>;
  /** Prompts, args and results on spans (`otel.content`, or OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true). */
  content: boolean;
  /** Where tracing was turned on, for messages. */
  from: string;
}

const ENDPOINT_VARS = ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_ENDPOINT'] as const;
const CONTENT_VAR = 'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT';

/** The tracing config of the runtime whose kernel this is, or undefined when tracing is off. */
export async function tracingConfig(kernel: Kernel, env: NodeJS.ProcessEnv = process.env): Promise<TracingConfig | undefined> {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  // OTEL_TRACES_EXPORTER=none: off, whatever the file says.
  if (exporters.includes('none')) return undefined;
  const fromEnv = ENDPOINT_VARS.find((v) => env[v]?.trim()) ?? (exporters.includes('otlp') ? 'OTEL_TRACES_EXPORTER' : undefined);
  const file = await readOtel(kernel);
  if (!fromEnv && !file) return undefined;
  const content = env[CONTENT_VAR] !== undefined ? env[CONTENT_VAR]!.trim().toLowerCase() === 'true' : (file?.content ?? false);
  return {
    ...(!ENDPOINT_VARS.some((v) => env[v]?.trim()) && file?.url ? { url: file.url } : {}),
    headers: file?.headers ?? {},
    content,
    from: fromEnv ?? file!.from,
  };
}

interface FileOtel {
  url?: string;
  headers: Record<string, string>;
  content: boolean;
  from: string;
}

/** `otel:` of the first root main that has it (`otel: false` there: off unless a variable says on). */
async function readOtel(kernel: Kernel): Promise<FileOtel | undefined> {
  for (const dir of kernel.base.paths) {
    if (dir === kernel.registry.library) continue;
    const main = kernel.registry.root(dir).mains.get(dir);
    if (!main) continue;
    let raw: unknown;
    let tool;
    try {
      tool = await kernel.registry.load(main);
      raw = tool.metadata.otel;
    } catch {
      // A main that does not load is reported by the run that needs it, not here.
      continue;
    }
    if (raw === undefined) continue;
    const place = `${main.file} (otel)`;
    const baseDir = path.dirname(main.file);
    // `${env.HONEYCOMB_KEY}` in a header, as the cascade would interpolate it for this file.
    const value = interpolate(raw, { dir: baseDir, root: dir, workspace: kernel.base.workspace, cwd: kernel.base.cwd, name: tool.name }, { file: main.file, key: 'otel' });
    return parseOtel(value, place);
  }
  return undefined;
}

export function parseOtel(value: unknown, place: string): FileOtel | undefined {
  if (value === false || value === null) return undefined;
  if (value === true) return { headers: {}, content: false, from: place };
  if (!isPlainObject(value)) throw new ConfigurationError(`${place}: expected { endpoint, headers, content } or false, got ${JSON.stringify(value)}`);
  for (const key of Object.keys(value)) {
    if (!['endpoint', 'headers', 'content'].includes(key)) throw new ConfigurationError(`${place}: unknown key '${key}' — otel takes endpoint, headers and content`);
  }
  const out: FileOtel = { headers: {}, content: false, from: place };
  if (value.endpoint !== undefined) {
    if (typeof value.endpoint !== 'string' || !/^https?:\/\/[^/]/.test(value.endpoint)) throw new ConfigurationError(`${place}: endpoint must be an http(s):// URL (the collector's OTLP/HTTP port, e.g. http://127.0.0.1:4318), got ${JSON.stringify(value.endpoint)}`);
    out.url = tracesUrl(value.endpoint);
  }
  if (value.headers !== undefined) {
    if (!isPlainObject(value.headers) || !Object.values(value.headers).every((v) => typeof v === 'string')) throw new ConfigurationError(`${place}: headers must map names to strings`);
    out.headers = value.headers as Record<string, string>;
  }
  if (value.content !== undefined) {
    if (typeof value.content !== 'boolean') throw new ConfigurationError(`${place}: content must be true or false`);
    out.content = value.content;
  }
  return out;
}

/** OTEL_EXPORTER_OTLP_ENDPOINT's rule for `otel.endpoint`: the base URL, traces at /v1/traces (a URL ending there is kept). */
export function tracesUrl(endpoint: string): string {
  const trimmed = endpoint.replace(/\/+$/, '');
  return trimmed.endsWith('/v1/traces') ? trimmed : `${trimmed}/v1/traces`;
}
