/**
 * A worker (docs/scale.md): takes invocation requests from a JetStream work queue and runs each
 * through the full pipeline of its own workspace, `concurrency` at a time.
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
 * - A request is a remote party's (docs/security.md, "The callers"): it runs through the one
 *   untrusted-caller policy (src/policy/untrusted.ts) with `--allow` as the allow-list — by default
 *   the workspace's own public skills, no library built-in; refused with E_UNTRUSTED_REF /
 *   E_ALLOWED_TOOLS before anything resolves. A refusal is the request's result; the worker goes on.
 * - Answers go to the results stream, and to `replyTo` only when it is a reply subject of this
 *   namespace (`agent-apps.<ns>.reply.<random>`): a request naming any other subject is refused,
 *   so a worker never publishes where a publisher points it.
 * - With signing configured (signing.ts) a request that is unsigned, mis-signed or stale is refused
 *   (E_SIGNATURE), results are signed and name the request they answer, and a signed id runs once.
 * - Each invocation is aborted after `maxMs` (`--max-ms`) and answered E_TIMEOUT, so no request —
 *   an `event-wait` without a timeout included — holds a slot for ever.
 * - A request that runs agents keeps their journal (docs/runs.md, "Workers") in the namespace's
 *   bucket, under the request's id, as it runs (journal-store.ts): redelivered after its worker
 *   died, it resumes from it as `runs resume` does — journaled turns and calls played back, an
 *   unverified call run again only for an `idempotent: true` tool, else E_RESUME (a worker has
 *   nobody to ask). The journal is deleted once the request's result is published.
 * - `drain()` (SIGTERM): no new pulls; a request that arrives after it goes straight back (nak);
 *   running ones get `drainMs` to finish, then are aborted and handed back to the queue (nak,
 *   unanswered) for another worker; then a last heartbeat marks the worker stopped.
 */
import { hostname } from 'node:os';
import { createHash, randomUUID } from 'node:crypto';
import type { Consumer, JsMsg } from '@nats-io/jetstream';
import { AbortError, AgentAppsError } from '../../core/errors.ts';
import { safeJsonReplacer } from '../../core/json.ts';
import type { Runtime } from '../../runtime.ts';
import { invokeUntrusted } from '../../policy/untrusted.ts';
import { withTraceParent } from '../../core/tracing.ts';
import { errorText, isNotFound, retrying, type Nats } from '../../nats/nats.ts';
import { RunJournal, withRunJournal, type RunJournalOptions } from '../../agent/journal.ts';
import { bucket } from '../../nats/kv.ts';
import { RequestJournal } from './journal-store.ts';
import type { KV } from '@nats-io/kv';
import { HEARTBEAT_MS, MAX_DELIVERIES, type WorkerBeat, ensureWorkQueue, errorOf, parseRequest, type InvokeRequest, type InvokeResult } from '../../nats/work-queue.ts';

export interface WorkerOptions {
  queue: string;
  concurrency: number;
  log(level: 'info' | 'warn' | 'error', text: string): void;
  /** `--allow`: the publishers' allow-list (allowed-tools syntax); undefined: the workspace's own public skills. */
  allow?: string;
  /** `--max-ms`: longest run of one request; past it, aborted and answered E_TIMEOUT. */
  maxMs?: number;
  /** `--drain-ms`: how long a drain lets running requests finish before aborting them. */
  drainMs?: number;
}

export const DEFAULT_MAX_MS = 600_000;
// Under Kubernetes' default termination grace (30 s), so the abort and the hand-back happen before a SIGKILL.
export const DEFAULT_DRAIN_MS = 20_000;
/** How the worker's callers are named in refusals and logs. */
export const SURFACE = 'a NATS publisher';

/** A request being run: its abort, and whether a drain (not the request's own limit) aborted it. */
interface Running {
  controller: AbortController;
  drained: boolean;
}

