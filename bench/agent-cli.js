// Headless agent run benchmark (docs/decisions.md, "Speed of a headless agent run"; issue 12): `cli.agent` — wall ms of
// `agent-apps run hello --name Ada` in a workspace made by `agent-apps init`, whose `hello` skill
// replays hello.cassette.yaml: one model turn with one `invoke`, through the real agent loop,
// sandbox and pipeline, offline. Everything but the model: what a person waits for on every agent
// run. Baseline: `node -e 0`. Target (issue 27): ratio ≤ 8 (docs/cli.md, "Start-up"). Run alone with
// `node bench/agent-cli.js`.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchRunner, runIfMain } from './runner.js';

const RUNS = 10;

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.join(here, '..', 'bin', 'agent-apps.js');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (n) => Math.round(n * 1000) / 1000;

function cliAgent() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-bench-agent-'));
  try {
    execFileSync(process.execPath, [bin, 'init', dir], { stdio: 'ignore' });
    const time = (args, check) => {
      const t = performance.now();
      const out = execFileSync(process.execPath, args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      const ms = performance.now() - t;
      if (check && out.trim() !== 'Hello, Ada!') throw new Error(`cli.agent: unexpected output ${JSON.stringify(out)}`);
      return ms;
    };
    const agent = [bin, 'run', 'hello', '--name', 'Ada'];
    time(agent, true); // warm the compile cache once, as any second run would
    const ours = [];
    const base = [];
    for (let i = 0; i < RUNS; i++) {
      ours.push(time(agent, true));
      base.push(time(['-e', '0'], false));
    }
    const value = median(ours);
    const baseline = median(base);
    return { name: 'cli.agent', value: round(value), unit: 'ms', baseline: round(baseline), ratio: round(value / baseline), runs: RUNS };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export const run = benchRunner({ 'cli.agent': cliAgent });

await runIfMain(import.meta.url, run);
