// Beyond one machine (docs/scale.md, "Speed"), on a real nats-server -js started here (127.0.0.1, a free
// port, a temporary store) and stopped at the end:
// dist.throughput.w1 / .w2 / .w4 — no-op invocations per second submitted with { remote: true }
//   (what `run --remote` does) from one process, INFLIGHT at a time, to 1, 2 and 4 worker
//   processes; baseline: the same invocations in one process (runtime.invoke, same concurrency).
// events.throughput.nats — emit → wait through JetStream, events/s: a producer publishing in
//   pipelined batches while a consumer drains the queue with wait({ max }); baseline: the same
//   loop on the in-memory bus.
// `node bench/dist.js [NAME…]` prints one JSON line per figure; bench/run.js imports `run()`.
// Skipped (one line saying why) when nats-server is not installed.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRuntime } from '../src/index.ts';
import { createEventState, EventBus } from '../src/events/bus.ts';
import { MemoryBus } from '../src/events/backend.ts';
import { NatsBus } from '../src/events/nats-bus.ts';
import { connectNats } from '../src/nats/nats.ts';
import { startNats } from '../test/nats-helpers.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.join(here, '..', 'bin', 'agent-apps.js');
const INFLIGHT = 256;
const REMOTE_N = 6000;
const RUNS = 3;
const EVENTS_N = 100_000;
const EVENT_BATCH = 2000;
const round = (x) => Math.round(x * 100) / 100;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function workspace(url) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-bench-dist-')));
  fs.mkdirSync(path.join(dir, 'skills'));
  fs.writeFileSync(path.join(dir, 'skills', 'noop.skill.ts'), "export const frontmatter = { name: 'noop', description: 'Does nothing.' };\nexport default () => null;\n");
  fs.writeFileSync(path.join(dir, 'skills', 'main.md'), `---\nname: main\ndescription: bench\nmetadata:\n  events: { backend: nats, url: ${url}, namespace: bench }\n---\n`);
  return dir;
}

/** `n` invocations, `INFLIGHT` at a time; invocations per second. */
async function pump(invoke, n) {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: INFLIGHT }, async () => {
      while (next < n) {
        next++;
        await invoke();
      }
    }),
  );
  return n / ((performance.now() - start) / 1000);
}

function startWorker(cwd) {
  const child = spawn(process.execPath, [BIN, 'worker', '--concurrency', '64'], { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
  const ready = new Promise((resolve, reject) => {
    const t = setInterval(() => {
      if (/queue 'default' on nats/.test(err)) {
        clearInterval(t);
        resolve();
      } else if (child.exitCode !== null) {
        clearInterval(t);
        reject(new Error(`worker exited: ${err}`));
      }
    }, 20);
  });
  return { child, ready, exited: new Promise((r) => child.once('exit', r)) };
}

async function distThroughput(server, names) {
  const cwd = workspace(server.url);
  const records = [];
  const local = await createRuntime({ cwd });
  const remote = await createRuntime({ cwd });
  try {
    await pump(() => local.invoke('noop', {}), 2000); // warm
    const baselines = [];
    for (let i = 0; i < RUNS; i++) baselines.push(await pump(() => local.invoke('noop', {}), REMOTE_N));
    const baseline = median(baselines);
    for (const k of [1, 2, 4]) {
      const name = `dist.throughput.w${k}`;
      if (names && !names.includes(name)) continue;
      const workers = Array.from({ length: k }, () => startWorker(cwd));
      try {
        await Promise.all(workers.map((w) => w.ready));
        await pump(() => remote.invoke('noop', {}, { remote: true }), 500); // warm: connections, consumers, JIT
        const xs = [];
        for (let i = 0; i < RUNS; i++) xs.push(await pump(() => remote.invoke('noop', {}, { remote: true }), REMOTE_N));
        const value = median(xs);
        records.push({ name, value: round(value), unit: 'invocations/s', baseline: round(baseline), ratio: round(value / baseline), workers: k, inflight: INFLIGHT, cores: os.availableParallelism(), n: REMOTE_N, runs: RUNS });
      } finally {
        for (const w of workers) w.child.kill('SIGTERM');
        await Promise.all(workers.map((w) => w.exited));
      }
    }
  } finally {
    await local.close();
    await remote.close();
    fs.rmSync(cwd, { recursive: true, force: true });
  }
  return records;
}

/** Producer and consumer at once on one bus; events per second from the first emit to the last event taken. */
async function emitWait(bus, n) {
  await bus.subscribe({ topic: 'bench' });
  let received = 0;
  const start = performance.now();
  const producer = (async () => {
    for (let i = 0; i < n; i += EVENT_BATCH) {
      const batch = [];
      for (let j = 0; j < EVENT_BATCH && i + j < n; j++) batch.push(bus.emit({ topic: 'bench', type: 'tick', data: i + j, source: 'bench' }));
      await Promise.all(batch);
    }
  })();
  while (received < n) received += (await bus.wait({ topic: 'bench', max: 1000, timeout: 10_000 })).length;
  await producer;
  return n / ((performance.now() - start) / 1000);
}

async function eventsThroughput(server) {
  const opts = { dispatch: async () => undefined, onHandlerError: () => {} };
  const baselines = [];
  for (let i = 0; i < RUNS; i++) baselines.push(await emitWait(new MemoryBus(new EventBus(createEventState(), opts)), EVENTS_N));
  const xs = [];
  for (let i = 0; i < RUNS; i++) {
    // Retention per topic is the replay buffer (docs/scale.md): a queue that falls further behind than
    // it loses the oldest events, and a producer running ahead of its consumer does fall behind.
    const conn = await connectNats({ backend: 'nats', url: server.url, namespace: `ev${i}`, ackWaitMs: 30_000, bufferSize: EVENTS_N, from: 'bench' });
    const bus = new NatsBus(conn, new EventBus(createEventState(), opts), opts);
    try {
      xs.push(await emitWait(bus, EVENTS_N));
    } finally {
      await bus.close();
      await conn.close();
    }
  }
  const value = median(xs);
  const baseline = median(baselines);
  return { name: 'events.throughput.nats', value: Math.round(value), unit: 'events/s', baseline: Math.round(baseline), ratio: round(value / baseline), target: 20_000, n: EVENTS_N, runs: RUNS };
}

export async function run(names) {
  const wants = (name) => !names || names.includes(name);
  const distNames = ['dist.throughput.w1', 'dist.throughput.w2', 'dist.throughput.w4'];
  if (!distNames.some(wants) && !wants('events.throughput.nats')) return [];
  if (spawnSync('nats-server', ['--version']).error) {
    console.log(JSON.stringify({ name: 'dist.throughput', skipped: 'nats-server is not installed (apt-get install nats-server)' }));
    return [];
  }
  const server = await startNats();
  try {
    if (wants('events.throughput.nats')) console.log(JSON.stringify(await eventsThroughput(server)));
    if (distNames.some(wants)) for (const r of await distThroughput(server, names)) console.log(JSON.stringify(r));
  } finally {
    await server.stop();
  }
  return [];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await run(process.argv.length > 2 ? process.argv.slice(2) : undefined);
}
