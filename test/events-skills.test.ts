// Seed 003 "Events" and SPEC §8 through the public skills — event-emit, event-subscribe,
// event-unsubscribe, event-wait, event-ack and the `event` metadata middleware — on a real
// runtime over test/fixtures/events-ws (see its README). The bus itself has its own unit tests
// (events-bus.test.ts); here every call goes through the kernel's pipeline.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { type Event, type Runtime, eventBus } from '../src/index.ts';
import { logs, runtimeFor, settle, skill } from './helpers.ts';

const WS = 'events-ws';

/** A runtime over the fixture workspace with a queue on `seen`, where `record` reports. */
async function eventsRuntime(t: TestContext): Promise<Runtime> {
  const rt = await runtimeFor(t, WS);
  await rt.invoke('event-subscribe', { topic: 'seen' });
  return rt;
}

const emit = (rt: Runtime, topic: string, type: string, data?: unknown) =>
  rt.invoke('event-emit', data === undefined ? { topic, type } : { topic, type, data }) as Promise<Event>;
const wait = (rt: Runtime, args: Record<string, unknown>) => rt.invoke('event-wait', args) as Promise<Event[]>;

interface Seen {
  tag: string | null;
  event: Event;
  stamped: boolean;
  caller: string | null;
}
/** What `record` (and `endpoint`) reported on the `seen` topic within `timeout` ms. */
async function seen(rt: Runtime, count: number, timeout = 2000): Promise<Seen[]> {
  const out: Seen[] = [];
  const deadline = Date.now() + timeout;
  while (out.length < count && Date.now() < deadline) {
    const got = await wait(rt, { topic: 'seen', timeout: Math.max(1, deadline - Date.now()) });
    out.push(...got.map((e) => e.data as Seen));
  }
  return out;
}
/** Polls `probe` until it returns something truthy (handlers settle after emit returns). */
async function until<T>(probe: () => T, timeout = 2000): Promise<T> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = probe();
    if (value || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 5));
  }
}
/** Nothing more arrives on `seen` within `ms`. */
async function nothingSeen(rt: Runtime, ms = 60): Promise<void> {
  assert.deepEqual(await wait(rt, { topic: 'seen', timeout: ms }), []);
}

// ——— event-emit ———

test('event-emit returns the envelope: 8-char id, topic, type, data, timestamp, rootContextId', async (t) => {
  const rt = await runtimeFor(t, WS);
  const before = Date.now();
  const event = await emit(rt, 'orders', 'created', { n: 1 });
  assert.match(event.id, /^[0-9a-f]{8}$/);
  assert.equal(event.topic, 'orders');
  assert.equal(event.type, 'created');
  assert.deepEqual(event.data, { n: 1 });
  assert.ok(event.timestamp >= before && event.timestamp <= Date.now());
  assert.equal(event.rootContextId, rt.root.nonlocals.rootContextId);
  assert.equal('source' in event, false, 'emitted from the runtime root: no source');
  const other = await emit(rt, 'orders', 'created');
  assert.notEqual(other.id, event.id);
  assert.equal('data' in other, false);
});

test('event-emit: source is the given one, or else the skill that emitted', async (t) => {
  const rt = await runtimeFor(t, WS);
  const given = (await rt.invoke('event-emit', { topic: 'x', type: 'y', source: 'billing' })) as Event;
  assert.equal(given.source, 'billing');
  const fromSkill = (await rt.invoke('notify', { topic: 'x' })) as Event;
  assert.equal(fromSkill.source, 'notify');
  assert.equal(fromSkill.type, 'notified');
});

test('event-emit validates its args: topic and type required, no unknown keys (E_VALIDATION)', async (t) => {
  const rt = await runtimeFor(t, WS);
  for (const args of [{ topic: 'x' }, { type: 'y' }, { topic: '', type: 'y' }, { topic: 'x', type: 'y', extra: 1 }]) {
    const { error } = await settle(rt.invoke('event-emit', args));
    assert.equal(error?.code, 'E_VALIDATION', JSON.stringify(args));
  }
});

