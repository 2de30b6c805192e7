// Agent skills from the CLI (SPEC §11, §12, §15): real processes of bin/agent-apps.js. stdout
// carries only the result; errors are one line on stderr with an exit code, never a stack or a hang.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { REPO, tempDir } from './helpers.ts';
import { AGENT_WS } from './agent-helpers.ts';

const BIN = path.join(REPO, 'bin', 'agent-apps.js');
const HELLO = path.join(REPO, 'examples', 'hello');

function run(args: string[], cwd: string, home: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, AGENT_APPS_HOME: home };
  for (const key of ['AGENT_APPS_PATH', 'NO_COLOR', 'FORCE_COLOR', 'NODE_OPTIONS', 'NODE_TEST_CONTEXT']) delete env[key];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('agent skills from the CLI', { concurrency: true }, () => {
  test('agent-apps run summarize (examples/hello) prints the JSON result and nothing else, exit 0', { timeout: 20_000 }, async (t) => {
    const r = await run(['run', 'summarize', '--text', 'a b c'], HELLO, tempDir(t));
    assert.equal(r.stderr, '');
    assert.equal(r.stdout, '{\n  "words": 3,\n  "summary": "a b c"\n}\n');
    assert.equal(r.code, 0);
  });

  test('--json prints the result on one line', { timeout: 20_000 }, async (t) => {
    const r = await run(['--json', 'run', 'summarize', '--text', 'the quick brown fox jumps over the lazy dog'], HELLO, tempDir(t));
    assert.equal(r.stdout, '{"words":9,"summary":"the quick brown fox jumps over the lazy…"}\n');
    assert.equal(r.code, 0);
  });

  test('--set model.record=PATH writes a cassette of the run', { timeout: 20_000 }, async (t) => {
    const out = path.join(tempDir(t), 'recorded.yaml');
    const r = await run(['--set', `model.record=${out}`, 'run', 'summarize', '--text', 'a b c'], HELLO, tempDir(t));
    assert.equal(r.code, 0, r.stderr);
    const original = YAML.parse(fs.readFileSync(path.join(HELLO, 'skills', 'summarize.cassette.yaml'), 'utf8'));
    // The model's side as recorded, each turn with the request it answered (SPEC §18).
    const recorded = YAML.parse(fs.readFileSync(out, 'utf8'));
    assert.deepEqual({ turns: recorded.turns.map(({ request: _r, ...t }: any) => t) }, original);
    assert.ok(recorded.turns.every((t: any) => /^[0-9a-f]{64}$/.test(t.request?.sha256)));
  });

  test('a model server that is not there: exit 1, one line naming model.baseURL, nothing on stdout', { timeout: 20_000 }, async (t) => {
    const r = await run(['--set', 'model.provider=openai', '--set', 'model.baseURL=http://127.0.0.1:9/v1', '--set', 'model.modelId=local', 'run', 'summarize', '--text', 'a'], HELLO, tempDir(t));
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, 'error [E_MODEL]: cannot reach the model at http://127.0.0.1:9/v1 — check model.baseURL (is the server running?)\n');
  });

  test('agent code that never ends: killed, the run ends on E_SANDBOX, exit 1', { timeout: 20_000 }, async (t) => {
    const r = await run(['run', 'runaway'], AGENT_WS, tempDir(t));
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^error \[E_SANDBOX\]: execution timed out after 200 ms \(model\.sandbox\.timeoutMs\) — and then: the agent used its 1 model turn \(model\.maxTurns\) without finishing\n$/);
  });

  test('a bad sandbox limit from --set is a configuration error: exit 2', { timeout: 20_000 }, async (t) => {
    const r = await run(['--set', 'model.sandbox.memoryMb=1', 'run', 'summarize', '--text', 'a'], HELLO, tempDir(t));
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'error [E_CONFIG]: model.sandbox.memoryMb must be a number ≥ 8 (got 1)\n');
  });
});
