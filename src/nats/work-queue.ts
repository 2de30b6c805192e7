/**
 * The work queue's wire format (docs/scale.md), shared by the submitter (remote.ts) and the worker.
 *
 * A request is JSON `{ id, skill, args, queue?, replyTo?, ts?, sig? }` on
 * `agent-apps.<ns>.invoke.<queue>`, published with `Nats-Msg-Id: id` (a retried submit is stored
 * once). A result is JSON `{ id, ok, result? | error?, worker, durationMs, ts?, req?, sig? }` on
 * `agent-apps.<ns>.results.<id>`, stored with `Nats-Msg-Id: <id>-<hash of the body>` (a retried
 * publish is stored once, a second result for the id — forged or not — beside it), and sent to
 * `replyTo` when that is a reply subject (`agent-apps.<ns>.reply.<random>`). A worker that dies
 * after publishing and before acking leaves one result: the redelivered request finds it stored.
 * `ts`, `sig` (and a result's `req`, the signature of the request it answers) are there when
 * signing is configured (signing.ts).
 */
import { AckPolicy } from '@nats-io/jetstream';
import { AbortError, AgentAppsError, ValidationError } from '../core/errors.ts';
import { isPlainObject } from '../core/path.ts';
import type { JsonObject } from '../core/types.ts';
import { isNotFound, retrying, type Nats } from './nats.ts';

export interface InvokeRequest {
  id: string;
  skill: string;
  args: JsonObject;
  /** The queue the submitter meant (signed; a worker checks the signature against its own queue). */
  queue?: string;
  replyTo?: string;
  /** When it was signed (ms since the epoch), and the signature (signing.ts). */
  ts?: number;
  sig?: string;
}

export interface ResultError {
  code: string;
  message: string;
  /** ValidationError: `args` (exit 2) or `returns` (exit 1). */
  phase?: 'args' | 'returns';
}

export interface InvokeResult {
  id: string;
  ok: boolean;
  result?: unknown;
  error?: ResultError;
  worker?: string;
  durationMs?: number;
  /** With signing: when it was signed, the signature of the request it answers, its own signature. */
  ts?: number;
  req?: string;
  sig?: string;
}

/** Deliveries without a result after which a request goes to the dead-letter subject. */
export const MAX_DELIVERIES = 3;
const ID = /^[A-Za-z0-9_-]{1,128}$/;
/** A reply subject: tokens of printable characters, no wildcards. */
const SUBJECT = /^[!-)+-=?-~]+(\.[!-)+-=?-~]+)*$/;

/** The queue's durable consumer name (one per queue on the work-queue stream). */
export function workerDurable(queue: string): string {
  return `worker_${queue}`;
}

/**
 * The queue's consumer, made when missing — by a submitter too, so a request waits for the first
 * worker instead of being dropped by a work-queue stream with nobody interested.
 */
export function ensureWorkQueue(nats: Nats, queue: string): Promise<string> {
  // Once per connection and queue: a submitter pays for it on its first request only.
  let known = madeQueues.get(nats);
  if (!known) madeQueues.set(nats, (known = new Map()));
  let made = known.get(queue);
  if (!made) {
    made = makeWorkQueue(nats, queue);
    made.catch(() => known.delete(queue));
    known.set(queue, made);
  }
  return made;
}

const madeQueues = new WeakMap<Nats, Map<string, Promise<string>>>();

async function makeWorkQueue(nats: Nats, queue: string): Promise<string> {
  const stream = await nats.stream('invoke');
  const durable = workerDurable(queue);
  try {
    await retrying(() => nats.jsm.consumers.info(stream, durable));
    return durable;
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  try {
    await retrying(() =>
      nats.jsm.consumers.add(stream, {
        durable_name: durable,
        filter_subject: nats.names.invoke(queue),
        ack_policy: AckPolicy.Explicit,
        ack_wait: nats.config.ackWaitMs * 1e6,
        max_deliver: -1,
        max_ack_pending: 10_000,
      }),
    );
  } catch (err) {
    if (!/already in use|exists/i.test(String((err as Error)?.message))) throw err;
  }
  return durable;
}

/**
 * Reads a request off the wire. A remote party wrote it: everything is checked here, where it
 * enters; `{ reason }` says what is wrong (with the id when one could be read, to answer it).
 */
export function parseRequest(bytes: string): InvokeRequest | { reason: string; id?: string } {
  let value: unknown;
  try {
    value = JSON.parse(bytes);
  } catch {
    return { reason: `not JSON: ${JSON.stringify(bytes.slice(0, 80))}` };
  }
  if (!isPlainObject(value)) return { reason: 'not a JSON object' };
  const id = typeof value.id === 'string' && ID.test(value.id) ? value.id : undefined;
  if (id === undefined) return { reason: "no valid 'id' (letters, digits, _ or -, at most 128)" };
  if (typeof value.skill !== 'string' || value.skill === '') return { reason: "names no 'skill'", id };
  if (value.args !== undefined && !isPlainObject(value.args)) return { reason: "'args' is not an object", id };
  if (value.replyTo !== undefined && (typeof value.replyTo !== 'string' || !SUBJECT.test(value.replyTo))) return { reason: "'replyTo' is not a subject", id };
  if (value.queue !== undefined && typeof value.queue !== 'string') return { reason: "'queue' is not a string", id };
  if (value.ts !== undefined && typeof value.ts !== 'number') return { reason: "'ts' is not a number", id };
  if (value.sig !== undefined && typeof value.sig !== 'string') return { reason: "'sig' is not a string", id };
  const request: InvokeRequest = { id, skill: value.skill, args: (value.args as JsonObject | undefined) ?? {} };
  if (typeof value.queue === 'string') request.queue = value.queue;
  if (typeof value.replyTo === 'string') request.replyTo = value.replyTo;
  if (typeof value.ts === 'number') request.ts = value.ts;
  if (typeof value.sig === 'string') request.sig = value.sig;
  return request;
}

/** An error as a result carries it: its code, message and (validation) phase. */
export function errorOf(err: unknown): ResultError {
  const code = typeof (err as { code?: unknown })?.code === 'string' ? (err as { code: string }).code : 'E_SKILL';
  const out: ResultError = { code, message: (err as Error)?.message ?? String(err) };
  if (err instanceof ValidationError) out.phase = err.phase;
  return out;
}

/** The error a result carries, as the class the CLI gives the same exit code as a local run. */
export function rebuildError(e: ResultError): Error {
  if (e.code === 'E_ABORTED') {
    const err = new AbortError();
    err.message = e.message;
    return err;
  }
  if (e.code === 'E_VALIDATION') {
    const err = new ValidationError('remote', [], e.phase ?? 'args');
    err.message = e.message;
    return err;
  }
  return new AgentAppsError(e.code, e.message);
}

/** What a worker's heartbeat says (and `worker --status` shows). */
export interface WorkerBeat {
  id: string;
  host: string;
  pid: number;
  queue: string;
  concurrency: number;
  running: number;
  done: number;
  failed: number;
  startedAt: number;
  ts: number;
  stopped?: boolean;
}

export const HEARTBEAT_MS = 5000;
