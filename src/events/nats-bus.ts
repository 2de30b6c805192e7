/**
 * The event bus on NATS JetStream (docs/scale.md): the same contract as the in-memory bus, across
 * processes and restarts.
 *
 * - A topic is the subject `agent-apps.<ns>.events.<topic>` of one stream; `emit` publishes the
 *   event (JSON) and returns once the server stored it. The stream keeps the last `bufferSize`
 *   events of each subject: that is the replay buffer.
 * - A named queue is a durable group: a stream of its own, sourced from the events stream for the
 *   topic, holding what the group has not acked (a work queue, so a queue that falls behind the
 *   replay buffer loses nothing), and a durable pull consumer on it (each event goes to one `wait`
 *   of that queue, in any process; each queue gets every event emitted after it exists). `wait` pulls: it blocks until the first event, then takes what is already
 *   there, up to `max`.
 * - `ack: false` keeps the messages un-acked in this process (`pending`); `ack` acks them, `nack`
 *   naks them in delivery order and flushes, so JetStream hands them out again before newer ones.
 *   A process that dies with events pending loses nothing: JetStream redelivers them once
 *   `ackWaitMs` has passed.
 * - A tool-ref handler is a durable group per topic and ref (as a queue) that every process which
 *   registered the handler consumes from, so each event runs the handler once across them all;
 *   the message is acked when the handler has settled (and kept in progress while it runs).
 *   A function handler is this process's own: an ordered consumer that sees every event.
 * - `shutdown` stays local to its process: it goes to the in-memory bus.
 *
 * JetStream's pull expiry is at least 1 s (a client rule), so a `wait` with a shorter timeout —
 * `timeout: 0` included — may take up to 1 s to return `[]`.
 */