test('event state lives on globals.internals: events, eventQueues, eventBuffers', async (t) => {
  const rt = await eventsRuntime(t);
  await rt.invoke('event-subscribe', { topic: 'orders', ref: 'record' });
  await emit(rt, 'orders', 'created');
  const internals = rt.root.globals.internals;
  assert.ok(internals.events instanceof Map && (internals.events as Map<string, unknown>).has('orders'));
  assert.ok(internals.eventQueues instanceof Map && (internals.eventQueues as Map<string, Map<string, unknown>>).get('seen')?.has('default'));
  assert.ok(internals.eventBuffers instanceof Map && (internals.eventBuffers as Map<string, Event[]>).get('orders')?.length === 1);
});

// ——— event-subscribe with a ref: handlers through the pipeline ———

test('a ref handler is invoked through the full pipeline with { ...args, event }', async (t) => {
  const rt = await eventsRuntime(t);
  const sub = await rt.invoke('event-subscribe', { topic: 'orders', ref: 'record', args: { tag: 'first' } });
  assert.deepEqual(sub, { topic: 'orders', ref: 'record', created: true, replayed: 0 });
  const event = await emit(rt, 'orders', 'created', { n: 7 });
  const [got, ...rest] = await seen(rt, 1);
  assert.deepEqual(rest, []);
  assert.equal(got?.tag, 'first');
  assert.deepEqual(got?.event, event, 'the handler receives the envelope event-emit returned');
  assert.equal(got?.stamped, true, "the workspace's middleware (stamp) served the handler: it ran through the pipeline");
});

test('handler args are validated by the handler’s own params: a violation is logged, emit succeeds', async (t) => {
  const rt = await eventsRuntime(t);
  await rt.invoke('event-subscribe', { topic: 'orders', ref: 'record', args: { tag: 5 } });
  const event = await emit(rt, 'orders', 'created');
  assert.match(event.id, /^[0-9a-f]{8}$/);
  await nothingSeen(rt);
  await until(() => logs(rt, { type: 'handler-error' }).length);
  const [failure] = logs(rt, { type: 'handler-error' });
  assert.equal(failure?.code, 'E_VALIDATION');
  assert.equal(failure?.eventId, event.id);
});

test('event-subscribe is idempotent: the same ref twice is one handler, the same queue twice is one queue', async (t) => {
  const rt = await eventsRuntime(t);
  assert.equal(((await rt.invoke('event-subscribe', { topic: 'orders', ref: 'record' })) as { created: boolean }).created, true);
  assert.equal(((await rt.invoke('event-subscribe', { topic: 'orders', ref: 'record' })) as { created: boolean }).created, false);
  await emit(rt, 'orders', 'created');
  assert.equal((await seen(rt, 2, 150)).length, 1, 'one emit, one handler call');

  assert.deepEqual(await rt.invoke('event-subscribe', { topic: 'jobs', queue: 'workers' }), { topic: 'jobs', queue: 'workers', created: true, replayed: 0 });
  await emit(rt, 'jobs', 'a');
  assert.deepEqual(await rt.invoke('event-subscribe', { topic: 'jobs', queue: 'workers' }), { topic: 'jobs', queue: 'workers', created: false, replayed: 0 });
  assert.deepEqual((await wait(rt, { topic: 'jobs', queue: 'workers', timeout: 0 })).map((e) => e.type), ['a'], 'resubscribing kept the queued event');
});

test('a bad ref fails at subscribe time with E_TOOL_NOT_FOUND and registers nothing', async (t) => {
  const rt = await runtimeFor(t, WS);
  const { error } = await settle(rt.invoke('event-subscribe', { topic: 'orders', ref: 'recrod' }));
  assert.equal(error?.code, 'E_TOOL_NOT_FOUND');
  assert.match(error.message, /recrod.*did you mean 'record'/);
  assert.equal((rt.root.globals.internals.events as Map<string, unknown> | undefined)?.has('orders') ?? false, false);
  await emit(rt, 'orders', 'created');
  assert.deepEqual(logs(rt, { type: 'handler-error' }), []);
});

test('event-subscribe validates its args (E_VALIDATION)', async (t) => {
  const rt = await runtimeFor(t, WS);
  for (const args of [{}, { topic: 'x', replay: -1 }, { topic: 'x', queue: 3 }, { topic: 'x', nope: true }]) {
    assert.equal((await settle(rt.invoke('event-subscribe', args))).error?.code, 'E_VALIDATION', JSON.stringify(args));
  }
});

// ——— event-unsubscribe ———

