// The event bus contract (SPEC §8, §19), one suite run on both backends: the in-memory bus and
// JetStream on a real nats-server. What only one backend has (the in-memory bus's state maps,
// JetStream's redelivery after the ack wait, a server restart) is tested at the end.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createEventState, EventBus, type EventBusOptions } from '../src/events/bus.ts';
import { MemoryBus, type Bus } from '../src/events/backend.ts';
import { NatsBus } from '../src/events/nats-bus.ts';
import { connectNats, durableName, type Nats } from '../src/nats/nats.ts';
import type { Event, EventHandler } from '../src/core/types.ts';
import { natsSkip, startNats, type NatsServer } from './nats-helpers.ts';

interface Harness {
  bus: Bus;
  dispatched: Array<{ handler: { ref: string; args?: unknown }; event: Event }>;
  errors: Array<{ error: unknown; event: Event; handler: EventHandler }>;
  /** Another process on the same bus (the same state in memory; another connection on NATS). */
  second(): Promise<Bus>;
  /** Resolves once `n` waits are blocked on the queue (so what is emitted next goes to them). */
  blocked(topic: string, queue: string, n: number): Promise<void>;
  /** Until `check` holds (handlers on NATS run when their consumer gets the event). */
  eventually(check: () => boolean): Promise<void>;
  close(): Promise<void>;
}

interface Backend {
  name: 'memory' | 'nats';
  skip?: string;
  make(opts?: { bufferSize?: number; ackWaitMs?: number; dispatch?: (h: { ref: string; args?: unknown }, e: Event) => Promise<unknown> }): Promise<Harness>;
}

const types = (events: Event[]): string[] => events.map((e) => e.type);

function options(h: Pick<Harness, 'dispatched' | 'errors'>, dispatch?: (handler: { ref: string; args?: unknown }, e: Event) => Promise<unknown>): EventBusOptions {
  return {
    dispatch: async (handler, event) => {
      h.dispatched.push({ handler, event });
      return dispatch?.(handler, event);
    },
    onHandlerError: (error, event, handler) => void h.errors.push({ error, event, handler }),
  };
}

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

const memory: Backend = {
  name: 'memory',
  async make(opts = {}) {
    const state = createEventState(opts.bufferSize === undefined ? {} : { bufferSize: opts.bufferSize });
    const h = { dispatched: [], errors: [] } as unknown as Harness;
    const local = new EventBus(state, options(h, opts.dispatch));
    h.bus = new MemoryBus(local);
    h.second = async () => new MemoryBus(new EventBus(state, options(h, opts.dispatch)));
    h.blocked = (topic, queue, n) => until(() => (state.eventQueues.get(topic)?.get(queue)?.waiters.size ?? 0) >= n, 'blocked waiters');
    h.eventually = (check) => until(check, 'the handlers');
    h.close = async () => local.clear();
    return h;
  },
};

let server: NatsServer | undefined;
let namespaces = 0;
const nats: Backend = {
  name: 'nats',
  ...(natsSkip ? { skip: natsSkip } : {}),
  async make(opts = {}) {
    const config = { backend: 'nats' as const, url: server!.url, namespace: `contract${++namespaces}`, ackWaitMs: opts.ackWaitMs ?? 10_000, bufferSize: opts.bufferSize ?? 1000, from: 'test' };
    const h = { dispatched: [], errors: [] } as unknown as Harness;
    const conns: Nats[] = [];
    const buses: NatsBus[] = [];
    const open = async (): Promise<NatsBus> => {
      const conn = await connectNats(config);
      conns.push(conn);
      const bus = new NatsBus(conn, new EventBus(createEventState(), options(h, opts.dispatch)), options(h, opts.dispatch));
      buses.push(bus);
      return bus;
    };
    h.bus = await open();
    h.second = open;
    h.blocked = async (topic, queue, n) => {
      const conn = conns[0]!;
      await until(async () => {
        try {
          const durable = durableName('q', topic, queue);
          const info = await conn.jsm.consumers.info(conn.names.group(durable), durable);
          return info.num_waiting >= n;
        } catch {
          return false;
        }
      }, 'blocked pulls');
    };
    h.eventually = (check) => until(check, 'the handlers');
    h.close = async () => {
      for (const b of buses) await b.close();
      for (const c of conns) await c.close();
    };
    return h;
  },
};

