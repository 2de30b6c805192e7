/**
 * A worker (SPEC §19): takes invocation requests from a JetStream work queue and runs each through
 * the full pipeline of its own workspace, `concurrency` at a time.
 *
 * - Each slot pulls one request, runs it, publishes its result, acks. While a request runs the
 *   worker tells JetStream it is still working (in-progress acks every ackWait/3), so only a dead
 *   worker's requests are redelivered.
 * - Exactly one result per id: a redelivered request whose result is already stored is acked
 *   without running again, and results are stored with the id as Nats-Msg-Id (deduplicated).
 * - A request delivered MAX_DELIVERIES times without a result (its skill keeps killing the
 *   worker) goes to `agent-apps.<ns>.dead` and is answered with E_DEAD_LETTER. A request that is
 *   not JSON or names no skill is terminated and logged (answered with E_BAD_REQUEST when it had
 *   an id); the worker goes on.
 * - A request is a remote party's: it may name a public skill by name only — no path or URI
 *   (E_UNTRUSTED_REF), no hidden skill (`shell`, `file-write`, middleware), no `$`-keys in args
 *   (no `$context` middleware injection).
 * - `drain()` (SIGTERM): no new pulls; a request that arrives after it goes straight back (nak);
 *   running ones finish; then a last heartbeat marks the worker stopped.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Consumer, JsMsg } from '@nats-io/jetstream';
import { AgentAppsError } from '../core/errors.ts';
import { safeJsonReplacer } from '../core/json.ts';
import { isPathRef } from '../loader/names.ts';
import type { Runtime } from '../runtime.ts';
import { errorText, isNotFound, retrying, type Nats } from './nats.ts';
import { MAX_DELIVERIES, ensureWorkQueue, errorOf, parseRequest, type InvokeRequest, type InvokeResult } from './work-queue.ts';

export interface WorkerOptions {
  queue: string;
  concurrency: number;
  log(level: 'info' | 'warn' | 'error', text: string): void;
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
/** A pull stays open this long: how soon an idle slot notices a drain. */
const PULL_MS = 2000;
const MAX_RESULT_BYTES = 7 * 1024 * 1024;

export class Worker {
  readonly id = `${hostname()}-${process.pid}-${randomUUID().slice(0, 4)}`;
  readonly #runtime: Runtime;
  readonly #nats: Nats;
  readonly #opts: WorkerOptions;
  #consumer: Consumer | undefined;
  #loops: Promise<void>[] = [];
  #draining = false;
  #running = 0;
  #done = 0;
  #failed = 0;
  #startedAt = Date.now();
  #beat: ReturnType<typeof setInterval> | undefined;

  constructor(runtime: Runtime, nats: Nats, opts: WorkerOptions) {
    this.#runtime = runtime;
    this.#nats = nats;
    this.#opts = opts;
  }

