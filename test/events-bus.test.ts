import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { setImmediate as tick } from 'node:timers/promises';
import { createEventState, EventBus, getEventState, type EventState } from '../src/events/bus.ts';
import type { Event, EventHandler } from '../src/core/types.ts';

interface Harness {
  bus: EventBus;
  state: EventState;
  dispatched: Array<{ handler: { ref: string; args?: unknown }; event: Event }>;
  errors: Array<{ error: unknown; event: Event; handler: EventHandler }>;
}

function harness(opts: { bufferSize?: number; dispatch?: (h: { ref: string; args?: unknown }, e: Event) => Promise<unknown> } = {}): Harness {
  const state = createEventState(opts.bufferSize === undefined ? {} : { bufferSize: opts.bufferSize });
  const h: Harness = { bus: undefined as unknown as EventBus, state, dispatched: [], errors: [] };
  h.bus = new EventBus(state, {
    dispatch: async (handler, event) => {
      h.dispatched.push({ handler, event });
      return opts.dispatch?.(handler, event);
    },
    onHandlerError: (error, event, handler) => void h.errors.push({ error, event, handler }),
  });
  return h;
}

const timeouts = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
const types = (events: Event[]): string[] => events.map((e) => e.type);

// ——— emit ———

test('emit stamps an 8-character id and a timestamp and omits optional fields it was not given', { timeout: 5000 }, () => {
  const { bus } = harness();
  const before = Date.now();
  const { event } = bus.emit({ topic: 'deploy', type: 'started', data: { v: 1 }, source: 'ci' });
  assert.match(event.id, /^[0-9a-f]{8}$/);
  assert.ok(event.timestamp >= before && event.timestamp <= Date.now());
  assert.deepEqual({ ...event, id: 'x', timestamp: 0 }, { id: 'x', topic: 'deploy', type: 'started', data: { v: 1 }, source: 'ci', timestamp: 0 });
  assert.ok(!('rootContextId' in event));
  assert.notEqual(bus.emit({ topic: 'deploy', type: 'x' }).event.id, event.id);
});

test('emit rejects a missing topic with E_VALIDATION', { timeout: 5000 }, () => {
  const { bus } = harness();
  assert.throws(() => bus.emit({ topic: '', type: 'x' }), { code: 'E_VALIDATION' });
});

// ——— queues and consumer groups ———

test('different named queues each get every event of the topic', { timeout: 5000 }, async () => {
  const { bus } = harness();
  bus.subscribe({ topic: 't', queue: 'a' });
  bus.subscribe({ topic: 't', queue: 'b' });
  for (const type of ['1', '2', '3']) bus.emit({ topic: 't', type });
  assert.deepEqual(types(await bus.wait({ topic: 't', queue: 'a' })), ['1', '2', '3']);
  assert.deepEqual(types(await bus.wait({ topic: 't', queue: 'b' })), ['1', '2', '3']);
  assert.deepEqual(await bus.wait({ topic: 't', queue: 'a', timeout: 0 }), []);
});

test('within one queue each event goes to exactly one waiter, FIFO among waiters', { timeout: 5000 }, async () => {
  const { bus } = harness();
  const w1 = bus.wait({ topic: 't', queue: 'workers' });
  const w2 = bus.wait({ topic: 't', queue: 'workers' });
  const w3 = bus.wait({ topic: 't', queue: 'workers' });
  bus.emit({ topic: 't', type: 'a' });
  bus.emit({ topic: 't', type: 'b' });
  bus.emit({ topic: 't', type: 'c' });
  bus.emit({ topic: 't', type: 'd' });
  assert.deepEqual([types(await w1), types(await w2), types(await w3)], [['a'], ['b'], ['c']]);
  assert.deepEqual(types(await bus.wait({ topic: 't', queue: 'workers' })), ['d']);
});