export { HEARTBEAT_MS, type WorkerBeat } from '../../nats/work-queue.ts';
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
  #inflight = new Set<Running>();
  #journals: Promise<KV | undefined> | undefined;

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

  /**
   * Takes nothing new, gives what runs `drainMs` to finish, then aborts it and hands it back to the
   * queue (another worker runs it); says so with a last heartbeat. Resolves with how many requests
   * it handed back.
   */
  async drain(): Promise<number> {
    this.#draining = true;
    const loops = Promise.all(this.#loops);
    const grace = this.#opts.drainMs ?? DEFAULT_DRAIN_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finished = await Promise.race([loops.then(() => true), new Promise<false>((r) => (timer = setTimeout(() => r(false), grace)))]);
    clearTimeout(timer);
    let handedBack = 0;
    if (!finished) {
      for (const run of this.#inflight) {
        run.drained = true;
        run.controller.abort(new AbortError('the worker is draining'));
        handedBack++;
      }
      if (handedBack) this.#opts.log('warn', `worker ${this.id}: ${handedBack} request(s) still running after ${grace} ms of drain (--drain-ms): aborted and handed back to the queue`);
      await loops;
    }
    if (this.#beat) clearInterval(this.#beat);
    this.#heartbeat(true);
    await this.#nats.nc.flush().catch(() => {});
    return handedBack;
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
    const queue = this.#opts.queue;
    const names = this.#nats.names;
    const signer = this.#nats.signer;
    const request = parseRequest(m.string());
    if ('reason' in request) {
      this.#opts.log('error', `worker: malformed request on '${queue}' (stream sequence ${m.info.streamSequence}): ${request.reason} — terminated`);
      if (request.id) await this.#publish({ id: request.id, skill: '', args: {} }, this.#answer(request.id, { code: 'E_BAD_REQUEST', message: `worker: malformed request: ${request.reason}` }));
      m.term();
      return;
    }
    // Checked before anything else runs or is looked up for it: who may make this worker act.
    let refusal: AgentAppsError | undefined;
    try {
      signer?.checkRequest(request, queue);
    } catch (err) {
      refusal = err as AgentAppsError;
    }
    if (!refusal && request.replyTo !== undefined && !names.isReply(request.replyTo)) {
      refusal = new AgentAppsError('E_UNTRUSTED_REF', `${SURFACE} may only name a reply subject ${names.reply('<random>')} as replyTo, not ${JSON.stringify(request.replyTo.slice(0, 120))}: nothing was sent there`);
      delete request.replyTo;
    }
    if (refusal) {
      this.#opts.log('warn', `worker: refused request ${request.id} (${request.skill.slice(0, 80)}) on '${queue}': [${refusal.code}] ${refusal.message}`);
      this.#failed++;
      await this.#publish(request, this.#answer(request.id, errorOf(refusal)));
      m.term();
      return;
    }
    // It ran before (its worker died before the ack), or — signed — it is a replay: one result per id.
    if ((deliveries > 1 || signer) && (await this.#answered(request))) {
      if (deliveries > 1) await this.#dropJournal(request, deliveries);
      m.ack();
      return;
    }
    if (deliveries > MAX_DELIVERIES) {
      const reason = `delivered ${deliveries - 1} times without a result (the skill keeps ending its worker)`;
      const dead = names.deadOf(queue);
      await retrying(() => this.#nats.js.publish(dead, JSON.stringify({ ...request, queue, deliveries: deliveries - 1, reason, ts: Date.now() })));
      await this.#publish(request, this.#answer(request.id, { code: 'E_DEAD_LETTER', message: `remote ${request.skill}: ${reason}; moved to ${dead}` }));
      this.#opts.log('error', `worker: request ${request.id} (${request.skill}) ${reason} — moved to ${dead}`);
      await this.#dropJournal(request, deliveries);
      m.term();
      return;
    }
    const keepAlive = setInterval(() => m.working(), Math.max(100, Math.floor(this.#nats.config.ackWaitMs / 3)));
    const started = Date.now();
    const maxMs = this.#opts.maxMs ?? DEFAULT_MAX_MS;
    const run: Running = { controller: new AbortController(), drained: false };
    this.#inflight.add(run);
    let timedOut = false;
    const limit = setTimeout(() => {
      timedOut = true;
      run.controller.abort(new AbortError(`ran longer than ${maxMs} ms`));
    }, maxMs);
    let result: InvokeResult;
    // Tracing (docs/ci.md, "Tracing"): the worker's span, under the submitter's (the request's traceparent header).
    const parent = m.headers?.get('traceparent');
    const span = this.#runtime.root.globals.internals.tracer?.span(`worker ${request.skill}`, {
      ...(parent ? { parent } : {}),
      kind: 'consumer',
      attributes: { 'messaging.system': 'nats', 'messaging.operation.type': 'process', 'messaging.destination.name': names.invoke(queue), 'messaging.message.id': request.id, 'agent_apps.skill': request.skill, 'agent_apps.queue': queue, 'agent_apps.worker': this.id },
    });
    let failure: unknown;
    let store: RequestJournal | undefined;
    try {
      const kept = await this.#journalOf(request, deliveries, run.controller.signal);
      store = kept?.store;
      result = { id: request.id, ok: true, result: await this.#run(request, run.controller.signal, span?.traceparent, kept?.journal) };
      this.#done++;
    } catch (err) {
      failure = err;
      if (run.drained) {
        // Aborted by the drain, not by its own doing: back to the queue for another worker.
        m.nak();
        return;
      }
      const error = timedOut ? new AgentAppsError('E_TIMEOUT', `remote ${request.skill}: ran longer than ${maxMs} ms on worker ${this.id} (worker --max-ms); aborted`) : err;
      if (timedOut) this.#opts.log('warn', `worker: request ${request.id} (${request.skill}) on '${queue}' ran longer than ${maxMs} ms (--max-ms): aborted, answered E_TIMEOUT`);
      result = { id: request.id, ok: false, error: errorOf(error) };
      this.#failed++;
    } finally {
      clearTimeout(limit);
      clearInterval(keepAlive);
      this.#inflight.delete(run);
      span?.end(failure);
    }
    result.worker = this.id;
    result.durationMs = Date.now() - started;
    await this.#publish(request, result);
    // Answered: its journal is not needed any more (one left behind expires with the bucket's max age).
    if (store) await store.drop().catch((err: unknown) => this.#opts.log('warn', `worker: request ${request.id}: cannot delete its journal from ${store!.bucket} (${errorText(err)}); it expires in a week`));
    m.ack();
  }

  /** The namespace's journal bucket, opened once; without it (no key-value rights) requests run unjournaled, as before. */
  #bucket(): Promise<KV | undefined> {
    return (this.#journals ??= bucket(this.#nats, 'journals').catch((err: unknown) => {
      this.#opts.log('warn', `worker: ${errorText(err)} — requests run without a journal: one redelivered after its worker died runs from scratch`);
      return undefined;
    }));
  }

  /**
   * The request's journal (docs/runs.md, "Workers"): kept in the namespace's bucket as it runs, and
   * on a redelivery the journal the deliveries before left, to resume from. One that is not this
   * request's (another skill or args under its id) is deleted and the request runs from scratch;
   * one that is not a journal is E_RESUME — what ran cannot be told.
   */
  async #journalOf(request: InvokeRequest, deliveries: number, signal: AbortSignal): Promise<{ store: RequestJournal; journal: RunJournal } | undefined> {
    const kv = await this.#bucket();
    if (!kv) return undefined;
    const store = new RequestJournal(this.#nats, kv, request, deliveries, this.id);
    let resume: RunJournalOptions['resume'];
    if (deliveries > 1) {
      const read = await store.read();
      if (read && 'malformed' in read) {
        await store.drop();
        throw new AgentAppsError('E_RESUME', `remote ${request.skill}: request ${request.id} was delivered before and its journal in ${store.bucket} is not one a worker wrote (${read.malformed}): what ran cannot be told, so it is not run again — submit it again under a new id to run it from scratch`);
      }
      if (read && 'foreign' in read) {
        this.#opts.log('warn', `worker: request ${request.id} (${request.skill}): the journal under its id in ${store.bucket} is not its own (${read.foreign}) — deleted; the request runs from scratch`);
        await store.drop();
      } else if (read) {
        resume = { from: request.id, journal: read.journal, name: `request ${request.id}` };
        this.#opts.log('info', `worker: request ${request.id} (${request.skill}) resumes from its journal (${read.journal.lines} lines, ${read.deliveries} earlier deliver${read.deliveries === 1 ? 'y' : 'ies'})`);
      }
    }
    const journal = new RunJournal({
      // Once the request is aborted (a drain hands it back) nothing more is kept: a call stopped by the abort stays unverified.
      write: (line) => {
        if (!signal.aborted) store.write(line);
      },
      flush: () => store.flush(),
      ...(resume ? { resume } : {}),
      unverifiedHelp: (tool) => `a worker has nobody to ask; give '${tool}' idempotent: true in its metadata if running it twice is harmless, or submit the request again under a new id to run it from scratch`,
    });
    return { store, journal };
  }

  /** Deletes what a request's deliveries journaled (it is answered), logging a failure (the bucket's max age removes it then). */
  async #dropJournal(request: InvokeRequest, deliveries: number): Promise<void> {
    const kv = await this.#bucket();
    if (!kv) return;
    await new RequestJournal(this.#nats, kv, request, deliveries, this.id).drop().catch((err: unknown) => this.#opts.log('warn', `worker: request ${request.id}: cannot delete its journal (${errorText(err)}); it expires in a week`));
  }

  #answer(id: string, error: InvokeResult['error']): InvokeResult {
    return { id, ok: false, error, worker: this.id };
  }

  /**
   * Runs the request through the untrusted-caller policy and the full pipeline. Settles when the
   * signal fires even if the skill does not heed it: the slot is free again, the request answered.
   */
  async #run(request: InvokeRequest, signal: AbortSignal, traceparent: string | undefined, journal: RunJournal | undefined): Promise<unknown> {
    const surface = { name: SURFACE, ...(this.#opts.allow !== undefined ? { allow: this.#opts.allow } : {}) };
    // The request's own journal and trace parent ride on its nonlocals: other requests of this worker have theirs.
    const nonlocals = withTraceParent(journal ? withRunJournal({}, journal) : {}, traceparent);
    const invocation = invokeUntrusted(this.#runtime.root, surface, request.skill, request.args, { signal, context: { nonlocals } }).then((value) => {
      // A resume that could not go on (E_RESUME) is the request's error, whatever its agent returned.
      if (journal?.fatal) throw journal.fatal;
      return value;
    });
    invocation.catch(() => {}); // settled below, or abandoned after the abort
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new AbortError(signal.reason));
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    aborted.catch(() => {});
    try {
      return await Promise.race([invocation, aborted]);
    } finally {
      signal.removeEventListener('abort', onAbort!);
    }
  }

  /**
   * A result for the request is stored — with signing, one signed with the key that answers this
   * very request (its `req` is the request's signature): a result given to a forged request that
   * stole the id does not count.
   */
  async #answered(request: InvokeRequest): Promise<boolean> {
    const stream = this.#nats.names.stream('results');
    const subject = this.#nats.names.result(request.id);
    const signer = this.#nats.signer;
    try {
      let seq = 0;
      for (let i = 0; i < 64; i++) {
        const stored = await retrying(() => this.#nats.jsm.streams.getMessage(stream, { seq, next_by_subj: subject } as { seq: number }));
        if (!stored) return false;
        if (!signer) return true;
        try {
          const result = stored.json<Record<string, unknown>>();
          if (result.req === request.sig && signer.valid(result)) return true;
        } catch {
          // not JSON: not ours
        }
        seq = stored.seq + 1;
      }
      return false;
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
    const signer = this.#nats.signer;
    // Signed over what the submitter will parse, and bound to the request it answers (its `sig`):
    // a result this worker gives a forged request with a stolen id is never one its submitter takes.
    if (signer) body = JSON.stringify(signer.sign({ ...(JSON.parse(body) as Record<string, unknown>), ...(request.sig ? { req: request.sig } : {}) }));
    const msgID = `${result.id}-${createHash('sha256').update(body).digest('hex').slice(0, 16)}`;
    await retrying(() => this.#nats.js.publish(this.#nats.names.result(result.id), body, { msgID }));
    if (request.replyTo && this.#nats.names.isReply(request.replyTo)) this.#nats.nc.publish(request.replyTo, body);
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
