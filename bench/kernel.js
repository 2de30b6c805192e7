// Kernel figures (docs/events.md, "Performance"): invoke.overhead, invoke.overhead.hooked, invoke.fanout(.heap),
// memory.growth; cli.coldstart and cli.version (docs/cli.md, "Start-up").
// Each is printed with a baseline measured in the same run, so the ratio holds on a noisy machine.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRuntime } from '../src/index.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const ws = path.join(here, 'ws');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const MiB = 1024 * 1024;

/** koa-compose, the baseline for the onion. */
function compose(middleware) {
  return function (ctx) {
    let index = -1;
    function dispatch(i) {
      if (i <= index) return Promise.reject(new Error('next() called multiple times'));
      index = i;
      const fn = middleware[i];
      if (!fn) return Promise.resolve();
      try {
        return Promise.resolve(fn(ctx, dispatch.bind(null, i + 1)));
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return dispatch(0);
  };
}

async function invokeOverhead() {
  const rt = await createRuntime({ cwd: ws });
  const depth = (await rt.describe('noop')).chain.length;
  const layers = Array.from({ length: depth }, () => async (ctx, next) => { await next(); });
  layers.push(async () => null);
  const composed = compose(layers);
  const N = 50_000;
  for (let i = 0; i < 5_000; i++) await rt.invoke('noop');
  for (let i = 0; i < 5_000; i++) await composed({});
  const ours = [];
  const base = [];
  for (let run = 0; run < 5; run++) {
    let t = performance.now();
    for (let i = 0; i < N; i++) await rt.invoke('noop');
    ours.push(((performance.now() - t) * 1000) / N);
    t = performance.now();
    for (let i = 0; i < N; i++) await composed({});
    base.push(((performance.now() - t) * 1000) / N);
  }
  await rt.close();
  const value = median(ours);
  const baseline = median(base);
  return [{ name: 'invoke.overhead', value: round(value), unit: 'µs/op', baseline: round(baseline), ratio: round(value / baseline), layers: depth }];
}

/**
 * invoke.overhead.hooked (µs/op): the same no-op skill with `profile: true` in the cascade, so a
 * `$invoke` hook wraps its pipeline and a `$next` hook each chain entry — the cost of hooks when
 * present. Baseline: the plain no-op invocation (invoke.overhead's figure), measured in the same
 * runs; plain invoke.overhead itself is unchanged, since no hook means no wrapper.
 */
async function invokeOverheadHooked() {
  const plain = await createRuntime({ cwd: ws });
  const hooked = await createRuntime({ cwd: ws, overrides: { profile: true } });
  const N = 20_000;
  for (let i = 0; i < 5_000; i++) await hooked.invoke('noop');
  for (let i = 0; i < 5_000; i++) await plain.invoke('noop');
  const ours = [];
  const base = [];
  for (let run = 0; run < 5; run++) {
    let t = performance.now();
    for (let i = 0; i < N; i++) await hooked.invoke('noop');
    ours.push(((performance.now() - t) * 1000) / N);
    t = performance.now();
    for (let i = 0; i < N; i++) await plain.invoke('noop');
    base.push(((performance.now() - t) * 1000) / N);
  }
  const hooks = (await hooked.describe('noop')).hooks;
  await plain.close();
  await hooked.close();
  const value = median(ours);
  const baseline = median(base);
  return [{ name: 'invoke.overhead.hooked', value: round(value), unit: 'µs/op', baseline: round(baseline), ratio: round(value / baseline), hooks: { invoke: hooks.invoke.length, next: hooks.next.length } }];
}

async function invokeFanout() {
  const rt = await createRuntime({ cwd: ws });
  await rt.invoke('noop');
  const times = [];
  const heaps = [];
  for (let run = 0; run < 5; run++) {
    globalThis.gc?.();
    const before = process.memoryUsage().heapUsed;
    const t = performance.now();
    const all = [];
    for (let i = 0; i < 10_000; i++) all.push(rt.invoke('noop'));
    let peak = process.memoryUsage().heapUsed;
    await Promise.all(all);
    peak = Math.max(peak, process.memoryUsage().heapUsed);
    times.push(performance.now() - t);
    heaps.push((peak - before) / MiB);
  }
  // Baseline: the same fan-out through a koa-compose onion of the same depth.
  const depth = (await rt.describe('noop')).chain.length;
  const layers = Array.from({ length: depth }, () => async (ctx, next) => { await next(); });
  const composed = compose(layers);
  const base = [];
  for (let run = 0; run < 5; run++) {
    const t = performance.now();
    await Promise.all(Array.from({ length: 10_000 }, () => composed({})));
    base.push(performance.now() - t);
  }
  await rt.close();
  const value = median(times);
  return [
    { name: 'invoke.fanout', value: round(value), unit: 'ms', baseline: round(median(base)), ratio: round(value / median(base)) },
    { name: 'invoke.fanout.heap', value: round(median(heaps)), unit: 'MiB' },
  ];
}

async function memoryGrowth() {
  if (!globalThis.gc) throw new Error('memory.growth needs node --expose-gc (npm run bench passes it)');
  const rt = await createRuntime({ cwd: ws });
  for (let i = 0; i < 1_000; i++) await rt.invoke('noop');
  globalThis.gc();
  const base = process.memoryUsage().heapUsed;
  for (let i = 0; i < 200_000; i++) await rt.invoke('noop');
  globalThis.gc();
  const after = process.memoryUsage().heapUsed;
  await rt.close();
  return [{ name: 'memory.growth', value: round(after / base), unit: 'ratio', baseline: round(base / MiB), after: round(after / MiB) }];
}

/** `agent-apps run noop` in bench/ws: the start of a command that runs a skill. Baseline `node -e 0`. */
function cliColdstart() {
  return againstNode('cli.coldstart', ['run', 'noop']);
}

/** `agent-apps --version`: the launcher alone, the floor of every command's start. Baseline `node -e 0`. */
function cliVersion() {
  return againstNode('cli.version', ['--version']);
}

/** Median wall ms of `bin/agent-apps.js ...args` in bench/ws, each run alternating with `node -e 0`. */
function againstNode(name, args) {
  const bin = path.join(here, '..', 'bin', 'agent-apps.js');
  const time = (argv, opts) => {
    const t = performance.now();
    execFileSync(process.execPath, argv, { stdio: 'ignore', ...opts });
    return performance.now() - t;
  };
  time([bin, ...args], { cwd: ws }); // warm the compile cache once, as any second run would
  const ours = [];
  const base = [];
  for (let i = 0; i < 10; i++) {
    ours.push(time([bin, ...args], { cwd: ws }));
    base.push(time(['-e', '0']));
  }
  const value = median(ours);
  return [{ name, value: round(value), unit: 'ms', baseline: round(median(base)), ratio: round(value / median(base)) }];
}

function round(x) {
  return Math.round(x * 1000) / 1000;
}

export const benchmarks = {
  'invoke.overhead': invokeOverhead,
  'invoke.overhead.hooked': invokeOverheadHooked,
  'invoke.fanout': invokeFanout,
  'memory.growth': memoryGrowth,
  'cli.coldstart': cliColdstart,
  'cli.version': cliVersion,
};