test('a queue receives only events emitted after it exists, unless it asks for replay', { timeout: 5000 }, async () => {
  const { bus } = harness();
  bus.emit({ topic: 't', type: 'early' });
  bus.subscribe({ topic: 't' });
  bus.emit({ topic: 't', type: 'late' });
  assert.deepEqual(types(await bus.wait({ topic: 't' })), ['late']);
});

test('wait creates the queue it names, so events emitted after a timed-out wait are kept', { timeout: 5000 }, async () => {
  const { bus } = harness();
  assert.deepEqual(await bus.wait({ topic: 't', queue: 'q', timeout: 0 }), []);
  bus.emit({ topic: 't', type: 'kept' });
  assert.deepEqual(types(await bus.wait({ topic: 't', queue: 'q', timeout: 0 })), ['kept']);
});

test('wait drains at most max events and leaves the rest queued in order', { timeout: 5000 }, async () => {
  const { bus } = harness();
  bus.subscribe({ topic: 't' });
  for (let i = 0; i < 5; i++) bus.emit({ topic: 't', type: String(i) });
  assert.deepEqual(types(await bus.wait({ topic: 't', max: 2 })), ['0', '1']);
  assert.deepEqual(types(await bus.wait({ topic: 't', max: 2 })), ['2', '3']);
  assert.deepEqual(types(await bus.wait({ topic: 't' })), ['4']);
});

test('wait rejects a non-positive max with E_VALIDATION', { timeout: 5000 }, async () => {
  const { bus } = harness();
  await assert.rejects(bus.wait({ topic: 't', max: 0 }), { code: 'E_VALIDATION' });
});

test('a long queue drained in small batches stays in order (array compaction)', { timeout: 5000 }, async () => {
  const { bus } = harness({ bufferSize: 0 });
  bus.subscribe({ topic: 't' });
  for (let i = 0; i < 5000; i++) bus.emit({ topic: 't', type: 'n', data: i });
  const seen: unknown[] = [];
  for (;;) {
    const batch = await bus.wait({ topic: 't', max: 7, timeout: 0 });
    if (batch.length === 0) break;
    seen.push(...batch.map((e) => e.data));
  }
  assert.deepEqual(seen, Array.from({ length: 5000 }, (_, i) => i));
});

// ——— replay buffer ———

test('the replay buffer keeps only the last bufferSize events of a topic', { timeout: 5000 }, async () => {
  const { bus, state } = harness({ bufferSize: 5 });
  for (let i = 0; i < 23; i++) bus.emit({ topic: 't', type: String(i) });
  assert.ok(state.eventBuffers.get('t')!.length < 10, 'the raw buffer is trimmed');
  assert.deepEqual(types(bus.buffered('t')), ['18', '19', '20', '21', '22']);
  assert.deepEqual(bus.subscribe({ topic: 't', queue: 'all', replay: true }), { topic: 't', queue: 'all', created: true, replayed: 5 });
  assert.deepEqual(types(await bus.wait({ topic: 't', queue: 'all' })), ['18', '19', '20', '21', '22']);
  assert.equal(bus.subscribe({ topic: 't', queue: 'two', replay: 2 }).replayed, 2);
  assert.deepEqual(types(await bus.wait({ topic: 't', queue: 'two' })), ['21', '22']);
});

test('the default replay buffer holds 1000 events', { timeout: 5000 }, () => {
  const { bus } = harness();
  for (let i = 0; i < 2500; i++) bus.emit({ topic: 't', type: String(i) });
  const buffered = bus.buffered('t');
  assert.equal(buffered.length, 1000);
  assert.equal(buffered[0]!.type, '1500');
});

