// `serve.http` (requests/s; docs/serve.md): a no-op skill behind a `web` gateway route of
// `agent-apps serve`, driven by 64 concurrent keep-alive clients (node:http Agent keepAlive) for a
// fixed time after a warm-up; baseline: a bare node:http server in its own process answering the
// same JSON, driven the same way in the same run. `ratio` is serve / bare: the share of a bare
// server's throughput left after routing, the untrusted-caller policy and the kernel's pipeline.
// Run alone with `node bench/serve.js`, or through `bench/run.js`, which imports `run`.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchRunner, runIfMain } from './runner.js';

const CLIENTS = 64;
const WARMUP_MS = 1500;
const MEASURE_MS = 4000;

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.join(here, '..', 'bin', 'agent-apps.js');
const round = (n) => Math.round(n * 1000) / 1000;

function workspace() {
  const ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-bench-serve-')));
  fs.mkdirSync(path.join(ws, 'skills'));
  fs.writeFileSync(path.join(ws, 'skills', 'main.md'), '---\nname: main\ndescription: Bench main.\nmetadata:\n  gateways:\n    api:\n      type: web\n      routes:\n        - { method: GET, path: /noop, skill: noop }\n---\nBench.\n');
  fs.writeFileSync(path.join(ws, 'skills', 'noop.skill.ts'), "export const frontmatter = { name: 'noop', description: 'Does nothing.' };\nexport default async () => ({ ok: true });\n");
  return ws;
}

/** Starts a process and resolves with the URL it prints on stderr matching `pattern`. */
function start(args, cwd, pattern) {
  const env = { ...process.env, NO_COLOR: '1' };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  return new Promise((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (d) => {
      err += d;
      const m = pattern.exec(err);
      if (m) resolve({ child, url: m[1] });
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
}

function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** CLIENTS loops of sequential GETs over keep-alive connections for `ms`; returns requests/s. */
async function load(url, ms) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  const target = new URL(url);
  const end = Date.now() + ms;
  let done = 0;
  const one = () =>
    new Promise((resolve, reject) => {
      const req = http.get({ host: target.hostname, port: target.port, path: target.pathname, agent }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
      });
      req.on('error', reject);
    });
  const started = Date.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (Date.now() < end) {
        await one();
        done++;
      }
    }),
  );
  const elapsed = Date.now() - started;
  agent.destroy();
  return (done * 1000) / elapsed;
}

const BARE = `const http = require('node:http');
const body = JSON.stringify({ ok: true });
const s = http.createServer((req, res) => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }); res.end(body); });
s.listen(0, '127.0.0.1', () => process.stderr.write('listening on http://127.0.0.1:' + s.address().port + '\\n'));
process.on('SIGTERM', () => process.exit(0));`;

async function measure(url) {
  await load(url, WARMUP_MS);
  return load(url, MEASURE_MS);
}

export const run = benchRunner({
  'serve.http': async () => {
    const ws = workspace();
    try {
      const bare = await start(['-e', BARE], ws, /listening on (http:\/\/127\.0\.0\.1:\d+)/);
      const bareRps = await measure(`${bare.url}/noop`).finally(() => stop(bare.child));
      const served = await start([bin, 'serve', '--http', '127.0.0.1:0'], ws, /listening on (http:\/\/127\.0\.0\.1:\d+)/);
      const value = await measure(`${served.url}/noop`).finally(() => stop(served.child));
      return { name: 'serve.http', value: Math.round(value), unit: 'req/s', baseline: Math.round(bareRps), ratio: round(value / bareRps), clients: CLIENTS, ms: MEASURE_MS };
    } finally {
      fs.rmSync(ws, { recursive: true, force: true });
    }
  },
});

export const printsItself = true;

await runIfMain(import.meta.url, run);
