/**
 * The event bus (docs/events.md): topics, handlers, named queues, replay buffers.
 *
 * Pure and kernel-independent. All state lives in a plain {@link EventState} whose three maps are
 * stored on `globals.internals` as `events` (topic → handlers), `eventQueues` (topic → queue name →
 * {@link QueueState}) and `eventBuffers` (topic → replay buffer), so any number of `EventBus`
 * objects over the same state see the same topics, queues and blocked waiters. The kernel supplies
 * two callbacks: `dispatch`, which runs a tool-ref handler through the full pipeline, and
 * `onHandlerError`, which logs a failing handler.
 *
 * - `emit` stamps the event (`id` = 8-char UUID prefix, `timestamp`), appends it to the topic's
 *   replay buffer, pushes it synchronously into every queue of the topic — or straight to the
 *   oldest waiter blocked on an empty queue — and then, after `emit` returns, fires every handler.
 *   `dispatched` settles when those handlers have settled; it never rejects.
 * - A named queue is a consumer group: each queue gets one copy of every event emitted after it
 *   was created; within a queue each event goes to exactly one `wait` caller, FIFO among waiters.
 * - `subscribe` is idempotent: an existing queue or handler is left as it is, and `replay`
 *   copies the replay buffer only into a queue or handler it creates.
 * - `wait({ ack: false })` moves what it returns to the queue's pending set; `ack` drops pending
 *   events, `ack({ nack: true })` puts them back at the front of the queue in delivery order.
 *   Invariant: while a queue exists, each event emitted after its creation is queued, pending,
 *   or delivered (returned with `ack: true`, or acked) exactly once.
 *
 * - A caller that goes away before it received what `wait` handed it (its invocation aborted,
 *   docs/security.md) gets nothing, and the events go back: `requeue` puts them at the front of their
 *   queue again, out of the pending set; `requeueOnAbort` arms that for an invocation's signal.
 *
 * Limits (docs/security.md): event `data` over 1 MiB serialized (JSON) is refused with E_VALIDATION, and
 * a topic's replay buffer is bounded in bytes (`bufferBytes`, 64 MiB) as well as in count
 * (`bufferSize`, 1,000), oldest dropped. Each event is measured once, when it is emitted
 * (`eventBytes`: the JSON length of its data plus a fixed envelope allowance); the buffer keeps
 * the sizes beside the events, so trimming never re-serialises anything. `clear()` releases
 * every buffer, queue and handler (runtime.close()).
 *
 * The arrays in the state are copy-on-write (handler lists) or owned by the bus (queues,
 * buffers): read them, do not mutate them. A replay buffer array may hold up to twice
 * `bufferSize` events between trims; `buffered(topic)` returns the last `bufferSize`.
 */
import { randomId } from '../core/ids.ts';
import { AbortError, AgentAppsError } from '../core/errors.ts';
import type { Event, EventHandler } from '../core/types.ts';

export type EventFn = (event: Event) => unknown;
export interface RefHandler {
  ref: string;
  args?: unknown;
}
/** One entry of a topic's handler list: a function (in-process) or a tool ref (public skill API). */
export type Subscription = EventHandler;

/** A `wait` call blocked on an empty queue. */
export interface Waiter {
  max: number;
  ack: boolean;
  resolve: (events: Event[]) => void;
  reject: (error: unknown) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  /** Blocked with no timeout: it keeps the process alive (see `holdProcess`). */
  held: boolean;
}

/** A delivered, unacknowledged event; `next` chains the rare events whose 8-char ids collide. */
export interface PendingEntry {
  event: Event;
  /** Delivery order within the queue, so nack can restore it. */
  seq: number;
  next: PendingEntry | undefined;
}

export interface QueueState {
  readonly name: string;
  /** Live events are `items[head..]`: an array with a head index, so taking is O(1) amortised. */
  items: Event[];
  head: number;
  pending: Map<string, PendingEntry>;
  seq: number;
  /** Insertion-ordered, so the first waiter is the oldest; only non-empty while `items` is empty. */
  waiters: Set<Waiter>;
}