test('subscribing to an existing queue is a no-op, replay included: no event is handed out twice', { timeout: 5000 }, async () => {
  const { bus } = harness();
  bus.emit({ topic: 't', type: 'old' });
  assert.deepEqual(bus.subscribe({ topic: 't', replay: true }), { topic: 't', queue: 'default', created: true, replayed: 1 });
  bus.emit({ topic: 't', type: 'new' });
  assert.deepEqual(bus.subscribe({ topic: 't', replay: true }), { topic: 't', queue: 'default', created: false, replayed: 0 });
  assert.deepEqual(types(await bus.wait({ topic: 't', timeout: 0 })), ['old', 'new']);
  assert.deepEqual(await bus.wait({ topic: 't', timeout: 0 }), []);
});

test('a queue created by wait exists: subscribing to it with replay adds nothing and wakes no one', { timeout: 5000 }, async () => {
  const { bus } = harness();
  bus.emit({ topic: 't', type: 'old' });
  const waiting = bus.wait({ topic: 't', timeout: 20 });
  assert.deepEqual(bus.subscribe({ topic: 't', replay: true }), { topic: 't', queue: 'default', created: false, replayed: 0 });
  assert.deepEqual(await waiting, []);
});

test('re-subscribing a handler with replay is a no-op: it is not called again for the buffered events', { timeout: 5000 }, async () => {
  const { bus, dispatched } = harness();
  bus.emit({ topic: 't', type: 'a' });
  const seen: string[] = [];
  const fn = (e: Event): void => void seen.push(e.type);
  assert.deepEqual(bus.subscribe({ topic: 't', ref: 'on-t', replay: true }), { topic: 't', ref: 'on-t', created: true, replayed: 1 });
  assert.deepEqual(bus.subscribe({ topic: 't', ref: 'on-t', replay: true }), { topic: 't', ref: 'on-t', created: false, replayed: 0 });
  assert.equal(bus.subscribe({ topic: 't', fn, replay: true }).replayed, 1);
  assert.equal(bus.subscribe({ topic: 't', fn, replay: true }).replayed, 0);
  await tick();
  assert.deepEqual(dispatched.map((d) => d.event.type), ['a']);
  assert.deepEqual(seen, ['a']);
});

test('replay into a handler calls it with the buffered events, after subscribe returns', { timeout: 5000 }, async () => {
  const { bus } = harness();
  bus.emit({ topic: 't', type: 'a' });
  bus.emit({ topic: 't', type: 'b' });
  const seen: string[] = [];
  assert.equal(bus.subscribe({ topic: 't', fn: (e) => void seen.push(e.type), replay: true }).replayed, 2);
  assert.deepEqual(seen, []);
  await tick();
  assert.deepEqual(seen, ['a', 'b']);
});

// ——— subscribe / unsubscribe ———

test('subscribe is idempotent for the same ref, the same fn, and the same queue', { timeout: 5000 }, () => {
  const { bus, state } = harness();
  const fn = (): void => {};
  assert.deepEqual(bus.subscribe({ topic: 't', ref: 'on-t' }), { topic: 't', ref: 'on-t', created: true, replayed: 0 });
  assert.deepEqual(bus.subscribe({ topic: 't', ref: 'on-t' }), { topic: 't', ref: 'on-t', created: false, replayed: 0 });
  assert.equal(bus.subscribe({ topic: 't', fn }).created, true);
  assert.equal(bus.subscribe({ topic: 't', fn }).created, false);
  assert.equal(state.events.get('t')!.length, 2);
  assert.deepEqual(bus.subscribe({ topic: 't', queue: 'q' }), { topic: 't', queue: 'q', created: true, replayed: 0 });
  assert.deepEqual(bus.subscribe({ topic: 't', queue: 'q' }), { topic: 't', queue: 'q', created: false, replayed: 0 });
});

test('subscribe refuses ref and fn together', { timeout: 5000 }, () => {
  const { bus } = harness();
  assert.throws(() => bus.subscribe({ topic: 't', ref: 'x', fn: () => {} }), { code: 'E_VALIDATION' });
});