test('event-unsubscribe removes the handler for a ref, or all handlers, and leaves queues alone', async (t) => {
  const rt = await eventsRuntime(t);
  await rt.invoke('event-subscribe', { topic: 'orders', ref: 'record', args: { tag: 'r' } });
  await rt.invoke('event-subscribe', { topic: 'orders', ref: 'endpoint' });
  await rt.invoke('event-subscribe', { topic: 'orders', queue: 'audit' });

  assert.deepEqual(await rt.invoke('event-unsubscribe', { topic: 'orders', ref: 'record' }), { removed: 1 });
  await emit(rt, 'orders', 'one');
  assert.deepEqual((await seen(rt, 1)).map((s) => s.tag), ['endpoint'], 'only the remaining handler ran');

  assert.deepEqual(await rt.invoke('event-unsubscribe', { topic: 'orders' }), { removed: 1 });
  await emit(rt, 'orders', 'two');
  await nothingSeen(rt);
  assert.deepEqual((await wait(rt, { topic: 'orders', queue: 'audit', timeout: 0 })).map((e) => e.type), ['one', 'two'], 'the queue still gets every event');
  assert.deepEqual(await rt.invoke('event-unsubscribe', { topic: 'never-subscribed' }), { removed: 0 });
});

// ——— event-wait ———

test('event-wait drains what is queued at once, in order, up to max', async (t) => {
  const rt = await runtimeFor(t, WS);
  await rt.invoke('event-subscribe', { topic: 'jobs' });
  for (const type of ['a', 'b', 'c']) await emit(rt, 'jobs', type);
  // By event order, not a clock: a timer as long as the waits' own timeout, started before them,
  // fires before any wait that blocked until its timeout could return — so it has not fired yet.
  let timeoutPassed = false;
  const sentinel = setTimeout(() => (timeoutPassed = true), 60_000);
  t.after(() => clearTimeout(sentinel));
  assert.deepEqual((await wait(rt, { topic: 'jobs', max: 2, timeout: 60_000 })).map((e) => e.type), ['a', 'b']);
  assert.deepEqual((await wait(rt, { topic: 'jobs', timeout: 60_000 })).map((e) => e.type), ['c']);
  assert.equal(timeoutPassed, false, 'a non-empty queue does not block');
});

test('event-wait blocks until an event arrives', async (t) => {
  const rt = await runtimeFor(t, WS);
  const waiting = wait(rt, { topic: 'jobs', timeout: 5000 });
  let done = false;
  void waiting.then(() => (done = true));
  await new Promise((r) => setTimeout(r, 40));
  assert.equal(done, false, 'still blocked on an empty queue');
  const event = await emit(rt, 'jobs', 'late');
  assert.deepEqual(await waiting, [event]);
});

test('event-wait returns [] when its timeout passes, and the queue then keeps later events', async (t) => {
  const rt = await runtimeFor(t, WS);
  // By event order, not a clock: a 50 ms timer started before the wait has fired by the time it
  // returns, which only a wait that let its own 50 ms timeout (started later) pass can guarantee.
  // A wait that never returned would hit the test's timeout.
  let fifty = false;
  const sentinel = setTimeout(() => (fifty = true), 50);
  t.after(() => clearTimeout(sentinel));
  assert.deepEqual(await wait(rt, { topic: 'jobs', timeout: 50 }), []);
  assert.equal(fifty, true, 'returned when its timeout passed, not before');
  assert.deepEqual(await wait(rt, { topic: 'jobs', timeout: 0 }), [], 'timeout 0 polls');
  await emit(rt, 'jobs', 'kept');
  assert.deepEqual((await wait(rt, { topic: 'jobs', timeout: 0 })).map((e) => e.type), ['kept']);
});

test('event-wait honours the caller’s abort: the parent context aborted ends the wait, no event lost', async (t) => {
  const rt = await runtimeFor(t, WS);
  // No clock: the waiter's event-wait has no timeout, so only the abort can end it (a wait the
  // abort missed would hit the test's timeout), and the error is that abort's.
  const { error } = await settle(rt.invoke('waiter', { topic: 'jobs', after: 40 }));
  assert.equal(error?.code, 'E_ABORTED');
  assert.match(error.message, /gave up waiting/);
  await emit(rt, 'jobs', 'after-abort');
  assert.deepEqual((await wait(rt, { topic: 'jobs', timeout: 0 })).map((e) => e.type), ['after-abort'], 'the aborted waiter took nothing');
});