before(async () => {
  if (!natsSkip) server = await startNats();
});
after(async () => {
  await server?.stop();
});

for (const backend of [memory, nats]) {
  describe(`bus contract: ${backend.name}`, { skip: backend.skip }, () => {
    let h: Harness;
    const make = async (opts?: Parameters<Backend['make']>[0]): Promise<Harness> => (h = await backend.make(opts));
    const done = async (): Promise<void> => h?.close();

    test('emit stamps an 8-character id and a timestamp and omits optional fields it was not given', async () => {
      const { bus } = await make();
      try {
        const before = Date.now();
        const { event } = await bus.emit({ topic: 'deploy', type: 'started', data: { v: 1 }, source: 'ci' });
        assert.match(event.id, /^[0-9a-f]{8}$/);
        assert.ok(event.timestamp >= before && event.timestamp <= Date.now());
        assert.deepEqual({ ...event, id: 'x', timestamp: 0 }, { id: 'x', topic: 'deploy', type: 'started', data: { v: 1 }, source: 'ci', timestamp: 0 });
        assert.ok(!('rootContextId' in event));
      } finally {
        await done();
      }
    });

    test('emit, subscribe, wait and ack reject a missing topic with E_VALIDATION', async () => {
      const { bus } = await make();
      try {
        await assert.rejects(bus.emit({ topic: '', type: 'x' }), { code: 'E_VALIDATION' });
        await assert.rejects(bus.subscribe({ topic: '' }), { code: 'E_VALIDATION' });
        await assert.rejects(bus.wait({ topic: '' }), { code: 'E_VALIDATION' });
        await assert.rejects(bus.ack({ topic: '', ids: [] }), { code: 'E_VALIDATION' });
        await assert.rejects(bus.wait({ topic: 't', max: 0 }), { code: 'E_VALIDATION' });
        await assert.rejects(bus.subscribe({ topic: 't', ref: 'x', fn: () => {} }), { code: 'E_VALIDATION' });
      } finally {
        await done();
      }
    });

    test('different named queues each get every event of the topic', async () => {
      const { bus } = await make();
      try {
        await bus.subscribe({ topic: 't', queue: 'a' });
        await bus.subscribe({ topic: 't', queue: 'b' });
        for (const type of ['1', '2', '3']) await bus.emit({ topic: 't', type });
        assert.deepEqual(types(await bus.wait({ topic: 't', queue: 'a' })), ['1', '2', '3']);
        assert.deepEqual(types(await bus.wait({ topic: 't', queue: 'b' })), ['1', '2', '3']);
        assert.deepEqual(await bus.wait({ topic: 't', queue: 'a', timeout: 0 }), []);
      } finally {
        await done();
      }
    });

    test('within one queue each event goes to exactly one waiter, across processes too', async () => {
      const { bus } = await make();
      try {
        const other = await h.second();
        await bus.subscribe({ topic: 't', queue: 'workers' });
        const w1 = bus.wait({ topic: 't', queue: 'workers', max: 1 });
        const w2 = other.wait({ topic: 't', queue: 'workers', max: 1 });
        const w3 = bus.wait({ topic: 't', queue: 'workers', max: 1 });
        await h.blocked('t', 'workers', 3);
        for (const type of ['a', 'b', 'c', 'd']) await bus.emit({ topic: 't', type });
        const got = [types(await w1), types(await w2), types(await w3)];
        assert.ok(got.every((g) => g.length === 1), JSON.stringify(got));
        const rest = types(await bus.wait({ topic: 't', queue: 'workers' }));
        assert.deepEqual([...got.flat(), ...rest].sort(), ['a', 'b', 'c', 'd']);
        assert.equal(rest.length, 1);
      } finally {
        await done();
      }
    });

    test('a queue receives only events emitted after it exists, unless it asks for replay', async () => {
      const { bus } = await make();
      try {
        await bus.emit({ topic: 't', type: 'early' });
        await bus.subscribe({ topic: 't' });
        await bus.emit({ topic: 't', type: 'late' });
        assert.deepEqual(types(await bus.wait({ topic: 't' })), ['late']);
      } finally {
        await done();
      }
    });

    test('wait creates the queue it names, so events emitted after a timed-out wait are kept', async () => {
      const { bus } = await make();
      try {
        assert.deepEqual(await bus.wait({ topic: 't', queue: 'q', timeout: 0 }), []);
        await bus.emit({ topic: 't', type: 'kept' });
        assert.deepEqual(types(await bus.wait({ topic: 't', queue: 'q', timeout: 0 })), ['kept']);
      } finally {
        await done();
      }
    });

    test('wait drains at most max events and leaves the rest queued in order', async () => {
      const { bus } = await make();
      try {
        await bus.subscribe({ topic: 't' });
        for (let i = 0; i < 5; i++) await bus.emit({ topic: 't', type: String(i) });
        assert.deepEqual(types(await bus.wait({ topic: 't', max: 2 })), ['0', '1']);
        assert.deepEqual(types(await bus.wait({ topic: 't', max: 2 })), ['2', '3']);
        assert.deepEqual(types(await bus.wait({ topic: 't' })), ['4']);
      } finally {
        await done();
      }
    });

    test('a named queue that falls 10× the replay buffer behind loses nothing: it drains every event, in order', async () => {
      const { bus } = await make({ bufferSize: 5 });
      try {
        await bus.subscribe({ topic: 't', queue: 'slow' });
        for (let i = 0; i < 50; i++) await bus.emit({ topic: 't', type: String(i) });
        const got: string[] = [];
        while (got.length < 50) {
          const batch = await bus.wait({ topic: 't', queue: 'slow', max: 7, timeout: 2000 });
          if (!batch.length) break;
          got.push(...types(batch));
        }
        assert.deepEqual(got, Array.from({ length: 50 }, (_, i) => String(i)));
        assert.deepEqual(await bus.wait({ topic: 't', queue: 'slow', timeout: 0 }), []);
        // The replay buffer itself still keeps only the last 5: a new queue replays those.
        assert.equal((await bus.subscribe({ topic: 't', queue: 'late', replay: true })).replayed, 5);
      } finally {
        await done();
      }
    });

    test('the replay buffer keeps the last bufferSize events of a topic: replay fills a new queue with all or the last N', async () => {
      const { bus } = await make({ bufferSize: 5 });
      try {
        for (let i = 0; i < 23; i++) await bus.emit({ topic: 't', type: String(i) });
        await bus.emit({ topic: 'other', type: 'x' });
        assert.deepEqual(await bus.subscribe({ topic: 't', queue: 'all', replay: true }), { topic: 't', queue: 'all', created: true, replayed: 5 });
        assert.deepEqual(types(await bus.wait({ topic: 't', queue: 'all' })), ['18', '19', '20', '21', '22']);
        assert.equal((await bus.subscribe({ topic: 't', queue: 'two', replay: 2 })).replayed, 2);
        assert.deepEqual(types(await bus.wait({ topic: 't', queue: 'two' })), ['21', '22']);
      } finally {
        await done();
      }
    });

    test('subscribing to an existing queue is a no-op, replay included: no event is handed out twice', async () => {
      const { bus } = await make();
      try {
        await bus.emit({ topic: 't', type: 'old' });
        assert.deepEqual(await bus.subscribe({ topic: 't', replay: true }), { topic: 't', queue: 'default', created: true, replayed: 1 });
        await bus.emit({ topic: 't', type: 'new' });
        assert.deepEqual(await bus.subscribe({ topic: 't', replay: true }), { topic: 't', queue: 'default', created: false, replayed: 0 });
        const other = await h.second();
        assert.deepEqual(await other.subscribe({ topic: 't', replay: true }), { topic: 't', queue: 'default', created: false, replayed: 0 });
        assert.deepEqual(types(await bus.wait({ topic: 't', timeout: 0 })), ['old', 'new']);
        assert.deepEqual(await bus.wait({ topic: 't', timeout: 0 }), []);
      } finally {
        await done();
      }
    });

    test('subscribe is idempotent for the same ref and the same fn; replay reaches a new handler once', async () => {
      const { bus, dispatched } = await make();
      try {
        await bus.emit({ topic: 't', type: 'a' });
        const seen: string[] = [];
        const fn = (e: Event): void => void seen.push(e.type);
        assert.deepEqual(await bus.subscribe({ topic: 't', ref: 'on-t', replay: true }), { topic: 't', ref: 'on-t', created: true, replayed: 1 });
        assert.deepEqual(await bus.subscribe({ topic: 't', ref: 'on-t', replay: true }), { topic: 't', ref: 'on-t', created: false, replayed: 0 });
        assert.equal((await bus.subscribe({ topic: 't', fn, replay: true })).replayed, 1);
        assert.equal((await bus.subscribe({ topic: 't', fn, replay: true })).created, false);
        await h.eventually(() => dispatched.length >= 1 && seen.length >= 1);
        await sleep(100);
        assert.deepEqual(dispatched.map((d) => d.event.type), ['a']);
        assert.deepEqual(seen, ['a']);
      } finally {
        await done();
      }
    });

    test('a ref handler runs once per event with its ref, its args and the event — once across processes that registered it', async () => {
      const { bus, dispatched } = await make();
      try {
        const other = await h.second();
        await bus.subscribe({ topic: 'deploy', ref: 'on-deploy', args: { env: 'prod' } });
        await other.subscribe({ topic: 'deploy', ref: 'on-deploy', args: { env: 'prod' } });
        const emitted: Event[] = [];
        for (let i = 0; i < 6; i++) emitted.push((await bus.emit({ topic: 'deploy', type: 'finished', data: i })).event);
        await h.eventually(() => dispatched.length >= 6);
        await sleep(150);
        assert.equal(dispatched.length, 6);
        assert.deepEqual(dispatched[0]!.handler, { ref: 'on-deploy', args: { env: 'prod' } });
        assert.deepEqual(dispatched.map((d) => d.event.id).sort(), emitted.map((e) => e.id).sort());
      } finally {
        await done();
      }
    });

    test('handler errors go to onHandlerError and never break emit or later events', async () => {
      const { bus, errors, dispatched } = await make({ dispatch: async (handler) => Promise.reject(new Error(`${handler.ref} failed`)) });
      try {
        await bus.subscribe({ topic: 't', ref: 'bad' });
        const seen: string[] = [];
        await bus.subscribe({ topic: 't', fn: () => void seen.push('fn') });
        await bus.emit({ topic: 't', type: '1' });
        await bus.emit({ topic: 't', type: '2' });
        await h.eventually(() => errors.length >= 2 && seen.length >= 2);
        assert.deepEqual(errors.map((e) => (e.error as Error).message), ['bad failed', 'bad failed']);
        assert.equal(dispatched.length, 2);
      } finally {
        await done();
      }
    });

    test('unsubscribe removes one handler by ref or fn, or all handlers of the topic, and keeps queues', async () => {
      const { bus, dispatched } = await make();
      try {
        const fn = (): void => {};
        await bus.subscribe({ topic: 't', ref: 'a' });
        await bus.subscribe({ topic: 't', ref: 'b' });
        await bus.subscribe({ topic: 't', fn });
        await bus.subscribe({ topic: 't', queue: 'q' });
        assert.deepEqual(await bus.unsubscribe({ topic: 't', ref: 'a' }), { removed: 1 });
        assert.deepEqual(await bus.unsubscribe({ topic: 't', ref: 'a' }), { removed: 0 });
        assert.deepEqual(await bus.unsubscribe({ topic: 't', fn }), { removed: 1 });
        await bus.subscribe({ topic: 't', ref: 'c' });
        assert.deepEqual(await bus.unsubscribe({ topic: 't' }), { removed: 2 });
        await bus.emit({ topic: 't', type: 'still-queued' });
        assert.deepEqual(types(await bus.wait({ topic: 't', queue: 'q' })), ['still-queued']);
        await sleep(100);
        assert.deepEqual(dispatched, []);
      } finally {
        await done();
      }
    });

    test('wait returns [] when its timeout passes', async () => {
      const { bus } = await make();
      try {
        assert.deepEqual(await bus.wait({ topic: 't', timeout: 30 }), []);
      } finally {
        await done();
      }
    });

    test('an aborted wait rejects with E_ABORTED and loses no event', async () => {
      const { bus } = await make();
      try {
        await bus.subscribe({ topic: 't' });
        const controller = new AbortController();
        const waiting = bus.wait({ topic: 't', signal: controller.signal });
        await h.blocked('t', 'default', 1);
        controller.abort();
        await assert.rejects(waiting, { code: 'E_ABORTED' });
        await bus.emit({ topic: 't', type: 'after-abort' });
        assert.deepEqual(types(await bus.wait({ topic: 't' })), ['after-abort']);
      } finally {
        await done();
      }
    });

    test('a wait whose signal is already aborted rejects without draining the queue', async () => {
      const { bus } = await make();
      try {
        await bus.subscribe({ topic: 't' });
        await bus.emit({ topic: 't', type: 'x' });
        await assert.rejects(bus.wait({ topic: 't', signal: AbortSignal.abort() }), { code: 'E_ABORTED' });
        assert.deepEqual(types(await bus.wait({ topic: 't' })), ['x']);
      } finally {
        await done();
      }
    });

    test('wait with ack:false keeps events pending until ack removes them', async () => {
      const { bus } = await make();
      try {
        await bus.subscribe({ topic: 't' });
        const a = (await bus.emit({ topic: 't', type: 'a' })).event;
        const b = (await bus.emit({ topic: 't', type: 'b' })).event;
        const got = await bus.wait({ topic: 't', ack: false });
        assert.deepEqual(got, [a, b]);
        assert.deepEqual(bus.pending('t'), [a, b]);
        assert.deepEqual(await bus.ack({ topic: 't', ids: [b.id] }), { acked: [b.id], nacked: [], unknown: [] });
        assert.deepEqual(bus.pending('t'), [a]);
        await bus.ack({ topic: 't', ids: [a.id] });
        assert.deepEqual(bus.pending('t'), []);
        assert.deepEqual(await bus.wait({ topic: 't', timeout: 0 }), []);
      } finally {
        await done();
      }
    });

    test('ack reports unknown ids instead of throwing, including ids already acked and unknown queues', async () => {
      const { bus } = await make();
      try {
        await bus.subscribe({ topic: 't' });
        const { event } = await bus.emit({ topic: 't', type: 'a' });
        await bus.wait({ topic: 't', ack: false });
        assert.deepEqual(await bus.ack({ topic: 't', ids: [event.id, 'nope'] }), { acked: [event.id], nacked: [], unknown: ['nope'] });
        assert.deepEqual(await bus.ack({ topic: 't', ids: [event.id] }), { acked: [], nacked: [], unknown: [event.id] });
        assert.deepEqual(await bus.ack({ topic: 't', queue: 'missing', ids: ['x'], nack: true }), { acked: [], nacked: [], unknown: ['x'] });
      } finally {
        await done();
      }
    });

    test('nack puts events back at the front of the queue in their original order', async () => {
      const { bus } = await make();
      try {
        await bus.subscribe({ topic: 't' });
        for (const type of ['1', '2', '3', '4', '5']) await bus.emit({ topic: 't', type });
        const first = await bus.wait({ topic: 't', max: 3, ack: false });
        assert.deepEqual(types(first), ['1', '2', '3']);
        const ids = [first[2]!.id, first[0]!.id]; // given out of order
        assert.deepEqual(await bus.ack({ topic: 't', ids, nack: true }), { acked: [], nacked: ids, unknown: [] });
        assert.deepEqual(types(bus.pending('t')), ['2']);
        assert.deepEqual(types(await bus.wait({ topic: 't' })), ['1', '3', '4', '5']);
      } finally {
        await done();
      }
    });

    test('nack hands the returned events to a blocked waiter', async () => {
      const { bus } = await make();
      try {
        await bus.subscribe({ topic: 't', queue: 'q' });
        await bus.emit({ topic: 't', type: 'a' });
        const [a] = await bus.wait({ topic: 't', queue: 'q', ack: false });
        const waiting = bus.wait({ topic: 't', queue: 'q' });
        await h.blocked('t', 'q', 1);
        await bus.ack({ topic: 't', queue: 'q', ids: [a!.id], nack: true });
        assert.deepEqual(await waiting, [a]);
        assert.deepEqual(bus.pending('t', 'q'), []);
      } finally {
        await done();
      }
    });

    test('an emitted event reaches a queue another process made (events cross processes)', async () => {
      const { bus } = await make();
      try {
        const other = await h.second();
        await other.subscribe({ topic: 'jobs', queue: 'w' });
        await bus.emit({ topic: 'jobs', type: 'from-first', data: { n: 1 } });
        const [event] = await other.wait({ topic: 'jobs', queue: 'w' });
        assert.equal(event!.type, 'from-first');
        assert.deepEqual(event!.data, { n: 1 });
      } finally {
        await done();
      }
    });

    test('shutdown stays local to its process', async () => {
      const { bus } = await make();
      try {
        const other = await h.second();
        const here: string[] = [];
        const there: string[] = [];
        await bus.subscribe({ topic: 'shutdown', fn: (e) => void here.push(e.type) });
        await other.subscribe({ topic: 'shutdown', fn: (e) => void there.push(e.type) });
        const { dispatched } = await bus.emit({ topic: 'shutdown', type: 'sigterm' });
        await dispatched;
        assert.deepEqual(here, ['sigterm']);
        if (backend.name === 'nats') assert.deepEqual(there, []);
      } finally {
        await done();
      }
    });
  });
}

