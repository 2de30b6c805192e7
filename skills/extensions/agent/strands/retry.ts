// Transient model errors (docs/ci.md): which failures are worth another attempt, how long to wait
// before it, and the config that says how many. The provider SDKs' own retries are off
// (models.ts), so `model.retries` is the exact number of extra attempts a model call gets.

import { ConfigurationError } from 'agent-apps';

/** `model.retries` when unset. */
export const DEFAULT_RETRIES = 3;
/** `model.retryDelayMs` when unset: the wait before the first retry; it doubles for each next one. */
export const DEFAULT_RETRY_DELAY_MS = 1000;
/** The longest exponential backoff between two attempts. */
export const MAX_BACKOFF_MS = 30_000;
/** The longest wait a server's Retry-After is honoured for; asked for longer, the model is given up. */
export const MAX_RETRY_AFTER_MS = 60_000;

export interface RetryConfig {
  retries: number;
  retryDelayMs: number;
}

/**
 * `model.retries` (integer ≥ 0, default 3) and `model.retryDelayMs` (≥ 0, default 1000);
 * `model.maxRetries`, the older name, is read as `retries` when that is unset. E_CONFIG otherwise.
 */
export function readRetryConfig(config: Record<string, unknown>, where = 'model'): RetryConfig {
  const raw = config.retries ?? config.maxRetries;
  const key = config.retries !== undefined ? 'retries' : 'maxRetries';
  if (raw !== undefined && (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 0)) {
    throw new ConfigurationError(`${where}.${key} must be a whole number ≥ 0: how many times a failed model call is tried again (got ${JSON.stringify(raw)})`);
  }
  const delay = config.retryDelayMs;
  if (delay !== undefined && (typeof delay !== 'number' || !Number.isFinite(delay) || delay < 0)) {
    throw new ConfigurationError(`${where}.retryDelayMs must be a number of milliseconds ≥ 0 (got ${JSON.stringify(delay)})`);
  }
  return { retries: (raw as number | undefined) ?? DEFAULT_RETRIES, retryDelayMs: (delay as number | undefined) ?? DEFAULT_RETRY_DELAY_MS };
}

/** The exponential backoff before retry `n` (1-based): retryDelayMs · 2^(n-1), at most MAX_BACKOFF_MS. */
export function backoffMs(n: number, retryDelayMs: number): number {
  return Math.min(MAX_BACKOFF_MS, retryDelayMs * 2 ** Math.max(0, n - 1));
}

/** Connection failures that may pass: a reset, a cut stream, a timeout, a DNS hiccup. */
const TRANSIENT_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
/** Connection failures that will not: nothing listens there, no such host. Reported at once. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH']);
/** Error classes of the SDKs (OpenAI, Anthropic, AWS) that say "try again". */
const TRANSIENT_NAMES = new Set(['ModelThrottledError', 'APIConnectionTimeoutError', 'RateLimitError', 'InternalServerError', 'ThrottlingException', 'ServiceUnavailableException', 'InternalServerException', 'ModelNotReadyException', 'ModelStreamErrorException', 'TimeoutError']);

function chainOf(err: unknown): Array<Record<string, any>> {
  const chain: Array<Record<string, any>> = [];
  for (let e: unknown = err, i = 0; e && typeof e === 'object' && i < 8; e = (e as { cause?: unknown }).cause, i++) chain.push(e as Record<string, any>);
  return chain;
}

/** The HTTP status a failed call got, if any. */
export function statusOf(err: unknown): number | undefined {
  for (const e of chainOf(err)) {
    const s = e.status ?? e.$metadata?.httpStatusCode;
    if (typeof s === 'number') return s;
  }
  return undefined;
}

/**
 * A failure another attempt may cure: HTTP 408, 409, 429 or 5xx, the SDKs' throttling and
 * server-error classes, a connection reset or cut stream, a timeout. Not: a refused connection or
 * unknown host (the configuration is wrong), 4xx (the request is), anything of ours (a cassette).
 */
export function isTransient(err: unknown): boolean {
  const chain = chainOf(err);
  if (chain.some((e) => typeof e.code === 'string' && /^E_[A-Z_]+$/.test(e.code))) return false;
  const codes = chain.map((e) => e.code).filter((c): c is string => typeof c === 'string');
  if (codes.some((c) => UNREACHABLE_CODES.has(c))) return false;
  const status = statusOf(err);
  if (status !== undefined) return status === 408 || status === 409 || status === 429 || (status >= 500 && status <= 599);
  if (codes.some((c) => TRANSIENT_CODES.has(c))) return true;
  return chain.some((e) => TRANSIENT_NAMES.has(String(e.name)) || TRANSIENT_NAMES.has(String(e.constructor?.name)) || /^(terminated|other side closed|socket hang up)$/i.test(String(e.message ?? '')));
}

/**
 * How long the server asked to wait, in ms: `retry-after-ms`, else `Retry-After` (seconds or an
 * HTTP date), from the headers of the failed response. Undefined when it did not say.
 */
export function retryAfterMs(err: unknown, now = Date.now()): number | undefined {
  for (const e of chainOf(err)) {
    const h = e.headers ?? e.$response?.headers;
    if (!h || typeof h !== 'object') continue;
    const get = (name: string): string | undefined => {
      const v = typeof h.get === 'function' ? h.get(name) : (h as Record<string, unknown>)[name] ?? Object.entries(h).find(([k]) => k.toLowerCase() === name)?.[1];
      return typeof v === 'string' && v.trim() ? v.trim() : undefined;
    };
    const ms = get('retry-after-ms');
    if (ms !== undefined && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Math.round(Number(ms));
    const after = get('retry-after');
    if (after === undefined) continue;
    if (/^\d+(\.\d+)?$/.test(after)) return Math.round(Number(after) * 1000);
    const date = Date.parse(after);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  return undefined;
}
