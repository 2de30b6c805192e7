// `otel.overhead` (docs/ci.md, "Tracing"): invoke.overhead's no-op skill (bench/ws) with tracing on
// — each invocation a span, batched and sent as OTLP/HTTP protobuf to a receiver on 127.0.0.1 (a
// process of its own that reads and drops the requests, so its work is not counted) — over the
// same skill with tracing off. Each measurement is a fresh process (so one's exports and garbage
// never land in the other's time), on and off alternating; `ratio` is the median on over the
// median off (target ≤ 1.3). Run alone with `node bench/otel.js`, or through `bench/run.js`.
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchRunner, runIfMain } from './runner.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const self = fileURLToPath(import.meta.url);
const N = 50_000;
const RUNS = 5;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (n) => Math.round(n * 1000) / 1000;

/** A bare OTLP receiver in its own process: answers every POST 200 once its body is read. */
function receiver() {
  const code = `const http = require('node:http');
const s = http.createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()); });
s.listen(0, '127.0.0.1', () => console.log(s.address().port));`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout.setEncoding('utf8').once('data', (d) => resolve({ url: `http://127.0.0.1:${d.trim()}`, stop: () => child.kill() }));
    child.once('exit', (c) => reject(new Error(`the receiver exited (${c})`)));
  });
}

/** One measurement in this process: µs per invoke of noop, printed. */
async function child() {
  const { createRuntime } = await import('../src/index.ts');
  const rt = await createRuntime({ cwd: path.join(here, 'ws') });
  const traced = rt.root.globals.internals.tracer !== undefined;
  if (traced !== (process.env.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined)) throw new Error('otel.overhead: tracing is not as asked');
  for (let i = 0; i < 10_000; i++) await rt.invoke('noop');
  const t = performance.now();
  for (let i = 0; i < N; i++) await rt.invoke('noop');
  const us = ((performance.now() - t) * 1000) / N;
  await rt.close();
  console.log(JSON.stringify({ us }));
}

function measure(endpoint) {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('OTEL_') || k === 'NODE_OPTIONS') delete env[k];
  if (endpoint) env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
  const out = execFileSync(process.execPath, [self, '--child'], { env, encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop()).us;
}

export const run = benchRunner({
  'otel.overhead': async () => {
    const rx = await receiver();
    try {
      const offs = [];
      const ons = [];
      for (let r = 0; r < RUNS; r++) {
        offs.push(measure(undefined));
        ons.push(measure(rx.url));
      }
      const value = median(ons);
      const baseline = median(offs);
      return { name: 'otel.overhead', value: round(value), unit: 'µs/op', baseline: round(baseline), ratio: round(value / baseline), invokes: N, runs: RUNS };
    } finally {
      rx.stop();
    }
  },
});

export const printsItself = true;

if (process.argv.includes('--child')) await child();
else await runIfMain(import.meta.url, run);
