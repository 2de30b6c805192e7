// The agent-provider contract (seed 004, SPEC §11; src/agent/provider.ts), from the side of a
// provider that is not agent-strands: the `agent` skill enforces the limits and maps a provider's
// failure to an error code whatever the provider does, and a provider or model config that cannot
// work is a configuration error before anything runs. The providers here are code skills written
// to the seed's skeleton ("Writing a Custom Agent Provider"), in a temp search path.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { AGENT_WS, agentRuntime, invokeWithTrace, types, type AgentSkillSpec } from './agent-helpers.ts';
import { REPO, tempDir } from './helpers.ts';

/**
 * The seed's skeleton with a model that answers every turn with the same code: turn-start,
 * tool-call, invokeRef, tool-result, turn-end — and on to the next turn while the directive says
 * continue. `model.loop` sets `code`, `catchInvoke` (report an invoke error as the tool-result
 * instead of throwing it), `swallow` (catch what the hook throws and end with text), and
 * `throws` ({ message, code? } thrown before the first turn) or `throwValue` (thrown as it is).
 */
const LOOPING_AGENT = `
import type { AgentArgs, HookDirective } from 'agent-apps';

export const frontmatter = {
  name: 'looping-agent',
  description: 'Custom agent provider (seed 004 skeleton) whose model always answers with the same code.',
  metadata: { tags: ['meta-internal'], visibility: 'hidden' },
};

interface Loop { code?: string; catchInvoke?: boolean; swallow?: boolean; throws?: { message: string; code?: string }; throwValue?: unknown }

export default async function (ctx: any, args: AgentArgs) {
  const { config, invokeRef, hookRef } = args;
  const loop = (config.loop ?? {}) as Loop;
  if (loop.throws) throw Object.assign(new Error(loop.throws.message), loop.throws.code ? { code: loop.throws.code } : {});
  if ('throwValue' in loop) throw loop.throwValue;
  const hook = async (event: object): Promise<HookDirective> => {
    try {
      return (await ctx.manager.invoke(hookRef, event)) as HookDirective;
    } catch (err) {
      if (!loop.swallow) throw err;
      return undefined;
    }
  };
  for (let turnNumber = 1; turnNumber <= 100; turnNumber++) {
    await hook({ type: 'turn-start', turnNumber });
    const input = { code: loop.code ?? 'return 1' };
    await hook({ type: 'tool-call', tool: 'invoke', args: input });
    let result: unknown;
    let error: string | undefined;
    try {
      result = await ctx.manager.invoke(invokeRef, input);
    } catch (err) {
      if (!loop.catchInvoke) throw err;
      error = (err as Error).message;
    }
    const r = await hook({ type: 'tool-result', tool: 'invoke', args: input, ...(error === undefined ? { result } : { error }) });
    if (r && 'stop' in r) return r.result;
    const d = await hook({ type: 'turn-end', result: '', turnNumber });
    if (d && 'stop' in d) return d.result;
    if (!(d && 'continue' in d)) return 'the model is done';
  }
  return 'the provider ran 100 turns';
}
`;

const files = { 'looping-agent.skill.ts': LOOPING_AGENT };
const looping = (model: Record<string, unknown>, spec: AgentSkillSpec = {}): AgentSkillSpec => ({ ...spec, model: { agent: 'looping-agent', ...model } });
const count = (trace: { type: string }[], type: string) => trace.filter((e) => e.type === type).length;