test('event-wait honours an abort signal given to invoke', async (t) => {
  const rt = await runtimeFor(t, WS);
  const controller = new AbortController();
  const waiting = settle(rt.invoke('event-wait', { topic: 'jobs' }, { context: { signal: controller.signal } }));
  setTimeout(() => controller.abort('stop'), 20);
  assert.equal((await waiting).error?.code, 'E_ABORTED');
});

test('event-wait validates its args (E_VALIDATION)', async (t) => {
  const rt = await runtimeFor(t, WS);
  for (const args of [{}, { topic: 'x', max: 0 }, { topic: 'x', timeout: -1 }, { topic: 'x', ack: 'no' }]) {
    assert.equal((await settle(rt.invoke('event-wait', args))).error?.code, 'E_VALIDATION', JSON.stringify(args));
  }
});

// ——— consumer groups ———

test('a named queue is a consumer group: each event goes to one waiter of it; every queue gets every event', async (t) => {
  const rt = await runtimeFor(t, WS);
  await rt.invoke('event-subscribe', { topic: 'jobs', queue: 'workers' });
  await rt.invoke('event-subscribe', { topic: 'jobs', queue: 'audit' });
  const w1 = wait(rt, { topic: 'jobs', queue: 'workers', max: 1, timeout: 2000 });
  const w2 = wait(rt, { topic: 'jobs', queue: 'workers', max: 1, timeout: 2000 });
  await new Promise((r) => setTimeout(r, 10));
  const a = await emit(rt, 'jobs', 'a');
  const b = await emit(rt, 'jobs', 'b');
  const [got1, got2] = await Promise.all([w1, w2]);
  assert.deepEqual([got1, got2], [[a], [b]], 'one event each, oldest waiter first');
  assert.deepEqual(await wait(rt, { topic: 'jobs', queue: 'audit', timeout: 0 }), [a, b], 'the other group got both');
  assert.deepEqual(await wait(rt, { topic: 'jobs', queue: 'workers', timeout: 0 }), [], 'nothing delivered twice');
  assert.deepEqual(await wait(rt, { topic: 'jobs', timeout: 0 }), [], 'the default queue was created by this wait, after the emits');
});

// ——— replay ———

test('replay: true delivers the topic’s buffered events to a new queue; a number, the last N', async (t) => {
  const rt = await runtimeFor(t, WS);
  for (const type of ['a', 'b', 'c']) await emit(rt, 'history', type);
  assert.deepEqual(await rt.invoke('event-subscribe', { topic: 'history', queue: 'all', replay: true }), { topic: 'history', queue: 'all', created: true, replayed: 3 });
  assert.deepEqual((await wait(rt, { topic: 'history', queue: 'all', timeout: 0 })).map((e) => e.type), ['a', 'b', 'c']);
  await rt.invoke('event-subscribe', { topic: 'history', queue: 'recent', replay: 2 });
  assert.deepEqual((await wait(rt, { topic: 'history', queue: 'recent', timeout: 0 })).map((e) => e.type), ['b', 'c']);
  await rt.invoke('event-subscribe', { topic: 'history', queue: 'fresh' });
  assert.deepEqual(await wait(rt, { topic: 'history', queue: 'fresh', timeout: 0 }), [], 'without replay a new queue starts empty');
});

test('replay into a ref handler invokes it for each buffered event', async (t) => {
  const rt = await eventsRuntime(t);
  const a = await emit(rt, 'history', 'a');
  const b = await emit(rt, 'history', 'b');
  const sub = await rt.invoke('event-subscribe', { topic: 'history', ref: 'record', replay: true });
  assert.equal((sub as { replayed: number }).replayed, 2);
  assert.deepEqual((await seen(rt, 2)).map((s) => s.event.id).sort(), [a.id, b.id].sort());
});

