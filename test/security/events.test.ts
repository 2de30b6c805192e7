// Red-team tests for the event bus and the event skills (SPEC §8, §15; issue 7 items 5, 6, 7):
// an event handed to a waiter whose caller aborts is never lost, an orphaned event-wait does not
// swallow the next event, event data is capped, and what the bus retains is bounded in bytes and
// released by runtime.close(). Real runtimes, the public skills, no mocks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRuntime, type Context, type Event, type Runtime, eventBus } from '../../src/index.ts';
import { createEventState, EventBus, DEFAULT_BUFFER_BYTES, MAX_EVENT_DATA_BYTES } from '../../src/events/bus.ts';
import { Logger } from '../../src/kernel/log.ts';
import { bareRuntime, settle, skill, tempDir } from '../helpers.ts';

const types = (events: Event[]): string[] => events.map((e) => e.type);
const wait = (rt: Runtime, args: Record<string, unknown>, signal?: AbortSignal) =>
  rt.invoke('event-wait', args, signal ? { context: { signal } } : undefined) as Promise<Event[]>;

/** Resolves once `topic`'s `queue` has a blocked waiter (the event-wait pipeline reached the bus). */
async function blocked(rt: Runtime, topic: string, queue = 'default'): Promise<void> {
  const state = eventBus(rt.root).state;
  for (let i = 0; i < 1000; i++) {
    if ((state.eventQueues.get(topic)?.get(queue)?.waiters.size ?? 0) > 0) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`no waiter blocked on ${topic}/${queue}`);
}

/**
 * One run of the abort race: a blocked event-wait is handed `first`, its caller aborts `turns`
 * microtasks later; `second` is emitted right after. Returns what the aborted wait settled with
 * and what a follow-up wait finds.
 */
async function abortAfterHandOff(rt: Runtime, topic: string, turns: number, ack: boolean) {
  await rt.invoke('event-subscribe', { topic });
  const controller = new AbortController();
  const waiting = settle(wait(rt, { topic, ack }, controller.signal));
  await blocked(rt, topic);
  const bus = eventBus(rt.root);
  const first = bus.emit({ topic, type: 'first' }).event;
  bus.emit({ topic, type: 'second' });
  for (let i = 0; i < turns; i++) await Promise.resolve();
  controller.abort('caller gone');
  const outcome = await waiting;
  const pending = bus.pending(topic);
  const next = await wait(rt, { topic, timeout: 0 });
  return { outcome, pending, next, first };
}

test('an event handed to event-wait whose caller aborts before the result is returned goes back to the front of its queue (ack: true)', async (t) => {
  const rt = await bareRuntime(t);
  let aborted = 0;
  let returned = 0;
  for (let turns = 0; turns <= 80; turns++) {
    const { outcome, next } = await abortAfterHandOff(rt, `jobs-${turns}`, turns, true);
    if (outcome.error) {
      assert.equal(outcome.error.code, 'E_ABORTED', `turns ${turns}`);
      aborted++;
      assert.deepEqual(types(next), ['first', 'second'], `turns ${turns}: the handed-off event is back at the front, in order`);
    } else {
      returned++;
      assert.deepEqual(types(outcome.value as Event[]), ['first'], `turns ${turns}`);
      assert.deepEqual(types(next), ['second'], `turns ${turns}: delivered once, not twice`);
    }
  }
  assert.ok(aborted > 0 && returned > 0, `the sweep crosses the hand-off (aborted ${aborted}, returned ${returned})`);
});

test('an event handed to event-wait { ack: false } whose caller aborts is not left pending: it is back at the front of the queue', async (t) => {
  const rt = await bareRuntime(t);
  let aborted = 0;
  let returned = 0;
  for (let turns = 0; turns <= 80; turns++) {
    const { outcome, pending, next, first } = await abortAfterHandOff(rt, `jobs-${turns}`, turns, false);
    if (outcome.error) {
      aborted++;
      assert.equal(outcome.error.code, 'E_ABORTED');
      assert.deepEqual(pending, [], `turns ${turns}: no pending event with an id nobody has`);
      assert.deepEqual(types(next), ['first', 'second'], `turns ${turns}`);
    } else {
      returned++;
      assert.deepEqual(pending.map((e) => e.id), [first.id], `turns ${turns}: the returned event is pending until acked`);
      assert.deepEqual(types(next), ['second']);
    }
  }
  assert.ok(aborted > 0 && returned > 0, `the sweep crosses the hand-off (aborted ${aborted}, returned ${returned})`);
});

test('an orphaned event-wait (its caller context aborted) leaves its queue at once and does not swallow the next event', async (t) => {
  const rt = await bareRuntime(t);
  // A skill that waits on the queue through its own context, as agent code does.
  rt.register(skill('listener', (ctx: Context) => ctx.manager.invoke('event-wait', { topic: 'inbox' })));
  await rt.invoke('event-subscribe', { topic: 'inbox' });
  const controller = new AbortController();
  const orphan = settle(rt.invoke('listener', {}, { context: { signal: controller.signal } }));
  await blocked(rt, 'inbox');
  controller.abort('execution ended');
  assert.equal(eventBus(rt.root).state.eventQueues.get('inbox')!.get('default')!.waiters.size, 0, 'the waiter is gone at once');
  await rt.invoke('event-emit', { topic: 'inbox', type: 'mail' });
  assert.equal((await orphan).error?.code, 'E_ABORTED');
  assert.deepEqual(types(await wait(rt, { topic: 'inbox', timeout: 0 })), ['mail']);
});

// ——— event data cap (SPEC §15) ———

