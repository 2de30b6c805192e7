/**
 * `run SKILL --remote` and `runtime.invoke(ref, args, { remote: true })` (SPEC §19): submit one
 * request to a work queue and wait for its result. The result comes as a core message on its
 * subject (subscribed before the request is published); the results stream is read as well
 * every second, so a result published while the connection was away is still found.
 */
import { randomUUID } from 'node:crypto';
import { AbortError, AgentAppsError } from '../core/errors.ts';
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
}

const POLL_MS = 1000;

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
  const sub = nats.nc.subscribe(subject, { max: 1 });
  const timers: ReturnType<typeof setTimeout>[] = [];
  let onAbort: (() => void) | undefined;
  let settled = false;
  try {
    const arrived = (async (): Promise<InvokeResult> => {
      for await (const m of sub) return JSON.parse(m.string()) as InvokeResult;
      return new Promise<never>(() => {}); // unsubscribed: the poll or the timeout decides
    })();
    await retrying(() => nats.js.publish(nats.names.invoke(queue), JSON.stringify({ id, skill, args }), { msgID: id }));
    const polled = new Promise<InvokeResult>((resolve) => {
      const poll = async (): Promise<void> => {
        try {
          const stored = await nats.jsm.streams.getMessage(results, { last_by_subj: subject });
          if (stored) return resolve(stored.json<InvokeResult>());
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