test('event-subscribe on an existing queue with replay: true is a no-op: buffered events are handed out once', async (t) => {
  const rt = await runtimeFor(t, WS);
  for (const type of ['a', 'b']) await emit(rt, 'history', type);
  await rt.invoke('event-subscribe', { topic: 'history', queue: 'all', replay: true });
  assert.deepEqual(await rt.invoke('event-subscribe', { topic: 'history', queue: 'all', replay: true }), { topic: 'history', queue: 'all', created: false, replayed: 0 });
  assert.deepEqual((await wait(rt, { topic: 'history', queue: 'all', timeout: 0 })).map((e) => e.type), ['a', 'b']);
  assert.deepEqual(await wait(rt, { topic: 'history', queue: 'all', timeout: 0 }), []);
});

test('event-subscribe of a ref handler already subscribed, with replay: true, is a no-op', async (t) => {
  const rt = await eventsRuntime(t);
  const a = await emit(rt, 'history', 'a');
  await rt.invoke('event-subscribe', { topic: 'history', ref: 'record', replay: true });
  assert.deepEqual(await rt.invoke('event-subscribe', { topic: 'history', ref: 'record', replay: true }), { topic: 'history', ref: 'record', created: false, replayed: 0 });
  assert.deepEqual((await seen(rt, 2, 300)).map((s) => s.event.id), [a.id], 'record ran once for the buffered event');
});

// ——— ack / nack ———

test('ack: false keeps delivered events pending; nack returns them to the front in order; ack removes them', async (t) => {
  const rt = await runtimeFor(t, WS);
  await rt.invoke('event-subscribe', { topic: 'jobs' });
  const [a, b, c] = [await emit(rt, 'jobs', 'a'), await emit(rt, 'jobs', 'b'), await emit(rt, 'jobs', 'c')];
  const first = await wait(rt, { topic: 'jobs', ack: false, max: 2 });
  assert.deepEqual(first, [a, b]);
  assert.deepEqual(await rt.invoke('event-ack', { topic: 'jobs', ids: [b!.id, a!.id], nack: true }), { acked: [], nacked: [b!.id, a!.id], unknown: [] });
  assert.deepEqual((await wait(rt, { topic: 'jobs', timeout: 0, ack: false })).map((e) => e.type), ['a', 'b', 'c'], 'nacked events come back first, in delivery order');
  assert.deepEqual(await rt.invoke('event-ack', { topic: 'jobs', ids: [a!.id, b!.id, c!.id] }), { acked: [a!.id, b!.id, c!.id], nacked: [], unknown: [] });
  assert.deepEqual(await wait(rt, { topic: 'jobs', timeout: 0 }), [], 'acked events are gone');
});

test('event-ack names the ids that are not pending (E_UNKNOWN_EVENT), or lists them with strict: false', async (t) => {
  const rt = await runtimeFor(t, WS);
  await rt.invoke('event-subscribe', { topic: 'jobs', queue: 'q' });
  const a = await emit(rt, 'jobs', 'a');
  await wait(rt, { topic: 'jobs', queue: 'q', ack: false });
  const { error } = await settle(rt.invoke('event-ack', { topic: 'jobs', queue: 'q', ids: [a.id, 'deadbeef'] }));
  assert.equal(error?.code, 'E_UNKNOWN_EVENT');
  assert.match(error.message, /not pending on 'jobs' queue 'q': deadbeef/);
  assert.doesNotMatch(error.message, new RegExp(`: .*${a.id}`), 'the known id is not among the unknown');
  assert.deepEqual(await rt.invoke('event-ack', { topic: 'jobs', queue: 'q', ids: [a.id], strict: false }), { acked: [], nacked: [], unknown: [a.id] }, 'already acked above');
  assert.deepEqual(await rt.invoke('event-ack', { topic: 'nowhere', ids: ['x'], strict: false }), { acked: [], nacked: [], unknown: ['x'] });
  assert.deepEqual(await rt.invoke('event-ack', { topic: 'jobs', ids: [] }), { acked: [], nacked: [], unknown: [] }, 'an empty list settles nothing');
  assert.equal((await settle(rt.invoke('event-ack', { topic: 'jobs', ids: 'x' }))).error?.code, 'E_VALIDATION');
});

// ——— handler errors ———