test('event-emit refuses data over 1 MiB serialized (JSON) with E_VALIDATION, and nothing of it is queued or buffered', async (t) => {
  const rt = await bareRuntime(t);
  await rt.invoke('event-subscribe', { topic: 'big' });
  const cases: [string, unknown][] = [
    ['a long string', 'x'.repeat(MAX_EVENT_DATA_BYTES)],
    ['an object', { rows: Array.from({ length: 1100 }, () => 'y'.repeat(1000)) }],
    ['escapes that only JSON makes long', '\u0001'.repeat(200_000)],
    ['multi-byte characters', 'é'.repeat(600_000)],
  ];
  for (const [what, data] of cases) {
    const { error } = await settle(rt.invoke('event-emit', { topic: 'big', type: 'blob', data }));
    assert.equal(error?.code, 'E_VALIDATION', what);
    assert.match(error.message, /event-emit: 'data' is \d+ bytes as JSON; the limit is 1048576 \(1 MiB\)/, what);
  }
  assert.deepEqual(await wait(rt, { topic: 'big', timeout: 0 }), []);
  assert.deepEqual(eventBus(rt.root).buffered('big'), []);
  // Exactly at the limit is fine.
  const atLimit = 'z'.repeat(MAX_EVENT_DATA_BYTES - 2);
  const event = (await rt.invoke('event-emit', { topic: 'big', type: 'blob', data: atLimit })) as Event;
  assert.equal(event.data, atLimit);
});

// ——— retained memory bounded in bytes, released on close (SPEC §15) ———

test('a topic replay buffer is bounded in bytes (64 MiB) as well as in count, oldest dropped', async (t) => {
  const rt = await bareRuntime(t);
  const payload = 'p'.repeat(1_000_000); // one string, so the test itself holds 1 MB; the bus counts every event
  for (let i = 0; i < 80; i++) await rt.invoke('event-emit', { topic: 'heavy', type: String(i), data: payload });
  const bus = eventBus(rt.root);
  const kept = bus.buffered('heavy');
  assert.ok(kept.length < 80 && kept.length >= 60, `kept ${kept.length} of 80`);
  assert.equal(kept.at(-1)!.type, '79', 'the newest are kept');
  assert.deepEqual(types(kept), Array.from({ length: kept.length }, (_, i) => String(80 - kept.length + i)), 'a contiguous run of the newest');
  assert.equal(bus.state.eventBuffers.get('heavy')!.length, kept.length, 'the dropped events are not retained');
  const { bytes, sizes } = bus.state.eventBufferSizes.get('heavy')!;
  assert.ok(bytes <= DEFAULT_BUFFER_BYTES, `${bytes} bytes retained`);
  assert.equal(sizes.length, kept.length);
});

test('each event is measured once, when it is emitted — trimming the buffers never re-serialises', () => {
  const bus = new EventBus(createEventState({ bufferSize: 10, bufferBytes: 50_000 }), { dispatch: async () => undefined, onHandlerError: () => {} });
  let serialised = 0;
  const data = { toJSON: () => (serialised++, 'q'.repeat(200_000)) };
  for (let i = 0; i < 300; i++) bus.emit({ topic: 'm', type: 'x', data });
  assert.equal(serialised, 300);
  assert.ok(bus.buffered('m').length <= 1);
  // Small values are estimated without JSON at all.
  for (let i = 0; i < 100; i++) bus.emit({ topic: 's', type: 'x', data: i });
  assert.equal(bus.buffered('s').length, 10);
});

test('runtime.close() releases the replay buffers, queued events and the log ring', async (t) => {
  const rt = await createRuntime({ cwd: tempDir(t) });
  const payload = 'r'.repeat(900_000);
  rt.register(skill('chatter', (ctx: Context) => {
    for (let i = 0; i < 5; i++) ctx.manager.log({ type: 'bulk', level: 'info', text: payload });
  }));
  await rt.invoke('event-subscribe', { topic: 'kept' });
  for (let i = 0; i < 5; i++) await rt.invoke('event-emit', { topic: 'kept', type: 'e', data: payload });
  await rt.invoke('chatter');
  const bus = eventBus(rt.root);
  const logger = rt.root.globals.internals.log as Logger;
  assert.equal(bus.buffered('kept').length, 5);
  assert.ok(logger.retained.bytes > 5 * 60_000);
  await rt.close();
  assert.equal(bus.state.eventBuffers.size, 0);
  assert.equal(bus.state.eventBufferSizes.size, 0);
  assert.equal(bus.state.eventQueues.size, 0);
  assert.deepEqual(logger.retained, { events: 0, bytes: 0 });
  assert.deepEqual(rt.root.manager.tail(), []);
});

test('bus.requeue puts handed-out events back at the front in order and out of pending; one acked meanwhile stays acked', async () => {
  const bus = new EventBus(createEventState(), { dispatch: async () => undefined, onHandlerError: () => {} });
  bus.subscribe({ topic: 'q' });
  for (const type of ['1', '2', '3', '4']) bus.emit({ topic: 'q', type });
  const taken = await bus.wait({ topic: 'q', max: 3, ack: false });
  assert.deepEqual(types(taken), ['1', '2', '3']);
  bus.ack({ topic: 'q', ids: [taken[1]!.id] });
  assert.equal(bus.requeue({ topic: 'q', events: taken, ack: false }), 2);
  assert.deepEqual(bus.pending('q'), []);
  // A waiter blocked on an empty queue is woken by what comes back.
  const drained = await bus.wait({ topic: 'q' });
  assert.deepEqual(types(drained), ['1', '3', '4']);
  const blocked = bus.wait({ topic: 'q' });
  bus.requeue({ topic: 'q', events: drained.slice(0, 1) });
  assert.deepEqual(types(await blocked), ['1']);
});