/** A replay buffer's bookkeeping: its array (the one in `eventBuffers`) and the sizes of its events. */
export interface BufferSizes {
  buffer: Event[];
  /** The size in bytes of each event in `buffer`, index for index, as measured at emit. */
  sizes: number[];
  /** Their sum: what the buffer array retains. */
  bytes: number;
}

export interface EventState {
  events: Map<string, Subscription[]>;
  eventQueues: Map<string, Map<string, QueueState>>;
  eventBuffers: Map<string, Event[]>;
  /** Beside `eventBuffers`, topic for topic (the bus keeps the two in step). */
  eventBufferSizes: Map<string, BufferSizes>;
  bufferSize: number;
  /** Most bytes one topic's replay buffer retains (64 MiB by default). */
  bufferBytes: number;
}

export interface EmitInput {
  topic: string;
  type: string;
  data?: unknown;
  source?: string;
  rootContextId?: string;
  /** The emitter's span (docs/ci.md, "Tracing"): a NATS event carries it as its traceparent header. */
  traceparent?: string;
}
export interface SubscribeInput {
  topic: string;
  ref?: string;
  args?: unknown;
  fn?: EventFn;
  queue?: string;
  /** `true`: every buffered event of the topic; a number: the last N. */
  replay?: boolean | number;
}
export interface SubscribeResult {
  topic: string;
  queue?: string;
  ref?: string;
  created: boolean;
  replayed: number;
}
export interface UnsubscribeInput {
  topic: string;
  ref?: string;
  fn?: EventFn;
}
export interface WaitInput {
  topic: string;
  queue?: string;
  /** Milliseconds; `[]` when it passes with nothing delivered. `0` polls. Omitted: no limit. */
  timeout?: number;
  /** Most events to return; default all available. */
  max?: number;
  /** Default true; `false` keeps returned events pending until `ack`. */
  ack?: boolean;
  signal?: AbortSignal;
}
export interface AckInput {
  topic: string;
  queue?: string;
  ids: string[];
  nack?: boolean;
}
export interface AckResult {
  acked: string[];
  nacked: string[];
  unknown: string[];
}
export interface EventBusOptions {
  /**
   * Runs a tool-ref handler; the kernel invokes `handler.ref` with `{ ...handler.args, event }`.
   * `from: 'nats'`: the event came over NATS, written by another party (checked before it runs).
   */
  dispatch: (handler: RefHandler, event: Event, from?: 'nats', traceparent?: string) => Promise<unknown>;
  /** Called when a handler throws or rejects; `emit` never sees the error. */
  onHandlerError: (error: unknown, event: Event, handler: EventHandler) => void;
}

export const DEFAULT_BUFFER_SIZE = 1000;
/** docs/security.md: a topic's replay buffer keeps at most this many bytes of events, oldest dropped. */
export const DEFAULT_BUFFER_BYTES = 64 * 1024 * 1024;
/** docs/security.md: event `data` over this many bytes of JSON is E_VALIDATION. */
export const MAX_EVENT_DATA_BYTES = 1024 * 1024;
/** What an event's envelope (id, topic, type, timestamp, object) is counted as, beyond its strings and data. */
const EVENT_OVERHEAD = 128;
export const DEFAULT_QUEUE = 'default';
/** setTimeout fires at once beyond this; a longer timeout means "no limit". */
const MAX_TIMER = 2 ** 31 - 1;
/** Compact a queue's array once the consumed prefix is this long and over half the array. */
const COMPACT_AT = 1024;
const SETTLED: Promise<void> = Promise.resolve();
const noop = (): void => {};

