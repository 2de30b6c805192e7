// Sandbox benchmarks (docs/sandbox.md, "Figures"), one JSON line each. `sandbox.start` and `sandbox.roundtrip` are
// for the default isolation mode (DEFAULT_ISOLATION); `sandbox.start.<mode>` and
// `sandbox.roundtrip.<mode>` for the other mode, so that both are visible (either mode's by name
// on request); `sandbox.spawn` is the one-off cost of process mode: starting the sandbox process
// with the first sandbox in it.
// Run alone with `node bench/sandbox.js [NAME…]`, or through `bench/run.js`, which imports `run`.

import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import ivm from 'isolated-vm';
import { DEFAULT_ISOLATION, Sandbox } from '../src/sandbox/sandbox.ts';
import { sandboxProcessPid } from '../src/sandbox/process.ts';

const OTHER = DEFAULT_ISOLATION === 'process' ? 'inline' : 'process';
const NAMES = ['sandbox.start', 'sandbox.roundtrip', `sandbox.start.${OTHER}`, `sandbox.roundtrip.${OTHER}`, 'sandbox.spawn'];

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

/** ms to a Sandbox ready for code (isolate, context, bridge; process mode: with the sandbox process already running); baseline: isolate + context alone, in this process. */
async function start(name, isolation) {
  const ROUNDS = 40;
  const sandboxTimes = [];
  const isolateTimes = [];
  for (let i = 0; i < ROUNDS + 5; i++) {
    let sandbox;
    const s = await timeIt(async () => {
      sandbox = await Sandbox.create({ isolation });
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
  return record(name, median(sandboxTimes), 'ms', median(isolateTimes));
}

/** µs per awaited `ctx.manager.get('x')`, 1,000 in one run; baseline: an in-sandbox async function. */
async function roundtrip(name, isolation) {
  const CALLS = 1000;
  const host = { call: async () => 1 };
  const sandbox = await Sandbox.create({ isolation });
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
    return record(name, value, 'µs', baseline);
  } finally {
    sandbox.dispose();
  }
}

/** ms from no sandbox process to the first process-mode Sandbox ready for code; baseline: `node -e 0`. */
async function spawnCost() {
  const ROUNDS = 5;
  const times = [];
  const nodeTimes = [];
  for (let i = 0; i < ROUNDS + 1; i++) {
    const pid = sandboxProcessPid();
    if (pid !== undefined) {
      process.kill(pid, 'SIGKILL');
      while (sandboxProcessPid() === pid) await new Promise((r) => setTimeout(r, 5));
    }
    let sandbox;
    const t = await timeIt(async () => {
      sandbox = await Sandbox.create({ isolation: 'process' });
    });
    sandbox.dispose();
    const b = await timeIt(async () => execFileSync(process.execPath, ['-e', '0']));
    if (i > 0) {
      times.push(t);
      nodeTimes.push(b);
    }
  }
  return record('sandbox.spawn', median(times), 'ms', median(nodeTimes));
}

const BENCHES = {
  'sandbox.start': () => start('sandbox.start', DEFAULT_ISOLATION),
  'sandbox.roundtrip': () => roundtrip('sandbox.roundtrip', DEFAULT_ISOLATION),
  'sandbox.start.inline': () => start('sandbox.start.inline', 'inline'),
  'sandbox.roundtrip.inline': () => roundtrip('sandbox.roundtrip.inline', 'inline'),
  'sandbox.start.process': () => start('sandbox.start.process', 'process'),
  'sandbox.roundtrip.process': () => roundtrip('sandbox.roundtrip.process', 'process'),
  'sandbox.spawn': spawnCost,
};

/** Runs those of `names` that are sandbox benchmarks (NAMES when `names` is empty); prints and returns the records. */
export async function run(names = []) {
  const wanted = names.length ? Object.keys(BENCHES).filter((n) => names.includes(n)) : NAMES;
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