describe('limits are the agent skill’s, for every provider (seed 004: "The agent enforces configurable limits")', () => {
  test('maxTurns: a custom provider whose hook keeps answering continue stops with E_AGENT_LIMIT after maxTurns turn-ends', async (t) => {
    const rt = await agentRuntime(t, { forever: looping({ maxTurns: 3 }) }, { files });
    const run = await invokeWithTrace(rt, 'forever');
    assert.equal(run.error?.code, 'E_AGENT_LIMIT', String(run.error));
    assert.equal(run.error.message, 'the agent used its 3 model turns (model.maxTurns) without finishing');
    assert.equal(count(run.trace, 'turn-end'), 3);
    assert.equal(count(run.trace, 'turn-start'), 3, 'no fourth turn');
  });

  test('maxTurns: a provider that swallows the limit error and answers with text still ends with E_AGENT_LIMIT', async (t) => {
    const rt = await agentRuntime(t, { swallower: looping({ maxTurns: 2, loop: { swallow: true } }) }, { files });
    const run = await invokeWithTrace(rt, 'swallower');
    assert.equal(run.error?.code, 'E_AGENT_LIMIT', String(run.error));
    assert.equal(run.error.message, 'the agent used its 2 model turns (model.maxTurns) without finishing');
    assert.equal(count(run.trace, 'turn-end'), 2);
  });

  test('maxSteps: a custom provider that keeps calling invoke ends with E_AGENT_LIMIT — thrown by the invoke callback, or at the next turn-end', async (t) => {
    const rt = await agentRuntime(
      t,
      {
        // The seed's skeleton lets the invoke callback's error through.
        skeleton: looping({ maxSteps: 2, maxTurns: 10 }),
        // A provider that reports it to the model as the tool's error: the next turn-end throws.
        reporting: looping({ maxSteps: 2, maxTurns: 10, loop: { catchInvoke: true } }),
        // And one that also swallows that: the run still ends on the limit.
        swallowing: looping({ maxSteps: 2, maxTurns: 10, loop: { catchInvoke: true, swallow: true } }),
      },
      { files },
    );
    const skeleton = await invokeWithTrace(rt, 'skeleton');
    assert.equal(skeleton.error?.code, 'E_AGENT_LIMIT', String(skeleton.error));
    assert.equal(skeleton.error.message, 'maxSteps (2) exhausted: no more invoke calls');
    for (const name of ['reporting', 'swallowing']) {
      const run = await invokeWithTrace(rt, name);
      assert.equal(run.error?.code, 'E_AGENT_LIMIT', `${name}: ${String(run.error)}`);
      assert.equal(run.error.message, `maxSteps (2) exhausted before '${name}' finished`);
      assert.deepEqual(run.trace.filter((e) => e.type === 'tool-result').map((e) => e.result ?? e.error), ['result: 1', 'result: 1', 'maxSteps (2) exhausted: no more invoke calls']);
      assert.equal(count(run.trace, 'turn-end'), 3);
    }
  });

  test('a provider that finishes within its limits is not affected: finish() on the last allowed turn is the result', async (t) => {
    const rt = await agentRuntime(t, { last: looping({ maxTurns: 1, maxSteps: 1, loop: { code: "ctx.manager.finish('on time')" } }) }, { files });
    const run = await invokeWithTrace(rt, 'last');
    assert.equal(run.error, undefined);
    assert.equal(run.value, 'on time');
    assert.deepEqual(types(run.trace), ['turn-start', 'tool-call', 'tool-result']);
  });
});

describe('a provider that throws (SPEC §11: E_MODEL, the provider failed)', () => {
  test('a provider that throws reaches the caller as E_MODEL, with the original error as its cause and its message in the text', async (t) => {
    const rt = await agentRuntime(
      t,
      {
        plain: looping({ loop: { throws: { message: 'quota exceeded for this key' } } }),
        // A library's own code is not a runtime code.
        network: looping({ loop: { throws: { message: 'connect ECONNREFUSED 127.0.0.1:9', code: 'ECONNREFUSED' } } }),
        // Not even an Error: the kernel makes it one (E_SKILL, a skill threw), and that is the provider failing too.
        thrown: looping({ loop: { throwValue: 'a bare string' } }),
      },
      { files },
    );
    const plain = await invokeWithTrace(rt, 'plain');
    assert.equal(plain.error?.code, 'E_MODEL');
    assert.equal(plain.error.message, "the agent provider 'looping-agent' failed: quota exceeded for this key");
    assert.ok(plain.error.cause instanceof Error);
    assert.equal(plain.error.cause.message, 'quota exceeded for this key');
    const network = await invokeWithTrace(rt, 'network');
    assert.equal(network.error?.code, 'E_MODEL');
    assert.equal(network.error.cause.code, 'ECONNREFUSED');
    const thrown = await invokeWithTrace(rt, 'thrown');
    assert.equal(thrown.error?.code, 'E_MODEL');
    assert.equal(thrown.error.message, "the agent provider 'looping-agent' failed: a bare string");
    assert.equal(thrown.error.cause.message, 'a bare string');
  });

  test('an error that already has a runtime code keeps it (E_AGENT_LIMIT, E_ABORTED, E_SANDBOX, E_ALLOWED_TOOLS, E_VALIDATION, E_CONFIG, E_UNTRUSTED_REF)', async (t) => {
    const codes = ['E_AGENT_LIMIT', 'E_ABORTED', 'E_SANDBOX', 'E_ALLOWED_TOOLS', 'E_VALIDATION', 'E_CONFIG', 'E_UNTRUSTED_REF'];
    const skills = Object.fromEntries(codes.map((code) => [code.toLowerCase().replaceAll('_', '-'), looping({ loop: { throws: { message: `raised as ${code}`, code } } })]));
    const rt = await agentRuntime(t, skills, { files });
    for (const code of codes) {
      const run = await invokeWithTrace(rt, code.toLowerCase().replaceAll('_', '-'));
      assert.equal(run.error?.code, code);
      assert.equal(run.error.message, `raised as ${code}`);
    }
  });

  test("the Strands provider's model errors keep their one line (E_MODEL, not wrapped again)", async (t) => {
    const rt = await agentRuntime(t, { short: { turns: [{ invoke: 'return 1' }] } });
    const run = await invokeWithTrace(rt, 'short');
    assert.equal(run.error?.code, 'E_MODEL');
    assert.match(run.error.message, /^replay cassette .*short\.cassette\.yaml has 1 turn; the agent asked for turn 2$/);
  });
});