export function createEventState(opts: { bufferSize?: number; bufferBytes?: number } = {}): EventState {
  return {
    events: new Map(),
    eventQueues: new Map(),
    eventBuffers: new Map(),
    eventBufferSizes: new Map(),
    bufferSize: opts.bufferSize === undefined ? DEFAULT_BUFFER_SIZE : checkBufferSize(opts.bufferSize),
    bufferBytes: opts.bufferBytes === undefined ? DEFAULT_BUFFER_BYTES : checkBufferBytes(opts.bufferBytes),
  };
}

const views = new WeakMap<object, EventState>();

/**
 * The event state on `globals.internals`: creates `events`, `eventQueues`, `eventBuffers` and
 * `eventBufferSizes` there on first use and returns a view over them (the same view on every
 * call while those maps stay in place). `bufferSize` / `bufferBytes`, when given, update the
 * view's replay buffer limits.
 */
export function getEventState(state: object, opts: { bufferSize?: number; bufferBytes?: number } = {}): EventState {
  // The bus's own maps on globals.internals (declared below); it takes the state as an object so
  // that a test or a second bus can hand it any holder.
  const internals = state as Record<string, unknown>;
  const events = ensureMap<string, Subscription[]>(internals, 'events');
  const eventQueues = ensureMap<string, Map<string, QueueState>>(internals, 'eventQueues');
  const eventBuffers = ensureMap<string, Event[]>(internals, 'eventBuffers');
  const eventBufferSizes = ensureMap<string, BufferSizes>(internals, 'eventBufferSizes');
  let view = views.get(internals);
  if (view === undefined || view.events !== events || view.eventQueues !== eventQueues || view.eventBuffers !== eventBuffers || view.eventBufferSizes !== eventBufferSizes) {
    view = { events, eventQueues, eventBuffers, eventBufferSizes, bufferSize: DEFAULT_BUFFER_SIZE, bufferBytes: DEFAULT_BUFFER_BYTES };
    views.set(internals, view);
  }
  if (opts.bufferSize !== undefined) view.bufferSize = checkBufferSize(opts.bufferSize);
  if (opts.bufferBytes !== undefined) view.bufferBytes = checkBufferBytes(opts.bufferBytes);
  return view;
}

export class EventBus {
  readonly state: EventState;
  #dispatch: EventBusOptions['dispatch'];
  #onHandlerError: EventBusOptions['onHandlerError'];

  constructor(state: EventState, opts: EventBusOptions) {
    this.state = state;
    this.#dispatch = opts.dispatch;
    this.#onHandlerError = opts.onHandlerError;
  }