test('unsubscribe removes one handler by ref or fn, or all handlers of the topic, and keeps queues', { timeout: 5000 }, async () => {
  const { bus, state } = harness();
  const fn = (): void => {};
  bus.subscribe({ topic: 't', ref: 'a' });
  bus.subscribe({ topic: 't', ref: 'b' });
  bus.subscribe({ topic: 't', fn });
  bus.subscribe({ topic: 't', queue: 'q' });
  assert.deepEqual(bus.unsubscribe({ topic: 't', ref: 'a' }), { removed: 1 });
  assert.deepEqual(bus.unsubscribe({ topic: 't', ref: 'a' }), { removed: 0 });
  assert.deepEqual(bus.unsubscribe({ topic: 't', fn }), { removed: 1 });
  bus.subscribe({ topic: 't', ref: 'c' });
  assert.deepEqual(bus.unsubscribe({ topic: 't' }), { removed: 2 });
  assert.equal(state.events.has('t'), false);
  bus.emit({ topic: 't', type: 'still-queued' });
  assert.deepEqual(types(await bus.wait({ topic: 't', queue: 'q' })), ['still-queued']);
});

// ——— handlers ———

test('handlers run after emit returns, and dispatched resolves once they have all settled', { timeout: 5000 }, async () => {
  const { bus } = harness();
  const log: string[] = [];
  bus.subscribe({ topic: 't', fn: () => void log.push('sync') });
  bus.subscribe({
    topic: 't',
    fn: async () => {
      await new Promise((r) => setTimeout(r, 20));
      log.push('slow');
    },
  });
  const { dispatched } = bus.emit({ topic: 't', type: 'x' });
  assert.deepEqual(log, []);
  await dispatched;
  assert.deepEqual(log, ['sync', 'slow']);
});

test('dispatched resolves at once when the topic has no handlers', { timeout: 5000 }, async () => {
  const { bus } = harness();
  await bus.emit({ topic: 'nobody', type: 'x' }).dispatched;
});

test('a ref handler is dispatched with its ref, its args and the event', { timeout: 5000 }, async () => {
  const { bus, dispatched } = harness();
  bus.subscribe({ topic: 'deploy', ref: 'on-deploy', args: { env: 'prod' } });
  const { event, dispatched: done } = bus.emit({ topic: 'deploy', type: 'finished' });
  await done;
  assert.equal(dispatched.length, 1);
  assert.deepEqual(dispatched[0]!.handler, { ref: 'on-deploy', args: { env: 'prod' } });
  assert.equal(dispatched[0]!.event, event);
});

