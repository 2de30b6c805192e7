// Resume benchmark (docs/runs.md, "Speed"): `resume` — wall ms of `agent-apps runs resume ID
// --rerun-unverified` of a journaled 20-turn run, against `agent-apps run long20` from scratch, in
// a copy of test/fixtures/resume-ws. The run is killed with SIGKILL while its 20th call waits on the
// gate file (`go`): its journal holds 20 model turns and 19 calls with their results, and the 20th
// call unverified. Each resume continues a fresh copy of that run file (a run is resumed once), so
// it plays 20 turns and 19 calls back from the journal and runs the last call again; the run from
// scratch replays the same 20 turns from the cassette and makes the 20 calls. value = the resume's
// median, baseline = the run's median; target: ratio ≤ 1.2. Run alone with `node bench/resume.js`.
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchRunner, runIfMain } from './runner.js';

const RUNS = 7;

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.join(here, '..', 'bin', 'agent-apps.js');
const fixture = path.join(here, '..', 'test', 'fixtures', 'resume-ws');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (n) => Math.round(n * 1000) / 1000;
const env = { ...process.env, AGENT_APPS_TRUST_WORKSPACE: '1', NO_COLOR: '1' };

/** Starts long20 and kills it once its last call waits on the gate; the id of its run. */
async function crash(dir) {
  const child = spawn(process.execPath, [bin, 'run', 'long20'], { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] });
  const closed = new Promise((resolve) => child.on('close', resolve));
  await new Promise((resolve) => {
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d) => {
      err += d;
      if (err.includes('waiting for go')) resolve();
    });
    child.on('close', resolve);
  });
  child.kill('SIGKILL');
  await closed;
  const runs = JSON.parse(execFileSync(process.execPath, [bin, 'runs', '--json'], { cwd: dir, env, encoding: 'utf8' }));
  if (!runs[0]?.resumable) throw new Error(`resume: the killed run is not resumable: ${JSON.stringify(runs[0])}`);
  return runs[0].id;
}

async function resume() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-bench-resume-'));
  try {
    fs.cpSync(fixture, dir, { recursive: true });
    const runsDir = path.join(dir, '.agent-apps', 'runs');
    const id = await crash(dir);
    const journal = fs.readFileSync(path.join(runsDir, `${id}.jsonl`), 'utf8');
    fs.writeFileSync(path.join(dir, 'go'), '');
    const time = (args) => {
      const t = performance.now();
      const out = execFileSync(process.execPath, [bin, ...args], { cwd: dir, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      const ms = performance.now() - t;
      if (JSON.parse(out).n === undefined) throw new Error(`resume: unexpected output ${JSON.stringify(out)}`);
      return ms;
    };
    /** A fresh copy of the killed run: resumable, as the original was before its first resume. */
    const copy = () => {
      const fresh = randomUUID();
      fs.writeFileSync(path.join(runsDir, `${fresh}.jsonl`), journal);
      return fresh;
    };
    time(['run', 'long20', '--json']); // warm the compile cache once, as any second run would
    const ours = [];
    const base = [];
    for (let i = 0; i < RUNS; i++) {
      ours.push(time(['runs', 'resume', copy(), '--rerun-unverified', '--json']));
      base.push(time(['run', 'long20', '--json']));
    }
    const value = median(ours);
    const baseline = median(base);
    return { name: 'resume', value: round(value), unit: 'ms', baseline: round(baseline), ratio: round(value / baseline), turns: 20, runs: RUNS };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export const run = benchRunner({ resume });

await runIfMain(import.meta.url, run);