  emit(input: EmitInput): { event: Event; dispatched: Promise<void> } {
    const { topic, type } = input;
    const { event, dataBytes } = stampEvent(input);

    const size = this.state.bufferSize;
    if (size > 0) {
      const bytes = EVENT_OVERHEAD + topic.length + type.length + (typeof input.source === 'string' ? input.source.length : 0) + dataBytes;
      this.#buffer(topic, event, bytes, size);
    }

    const queues = this.state.eventQueues.get(topic);
    if (queues !== undefined) {
      for (const queue of queues.values()) {
        if (queue.waiters.size > 0) handOff(queue, firstWaiter(queue), [event]);
        else queue.items.push(event);
      }
    }

    // Handlers run after emit returns (docs/events.md: queues synchronously, handlers async). The list
    // is copy-on-write, so the array read here is the snapshot of handlers at emit time.
    const handlers = this.state.events.get(topic);
    const dispatched =
      handlers === undefined || handlers.length === 0 ? SETTLED : Promise.resolve().then(() => this.#fire(handlers, [event]));
    return { event, dispatched };
  }

  subscribe(input: SubscribeInput): SubscribeResult {
    const { topic, ref, fn } = input;
    checkTopic(topic, 'event-subscribe');
    if (ref !== undefined && fn !== undefined) throw invalid('event-subscribe', "pass 'ref' or 'fn', not both");
    if (ref !== undefined && (typeof ref !== 'string' || ref === '')) throw invalid('event-subscribe', "'ref' must be a non-empty string");
    if (fn !== undefined && typeof fn !== 'function') throw invalid('event-subscribe', "'fn' must be a function");
    const replay = replayCount(input.replay);

    // Idempotent (docs/events.md): subscribing to an existing queue, or again with the same handler, is
    // a no-op — `replay` fills only a new one, so no event is handed out twice.
    if (ref !== undefined || fn !== undefined) {
      const handlers = this.state.events.get(topic) ?? [];
      const result: SubscribeResult = { topic, created: false, replayed: 0 };
      if (ref !== undefined) result.ref = ref;
      if (handlers.some((h) => sameHandler(h, ref, fn))) return result;
      const handler = fn ?? (input.args === undefined ? { ref: ref as string } : { ref: ref as string, args: input.args });
      this.state.events.set(topic, [...handlers, handler]);
      const events = replay > 0 ? this.buffered(topic, replay) : [];
      if (events.length > 0) {
        const only = [handler];
        void Promise.resolve().then(() => this.#fire(only, events));
      }
      result.created = true;
      result.replayed = events.length;
      return result;
    }

    const name = queueName(input.queue, 'event-subscribe');
    if (this.state.eventQueues.get(topic)?.has(name)) return { topic, queue: name, created: false, replayed: 0 };
    const queue = this.#queue(topic, name);
    const events = replay > 0 ? this.buffered(topic, replay) : [];
    for (const event of events) queue.items.push(event);
    return { topic, queue: name, created: true, replayed: events.length };
  }

  unsubscribe(input: UnsubscribeInput): { removed: number } {
    const { topic, ref, fn } = input;
    checkTopic(topic, 'event-unsubscribe');
    const handlers = this.state.events.get(topic);
    if (handlers === undefined) return { removed: 0 };
    if (ref === undefined && fn === undefined) {
      this.state.events.delete(topic);
      return { removed: handlers.length };
    }
    const keep = handlers.filter((h) => !sameHandler(h, ref, fn));
    if (keep.length === 0) this.state.events.delete(topic);
    else if (keep.length !== handlers.length) this.state.events.set(topic, keep);
    return { removed: handlers.length - keep.length };
  }

  /** Drains the queue if it has events; otherwise blocks until events, the timeout, or an abort. */
  wait(input: WaitInput): Promise<Event[]> {
    const { topic, timeout, signal } = input;
    let max: number;
    let queue: QueueState;
    try {
      checkTopic(topic, 'event-wait');
      if (timeout !== undefined && (typeof timeout !== 'number' || Number.isNaN(timeout))) {
        throw invalid('event-wait', "'timeout' must be a number of milliseconds");
      }
      max = input.max === undefined ? Infinity : input.max;
      if (typeof max !== 'number' || !(max >= 1) || (max !== Infinity && !Number.isInteger(max))) {
        throw invalid('event-wait', "'max' must be a positive integer");
      }
      queue = this.#queue(topic, queueName(input.queue, 'event-wait'));
    } catch (error) {
      return Promise.reject(error);
    }
    if (signal?.aborted) return Promise.reject(new AbortError(signal.reason));
    const ack = input.ack !== false;

    if (queue.items.length > queue.head) {
      const events = take(queue, max);
      if (!ack) markPending(queue, events);
      return Promise.resolve(events);
    }
    if (timeout !== undefined && timeout <= 0) return Promise.resolve([]);

    return new Promise<Event[]>((resolve, reject) => {
      const waiter: Waiter = { max, ack, resolve, reject, timer: undefined, signal, onAbort: undefined, held: false };
      if (timeout !== undefined && timeout <= MAX_TIMER) {
        waiter.timer = setTimeout(() => {
          release(queue, waiter);
          resolve([]);
        }, timeout);
      } else {
        waiter.held = true;
        holdProcess(1);
      }
      if (signal !== undefined) {
        waiter.onAbort = () => {
          release(queue, waiter);
          reject(new AbortError(signal.reason));
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      queue.waiters.add(waiter);
    });
  }

  ack(input: AckInput): AckResult {
    const { topic, ids } = input;
    checkTopic(topic, 'event-ack');
    if (!Array.isArray(ids)) throw invalid('event-ack', "'ids' must be an array of event ids");
    const nack = input.nack === true;
    const queue = this.state.eventQueues.get(topic)?.get(queueName(input.queue, 'event-ack'));
    const result: AckResult = { acked: [], nacked: [], unknown: [] };
    const back: PendingEntry[] = [];
    for (const id of new Set(ids)) {
      const entry = queue?.pending.get(id);
      if (queue === undefined || entry === undefined) {
        result.unknown.push(id);
        continue;
      }
      queue.pending.delete(id);
      if (!nack) {
        result.acked.push(id);
        continue;
      }
      result.nacked.push(id);
      for (let e: PendingEntry | undefined = entry; e !== undefined; e = e.next) back.push(e);
    }
    if (queue !== undefined && back.length > 0) {
      back.sort((a, b) => a.seq - b.seq);
      putFront(queue, back.map((e) => e.event));
      wake(queue);
    }
    return result;
  }

  /**
   * Puts events that `wait` handed out back at the front of their queue, in the order given,
   * and wakes a blocked waiter: their caller went away before it received them (docs/security.md). With
   * `ack: false` they were pending; each is taken out of the pending set first, and one that is
   * no longer pending (acked or nacked since) stays where it is. Returns how many went back.
   */
  requeue(input: { topic: string; queue?: string; events: readonly Event[]; ack?: boolean }): number {
    const queue = this.state.eventQueues.get(input.topic)?.get(queueName(input.queue, 'event-wait'));
    if (queue === undefined || input.events.length === 0) return 0;
    const back = input.ack === false ? input.events.filter((event) => unpend(queue, event)) : [...input.events];
    if (back.length === 0) return 0;
    putFront(queue, back);
    wake(queue);
    return back.length;
  }

  /**
   * For `event-wait`: the events `wait` just returned go back to their queue (`requeue`) if
   * `signal` aborts — at once if it already has (then this throws the AbortError the caller
   * gets). Only for a signal that stops firing once the result reached the caller, such as the
   * invocation's own `ctx.run.signal` (the kernel detaches it when the invocation settles, and
   * an invocation aborted before then rejects instead of returning).
   */
  requeueOnAbort(input: { topic: string; queue?: string; events: readonly Event[]; ack?: boolean }, signal: AbortSignal): void {
    if (input.events.length === 0) return;
    if (signal.aborted) {
      this.requeue(input);
      throw new AbortError(signal.reason);
    }
    signal.addEventListener('abort', () => void this.requeue(input), { once: true });
  }

  /**
   * Releases what the bus holds (runtime.close()): replay buffers, queued and pending events,
   * handlers. Blocked waiters get `[]`, as if their timeout passed.
   */
  clear(): void {
    for (const queues of this.state.eventQueues.values()) {
      for (const queue of queues.values()) {
        for (const waiter of [...queue.waiters]) {
          release(queue, waiter);
          waiter.resolve([]);
        }
      }
    }
    this.state.eventQueues.clear();
    this.state.eventBuffers.clear();
    this.state.eventBufferSizes.clear();
    this.state.events.clear();
  }

  /** The queue's delivered-but-unacknowledged events, in delivery order. */
  pending(topic: string, queue: string = DEFAULT_QUEUE): Event[] {
    const state = this.state.eventQueues.get(topic)?.get(queue);
    if (state === undefined) return [];
    const entries: PendingEntry[] = [];
    for (const head of state.pending.values()) for (let e: PendingEntry | undefined = head; e; e = e.next) entries.push(e);
    return entries.sort((a, b) => a.seq - b.seq).map((e) => e.event);
  }

  /** The topic's replay buffer: its last `bufferSize` events, or the last `last` of those. */
  buffered(topic: string, last: number = Infinity): Event[] {
    const buffer = this.state.eventBuffers.get(topic);
    if (buffer === undefined) return [];
    const n = Math.min(last, this.state.bufferSize, buffer.length);
    return n > 0 ? buffer.slice(buffer.length - n) : [];
  }

  /** Appends to the topic's replay buffer, then trims it to `size` events and `bufferBytes` bytes. */
  #buffer(topic: string, event: Event, bytes: number, size: number): void {
    // One look-up on the hot path: the bookkeeping holds the buffer array too.
    let meta = this.state.eventBufferSizes.get(topic);
    if (meta === undefined) {
      let existing = this.state.eventBuffers.get(topic);
      if (existing === undefined) this.state.eventBuffers.set(topic, (existing = []));
      this.state.eventBufferSizes.set(topic, (meta = measure(existing)));
    }
    const buffer = meta.buffer;
    buffer.push(event);
    meta.sizes.push(bytes);
    meta.bytes += bytes;
    // Trim to `size` only when it doubles: one splice per `size` events instead of a shift each.
    if (buffer.length >= 2 * size) dropOldest(buffer, meta, buffer.length - size);
    const limit = this.state.bufferBytes;
    if (meta.bytes > limit) {
      let n = 0;
      for (let over = meta.bytes - limit; over > 0 && n < meta.sizes.length; n++) over -= meta.sizes[n]!;
      dropOldest(buffer, meta, n);
    }
  }

  #queue(topic: string, name: string): QueueState {
    let queues = this.state.eventQueues.get(topic);
    if (queues === undefined) this.state.eventQueues.set(topic, (queues = new Map()));
    let queue = queues.get(name);
    if (queue === undefined) {
      queue = { name, items: [], head: 0, pending: new Map(), seq: 0, waiters: new Set() };
      queues.set(name, queue);
    }
    return queue;
  }

  /** Calls each handler with each event; resolves when all have settled, never rejects. */
  #fire(handlers: readonly Subscription[], events: readonly Event[]): Promise<void> | undefined {
    let running: Promise<void>[] | undefined;
    for (const event of events) {
      for (const handler of handlers) {
        try {
          const result = typeof handler === 'function' ? handler(event) : this.#dispatch(handler, event);
          if (isThenable(result)) {
            (running ??= []).push(Promise.resolve(result).then(noop, (error: unknown) => this.#report(error, event, handler)));
          }
        } catch (error) {
          this.#report(error, event, handler);
        }
      }
    }
    return running === undefined ? undefined : Promise.all(running).then(noop);
  }

  #report(error: unknown, event: Event, handler: EventHandler): void {
    try {
      this.#onHandlerError(error, event, handler);
    } catch {
      // A failing error reporter must not turn a handler error into an unhandled rejection.
    }
  }
}

/**
 * Checks what `emit` was given and stamps the event: `id` (the first 8 characters of a UUID) and
 * `timestamp`; `dataBytes` is its data's size as JSON. Every backend makes its events here.
 */
export function stampEvent(input: EmitInput): { event: Event; dataBytes: number } {
  const { topic, type } = input;
  checkTopic(topic, 'event-emit');
  if (typeof type !== 'string') throw invalid('event-emit', "'type' must be a string");
  const data = input.data;
  const dataBytes = jsonBytes(data);
  if (dataBytes > MAX_EVENT_DATA_BYTES) {
    throw invalid('event-emit', `'data' is ${dataBytes} bytes as JSON; the limit is ${MAX_EVENT_DATA_BYTES} (1 MiB) — pass a reference (a path, an id) instead of the payload`);
  }
  const event: Event = { id: randomId().slice(0, 8), topic, type, timestamp: Date.now() };
  if (input.source !== undefined) event.source = input.source;
  if (data !== undefined) event.data = data;
  if (input.rootContextId !== undefined) event.rootContextId = input.rootContextId;
  return { event, dataBytes };
}

function firstWaiter(queue: QueueState): Waiter {
  return queue.waiters.values().next().value as Waiter;
}

/** Detaches a waiter from its queue, its timer and its signal. */
function release(queue: QueueState, waiter: Waiter): void {
  queue.waiters.delete(waiter);
  if (waiter.timer !== undefined) clearTimeout(waiter.timer);
  if (waiter.onAbort !== undefined) waiter.signal?.removeEventListener('abort', waiter.onAbort);
  if (waiter.held) {
    waiter.held = false;
    holdProcess(-1);
  }
}

let holds = 0;
let keepAlive: ReturnType<typeof setInterval> | undefined;

/**
 * A wait without a timeout blocks until an event (or an abort) comes, like a server waiting for
 * a connection: while one is blocked, the process stays alive. Otherwise Node would end a CLI
 * run whose skill waits (exit 13, "unsettled top-level await") before the event, SIGINT or
 * SIGTERM that should end the wait could arrive (docs/events.md).
 */
function holdProcess(delta: 1 | -1): void {
  holds += delta;
  if (holds > 0 && keepAlive === undefined) keepAlive = setInterval(noop, MAX_TIMER);
  else if (holds === 0 && keepAlive !== undefined) {
    clearInterval(keepAlive);
    keepAlive = undefined;
  }
}

function handOff(queue: QueueState, waiter: Waiter, events: Event[]): void {
  release(queue, waiter);
  if (!waiter.ack) markPending(queue, events);
  waiter.resolve(events);
}

/** Gives queued events to blocked waiters, oldest first, each taking up to its `max`. */
function wake(queue: QueueState): void {
  while (queue.waiters.size > 0 && queue.items.length > queue.head) {
    const waiter = firstWaiter(queue);
    handOff(queue, waiter, take(queue, waiter.max));
  }
}

function take(queue: QueueState, max: number): Event[] {
  const { items, head } = queue;
  const available = items.length - head;
  if (head === 0 && max >= available) {
    queue.items = [];
    return items;
  }
  const n = Math.min(max, available);
  const out = items.slice(head, head + n);
  queue.head = head + n;
  if (queue.head === items.length) {
    queue.items = [];
    queue.head = 0;
  } else if (queue.head >= COMPACT_AT && queue.head * 2 >= items.length) {
    queue.items = items.slice(queue.head);
    queue.head = 0;
  }
  return out;
}

function putFront(queue: QueueState, events: Event[]): void {
  const k = events.length;
  if (queue.head >= k) {
    queue.head -= k;
    for (let i = 0; i < k; i++) queue.items[queue.head + i] = events[i] as Event;
  } else {
    queue.items = events.concat(queue.items.slice(queue.head));
    queue.head = 0;
  }
}

/** Takes `event` (this very object) out of the queue's pending set; false when it is not there. */
function unpend(queue: QueueState, event: Event): boolean {
  let prev: PendingEntry | undefined;
  for (let e = queue.pending.get(event.id); e !== undefined; prev = e, e = e.next) {
    if (e.event !== event) continue;
    if (prev !== undefined) prev.next = e.next;
    else if (e.next !== undefined) queue.pending.set(event.id, e.next);
    else queue.pending.delete(event.id);
    return true;
  }
  return false;
}

function dropOldest(buffer: Event[], meta: BufferSizes, n: number): void {
  if (n <= 0) return;
  buffer.splice(0, n);
  for (const bytes of meta.sizes.splice(0, n)) meta.bytes -= bytes;
}

/** Bookkeeping for a buffer: empty, or one filled without it (state from elsewhere), measured once here. */
function measure(buffer: Event[]): BufferSizes {
  const sizes = buffer.map((e) => EVENT_OVERHEAD + e.topic.length + e.type.length + (e.source?.length ?? 0) + jsonBytes(e.data));
  return { buffer, sizes, bytes: sizes.reduce((a, b) => a + b, 0) };
}

/** Strings up to this length are measured without serialising: their JSON is at most 6× as long, under the data cap. */
const SHORT_STRING = Math.floor(MAX_EVENT_DATA_BYTES / 6) - 2;

/**
 * The size of `value` as JSON, in UTF-8 bytes — exact whenever it could pass the data cap;
 * numbers, booleans and short strings are estimated without serialising. Values JSON cannot
 * encode (cycles, bigints) are measured as the CLI's run file would write them.
 */
export function jsonBytes(value: unknown): number {
  const type = typeof value;
  if (type === 'number' || type === 'boolean') return 8;
  if (type === 'undefined' || type === 'function' || type === 'symbol') return 0;
  if (type === 'string' && (value as string).length <= SHORT_STRING) return (value as string).length + 2;
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    json = JSON.stringify(value, tolerant());
  }
  return json === undefined ? 0 : Buffer.byteLength(json);
}

/** A JSON.stringify replacer for measuring: bigints as strings, true cycles cut. */
function tolerant() {
  const ancestors: unknown[] = [];
  return function (this: unknown, _key: string, value: unknown) {
    if (typeof value === 'bigint') return String(value);
    if (value === null || typeof value !== 'object') return value;
    while (ancestors.length > 0 && ancestors[ancestors.length - 1] !== this) ancestors.pop();
    if (ancestors.includes(value)) return '[Circular]';
    ancestors.push(value);
    return value;
  };
}

function markPending(queue: QueueState, events: Event[]): void {
  for (const event of events) {
    queue.pending.set(event.id, { event, seq: queue.seq++, next: queue.pending.get(event.id) });
  }
}

function sameHandler(handler: Subscription, ref: string | undefined, fn: EventFn | undefined): boolean {
  if (fn !== undefined) return handler === fn;
  return typeof handler !== 'function' && handler.ref === ref;
}

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as PromiseLike<unknown>).then === 'function';
}