import { AckPolicy, DeliverPolicy, RetentionPolicy, StorageType, type Consumer, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { headers } from '@nats-io/transport-node';
import { AbortError } from '../core/errors.ts';
import type { Event } from '../core/types.ts';
import { checkTopic, invalid, queueName, replayCount, stampEvent, type AckInput, type AckResult, type EmitInput, type EventBus, type EventBusOptions, type EventFn, type RefHandler, type SubscribeInput, type SubscribeResult, type UnsubscribeInput, type WaitInput } from './bus.ts';
import type { Bus, EmitResult, RequeueInput } from './backend.ts';
import { durableName, isNotFound, retrying, setRetention, subjectTopic, type Nats } from '../nats/nats.ts';

const SETTLED: Promise<void> = Promise.resolve();
/** The smallest pull expiry the client accepts. */
const MIN_EXPIRES = 1000;
/** A blocked wait re-issues its pull this often (a pull does not survive a reconnect). */
const MAX_EXPIRES = 5000;
/** Most events one `wait` takes when it names no `max`. */
const DRAIN_LIMIT = 10_000;
/** Handler runs one process has in flight per handler, at most. */
const HANDLER_CONCURRENCY = 16;
/** How long close() gives running handlers before it leaves them to redelivery. */
const CLOSE_GRACE_MS = 3000;
const LOCAL_TOPIC = 'shutdown';

interface QueueRef {
  durable: string;
  consumer: Consumer;
}

interface PendingMsg {
  event: Event;
  msg: JsMsg;
  seq: number;
}

interface HandlerLoop {
  stop(): Promise<void>;
}

export class NatsBus implements Bus {
  readonly backend = 'nats' as const;
  readonly nats: Nats;
  /** This process's own bus: the `shutdown` topic. */
  readonly local: EventBus;
  #opts: EventBusOptions;
  #queues = new Map<string, Promise<QueueRef>>();
  /** durable → event id → delivered, un-acked messages (ack: false). */
  #pending = new Map<string, Map<string, PendingMsg[]>>();
  #seq = 0;
  /** durable → how many events this process nacked that have not come back yet (a pull-size hint). */
  #nacked = new Map<string, number>();
  /** `topic\0ref` or the function → its consuming loop in this process. */
  #handlers = new Map<string, HandlerLoop>();
  #fnHandlers = new Map<string, Map<EventFn, HandlerLoop>>();
  #running = new Set<Promise<unknown>>();
  #closed = false;
  #bufferSize: number | undefined;

  constructor(nats: Nats, local: EventBus, opts: EventBusOptions) {
    this.nats = nats;
    this.local = local;
    this.#opts = opts;
  }

  get #ackWaitNs(): number {
    return this.nats.config.ackWaitMs * 1e6;
  }

  async emit(input: EmitInput): Promise<EmitResult> {
    if (input.topic === LOCAL_TOPIC) return this.local.emit(input);
    const { event } = stampEvent(input);
    await this.nats.stream('events');
    const body = JSON.stringify(event);
    const subject = this.nats.names.event(event.topic);
    // Tracing (docs/ci.md, "Tracing"): the emitter's span rides as a header, never in the event.
    const h = input.traceparent ? headers() : undefined;
    h?.set('traceparent', input.traceparent!);
    await retrying(() => this.nats.js.publish(subject, body, h ? { headers: h } : undefined));
    return { event, dispatched: SETTLED };
  }

  async subscribe(input: SubscribeInput): Promise<SubscribeResult> {
    if (input.topic === LOCAL_TOPIC) return this.local.subscribe(input);
    const { topic, ref, fn } = input;
    checkTopic(topic, 'event-subscribe');
    if (ref !== undefined && fn !== undefined) throw invalid('event-subscribe', "pass 'ref' or 'fn', not both");
    if (ref !== undefined && (typeof ref !== 'string' || ref === '')) throw invalid('event-subscribe', "'ref' must be a non-empty string");
    if (fn !== undefined && typeof fn !== 'function') throw invalid('event-subscribe', "'fn' must be a function");
    const replay = replayCount(input.replay);
    if (fn !== undefined) return this.#subscribeFn(topic, fn, replay);
    if (ref !== undefined) return this.#subscribeRef(topic, input.args === undefined ? { ref } : { ref, args: input.args }, replay);
    const name = queueName(input.queue, 'event-subscribe');
    const durable = durableName('q', topic, name);
    const made = await this.#ensureConsumer(durable, topic, replay);
    return { topic, queue: name, created: made.created, replayed: made.replayed };
  }

  async unsubscribe(input: UnsubscribeInput): Promise<{ removed: number }> {
    if (input.topic === LOCAL_TOPIC) return this.local.unsubscribe(input);
    const { topic, ref, fn } = input;
    checkTopic(topic, 'event-unsubscribe');
    let removed = 0;
    if (fn !== undefined) {
      const loop = this.#fnHandlers.get(topic)?.get(fn);
      if (!loop) return { removed: 0 };
      this.#fnHandlers.get(topic)!.delete(fn);
      await loop.stop();
      return { removed: 1 };
    }
    if (ref === undefined) {
      for (const [f, loop] of this.#fnHandlers.get(topic) ?? []) {
        this.#fnHandlers.get(topic)!.delete(f);
        await loop.stop();
        removed++;
      }
    }
    // A ref handler's consumer group spans processes: removing it removes it for all of them.
    const subject = this.nats.names.event(topic);
    const durables: string[] = [];
    if (ref !== undefined) durables.push(durableName('h', topic, ref));
    else {
      const prefix = this.nats.names.group('h_');
      for await (const info of await this.nats.jsm.streams.list()) {
        if (info.config.name.startsWith(prefix) && info.config.sources?.[0]?.filter_subject === subject) durables.push(info.config.name.slice(this.nats.names.groupPrefix.length));
      }
    }
    for (const durable of durables) {
      const loop = this.#handlers.get(durable);
      this.#handlers.delete(durable);
      await loop?.stop();
      try {
        await retrying(() => this.nats.jsm.streams.delete(this.nats.names.group(durable)));
        removed++;
      } catch (err) {
        if (!isNotFound(err)) throw err;
        if (loop) removed++;
      }
    }
    return { removed };
  }

  async wait(input: WaitInput): Promise<Event[]> {
    if (input.topic === LOCAL_TOPIC) return this.local.wait(input);
    const { topic, timeout, signal } = input;
    checkTopic(topic, 'event-wait');
    if (timeout !== undefined && (typeof timeout !== 'number' || Number.isNaN(timeout))) throw invalid('event-wait', "'timeout' must be a number of milliseconds");
    const max = input.max === undefined ? DRAIN_LIMIT : input.max;
    if (typeof max !== 'number' || !(max >= 1)) throw invalid('event-wait', "'max' must be a positive integer");
    const ack = input.ack !== false;
    if (signal?.aborted) throw new AbortError(signal.reason);
    const name = queueName(input.queue, 'event-wait');
    const { durable, consumer } = await this.#queue(topic, name);

    const deadline = timeout === undefined ? Infinity : Date.now() + Math.max(0, timeout);
    let first: JsMsg | null = null;
    for (;;) {
      if (signal?.aborted) throw new AbortError(signal.reason);
      const left = deadline - Date.now();
      const expires = Math.min(MAX_EXPIRES, Math.max(MIN_EXPIRES, Number.isFinite(left) ? left : MAX_EXPIRES));
      first = await this.#next(consumer, expires, signal);
      if (first !== null || Date.now() >= deadline || this.#closed) break;
    }
    if (first === null) return [];
    const msgs: JsMsg[] = [];
    const take = (m: JsMsg): void => {
      msgs.push(m);
      // A nacked event came back: one fewer to expect beyond the consumer's pending count.
      if (m.info.deliveryCount > 1) this.#nacked.set(durable, Math.max(0, (this.#nacked.get(durable) ?? 0) - 1));
    };
    take(first);
    // The first event is here; take what else is already waiting, without blocking for more.
    while (msgs.length < max) {
      const last = msgs[msgs.length - 1]!;
      const want = Math.min(max - msgs.length, last.info.pending + (this.#nacked.get(durable) ?? 0), 1000);
      if (want <= 0) break;
      // What is taken stays ours while the next batch comes (no redelivery meanwhile).
      if (msgs.length > 1) for (const m of msgs) m.working();
      let got = 0;
      try {
        for await (const m of await consumer.fetch({ max_messages: want, expires: MIN_EXPIRES })) {
          take(m);
          got++;
        }
      } catch {
        break; // what we have is delivered; the rest stays for the next wait
      }
      if (got < want) break;
    }
    if (signal?.aborted) {
      // docs/security.md: the caller went away before it had them — they go back at once.
      for (const m of msgs) m.nak();
      await this.nats.nc.flush().catch(() => {});
      throw new AbortError(signal.reason);
    }
    const events = msgs.map((m) => toEvent(m, this.nats.names.prefix));
    if (ack) {
      for (const m of msgs) m.ack();
    } else {
      let pending = this.#pending.get(durable);
      if (!pending) this.#pending.set(durable, (pending = new Map()));
      msgs.forEach((msg, i) => {
        const event = events[i]!;
        const list = pending!.get(event.id) ?? [];
        list.push({ event, msg, seq: this.#seq++ });
        pending!.set(event.id, list);
      });
    }
    return events;
  }

  async ack(input: AckInput): Promise<AckResult> {
    if (input.topic === LOCAL_TOPIC) return this.local.ack(input);
    const { topic, ids } = input;
    checkTopic(topic, 'event-ack');
    if (!Array.isArray(ids)) throw invalid('event-ack', "'ids' must be an array of event ids");
    const nack = input.nack === true;
    const durable = durableName('q', topic, queueName(input.queue, 'event-ack'));
    const pending = this.#pending.get(durable);
    const result: AckResult = { acked: [], nacked: [], unknown: [] };
    const back: PendingMsg[] = [];
    for (const id of new Set(ids)) {
      const list = pending?.get(id);
      if (!list) {
        result.unknown.push(id);
        continue;
      }
      pending!.delete(id);
      if (nack) {
        result.nacked.push(id);
        back.push(...list);
      } else {
        result.acked.push(id);
        for (const p of list) p.msg.ack();
      }
    }
    if (back.length) {
      back.sort((a, b) => a.seq - b.seq);
      for (const p of back) p.msg.nak();
      this.#nacked.set(durable, (this.#nacked.get(durable) ?? 0) + back.length);
    }
    // A nak is fire-and-forget: flush, or the next pull can overtake it and the nacked events
    // come back after newer ones (measured).
    await this.nats.nc.flush();
    return result;
  }

  requeueOnAbort(input: RequeueInput, signal: AbortSignal): void {
    if (input.topic === LOCAL_TOPIC) return this.local.requeueOnAbort(input, signal);
    if (input.events.length === 0) return;
    // With ack: true the events were acked when wait returned; only pending ones can go back.
    const back = () => {
      if (input.ack !== false) return;
      void this.ack({ topic: input.topic, queue: input.queue, ids: input.events.map((e) => e.id), nack: true }).catch(() => {});
    };
    if (signal.aborted) {
      back();
      throw new AbortError(signal.reason);
    }
    signal.addEventListener('abort', back, { once: true });
  }

  pending(topic: string, queue?: string): Event[] {
    if (topic === LOCAL_TOPIC) return this.local.pending(topic, queue);
    const pending = this.#pending.get(durableName('q', topic, queue ?? 'default'));
    if (!pending) return [];
    return [...pending.values()]
      .flat()
      .sort((a, b) => a.seq - b.seq)
      .map((p) => p.event);
  }

  async setBufferSize(size: number): Promise<void> {
    if (this.#bufferSize === size) return;
    this.local.state.bufferSize = size;
    // JetStream's per-subject limit: 0 would mean "no limit", so the smallest buffer is one event.
    await setRetention(this.nats, Math.max(1, size));
    this.#bufferSize = size;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const loops = [...this.#handlers.values(), ...[...this.#fnHandlers.values()].flatMap((m) => [...m.values()])];
    this.#handlers.clear();
    this.#fnHandlers.clear();
    await Promise.all(loops.map((l) => l.stop()));
    if (this.#running.size) {
      await Promise.race([Promise.allSettled([...this.#running]), new Promise((r) => setTimeout(r, CLOSE_GRACE_MS).unref())]);
    }
    // What this process took and did not ack goes back now, not after the ack wait.
    for (const pending of this.#pending.values()) for (const list of pending.values()) for (const p of list) p.msg.nak();
    this.#pending.clear();
    if (!this.nats.nc.isClosed()) await this.nats.nc.flush().catch(() => {});
  }

  /** One pull of one message, retried while the connection is away; an abort gives up the pull (a late message goes back). */
  async #next(consumer: Consumer, expires: number, signal: AbortSignal | undefined): Promise<JsMsg | null> {
    const pull = retrying(() => consumer.next({ expires }), 60_000, signal);
    if (!signal) return pull;
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(new AbortError(signal.reason));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([pull, aborted]);
    } catch (err) {
      // The pull is still open on the server: whatever it brings goes straight back.
      pull.then((m) => m?.nak(), () => {});
      throw err;
    } finally {
      signal.removeEventListener('abort', onAbort!);
    }
  }

  #queue(topic: string, name: string): Promise<QueueRef> {
    const durable = durableName('q', topic, name);
    let ref = this.#queues.get(durable);
    if (!ref) {
      ref = (async () => {
        const stream = (await this.#ensureConsumer(durable, topic, 0)).stream;
        return { durable, consumer: await retrying(() => this.nats.js.consumers.get(stream, durable)) };
      })();
      ref.catch(() => this.#queues.delete(durable));
      this.#queues.set(durable, ref);
    }
    return ref;
  }

  /**
   * The durable group, made if it does not exist: its own stream, sourced from the events stream
   * for the topic's subject — from the next event on, or (`replay`) from the retained events, all
   * or the last N — and the durable consumer on it. The group's stream is a work queue: it holds
   * what the group has not acked, however far behind the replay buffer it falls (docs/scale.md),
   * and nothing it has. An existing group is left as it is (subscribe is idempotent, across
   * processes too). A group made before group streams existed — a consumer on the events stream —
   * moves over: its stream starts where that consumer's acks ended, and the old consumer goes.
   */
  async #ensureConsumer(durable: string, topic: string, replay: number): Promise<{ stream: string; created: boolean; replayed: number }> {
    const events = await this.nats.stream('events');
    const stream = this.nats.names.group(durable);
    const { jsm } = this.nats;
    try {
      await retrying(() => jsm.consumers.info(stream, durable));
      return { stream, created: false, replayed: 0 };
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const subject = this.nats.names.event(topic);
    let legacy: number | undefined;
    try {
      legacy = (await retrying(() => jsm.consumers.info(events, durable))).ack_floor.stream_seq + 1;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const start = legacy === undefined && replay > 0 ? await this.#replayStart(events, subject, replay) : undefined;
    // From the next event: the events stream's next sequence (its clock, not ours).
    const from = legacy ?? (start ? start.seq : (await retrying(() => jsm.streams.info(events))).state.last_seq + 1);
    try {
      await retrying(() =>
        jsm.streams.add({
          name: stream,
          storage: StorageType.File,
          num_replicas: 1,
          retention: RetentionPolicy.Workqueue,
          max_msg_size: 2 * 1024 * 1024,
          sources: [{ name: events, filter_subject: subject, ...(from > 0 ? { opt_start_seq: from } : {}) }],
        }),
      );
    } catch (err) {
      // Another process made the same group meanwhile: it exists, this subscribe is the no-op one.
      if (!/already in use|exists/i.test(String((err as Error)?.message))) throw err;
    }
    try {
      await retrying(() =>
        jsm.consumers.add(stream, {
          durable_name: durable,
          ack_policy: AckPolicy.Explicit,
          ack_wait: this.#ackWaitNs,
          max_ack_pending: 65_536,
          max_deliver: -1,
          deliver_policy: DeliverPolicy.All,
        }),
      );
    } catch (err) {
      if (/already in use|exists/i.test(String((err as Error)?.message))) return { stream, created: false, replayed: 0 };
      throw err;
    }
    if (legacy !== undefined) await jsm.consumers.delete(events, durable).catch(() => {});
    return { stream, created: true, replayed: start?.count ?? 0 };
  }

  /**
   * Where a replay starts: the stream sequence of the first of the last `n` retained events of
   * `subject` (0: from the first retained one), and how many that is; undefined when none are
   * retained. Finding the sequence reads the skipped ones' headers (at most bufferSize).
   */
  async #replayStart(stream: string, subject: string, n: number): Promise<{ seq: number; count: number } | undefined> {
    const info = await retrying(() => this.nats.jsm.streams.info(stream, { subjects_filter: subject }));
    const total = info.state.subjects?.[subject] ?? 0;
    if (total === 0) return undefined;
    const skip = Number.isFinite(n) ? Math.max(0, total - n) : 0;
    if (skip === 0) return { seq: 0, count: total };
    const oc = await this.nats.js.consumers.get(stream, { filter_subjects: subject, deliver_policy: DeliverPolicy.All, headers_only: true });
    try {
      let i = 0;
      for await (const m of await oc.fetch({ max_messages: skip + 1, expires: 5000 })) {
        if (i++ === skip) return { seq: m.seq, count: total - skip };
      }
    } finally {
      await oc.delete().catch(() => {});
    }
    return { seq: 0, count: total };
  }

  /** Consumer settings for a start from `#replayStart` (undefined: only events after now). */
  #deliverFrom(start: { seq: number } | undefined): { deliver_policy: DeliverPolicy; opt_start_seq?: number } {
    if (start === undefined) return { deliver_policy: DeliverPolicy.New };
    if (start.seq === 0) return { deliver_policy: DeliverPolicy.All };
    return { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: start.seq };
  }

  async #subscribeRef(topic: string, handler: RefHandler, replay: number): Promise<SubscribeResult> {
    const durable = durableName('h', topic, handler.ref);
    // The `event` middleware subscribes on every run of its skill: once this process consumes, it is a no-op.
    if (this.#handlers.has(durable)) return { topic, ref: handler.ref, created: false, replayed: 0 };
    const made = await this.#ensureConsumer(durable, topic, replay);
    if (!this.#handlers.has(durable)) {
      const consumer = await retrying(() => this.nats.js.consumers.get(made.stream, durable));
      this.#handlers.set(durable, this.#consume(consumer, (event, traceparent) => this.#opts.dispatch(handler, event, 'nats', traceparent), handler, true));
    }
    return { topic, ref: handler.ref, created: made.created, replayed: made.replayed };
  }

  async #subscribeFn(topic: string, fn: EventFn, replay: number): Promise<SubscribeResult> {
    let fns = this.#fnHandlers.get(topic);
    if (!fns) this.#fnHandlers.set(topic, (fns = new Map()));
    if (fns.has(fn)) return { topic, created: false, replayed: 0 };
    const stream = await this.nats.stream('events');
    const subject = this.nats.names.event(topic);
    const start = replay > 0 ? await this.#replayStart(stream, subject, replay) : undefined;
    const consumer = await retrying(() =>
      this.nats.js.consumers.get(stream, {
        filter_subjects: subject,
        ...this.#deliverFrom(start),
      }),
    );
    fns.set(fn, this.#consume(consumer, fn, fn, false));
    return { topic, created: true, replayed: start?.count ?? 0 };
  }

  /**
   * Runs `run` for each message of `consumer` until stopped. With `acks` (a durable group), the
   * message is kept in progress while its handler runs and acked once it settled — whatever the
   * outcome: a handler's error is logged, never retried (docs/events.md).
   */
  #consume(consumer: Consumer, run: (event: Event, traceparent?: string) => unknown, handler: RefHandler | EventFn, acks: boolean): HandlerLoop {
    let messages: ConsumerMessages | undefined;
    let stopped = false;
    const inflight = new Set<Promise<unknown>>();
    const loop = (async () => {
      while (!stopped) {
        try {
          messages = await consumer.consume({ max_messages: HANDLER_CONCURRENCY, expires: 30_000 });
          if (stopped) {
            await messages.close();
            return;
          }
          for await (const m of messages) {
            const event = toEvent(m, this.nats.names.prefix);
            const keepAlive = acks ? setInterval(() => m.working(), Math.max(100, this.nats.config.ackWaitMs / 3)) : undefined;
            const done = (async () => {
              try {
                await run(event, m.headers?.get('traceparent') || undefined);
              } catch (error) {
                this.#report(error, event, handler);
              } finally {
                if (keepAlive) clearInterval(keepAlive);
                if (acks) m.ack();
              }
            })();
            inflight.add(done);
            this.#running.add(done);
            void done.finally(() => {
              inflight.delete(done);
              this.#running.delete(done);
            });
            if (inflight.size >= HANDLER_CONCURRENCY) await Promise.race(inflight);
          }
        } catch {
          // The consumer went away (deleted, connection closed) or the iterator failed: retry unless stopped.
        }
        if (!stopped) await new Promise((r) => setTimeout(r, 250));
      }
    })();
    return {
      async stop() {
        stopped = true;
        await messages?.close().catch(() => {});
        await loop;
      },
    };
  }

  #report(error: unknown, event: Event, handler: RefHandler | EventFn): void {
    try {
      this.#opts.onHandlerError(error, event, handler);
    } catch {
      // A failing reporter must not become an unhandled rejection.
    }
  }
}

/**
 * A message as an event: ours are the event as JSON; one another program published (any bytes)
 * becomes `{ type: 'message', data: its text }` with the stream sequence as its id.
 */
function toEvent(m: JsMsg, prefix: string): Event {
  try {
    const value = JSON.parse(m.string()) as Partial<Event>;
    if (value && typeof value === 'object' && typeof value.id === 'string' && typeof value.topic === 'string' && typeof value.type === 'string') {
      return value as Event;
    }
  } catch {
    // not ours: below
  }
  const tail = m.subject.slice(`${prefix}.events.`.length);
  return { id: `s${m.seq}`, topic: subjectTopic(tail), type: 'message', data: m.string(), timestamp: Math.floor(m.info.timestampNanos / 1e6) };
}
