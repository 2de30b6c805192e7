// events.throughput (SPEC §14): events per second through emit → wait on one queue, against the
// same loop over a plain array (same envelope construction, push, splice out) in the same run.
// `node bench/events.js` prints one JSON line; bench/run.js imports `run()`.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createEventState, EventBus } from '../src/events/bus.ts';

const N = 200_000;
const BATCH = 1_000; // emitted before each drain
const MAX = 250; // events per wait, so a drain is several waits
const RUNS = 5;

async function busLoop() {
  const bus = new EventBus(createEventState(), { dispatch: async () => undefined, onHandlerError: () => {} });
  bus.subscribe({ topic: 'bench' });
  let received = 0;
  const start = performance.now();
  for (let i = 0; i < N; i += BATCH) {
    for (let j = 0; j < BATCH; j++) bus.emit({ topic: 'bench', type: 'tick', data: j, source: 'bench' });
    for (let got = 0; got < BATCH; ) {
      const events = await bus.wait({ topic: 'bench', max: MAX });
      got += events.length;
      received += events.length;
    }
  }
  const seconds = (performance.now() - start) / 1000;
  if (received !== N) throw new Error(`events.throughput: received ${received} of ${N}`);
  return N / seconds;
}

async function arrayLoop() {
  const queue = [];
  let received = 0;
  const start = performance.now();
  for (let i = 0; i < N; i += BATCH) {
    for (let j = 0; j < BATCH; j++) {
      queue.push({ id: randomUUID().slice(0, 8), topic: 'bench', type: 'tick', timestamp: Date.now(), source: 'bench', data: j });
    }
    for (let got = 0; got < BATCH; ) {
      const events = await Promise.resolve(queue.splice(0, MAX));
      got += events.length;
      received += events.length;
    }
  }
  const seconds = (performance.now() - start) / 1000;
  if (received !== N) throw new Error(`baseline: received ${received} of ${N}`);
  return N / seconds;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** `names`: the figures bench/run.js selected (this file has one); prints its own lines. */
export async function run(names, { print = true } = {}) {
  await busLoop(); // warm up both loops before measuring
  await arrayLoop();
  const bus = [];
  const base = [];
  for (let r = 0; r < RUNS; r++) {
    bus.push(await busLoop());
    base.push(await arrayLoop());
  }
  const value = Math.round(median(bus));
  const baseline = Math.round(median(base));
  const records = [{ name: 'events.throughput', value, unit: 'events/s', baseline, ratio: Number((value / baseline).toFixed(3)) }];
  if (print) for (const record of records) console.log(JSON.stringify(record));
  return records;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await run();