export function replayCount(replay: boolean | number | undefined): number {
  if (replay === true) return Infinity;
  if (typeof replay === 'number' && replay > 0) return Math.floor(replay);
  return 0;
}

export function queueName(queue: string | undefined, tool: string): string {
  if (queue === undefined) return DEFAULT_QUEUE;
  if (typeof queue !== 'string' || queue === '') throw invalid(tool, "'queue' must be a non-empty string");
  return queue;
}

export function checkTopic(topic: unknown, tool: string): asserts topic is string {
  if (typeof topic !== 'string' || topic === '') throw invalid(tool, "'topic' must be a non-empty string");
}

function checkBufferSize(size: number): number {
  if (!Number.isInteger(size) || size < 0) throw invalid('events', "'bufferSize' must be a non-negative integer");
  return size;
}

function checkBufferBytes(bytes: number): number {
  if (!Number.isInteger(bytes) || bytes < 0) throw invalid('events', "'bufferBytes' must be a non-negative integer");
  return bytes;
}

export function invalid(tool: string, message: string): AgentAppsError {
  return new AgentAppsError('E_VALIDATION', `${tool}: ${message}`);
}

function ensureMap<K, V>(internals: Record<string, unknown>, key: string): Map<K, V> {
  const value = internals[key];
  if (value === undefined) {
    const map = new Map<K, V>();
    internals[key] = map;
    return map;
  }
  if (!(value instanceof Map)) throw new AgentAppsError('E_INTERNAL', `globals.internals.${key} is not a Map`);
  return value as Map<K, V>;
}

declare module '../core/types.ts' {
  interface RuntimeState {
    /** topic → handlers (getEventState). */
    events?: Map<string, Subscription[]>;
    /** topic → queue name → queue state. */
    eventQueues?: Map<string, Map<string, QueueState>>;
    /** topic → replay buffer. */
    eventBuffers?: Map<string, Event[]>;
    /** topic → the replay buffer's byte bookkeeping. */
    eventBufferSizes?: Map<string, BufferSizes>;
  }
}