test('a failing handler is logged (tag events, level error) and never breaks event-emit or other handlers', async (t) => {
  const rt = await eventsRuntime(t);
  await rt.invoke('event-subscribe', { topic: 'orders', ref: 'boom' });
  await rt.invoke('event-subscribe', { topic: 'orders', ref: 'record', args: { tag: 'survivor' } });
  const event = await emit(rt, 'orders', 'created');
  assert.equal(event.type, 'created');
  assert.deepEqual((await seen(rt, 1)).map((s) => s.tag), ['survivor']);
  await until(() => logs(rt, { type: 'handler-error' }).length);
  const [failure, ...more] = logs(rt, { type: 'handler-error' });
  assert.deepEqual(more, []);
  assert.equal(failure?.tag, 'events');
  assert.equal(failure?.level, 'error');
  assert.equal(failure?.topic, 'orders');
  assert.equal(failure?.eventId, event.id);
  assert.match(failure?.text ?? '', /handler 'boom'.*boom handler failed/);
});

// ——— the `event` metadata middleware ———

test('event: { routes } subscribes each ref to its topic, once however often the skill runs', async (t) => {
  const rt = await eventsRuntime(t);
  for (let i = 0; i < 3; i++) assert.equal(await rt.invoke('router'), 'routed');
  const handlers = rt.root.globals.internals.events as Map<string, unknown[]>;
  assert.deepEqual(handlers.get('deploy'), [{ ref: 'record', args: { tag: 'on-deploy' } }]);
  assert.deepEqual(handlers.get('rollback'), [{ ref: 'record', args: { tag: 'on-rollback' } }]);
  const deploy = await emit(rt, 'deploy', 'v2');
  const rollback = await emit(rt, 'rollback', 'v1');
  const got = await seen(rt, 2);
  assert.deepEqual(got.map((s) => [s.tag, s.event.id]).sort(), [['on-deploy', deploy.id], ['on-rollback', rollback.id]].sort());
  await nothingSeen(rt);
});

test('event: { route } makes the skill itself the handler of the topic, registered once', async (t) => {
  const rt = await eventsRuntime(t);
  assert.equal(await rt.invoke('endpoint'), 'ready');
  assert.equal(await rt.invoke('endpoint'), 'ready');
  const ping = await emit(rt, 'ping', 'hello');
  const [got] = await seen(rt, 1);
  assert.equal(got?.tag, 'endpoint');
  assert.deepEqual(got?.event, ping);
  // Handling the event ran the endpoint's pipeline (and its `event` middleware) again: still one handler.
  assert.deepEqual((rt.root.globals.internals.events as Map<string, unknown[]>).get('ping'), [{ ref: 'endpoint' }]);
});

test('event: a route naming an unknown skill fails with E_TOOL_NOT_FOUND when the skill runs', async (t) => {
  const rt = await runtimeFor(t, WS);
  rt.register(skill('misrouted', () => 'never', { event: { routes: [{ topic: 'deploy', ref: 'no-such-handler' }] } }));
  const { error } = await settle(rt.invoke('misrouted'));
  assert.equal(error?.code, 'E_TOOL_NOT_FOUND');
  assert.match(error.message, /no-such-handler/);
});

// ——— request cleanup (seed 003, first section) ———

test('request cleanup: the middleware’s finally closes the connection on success, failure and abort', async (t) => {
  const rt = await runtimeFor(t, WS);
  const ok = (await rt.invoke('query', { mode: 'ok' })) as { conn: number; open: boolean };
  assert.equal(ok.open, true, 'the connection is open while the skill runs');
  assert.match((await settle(rt.invoke('query', { mode: 'throw' }))).error?.message ?? '', /query failed/);
  assert.equal((await settle(rt.invoke('query', { mode: 'abort' }))).error?.code, 'E_ABORTED');
  const db = logs(rt, { tag: 'db' }).map((e) => `${e.type}:${String(e.connId)}`);
  const ids = [...new Set(logs(rt, { tag: 'db' }).map((e) => e.connId))];
  assert.equal(ids.length, 3);
  assert.deepEqual(db, ids.flatMap((id) => [`db-open:${id}`, `db-close:${id}`]));
});

// ——— function handlers (in-process) ———

test('function handlers, the in-process form, get every event; a throwing one is logged by name and breaks nothing', async (t) => {
  const rt = await runtimeFor(t, WS);
  const bus = eventBus(rt.root);
  const got: Event[] = [];
  bus.subscribe({ topic: 'orders', fn: function explode() { throw new Error('in-process failure'); } });
  bus.subscribe({ topic: 'orders', fn: (event) => void got.push(event) });
  const event = await emit(rt, 'orders', 'created');
  await until(() => got.length && logs(rt, { type: 'handler-error' }).length);
  assert.deepEqual(got, [event]);
  assert.match(logs(rt, { type: 'handler-error' })[0]?.text ?? '', /handler 'explode'.*in-process failure/);
});

