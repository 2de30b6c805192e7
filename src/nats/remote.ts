/**
 * `run SKILL --remote` and `runtime.invoke(ref, args, { remote: true })` (docs/scale.md): submit
 * one request to a work queue and wait for its result. The result comes as a core message on this
 * request's own reply subject `agent-apps.<ns>.reply.<random>` (subscribed before the request is
 * published); the results stream is read as well every second, so a result published while the
 * connection was away is still found.
 *
 * Only a result for this request's id is taken; with signing (signing.ts) only one signed with the
 * key and naming this request's signature — anything else that arrives (a forgery from a client
 * that saw the id) is logged and ignored, and the wait goes on for the real one.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { headers } from '@nats-io/transport-node';
import { AbortError, AgentAppsError } from '../core/errors.ts';
import { isPlainObject } from '../core/path.ts';
import type { JsonObject } from '../core/types.ts';
import { checkQueueName } from './config.ts';
import { retrying, type Nats } from './nats.ts';
import { ensureWorkQueue, rebuildError, type InvokeResult } from './work-queue.ts';

export interface RemoteOptions {
  /** The work queue (default `default`). */
  queue?: string;
  /** Longest wait for the result, in ms (default: none); past it, E_TIMEOUT. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Where a result that is not taken is reported (a forgery, a result for another id). */
  warn?(text: string): void;
  /** The submitter's span (docs/ci.md, "Tracing"): sent as the request's `traceparent` header. */
  traceparent?: string;
}

const POLL_MS = 1000;
/** Results of one id read from the stream per poll, at most (forgeries could pile up). */
const POLL_BATCH = 64;

export async function invokeRemote(nats: Nats, skill: string, args: JsonObject, opts: RemoteOptions = {}): Promise<unknown> {
  const result = await submit(nats, skill, args, opts);
  if (result.ok) return result.result;
  throw rebuildError(result.error ?? { code: 'E_REMOTE', message: `remote ${skill} failed without an error` });
}

/** Publishes the request and resolves with its result (whatever its outcome). */
export async function submit(nats: Nats, skill: string, args: JsonObject, opts: RemoteOptions = {}): Promise<InvokeResult> {
  const queue = checkQueueName(opts.queue ?? 'default', 'remote queue');
  if (opts.timeoutMs !== undefined && !(Number.isFinite(opts.timeoutMs) && opts.timeoutMs > 0)) {
    throw new AgentAppsError('E_USAGE', `remote timeout: a number of milliseconds > 0, got ${opts.timeoutMs}`);
  }
  if (opts.signal?.aborted) throw new AbortError(opts.signal.reason);
  const [results] = await Promise.all([nats.stream('results'), ensureWorkQueue(nats, queue)]);
  const id = randomUUID();
  const subject = nats.names.result(id);
  const replyTo = nats.names.reply(randomBytes(16).toString('base64url'));
  const signer = nats.signer;
  const request: Record<string, unknown> = signer ? signer.sign({ id, skill, args, queue, replyTo }) : { id, skill, args, queue, replyTo };
  const warned = new Set<string>();
  /** The result if it is this request's (and, signed, really the worker's), else undefined — logged once. */
  const accept = (text: string, where: string): InvokeResult | undefined => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    let why: string | undefined;
    if (!isPlainObject(value) || typeof value.ok !== 'boolean') why = 'not a result';
    else if (value.id !== id) why = `a result for another request (${JSON.stringify(String(value.id).slice(0, 64))})`;
    else if (signer && !(value.req === request.sig && signer.valid(value))) why = `not signed with the key in ${signer.from} for this request: a forgery, ignored`;
    if (why === undefined) return value as InvokeResult;
    if (!warned.has(text)) {
      warned.add(text);
      opts.warn?.(`remote ${skill}: ignored a message on ${where} for request ${id}: ${why}`);
    }
    return undefined;
  };
  const sub = nats.nc.subscribe(replyTo);
  const timers: ReturnType<typeof setTimeout>[] = [];
  let onAbort: (() => void) | undefined;
  let settled = false;
  try {
    const arrived = (async (): Promise<InvokeResult> => {
      for await (const m of sub) {
        const taken = accept(m.string(), replyTo);
        if (taken) return taken;
      }
      return new Promise<never>(() => {}); // unsubscribed: the poll or the timeout decides
    })();
    const h = opts.traceparent ? headers() : undefined;
    h?.set('traceparent', opts.traceparent!);
    await retrying(() => nats.js.publish(nats.names.invoke(queue), JSON.stringify(request), { msgID: id, ...(h ? { headers: h } : {}) }));
    const polled = new Promise<InvokeResult>((resolve) => {
      // Every stored result of this id is read, oldest first, from where the last poll stopped:
      // a forged one stored before the real one does not hide it.
      let next = 0;
      const poll = async (): Promise<void> => {
        try {
          for (let i = 0; i < POLL_BATCH && !settled; i++) {
            const stored = await nats.jsm.streams.getMessage(results, { seq: next, next_by_subj: subject } as { seq: number });
            if (!stored) break;
            next = stored.seq + 1;
            const taken = accept(stored.string(), subject);
            if (taken) return resolve(taken);
          }
        } catch {
          // not there yet (or the connection is away): look again at the next tick
        }
        if (!settled) timers.push(setTimeout(poll, POLL_MS));
      };
      timers.push(setTimeout(poll, POLL_MS));
    });
    const racers: Promise<InvokeResult>[] = [arrived, polled];
    if (opts.timeoutMs !== undefined) {
      const ms = opts.timeoutMs;
      racers.push(
        new Promise<never>((_, reject) => {
          timers.push(setTimeout(() => reject(new AgentAppsError('E_TIMEOUT', `remote ${skill}: no result within ${ms} ms on queue '${queue}' (request ${id} stays queued) — is a worker running? agent-apps worker --status`)), ms));
        }),
      );
    }
    if (opts.signal) {
      const signal = opts.signal;
      racers.push(
        new Promise<never>((_, reject) => {
          onAbort = () => reject(new AbortError(signal.reason));
          signal.addEventListener('abort', onAbort, { once: true });
        }),
      );
    }
    return await Promise.race(racers);
  } finally {
    settled = true;
    for (const t of timers) clearTimeout(t);
    if (onAbort) opts.signal?.removeEventListener('abort', onAbort);
    sub.unsubscribe();
  }
}
