// events.throughput (docs/events.md, docs/scale.md): events per second through emit → wait on one queue, against the
// same loop over a plain array (same envelope construction, push, splice out) in the same run.
// events.throughput.skill: the same traffic through the public skills — every emit an
// `event-emit` invocation, a consumer looping on `event-wait` invocations, concurrently — against
// that producer/consumer pair on the bus itself, so the ratio is what the pipeline adds.
// `node bench/events.js [NAME…]` prints one JSON line per figure; bench/run.js imports `run()`.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { createEventState, EventBus } from '../src/events/bus.ts';
import { createRuntime } from '../src/index.ts';

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

const SKILL_N = 20_000;
const CHUNK = 500; // emits between the producer's yields to the event loop

/** events/s for `total` events: a producer calling `emit(i)`, a consumer looping on `waitAll()`. */
async function pump(total, emit, waitAll) {
  let received = 0;
  const start = performance.now();
  const consumer = (async () => {
    while (received < total) received += (await waitAll()).length;
  })();
  for (let i = 0; i < total; ) {
    const end = Math.min(total, i + CHUNK);
    for (; i < end; i++) await emit(i);
    await yieldToLoop();
  }
  await consumer;
  return total / ((performance.now() - start) / 1000);
}

async function skillLoop(rt, topic) {
  await rt.invoke('event-subscribe', { topic });
  return pump(SKILL_N, (i) => rt.invoke('event-emit', { topic, type: 'tick', data: i }), () => rt.invoke('event-wait', { topic }));
}

function busPump(topic) {
  const bus = new EventBus(createEventState(), { dispatch: async () => undefined, onHandlerError: () => {} });
  bus.subscribe({ topic });
  return pump(SKILL_N, (i) => void bus.emit({ topic, type: 'tick', data: i }), () => bus.wait({ topic }));
}

async function throughput() {
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
  return { name: 'events.throughput', value, unit: 'events/s', baseline, ratio: Number((value / baseline).toFixed(3)) };
}

async function throughputSkill() {
  const rt = await createRuntime({ cwd: path.join(path.dirname(fileURLToPath(import.meta.url)), 'ws') });
  await skillLoop(rt, 'warm'); // load and plan the event skills
  await busPump('warm');
  const ours = [];
  const base = [];
  for (let r = 0; r < RUNS; r++) {
    ours.push(await skillLoop(rt, `bench-${r}`));
    base.push(await busPump(`bench-${r}`));
  }
  await rt.close();
  const value = Math.round(median(ours));
  const baseline = Math.round(median(base));
  return { name: 'events.throughput.skill', value, unit: 'events/s', baseline, ratio: Number((value / baseline).toFixed(3)) };
}

const FIGURES = { 'events.throughput': throughput, 'events.throughput.skill': throughputSkill };

/** `names`: the figures bench/run.js selected (all of this file's when empty); prints its own lines. */
export async function run(names, { print = true } = {}) {
  const wanted = names?.length ? Object.keys(FIGURES).filter((n) => names.includes(n)) : Object.keys(FIGURES);
  const records = [];
  for (const name of wanted) {
    const record = await FIGURES[name]();
    if (print) console.log(JSON.stringify(record));
    records.push(record);
  }
  return records;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await run(process.argv.slice(2));