  async start(): Promise<void> {
    const n = this.#nats;
    await Promise.all([n.stream('invoke'), n.stream('results'), n.stream('dead'), n.stream('workers')]);
    const durable = await ensureWorkQueue(n, this.#opts.queue);
    this.#consumer = await retrying(() => n.js.consumers.get(n.names.stream('invoke'), durable));
    this.#heartbeat();
    this.#beat = setInterval(() => this.#heartbeat(), HEARTBEAT_MS);
    this.#loops = Array.from({ length: this.#opts.concurrency }, () => this.#slot());
  }

  /** Takes nothing new, lets what runs finish, and says so. */
  async drain(): Promise<void> {
    this.#draining = true;
    await Promise.all(this.#loops);
    if (this.#beat) clearInterval(this.#beat);
    this.#heartbeat(true);
    await this.#nats.nc.flush().catch(() => {});
  }

  get stats() {
    return { running: this.#running, done: this.#done, failed: this.#failed };
  }

  async #slot(): Promise<void> {
    const consumer = this.#consumer!;
    while (!this.#draining) {
      let m: JsMsg | null;
      try {
        m = await consumer.next({ expires: PULL_MS });
      } catch (err) {
        if (this.#draining || this.#nats.nc.isClosed()) break;
        // The server is away (a restart): the client reconnects; pull again shortly.
        await new Promise((r) => setTimeout(r, 250));
        continue;
      }
      if (!m) continue;
      if (this.#draining) {
        m.nak(); // arrived after the drain began: back to the queue at once
        break;
      }
      this.#running++;
      try {
        await this.#handle(m);
      } catch (err) {
        // The machinery failed (not the skill): leave the request to redelivery.
        this.#opts.log('error', `worker: request ${m.info.streamSequence} on '${this.#opts.queue}': ${errorText(err)}`);
      } finally {
        this.#running--;
      }
    }
  }

  async #handle(m: JsMsg): Promise<void> {
    const deliveries = m.info.deliveryCount;
    const request = parseRequest(m.string());
    if ('reason' in request) {
      this.#opts.log('error', `worker: malformed request on '${this.#opts.queue}' (stream sequence ${m.info.streamSequence}): ${request.reason} — terminated`);
      if (request.id) await this.#publish({ id: request.id, skill: '', args: {} }, { id: request.id, ok: false, error: { code: 'E_BAD_REQUEST', message: `worker: malformed request: ${request.reason}` } });
      m.term();
      return;
    }
    if (deliveries > 1 && (await this.#answered(request.id))) {
      m.ack(); // it ran before (its worker died before the ack): one result per id
      return;
    }
    if (deliveries > MAX_DELIVERIES) {
      const reason = `delivered ${deliveries - 1} times without a result (the skill keeps ending its worker)`;
      await retrying(() => this.#nats.js.publish(this.#nats.names.dead, JSON.stringify({ ...request, queue: this.#opts.queue, deliveries: deliveries - 1, reason, ts: Date.now() })));
      await this.#publish(request, { id: request.id, ok: false, error: { code: 'E_DEAD_LETTER', message: `remote ${request.skill}: ${reason}; moved to ${this.#nats.names.dead}` } });
      this.#opts.log('error', `worker: request ${request.id} (${request.skill}) ${reason} — moved to ${this.#nats.names.dead}`);
      m.term();
      return;
    }
    const keepAlive = setInterval(() => m.working(), Math.max(100, Math.floor(this.#nats.config.ackWaitMs / 3)));
    const started = Date.now();
    let result: InvokeResult;
    try {
      result = { id: request.id, ok: true, result: await this.#run(request) };
      this.#done++;
    } catch (err) {
      result = { id: request.id, ok: false, error: errorOf(err) };
      this.#failed++;
    } finally {
      clearInterval(keepAlive);
    }
    result.worker = this.id;
    result.durationMs = Date.now() - started;
    await this.#publish(request, result);
    m.ack();
  }

  /** Runs the request through the full pipeline, after the checks a remote party's request gets. */
  async #run(request: InvokeRequest): Promise<unknown> {
    const { skill, args } = request;
    if (isPathRef(skill)) throw new AgentAppsError('E_UNTRUSTED_REF', `remote requests may only name skills; ${JSON.stringify(skill.slice(0, 80))} is a path or URI`);
    const dollar = Object.keys(args).find((k) => k.startsWith('$'));
    if (dollar) throw new AgentAppsError('E_UNTRUSTED_REF', `remote requests may not pass '${dollar}' in args`);
    const root = this.#runtime.root;
    const tool = await root.globals.internals.kernel.resolve(skill, root.locals.config.paths, root.locals.config.cwd);
    if (tool.decl.visibility === 'hidden') throw new AgentAppsError('E_UNTRUSTED_REF', `'${skill}' is hidden: remote requests run public skills only`);
    return this.#runtime.invoke(skill, args);
  }

  async #answered(id: string): Promise<boolean> {
    try {
      return (await retrying(() => this.#nats.jsm.streams.getMessage(this.#nats.names.stream('results'), { last_by_subj: this.#nats.names.result(id) }))) !== null;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  async #publish(request: InvokeRequest, result: InvokeResult): Promise<void> {
    let body = JSON.stringify(result, safeJsonReplacer()) ?? JSON.stringify({ ...result, result: null });
    if (Buffer.byteLength(body) > MAX_RESULT_BYTES) {
      body = JSON.stringify({ id: result.id, ok: false, worker: result.worker, error: { code: 'E_RESULT_TOO_LARGE', message: `remote ${request.skill}: the result is over ${MAX_RESULT_BYTES} bytes as JSON` } });
    }
    await retrying(() => this.#nats.js.publish(this.#nats.names.result(result.id), body, { msgID: result.id }));
    if (request.replyTo) this.#nats.nc.publish(request.replyTo, body);
  }

  #heartbeat(stopped = false): void {
    const beat: WorkerBeat = {
      id: this.id,
      host: hostname(),
      pid: process.pid,
      queue: this.#opts.queue,
      concurrency: this.#opts.concurrency,
      running: this.#running,
      done: this.#done,
      failed: this.#failed,
      startedAt: this.#startedAt,
      ts: Date.now(),
      ...(stopped ? { stopped: true } : {}),
    };
    this.#nats.js.publish(this.#nats.names.worker(this.id.replace(/[^A-Za-z0-9_-]/g, '_')), JSON.stringify(beat)).catch(() => {});
  }
}
