// Agent benchmark (docs/agents.md, "Performance"): `agent.turn` — ms of agent overhead per model turn, i.e. everything
// but the model: the agent skill, the Strands loop, the hook and invoke callback refs through the
// pipeline, the isolated-vm sandbox running the turn's code and the one tool call that code makes.
// The model is the replay model playing a cassette of TURNS turns, so it costs next to nothing.
// Baseline: ms per invoke of a trivial code skill (`noop`) through the same pipeline.
// Run alone with `node bench/agent.js`, or through `bench/run.js`, which imports `run`.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { createRuntime } from '../src/index.ts';
import { benchRunner, runIfMain } from './runner.js';

const TURNS = 20;
const RUNS = 15;
const WARMUP = 3;

const here = path.dirname(fileURLToPath(import.meta.url));
const ws = path.join(here, 'ws');

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const round = (n) => Math.round(n * 1000) / 1000;

/** A Markdown agent skill whose cassette has TURNS turns, each one `invoke` call that calls `noop`. */
function writeAgentSkill(dir) {
  const turns = [];
  for (let i = 1; i < TURNS; i++) {
    turns.push({ text: `Step ${i}.`, invoke: "await ctx.manager.invoke('noop');\nmemory.steps = (memory.steps ?? 0) + 1;\nreturn memory.steps;" });
  }
  turns.push({ text: 'Done.', invoke: 'ctx.manager.finish({ steps: memory.steps });' });
  fs.writeFileSync(path.join(dir, 'turns.cassette.yaml'), YAML.stringify({ turns }, { lineWidth: 0 }));
  const front = {
    name: 'turns',
    description: `An agent that takes ${TURNS} model turns (the agent.turn benchmark).`,
    metadata: {
      returns: { type: 'object', properties: { steps: { type: 'integer' } }, required: ['steps'] },
      'allowed-tools': 'noop',
      model: { provider: 'replay', cassette: 'turns.cassette.yaml', maxTurns: TURNS, maxSteps: TURNS },
    },
  };
  fs.writeFileSync(path.join(dir, 'turns.md'), `---\n${YAML.stringify(front)}---\nCall noop once per turn, then finish.\n`);
}

async function agentTurn() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-bench-agent-'));
  try {
    writeAgentSkill(dir);
    const rt = await createRuntime({ cwd: ws, paths: [dir] });
    try {
      const perTurn = [];
      for (let i = 0; i < WARMUP + RUNS; i++) {
        const t = performance.now();
        const result = await rt.invoke('turns', {});
        const ms = performance.now() - t;
        if (result?.steps !== TURNS - 1) throw new Error(`agent.turn: unexpected result ${JSON.stringify(result)}`);
        if (i >= WARMUP) perTurn.push(ms / TURNS);
      }
      // Baseline: a trivial code skill through the same pipeline, warm, sequential.
      const N = 2000;
      for (let i = 0; i < N; i++) await rt.invoke('noop');
      const perInvoke = [];
      for (let run = 0; run < 5; run++) {
        const t = performance.now();
        for (let i = 0; i < N; i++) await rt.invoke('noop');
        perInvoke.push((performance.now() - t) / N);
      }
      const value = median(perTurn);
      const baseline = median(perInvoke);
      return { name: 'agent.turn', value: round(value), unit: 'ms', baseline: round(baseline), ratio: round(value / baseline), turns: TURNS, runs: RUNS };
    } finally {
      await rt.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export const run = benchRunner({ 'agent.turn': agentTurn });

await runIfMain(import.meta.url, run);