// ——— shutdown on runtime.close() (SPEC §13) ———

test('runtime.close() emits shutdown to its handlers, and waits for them before aborting the root', async (t) => {
  const rt = await runtimeFor(t, WS);
  const got: Event[] = [];
  let settled = false;
  eventBus(rt.root).subscribe({ topic: 'shutdown', fn: async (event) => {
    got.push(event);
    await new Promise((r) => setTimeout(r, 30));
    settled = !rt.root.run.signal.aborted;
  } });
  await rt.close();
  assert.deepEqual(got.map((e) => [e.topic, e.type, e.source]), [['shutdown', 'close', 'runtime']]);
  assert.equal(settled, true, 'the handler finished before the root was aborted');
  await rt.close();
  assert.equal(got.length, 1, 'closing twice announces once');
});

test('runtime.close() does not emit shutdown again when it was already emitted (the CLI on a signal)', async (t) => {
  const rt = await runtimeFor(t, WS);
  await rt.invoke('event-subscribe', { topic: 'shutdown' });
  await rt.invoke('event-emit', { topic: 'shutdown', type: 'sigint', data: { signal: 'SIGINT' }, source: 'cli' });
  const bus = eventBus(rt.root);
  // close() releases the replay buffers (SPEC §15), so what it emits is watched as it happens.
  const emitted: string[] = [];
  bus.subscribe({ topic: 'shutdown', fn: (e) => void emitted.push(e.type) });
  await rt.close();
  assert.deepEqual(emitted, [], 'no second shutdown');
  assert.deepEqual(bus.buffered('shutdown'), [], 'and the buffers are released');
});

test('event: { bufferSize } sets how many events each topic keeps for replay (default 1000)', async (t) => {
  const rt = await runtimeFor(t, WS);
  rt.register(skill('small-buffers', () => 'ok', { event: { bufferSize: 2 } }));
  rt.register(skill('bad-buffers', () => 'ok', { event: { bufferSize: -1 } }));
  for (let i = 0; i < 5; i++) await emit(rt, 'history', `before-${i}`);
  await rt.invoke('event-subscribe', { topic: 'history', queue: 'all', replay: true });
  assert.equal((await wait(rt, { topic: 'history', queue: 'all', timeout: 0 })).length, 5);
  assert.equal(await rt.invoke('small-buffers'), 'ok');
  for (let i = 0; i < 5; i++) await emit(rt, 'history', `after-${i}`);
  await rt.invoke('event-subscribe', { topic: 'history', queue: 'late', replay: true });
  assert.deepEqual((await wait(rt, { topic: 'history', queue: 'late', timeout: 0 })).map((e) => e.type), ['after-3', 'after-4']);
  const bad = (await settle(rt.invoke('bad-buffers'))).error;
  assert.equal(bad?.code, 'E_CONFIG', 'the event middleware’s params refuse it');
  assert.equal(bad.message, 'programmatic:bad-buffers (event.bufferSize): must be >= 0', 'naming where it was set');
});

test('routes in a project main.md are registered as soon as events are used, before any of its skills ran', async (t) => {
  const { tempDir } = await import('./helpers.ts');
  const fs = await import('node:fs');
  const path = await import('node:path');
  const { createRuntime } = await import('../src/index.ts');
  const dir = tempDir(t);
  fs.mkdirSync(path.join(dir, 'skills'));
  fs.writeFileSync(path.join(dir, 'skills', 'main.md'), '---\nmetadata:\n  event:\n    routes:\n      - { topic: deploy, ref: on-deploy }\n---\n');
  fs.writeFileSync(path.join(dir, 'skills', 'on-deploy.skill.ts'), "export default async (ctx: any, a: any) => { ctx.manager.log({ level: 'warn', text: `deployed ${a.event.data}` }); };\n");
  const rt = await createRuntime({ cwd: dir });
  t.after(() => rt.close());
  await rt.invoke('event-emit', { topic: 'deploy', type: 'release', data: 'v1' });
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(rt.root.manager.tail({ tag: 'user' }).map((e) => e.text), ['deployed v1']);
});