// ——— what only JetStream has ———

describe('bus on JetStream only', { skip: natsSkip }, () => {
  test('events survive the process: a queue made by one process is read by the next, after the first closed', async () => {
    const first = await nats.make();
    await first.bus.subscribe({ topic: 'orders', queue: 'billing' });
    await first.bus.emit({ topic: 'orders', type: 'placed', data: { id: 7 } });
    const namespace = ((first.bus as NatsBus).nats.config.namespace);
    await first.close();
    const conn = await connectNats({ backend: 'nats', url: server!.url, namespace, ackWaitMs: 1000, from: 'test' });
    const next = new NatsBus(conn, new EventBus(createEventState(), { dispatch: async () => undefined, onHandlerError: () => {} }), { dispatch: async () => undefined, onHandlerError: () => {} });
    try {
      assert.deepEqual((await next.wait({ topic: 'orders', queue: 'billing', timeout: 2000 })).map((e) => e.data), [{ id: 7 }]);
    } finally {
      await next.close();
      await conn.close();
    }
  });

  test('an event taken un-acked by a consumer that dies is redelivered to another once the ack wait passes', async () => {
    const h = await nats.make({ ackWaitMs: 1000 });
    try {
      const dying = h.bus as NatsBus;
      const other = await h.second();
      await dying.subscribe({ topic: 'jobs', queue: 'w' });
      const { event } = await dying.emit({ topic: 'jobs', type: 'job' });
      assert.deepEqual(await dying.wait({ topic: 'jobs', queue: 'w', ack: false }), [event]);
      // The process dies: its connection goes without acking or nacking.
      await dying.nats.nc.close();
      assert.deepEqual(await other.wait({ topic: 'jobs', queue: 'w', timeout: 10_000 }), [event]);
    } finally {
      await h.close();
    }
  });

  test('the server restarted between an emit and the wait: the client reconnects and nothing is lost', async () => {
    const h = await nats.make();
    try {
      await h.bus.subscribe({ topic: 'survive', queue: 'q' });
      const { event } = await h.bus.emit({ topic: 'survive', type: 'before-restart' });
      await server!.restart();
      assert.deepEqual(await h.bus.wait({ topic: 'survive', queue: 'q', timeout: 20_000 }), [event]);
      const { event: later } = await h.bus.emit({ topic: 'survive', type: 'after-restart' });
      assert.deepEqual(await h.bus.wait({ topic: 'survive', queue: 'q', timeout: 20_000 }), [later]);
    } finally {
      await h.close();
    }
  });

  test('topics that are not subject tokens (spaces, wildcards, empty tokens) get distinct subjects and read back', async () => {
    const h = await nats.make();
    try {
      const topics = ['a b', 'a.*', 'a.>', '.lead', 'a..b', 'ü%'];
      for (const topic of topics) await h.bus.subscribe({ topic, queue: 'q' });
      for (const topic of topics) await h.bus.emit({ topic, type: topic });
      for (const topic of topics) assert.deepEqual(types(await h.bus.wait({ topic, queue: 'q', timeout: 2000 })), [topic]);
    } finally {
      await h.close();
    }
  });

  test('NATS unreachable: E_EVENTS naming the URL', async () => {
    await assert.rejects(connectNats({ backend: 'nats', url: 'nats://127.0.0.1:1', namespace: 'x', ackWaitMs: 1000, from: 'test' }), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'E_EVENTS');
      assert.match(err.message, /nats:\/\/127\.0\.0\.1:1/);
      return true;
    });
  });
});