test('handler errors go to onHandlerError and never break emit, other handlers, or the process', { timeout: 5000 }, async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const reported: Array<{ message: string; event: Event; handler: EventHandler }> = [];
    const bus = new EventBus(createEventState(), {
      dispatch: (handler) => {
        if (handler.ref === 'throws') throw new Error('dispatch threw');
        return Promise.reject(new Error('ref rejected'));
      },
      onHandlerError: (error, event, handler) => {
        reported.push({ message: (error as Error).message, event, handler });
        throw new Error('the reporter fails too');
      },
    });
    let reached = false;
    const throwing = (): never => {
      throw new Error('fn threw');
    };
    bus.subscribe({ topic: 't', fn: throwing });
    bus.subscribe({ topic: 't', fn: async () => Promise.reject(new Error('fn rejected')) });
    bus.subscribe({ topic: 't', ref: 'throws' });
    bus.subscribe({ topic: 't', ref: 'rejects' });
    bus.subscribe({ topic: 't', fn: () => void (reached = true) });
    const { event, dispatched } = bus.emit({ topic: 't', type: 'x' });
    await dispatched;
    assert.ok(reached, 'later handlers still run');
    assert.deepEqual(reported.map((r) => r.message).sort(), ['dispatch threw', 'fn rejected', 'fn threw', 'ref rejected']);
    assert.ok(reported.every((r) => r.event === event));
    assert.equal(reported.find((r) => r.message === 'fn threw')!.handler, throwing);
    assert.deepEqual(reported.find((r) => r.message === 'ref rejected')!.handler, { ref: 'rejects' });
    await tick();
    assert.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

// ——— wait: timeout and abort ———

test('wait returns [] when its timeout passes and leaves no timer running', { timeout: 5000 }, async (t) => {
  const { bus } = harness();
  const before = timeouts();
  // By event order, not a clock: a 30 ms timer started before the wait has fired when it returns,
  // which only a wait that let its own 30 ms timeout (started later) pass can guarantee.
  let thirty = false;
  const sentinel = setTimeout(() => (thirty = true), 30);
  t.after(() => clearTimeout(sentinel));
  assert.deepEqual(await bus.wait({ topic: 't', timeout: 30 }), []);
  assert.equal(thirty, true, 'returned when its timeout passed, not before');
  assert.equal(timeouts(), before);
});

test('a wait satisfied before its timeout clears the timer', { timeout: 5000 }, async () => {
  const { bus } = harness();
  const before = timeouts();
  const waiting = bus.wait({ topic: 't', timeout: 60_000 });
  assert.equal(timeouts(), before + 1);
  bus.emit({ topic: 't', type: 'x' });
  assert.deepEqual(types(await waiting), ['x']);
  assert.equal(timeouts(), before);
});

test('an aborted wait rejects with E_ABORTED, removes its waiter and listener, and loses no event', { timeout: 5000 }, async () => {
  const { bus, state } = harness();
  const controller = new AbortController();
  const before = timeouts();
  const waiting = bus.wait({ topic: 't', timeout: 60_000, signal: controller.signal });
  const queue = state.eventQueues.get('t')!.get('default')!;
  assert.equal(queue.waiters.size, 1);
  controller.abort();
  await assert.rejects(waiting, { code: 'E_ABORTED' });
  assert.equal(queue.waiters.size, 0);
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  assert.equal(timeouts(), before);
  bus.emit({ topic: 't', type: 'after-abort' });
  assert.deepEqual(types(await bus.wait({ topic: 't' })), ['after-abort']);
});

test('a wait whose signal is already aborted rejects without draining the queue', { timeout: 5000 }, async () => {
  const { bus } = harness();
  bus.subscribe({ topic: 't' });
  bus.emit({ topic: 't', type: 'x' });
  await assert.rejects(bus.wait({ topic: 't', signal: AbortSignal.abort() }), { code: 'E_ABORTED' });
  assert.deepEqual(types(await bus.wait({ topic: 't' })), ['x']);
});

test('a satisfied wait removes its abort listener', { timeout: 5000 }, async () => {
  const { bus } = harness();
  const controller = new AbortController();
  const waiting = bus.wait({ topic: 't', signal: controller.signal });
  bus.emit({ topic: 't', type: 'x' });
  assert.equal((await waiting).length, 1);
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  controller.abort(); // too late to matter
});

// ——— ack / nack ———

test('wait with ack:false keeps events pending until ack removes them', { timeout: 5000 }, async () => {
  const { bus } = harness();
  bus.subscribe({ topic: 't' });
  const a = bus.emit({ topic: 't', type: 'a' }).event;
  const b = bus.emit({ topic: 't', type: 'b' }).event;
  const got = await bus.wait({ topic: 't', ack: false });
  assert.deepEqual(bus.pending('t'), [a, b]);
  assert.deepEqual(got, [a, b]);
  assert.deepEqual(bus.ack({ topic: 't', ids: [b.id] }), { acked: [b.id], nacked: [], unknown: [] });
  assert.deepEqual(bus.pending('t'), [a]);
  bus.ack({ topic: 't', ids: [a.id] });
  assert.deepEqual(bus.pending('t'), []);
  assert.deepEqual(await bus.wait({ topic: 't', timeout: 0 }), []);
});

test('ack reports unknown ids instead of throwing, including ids already acked and unknown queues', { timeout: 5000 }, async () => {
  const { bus } = harness();
  bus.subscribe({ topic: 't' });
  const { event } = bus.emit({ topic: 't', type: 'a' });
  await bus.wait({ topic: 't', ack: false });
  assert.deepEqual(bus.ack({ topic: 't', ids: [event.id, 'nope'] }), { acked: [event.id], nacked: [], unknown: ['nope'] });
  assert.deepEqual(bus.ack({ topic: 't', ids: [event.id] }), { acked: [], nacked: [], unknown: [event.id] });
  assert.deepEqual(bus.ack({ topic: 't', queue: 'missing', ids: ['x'], nack: true }), { acked: [], nacked: [], unknown: ['x'] });
});

test('nack puts events back at the front of the queue in their original order', { timeout: 5000 }, async () => {
  const { bus } = harness();
  bus.subscribe({ topic: 't' });
  for (const type of ['1', '2', '3', '4', '5']) bus.emit({ topic: 't', type });
  const first = await bus.wait({ topic: 't', max: 3, ack: false });
  assert.deepEqual(types(first), ['1', '2', '3']);
  const ids = [first[2]!.id, first[0]!.id]; // given out of order
  assert.deepEqual(bus.ack({ topic: 't', ids, nack: true }), { acked: [], nacked: ids, unknown: [] });
  assert.deepEqual(types(bus.pending('t')), ['2']);
  assert.deepEqual(types(await bus.wait({ topic: 't' })), ['1', '3', '4', '5']);
});

test('events put back by nack go to blocked waiters oldest first, each up to its max', { timeout: 5000 }, async () => {
  const { bus } = harness();
  bus.subscribe({ topic: 't' });
  for (const type of ['1', '2', '3']) bus.emit({ topic: 't', type });
  const taken = await bus.wait({ topic: 't', ack: false });
  const first = bus.wait({ topic: 't', max: 2 });
  const second = bus.wait({ topic: 't', max: 2 });
  bus.ack({ topic: 't', ids: taken.map((e) => e.id), nack: true });
  assert.deepEqual(types(await first), ['1', '2']);
  assert.deepEqual(types(await second), ['3']);
});

test('nack hands the returned events to a blocked waiter', { timeout: 5000 }, async () => {
  const { bus } = harness();
  bus.subscribe({ topic: 't', queue: 'q' });
  bus.emit({ topic: 't', type: 'a' });
  const [a] = await bus.wait({ topic: 't', queue: 'q', ack: false });
  const waiting = bus.wait({ topic: 't', queue: 'q' });
  bus.ack({ topic: 't', queue: 'q', ids: [a!.id], nack: true });
  assert.deepEqual(await waiting, [a]);
  assert.deepEqual(bus.pending('t', 'q'), []);
});

// ——— state on globals.internals ———

test('getEventState stores events, eventQueues and eventBuffers on internals and returns the same view', { timeout: 5000 }, () => {
  const internals: Record<string, unknown> = {};
  const state = getEventState(internals);
  assert.ok(internals.events instanceof Map && internals.eventQueues instanceof Map && internals.eventBuffers instanceof Map);
  assert.equal(state.events, internals.events);
  assert.equal(state.bufferSize, 1000);
  assert.equal(getEventState(internals, { bufferSize: 10 }), state);
  assert.equal(state.bufferSize, 10);
  // Two buses over the same internals share queues and waiters.
  const opts = { dispatch: async () => undefined, onHandlerError: () => {} };
  const producer = new EventBus(getEventState(internals), opts);
  const consumer = new EventBus(getEventState(internals), opts);
  const waiting = consumer.wait({ topic: 't' });
  producer.emit({ topic: 't', type: 'shared' });
  return waiting.then((events) => assert.deepEqual(types(events), ['shared']));
});

test('getEventState refuses internals.events that is not a Map', { timeout: 5000 }, () => {
  assert.throws(() => getEventState({ events: [] }), { code: 'E_INTERNAL' });
});

// ——— property: no event lost or duplicated, per queue, under concurrency ———

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Status = 'queued' | 'out' | 'done';

async function scenario(seed: number): Promise<Record<string, number>> {
  const rand = mulberry32(seed);
  const int = (n: number): number => Math.floor(rand() * n);
  const pause = async (): Promise<void> => {
    const k = int(4);
    if (k === 1) await Promise.resolve();
    else if (k === 2) await tick();
    else if (k === 3) await new Promise((r) => setTimeout(r, int(2)));
  };
  const { bus, state } = harness({ bufferSize: 50 });
  const topic = 'jobs';
  const queues = ['a', 'b', 'c'].slice(0, 2 + int(2));
  for (const queue of queues) bus.subscribe({ topic, queue });
  const TOTAL = 2000 + int(2000);
  const stats: Record<string, number> = { events: TOTAL, queues: queues.length, waits: 0, timeouts: 0, aborts: 0, nacks: 0, blocked: 0 };

  // The model: per queue, the status of every emitted event (by its sequence number).
  const status = new Map(queues.map((q) => [q, [] as Status[]]));
  const nextFresh = new Map(queues.map((q) => [q, 0]));
  const seqOf = (e: Event): number => (e.data as { seq: number }).seq;

  // Consumers observe a wait's result in the microtask its promise settles in, so observation
  // order is hand-out order: fresh events must come in emission order, right after any redeliveries.
  const observe = (queue: string, events: Event[], ack: boolean): void => {
    const st = status.get(queue)!;
    let sawFresh = false;
    for (const event of events) {
      const seq = seqOf(event);
      assert.equal(st[seq], 'queued', `queue ${queue}: event ${seq} handed out while ${st[seq]}`);
      const fresh = seq >= nextFresh.get(queue)!;
      if (fresh) {
        assert.equal(seq, nextFresh.get(queue), `queue ${queue}: fresh events leave in emission order`);
        nextFresh.set(queue, seq + 1);
        sawFresh = true;
      } else {
        assert.ok(!sawFresh, `queue ${queue}: a nacked event ${seq} came after a fresh one`);
      }
      st[seq] = ack ? 'done' : 'out';
    }
  };

  // Waiters block only on an empty queue; otherwise an event would sit queued while a caller waits.
  const checkWaiters = (): void => {
    for (const q of state.eventQueues.get(topic)!.values()) {
      assert.ok(q.waiters.size === 0 || q.items.length === q.head, `queue ${q.name}: waiters blocked on a non-empty queue`);
    }
  };

  let emitted = 0;
  const emitter = async (): Promise<void> => {
    while (emitted < TOTAL) {
      const burst = Math.min(1 + int(20), TOTAL - emitted);
      for (let i = 0; i < burst; i++) {
        const seq = emitted++;
        for (const q of queues) status.get(q)![seq] = 'queued';
        bus.emit({ topic, type: 'job', data: { seq } });
        checkWaiters();
      }
      await pause();
    }
  };

  let stop = false;
  const consumer = async (queue: string): Promise<void> => {
    const st = status.get(queue)!;
    while (!stop) {
      const ack = rand() < 0.5;
      const max = rand() < 0.3 ? undefined : 1 + int(25);
      const useSignal = rand() < 0.3;
      const timeout = useSignal && rand() < 0.5 ? undefined : int(4);
      const controller = useSignal ? new AbortController() : undefined;
      const q = state.eventQueues.get(topic)!.get(queue)!;
      if (q.items.length === q.head) stats.blocked!++;
      stats.waits!++;
      const waiting = bus.wait({ topic, queue, ack, ...(max === undefined ? {} : { max }), ...(timeout === undefined ? {} : { timeout }), ...(controller ? { signal: controller.signal } : {}) });
      checkWaiters();
      if (controller) {
        // Abort at once (possibly after the wait was already satisfied) or a few turns later.
        const turns = int(3);
        if (turns === 0) controller.abort();
        else void (async () => {
          for (let i = 0; i < turns; i++) await tick();
          controller.abort();
        })();
      }
      let events: Event[];
      try {
        events = await waiting;
      } catch (error) {
        assert.equal((error as { code?: string }).code, 'E_ABORTED');
        stats.aborts!++;
        continue;
      }
      observe(queue, events, ack);
      if (events.length === 0) stats.timeouts!++;
      if (max !== undefined) assert.ok(events.length <= max);
      if (ack || events.length === 0) {
        await pause();
        continue;
      }
      // Settle the pending events in one or two calls, with other callers running in between.
      const toNack = events.filter(() => rand() < 0.3);
      const toAck = events.filter((e) => !toNack.includes(e));
      const calls = rand() < 0.5 ? [{ ids: toAck, nack: false }, { ids: toNack, nack: true }] : [{ ids: toNack, nack: true }, { ids: toAck, nack: false }];
      for (const call of calls) {
        await pause();
        if (call.ids.length === 0) continue;
        const ids = call.ids.map((e) => e.id);
        const bogus = rand() < 0.1 ? ['zzzzzzzz'] : [];
        const hadWaiters = q.waiters.size > 0;
        const result = bus.ack({ topic, queue, ids: [...ids, ...bogus], nack: call.nack });
        checkWaiters();
        if (call.nack && !hadWaiters) {
          // Nacked events are back at the front, in the order they were delivered.
          assert.deepEqual(q.items.slice(q.head, q.head + call.ids.length), call.ids, `queue ${queue}: nack order`);
        }
        assert.deepEqual(result, { acked: call.nack ? [] : ids, nacked: call.nack ? ids : [], unknown: bogus });
        for (const e of call.ids) {
          assert.equal(st[seqOf(e)], 'out');
          st[seqOf(e)] = call.nack ? 'queued' : 'done';
        }
        if (call.nack) stats.nacks! += ids.length;
      }
    }
  };

  const emitters = Array.from({ length: 2 + int(3) }, () => emitter());
  const consumers = queues.flatMap((q) => Array.from({ length: 1 + int(3) }, () => consumer(q)));
  await Promise.all(emitters);
  stop = true;
  await Promise.all(consumers);

  for (const queue of queues) {
    for (;;) {
      const events = await bus.wait({ topic, queue, timeout: 0, max: 1 + int(50) });
      if (events.length === 0) break;
      observe(queue, events, true);
    }
    assert.deepEqual(bus.pending(topic, queue), [], `queue ${queue}: nothing left pending`);
    const st = status.get(queue)!;
    assert.equal(st.length, TOTAL);
    const notDone = st.flatMap((s, seq) => (s === 'done' ? [] : [seq]));
    assert.deepEqual(notDone, [], `queue ${queue}: every event delivered exactly once`);
    assert.equal(state.eventQueues.get(topic)!.get(queue)!.waiters.size, 0);
  }
  return stats;
}

test('property: under interleaved emits, waits, acks, nacks, timeouts and aborts, every queue delivers each event exactly once and in order', { timeout: 60_000 }, async () => {
  const before = timeouts();
  const totals: Record<string, number> = {};
  for (const seed of [1, 2, 3, 42, 2024, 0xbeef]) {
    let stats: Record<string, number>;
    try {
      stats = await scenario(seed);
    } catch (error) {
      if (error instanceof Error) error.message = `seed ${seed}: ${error.message}`;
      throw error;
    }
    for (const [k, v] of Object.entries(stats)) totals[k] = (totals[k] ?? 0) + v;
  }
  // The scenarios must actually exercise the paths the property is about.
  for (const k of ['timeouts', 'aborts', 'nacks', 'blocked']) assert.ok(totals[k]! > 10, `${k}: ${totals[k]}`);
  await tick();
  assert.equal(timeouts(), before, 'no timers left behind');
});
