// Sandbox benchmarks (SPEC §14): `sandbox.start` and `sandbox.roundtrip`, one JSON line each.
// Run alone with `node bench/sandbox.js [NAME…]`, or through `bench/run.js`, which imports `run`.

import { pathToFileURL } from 'node:url';
import ivm from 'isolated-vm';
import { Sandbox } from '../src/sandbox/sandbox.ts';

const NAMES = ['sandbox.start', 'sandbox.roundtrip'];

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function record(name, value, unit, baseline) {
  const round = (n) => Math.round(n * 1000) / 1000;
  return { name, value: round(value), unit, baseline: round(baseline), ratio: round(value / baseline) };
}

async function timeIt(fn) {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

/** ms to a Sandbox ready for code (isolate, context, bridge); baseline: isolate + context alone. */
async function start() {
  const ROUNDS = 40;
  const sandboxTimes = [];
  const isolateTimes = [];
  for (let i = 0; i < ROUNDS + 5; i++) {
    let sandbox;
    const s = await timeIt(async () => {
      sandbox = await Sandbox.create();
    });
    sandbox.dispose();
    let isolate;
    const b = await timeIt(async () => {
      isolate = new ivm.Isolate({ memoryLimit: 128 });
      await isolate.createContext();
    });
    isolate.dispose();
    if (i >= 5) {
      // the first few warm the process up (code caches, the addon's threads)
      sandboxTimes.push(s);
      isolateTimes.push(b);
    }
  }
  return record('sandbox.start', median(sandboxTimes), 'ms', median(isolateTimes));
}

/** µs per awaited `ctx.manager.get('x')`, 1,000 in one run; baseline: an in-sandbox async function. */
async function roundtrip() {
  const CALLS = 1000;
  const host = { call: async () => 1 };
  const sandbox = await Sandbox.create();
  try {
    const measure = async (code) => {
      const times = [];
      for (let i = 0; i < 6; i++) {
        let result;
        const t = await timeIt(async () => {
          result = await sandbox.run(code, host);
        });
        if (!result.ok) throw new Error(`bench code failed: ${result.error.message}`);
        if (i > 0) times.push((t * 1000) / CALLS);
      }
      return median(times);
    };
    const value = await measure(`for (let i = 0; i < ${CALLS}; i++) await ctx.manager.get('x');`);
    const baseline = await measure(`const f = async () => 1;\nfor (let i = 0; i < ${CALLS}; i++) await f();`);
    return record('sandbox.roundtrip', value, 'µs', baseline);
  } finally {
    sandbox.dispose();
  }
}

const BENCHES = { 'sandbox.start': start, 'sandbox.roundtrip': roundtrip };

/** Runs those of `names` that are sandbox benchmarks (all when `names` is empty); prints and returns the records. */
export async function run(names = []) {
  const wanted = names.length ? NAMES.filter((n) => names.includes(n)) : NAMES;
  const records = [];
  for (const name of wanted) {
    const rec = await BENCHES[name]();
    console.log(JSON.stringify(rec));
    records.push(rec);
  }
  return records;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await run(process.argv.slice(2));
}