/** The bin, with no model credentials in its environment. */
function cli(args: string[], cwd: string, home: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, AGENT_APPS_HOME: home, AWS_EC2_METADATA_DISABLED: 'true', AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/credentials', AWS_CONFIG_FILE: '/nonexistent/config' };
  for (const key of Object.keys(env)) if (/^(AWS_(?!EC2_METADATA_DISABLED|SHARED_CREDENTIALS_FILE|CONFIG_FILE)|OPENAI_|ANTHROPIC_)/.test(key)) delete env[key];
  for (const key of ['AGENT_APPS_PATH', 'NO_COLOR', 'FORCE_COLOR', 'NODE_OPTIONS', 'NODE_TEST_CONTEXT']) delete env[key];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(REPO, 'bin', 'agent-apps.js'), ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
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

describe('a provider or model config that cannot work is a configuration error (E_CONFIG, exit 2)', () => {
  test('an unknown provider (model.agent: nope) is E_CONFIG before the agent starts, naming model.agent', async (t) => {
    const rt = await agentRuntime(t, { nowhere: { model: { agent: 'nope' }, turns: [{ text: 'never' }] } });
    const run = await invokeWithTrace(rt, 'nowhere');
    assert.equal(run.error?.code, 'E_CONFIG');
    assert.match(run.error.message, /^model\.agent names the agent provider 'nope', which is not a skill on the search paths/);
    assert.deepEqual(run.trace, []);
  });

  test('a bad model config (an unknown model.provider, a key in model.apiKey, replay without a cassette) is E_CONFIG', async (t) => {
    const rt = await agentRuntime(t);
    for (const [config, message] of [
      [{ provider: 'gemini' }, /^unknown model\.provider 'gemini'/],
      [{ provider: 'openai', apiKey: 'sk-123' }, /^model\.apiKey is not read from configuration/],
      [{ provider: 'replay' }, /^model\.provider replay needs model\.cassette/],
    ] as const) {
      await assert.rejects(rt.invoke('agent', { prompt: 'p', config }), { code: 'E_CONFIG', message }, JSON.stringify(config));
    }
  });

  test('through `agent-apps run` on a Markdown skill: model.agent: nope and model.apiKey exit 2 with one E_CONFIG line', { timeout: 60_000 }, async (t) => {
    const home = tempDir(t);
    const nope = await cli(['--set', 'model.agent=nope', 'run', 'count', '--text', 'a b'], AGENT_WS, home);
    assert.match(nope.stderr, /^error \[E_CONFIG\]: model\.agent names the agent provider 'nope', which is not a skill on the search paths.*\n$/);
    assert.equal(nope.stdout, '');
    assert.equal(nope.code, 2);
    const key = await cli(['--set', 'model.provider=openai', '--set', 'model.apiKey=sk-123', 'run', 'count', '--text', 'a b'], AGENT_WS, home);
    assert.equal(key.stderr, 'error [E_CONFIG]: model.apiKey is not read from configuration — put the key in the environment (OPENAI_API_KEY, or name a variable with model.apiKeyEnv)\n');
    assert.equal(key.code, 2);
  });

  test('a Markdown skill with no model configured fails in one line that says to set model: and mentions replay — no SDK notice before it', { timeout: 60_000 }, async (t) => {
    const ws = tempDir(t);
    fs.mkdirSync(path.join(ws, 'skills'));
    fs.writeFileSync(path.join(ws, 'skills', 'ask.md'), '---\nname: ask\ndescription: Ask.\n---\nSay hi.\n');
    const r = await cli(['run', 'ask'], ws, tempDir(t));
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^error \[E_MODEL\]: .* — no model is configured: set model: in the skill's metadata or a main\.md \(.*replay with a cassette to run offline\)\n$/);
  });
});
