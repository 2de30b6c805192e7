// Evals benchmark (docs/ci.md, docs/decisions.md): `cli.test50` — wall ms of `agent-apps test` running 50
// replayed cases of an agent skill (one turn, one `invoke` of a code skill each) with the
// default --jobs (the CPU count). Baseline: the same command running 1 of those cases — the
// start, the first (cold) agent run and the exit — so the ratio is what the other 49 cost.
// Target (issue 12): ≤ 10 s on 2 cores. `cli.test50x5` (issue 26): the same 50 cases with
// `trials: 5` (250 invocations), measured in the same run as cli.test50 (interleaved), with its
// ratio to it — target ≤ 3×. Run alone with `node bench/evals.js [cli.test50 | cli.test50x5]`.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchRunner, runIfMain } from './runner.js';

const CASES = 50;
const RUNS = 5;

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.join(here, '..', 'bin', 'agent-apps.js');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (n) => Math.round(n * 1000) / 1000;

function workspace(dir) {
  const skills = path.join(dir, 'skills');
  fs.mkdirSync(skills, { recursive: true });
  fs.writeFileSync(
    path.join(skills, 'wordcount.skill.ts'),
    `export const frontmatter = { name: 'wordcount', description: 'Count words.', metadata: { params: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } } };
export default async function wordcount(_ctx, args) { return args.text.split(/\\s+/).filter(Boolean).length; }
`,
  );
  fs.writeFileSync(
    path.join(skills, 'summarize.md'),
    `---
name: summarize
description: Count the words of a text (an agent skill).
metadata:
  params: { type: object, properties: { text: { type: string } }, required: [text] }
  allowed-tools: wordcount
---
Count the words of :arg{name=text} with wordcount and finish with the count.
`,
  );
  fs.writeFileSync(
    path.join(skills, 'summarize.cassette.yaml'),
    `turns:
  - text: Counting.
    invoke: |
      ctx.manager.finish({ words: await ctx.manager.invoke('wordcount', { text: ctx.args.text }) });
`,
  );
  let evals = 'skill: summarize\ncases:\n';
  for (let i = 0; i < CASES; i++) {
    evals += `  - name: case ${i}\n    args: { text: "w${i} a b" }\n    cassette: summarize.cassette.yaml\n    expect: { equals: { words: 3 } }\n`;
  }
  fs.writeFileSync(path.join(skills, 'summarize.test.yaml'), evals);
  // The same cases, five trials each: under x5/, which `agent-apps test` without a path does not search.
  fs.mkdirSync(path.join(dir, 'x5'));
  fs.writeFileSync(path.join(dir, 'x5', 'summarize.test.yaml'), evals.replace('cases:\n', 'trials: 5\ncases:\n').replaceAll('cassette: summarize.cassette.yaml', 'cassette: ../skills/summarize.cassette.yaml'));
}

function timer(dir) {
  return (args, name) => {
    const t = performance.now();
    const out = execFileSync(process.execPath, [bin, 'test', ...args], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const ms = performance.now() - t;
    const last = out.trim().split('\n').at(-1);
    if (!/^\d+ passed, 0 failed$/.test(last)) throw new Error(`${name}: unexpected summary ${last}`);
    return ms;
  };
}

async function cliTest50() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-bench-evals-'));
  try {
    workspace(dir);
    const t = timer(dir);
    const time = (args) => t(args, 'cli.test50');
    time([]); // warm the compile cache once, as any second run would
    const all = [];
    const one = [];
    for (let i = 0; i < RUNS; i++) {
      all.push(time([]));
      one.push(time(['--filter', 'case 0$']));
    }
    const value = median(all);
    const baseline = median(one);
    return { name: 'cli.test50', value: round(value), unit: 'ms', baseline: round(baseline), ratio: round(value / baseline), cases: CASES, jobs: os.availableParallelism(), runs: RUNS };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function cliTest50x5() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-bench-evals-'));
  try {
    workspace(dir);
    const time = timer(dir);
    time([], 'cli.test50'); // warm the compile cache once, as any second run would
    const x5 = [];
    const plain = [];
    for (let i = 0; i < RUNS; i++) {
      x5.push(time(['x5'], 'cli.test50x5'));
      plain.push(time([], 'cli.test50'));
    }
    const value = median(x5);
    const test50 = median(plain);
    return { name: 'cli.test50x5', value: round(value), unit: 'ms', test50: round(test50), ratio: round(value / test50), target: 3, cases: CASES, trials: 5, jobs: os.availableParallelism(), runs: RUNS };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export const run = benchRunner({ 'cli.test50': cliTest50, 'cli.test50x5': cliTest50x5 });

await runIfMain(import.meta.url, run);
