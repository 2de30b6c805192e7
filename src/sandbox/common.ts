// What both sandbox engines share: option checks, and the host end of one host call (JSON text
// in, JSON text out). The inline engine (sandbox.ts) answers host calls with it directly; in
// process mode the child forwards the JSON text to the parent, which answers with it (process.ts).

import { ConfigurationError } from '../core/errors.ts';
import type { SandboxHost, SandboxOptions, SandboxResult } from './types.ts';

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MEMORY_MB = 128;
export const DEFAULT_MAX_PENDING_CALLS = 1000;
/** Largest JSON text accepted in either direction of one host call. */
export const MAX_PAYLOAD_CHARS = 16 << 20;

/** The validated limits and memory seed of one sandbox; the same in both modes. */
export interface Limits {
  timeoutMs: number;
  memoryMb: number;
  maxPendingCalls: number;
  memory: Record<string, unknown>;
}

/** Checks `opts` (E_CONFIG on a bad limit or a memory seed that is not a JSON object). */
export function limitsOf(opts: SandboxOptions): Limits {
  const timeoutMs = positive('timeoutMs', opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, 1);
  const memoryMb = positive('memoryMb', opts.memoryMb ?? DEFAULT_MEMORY_MB, 8);
  const maxPendingCalls = Math.floor(positive('maxPendingCalls', opts.maxPendingCalls ?? DEFAULT_MAX_PENDING_CALLS, 1));
  let seed: unknown;
  try {
    seed = JSON.parse(JSON.stringify(opts.memory ?? {}));
  } catch (error) {
    throw new ConfigurationError(`the sandbox's memory seed must be JSON data: ${messageOf(error)}`);
  }
  if (seed === null || typeof seed !== 'object' || Array.isArray(seed)) throw new ConfigurationError("the sandbox's memory seed must be an object");
  return { timeoutMs, memoryMb, maxPendingCalls, memory: seed as Record<string, unknown> };
}

function positive(key: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
    throw new ConfigurationError(`model.sandbox.${key} must be a number ≥ ${min} (got ${JSON.stringify(value)})`);
  }
  return value;
}

/** The answer to one host call, as the isolate receives it: JSON text ('' for undefined), or an error's `{ message, code? }` JSON. */
export interface HostAnswer {
  ok: boolean;
  json: string;
}

/**
 * A host that answers with JSON text itself, skipping the parse and stringify of `answerHostCall`:
 * the child of process mode forwards the text to the parent. Internal to src/sandbox.
 */
export const RAW_CALL = Symbol('agent-apps.sandbox.rawCall');
export interface RawHost {
  [RAW_CALL](method: string, payload: string): Promise<HostAnswer>;
}

/** Runs one host call: `payload` is the JSON text of its argument array. Never rejects. */
export async function answerHostCall(host: SandboxHost, method: string, payload: string): Promise<HostAnswer> {
  let args: unknown;
  try {
    args = JSON.parse(payload);
  } catch {
    args = undefined;
  }
  if (!Array.isArray(args)) return { ok: false, json: JSON.stringify({ message: `ctx.manager.${method}: malformed arguments`, code: 'E_SANDBOX' }) };
  let value: unknown;
  try {
    value = await host.call(method, args, payload.length);
  } catch (error) {
    return { ok: false, json: hostErrorJson(error) };
  }
  let json: string | undefined;
  try {
    json = value === undefined ? '' : JSON.stringify(value);
  } catch (error) {
    return { ok: false, json: JSON.stringify({ message: `ctx.manager.${method}: the result is not JSON data (${messageOf(error)})`, code: 'E_SANDBOX' }) };
  }
  if (json !== undefined && json.length > MAX_PAYLOAD_CHARS) {
    return { ok: false, json: JSON.stringify({ message: `ctx.manager.${method}: the result exceeds ${MAX_PAYLOAD_CHARS} characters of JSON`, code: 'E_SANDBOX' }) };
  }
  return { ok: true, json: json ?? '' };
}

/** What sandbox code receives for a host error: message and code only — host stacks carry paths. */
export function hostErrorJson(error: unknown): string {
  let message: string;
  let code: unknown;
  if (error instanceof Error) {
    message = error.message;
    code = (error as { code?: unknown }).code;
  } else if (error !== null && typeof error === 'object') {
    const e = error as { message?: unknown; code?: unknown };
    message = typeof e.message === 'string' ? e.message : messageOf(error);
    code = e.code;
  } else {
    message = messageOf(error);
  }
  return JSON.stringify(typeof code === 'string' && code ? { message, code } : { message });
}

export function failure(code: string, message: string): SandboxResult {
  return { ok: false, error: { code, message }, logs: [] };
}

export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/**
 * Spin-then-block for the process-mode channel. A thread that sleeps in epoll until the other
 * process answers pays a wake-up of tens of µs on an idle virtual machine — most of a host call's
 * cost there. After sending a frame that is usually answered at once (a host call, its reply),
 * `spin()` keeps this thread's event loop polling without sleeping (a chain of `setImmediate`s, so
 * other work still runs) until any frame arrives (`received()`) or `ms` have passed; then it
 * sleeps as usual.
 *
 * On a busy machine spinning does the opposite: it takes the CPU the other process needs, and
 * the answer comes later (a CPU-bound neighbour made it 6× slower here). So the spinner keeps
 * score: an answer within a third of the window counts for spinning, a later one or none against;
 * below -4 it stops spinning and only probes once every `PROBE_EVERY` frames, until fast answers
 * come back.
 */
export class Spinner {
  static readonly PROBE_EVERY = 64;
  readonly #ms: number;
  #frames = 0;
  #mark = 0;
  #start = 0;
  #deadline = 0;
  #active = false;
  #score = 0;
  #skipped = 0;

  constructor(ms: number) {
    this.#ms = ms;
  }

  received(): void {
    this.#frames++;
  }

  spin(): void {
    if (this.#ms <= 0) return;
    if (this.#score < -4 && ++this.#skipped < Spinner.PROBE_EVERY) return;
    this.#skipped = 0;
    const now = performance.now();
    // Still spinning for an earlier frame whose answer has just arrived: score that one first.
    if (this.#active && this.#frames !== this.#mark) this.#score = this.#scored(now);
    this.#mark = this.#frames;
    this.#start = now;
    this.#deadline = now + this.#ms;
    if (this.#active) return;
    this.#active = true;
    setImmediate(this.#tick);
  }

  stop(): void {
    this.#deadline = 0;
  }

  /** The score after an answer that came now: fast ones count for spinning, slow ones against. */
  #scored(now: number): number {
    return now - this.#start < this.#ms / 3 ? Math.min(this.#score + 1, 8) : Math.max(this.#score - 1, -8);
  }

  #tick = (): void => {
    const now = performance.now();
    if (this.#frames !== this.#mark) {
      this.#active = false;
      this.#score = this.#scored(now);
    } else if (now < this.#deadline) {
      setImmediate(this.#tick);
    } else {
      this.#active = false;
      if (this.#deadline !== 0) this.#score = Math.max(this.#score - 1, -8);
    }
  };
}

/** How long one side of the process-mode channel polls for an answer before it sleeps (ms). */
export const SPIN_MS = 0.3;

