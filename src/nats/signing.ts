/**
 * Signed work requests and results (docs/scale.md, "Signing"). With `events.signingKeyEnv` set,
 * every request a submitter publishes and every result a worker publishes carries `ts` (ms since
 * the epoch) and `sig`: HMAC-SHA256, hex, over the canonical JSON (keys sorted at every depth, no
 * spaces) of the message without `sig` — for a request its `{ id, skill, args, queue, ts }` plus
 * `replyTo` when it has one (so a signed request cannot be re-aimed at another reply subject), for
 * a result everything it carries (`id, ok, result | error, worker, durationMs, ts`).
 *
 * Whoever can publish on the subjects but does not hold the key cannot make a request a worker
 * runs, nor a result a submitter takes; a request older than five minutes (or stamped more than
 * thirty seconds ahead) is refused, and a worker runs a signed request id once (a replay within
 * the window finds its stored result).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { AgentAppsError } from '../core/errors.ts';

/** How old a signed request may be when a worker takes it. */
export const MAX_AGE_MS = 5 * 60_000;
/** How far ahead of the worker's clock a request's `ts` may be (clocks differ a little). */
export const MAX_SKEW_MS = 30_000;

/** JSON with the keys of every object sorted: the same bytes for the same value on both sides. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

export class Signer {
  readonly #key: Buffer;
  /** The variable the key came from, for messages (never the key). */
  readonly from: string;

  constructor(key: string, from: string) {
    this.#key = Buffer.from(key, 'utf8');
    this.from = from;
  }

  #mac(body: Record<string, unknown>): string {
    const { sig: _sig, ...rest } = body;
    return createHmac('sha256', this.#key).update(canonicalJson(rest)).digest('hex');
  }

  /** The message with `ts` (now, unless it has one) and its `sig`. */
  sign<T extends Record<string, unknown>>(body: T, now = Date.now()): T & { ts: number; sig: string } {
    const stamped = { ...body, ts: typeof body.ts === 'number' ? body.ts : now };
    return { ...stamped, sig: this.#mac(stamped) };
  }

  /** True when `sig` is this key's signature of the rest of the message. */
  valid(body: Record<string, unknown>): boolean {
    if (typeof body.sig !== 'string' || !/^[0-9a-f]{64}$/.test(body.sig)) return false;
    return timingSafeEqual(Buffer.from(body.sig, 'hex'), Buffer.from(this.#mac(body), 'hex'));
  }

  /**
   * A request a worker may run: signed with this key, not stale, not from the future. Throws
   * E_SIGNATURE saying which; `queue` is the queue it was taken from (part of what is signed, so a
   * request signed for one queue does not run on another).
   */
  checkRequest(request: { sig?: string; ts?: number }, queue: string, now = Date.now()): void {
    const raw = request as Record<string, unknown>;
    if (raw.sig === undefined) throw new AgentAppsError('E_SIGNATURE', `unsigned request: this worker runs only requests signed with the key in ${this.from}`);
    if (!this.valid({ ...raw, queue })) throw new AgentAppsError('E_SIGNATURE', `bad signature: the request was not signed with the key in ${this.from} (or was changed after)`);
    const ts = raw.ts;
    if (typeof ts !== 'number' || !Number.isFinite(ts)) throw new AgentAppsError('E_SIGNATURE', "the request's ts is not a time");
    if (ts < now - MAX_AGE_MS) throw new AgentAppsError('E_SIGNATURE', `stale request: signed ${Math.round((now - ts) / 1000)} s ago (at most ${MAX_AGE_MS / 1000} s)`);
    if (ts > now + MAX_SKEW_MS) throw new AgentAppsError('E_SIGNATURE', `request from the future: stamped ${Math.round((ts - now) / 1000)} s ahead of this worker's clock (at most ${MAX_SKEW_MS / 1000} s)`);
  }
}
