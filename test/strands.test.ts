// The agent-strands provider with the replay model: the real Strands agent loop, offline.

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import { Model } from '@strands-agents/sdk';
import type { BaseModelConfig, Message, ModelStreamEvent, StreamOptions } from '@strands-agents/sdk';
import type { Context, HookEvent } from '../src/index.ts';
import {
  agentStrands,
  createModel,
  describeModel,
  parseCassette,
  RecordingModel,
  ReplayModel,
  runAgentLoop,
  stringifyCassette,
  strandsFrontmatter as frontmatter,
  type AgentLoopOptions,
} from './strands-modules.ts';

/** A hook event with its fields readable without narrowing (the tests check them by value). */
type AgentHookEvent = HookEvent & Record<string, any>;

const CASSETTES = fileURLToPath(new URL('./fixtures/cassettes/', import.meta.url));
const REPO = fileURLToPath(new URL('..', import.meta.url));
const TWO = join(CASSETTES, 'two-turns.yaml');
const TWO_CODE = "const n = await ctx.manager.invoke('wordcount', { text: 'a b c' });\nctx.manager.finish({ count: n });\n";

/** Wraps a model and keeps a JSON copy of the messages each model call was sent. */
class SpyModel extends Model<BaseModelConfig> {
  inner: Model<BaseModelConfig>;
  calls: Array<{ messages: any[]; options: StreamOptions | undefined }> = [];
  constructor(inner: Model<BaseModelConfig>) {
    super();
    this.inner = inner;
  }
  updateConfig(c: BaseModelConfig): void {
    this.inner.updateConfig(c);
  }
  getConfig(): BaseModelConfig {
    return this.inner.getConfig();
  }
  async *stream(messages: Message[], options?: StreamOptions): AsyncGenerator<ModelStreamEvent> {
    this.calls.push({ messages: JSON.parse(JSON.stringify(messages)), options });
    yield* this.inner.stream(messages, options);
  }
  /** The tool results the model saw in its last call. */
  lastToolResults(): Array<{ status: string; text: string }> {
    const last = this.calls.at(-1)!.messages.at(-1);
    return last.content
      .filter((c: any) => c.toolResult)
      .map((c: any) => ({ status: c.toolResult.status, text: c.toolResult.content.map((x: any) => x.text ?? JSON.stringify(x.json)).join('') }));
  }
}

function hooks(answer?: (e: AgentHookEvent) => unknown) {
  const events: AgentHookEvent[] = [];
  const onHook = async (e: AgentHookEvent) => {
    events.push(e);
    return answer?.(e) as any;
  };
  return { events, onHook, types: () => events.map((e) => e.type) };
}

async function replay(file: string): Promise<Model<BaseModelConfig>> {
  return createModel({ provider: 'replay', cassette: file }, { baseDir: CASSETTES });
}

function base(model: Model<BaseModelConfig>, extra: Partial<AgentLoopOptions> = {}): AgentLoopOptions {
  return { model, systemPrompt: 'You are a test agent.', userMessage: 'Count the words.', onCode: async () => 'ok', ...extra };
}

describe('replay model', () => {
  test('a 2-turn cassette: onCode gets the code, its result goes back to the model, the final text is returned', async () => {
    const spy = new SpyModel(await replay('two-turns.yaml'));
    const codes: string[] = [];
    const out = await runAgentLoop(base(spy, { onCode: async (code) => (codes.push(code), { count: 3 }) }));
    assert.deepEqual(codes, [TWO_CODE]);
    assert.equal(out.text, 'There are 3 words.');
    assert.equal(out.turns, 2);
    assert.equal(out.stopped, undefined);
    assert.equal(spy.calls.length, 2);
    assert.deepEqual(spy.lastToolResults(), [{ status: 'success', text: '{"count":3}' }]);
    assert.equal(spy.calls[0]!.options?.systemPrompt, 'You are a test agent.');
    assert.deepEqual(spy.calls[0]!.options?.toolSpecs?.map((t) => t.name), ['invoke'], 'exactly one tool');
    assert.ok(out.usage.inputTokens > 0 && out.usage.outputTokens > 0);
    assert.equal(out.usage.totalTokens, out.usage.inputTokens + out.usage.outputTokens);
  });

  test('hooks fire in order: turn-start, message, tool-call, tool-result, then turn-end with the text — for every turn', async () => {
    const h = hooks();
    await runAgentLoop(base(await replay('two-turns.yaml'), { onHook: h.onHook, onCode: async () => 3 }));
    assert.deepEqual(h.types().filter((t) => t !== 'usage'), [
      'turn-start', 'message', 'tool-call', 'tool-result', 'turn-end', 'turn-start', 'message', 'turn-end',
    ]);
    // A turn that used tools ends once its tools have run, with the turn's text.
    assert.deepEqual(h.events.find((e) => e.type === 'turn-end'), { type: 'turn-end', result: 'Let me count.', turnNumber: 1 });
    const [start, msg, call, result] = h.events.filter((e) => e.type !== 'usage');
    assert.deepEqual(start, { type: 'turn-start', turnNumber: 1 });
    assert.deepEqual(msg, { type: 'message', text: 'Let me count.', turnNumber: 1 });
    assert.equal(call!.tool, 'invoke');
    assert.deepEqual(call!.args, { code: TWO_CODE });
    assert.equal(result!.result, 3);
    assert.deepEqual(h.events.at(-1), { type: 'turn-end', result: 'There are 3 words.', turnNumber: 2 });
    const usage = h.events.filter((e) => e.type === 'usage');
    assert.equal(usage.length, 2, 'one usage event per model turn');
    assert.equal(typeof usage[0]!.inputTokens, 'number');
  });

  test('deltas: true also reports streamed text chunks as message events with delta: true', async () => {
    const h = hooks();
    await runAgentLoop(base(await replay('two-turns.yaml'), { onHook: h.onHook, deltas: true }));
    const turn2 = h.events.filter((e) => e.type === 'message' && e.turnNumber === 2);
    const chunks = turn2.filter((e) => e.delta === true).map((e) => e.text);
    assert.ok(chunks.length > 1);
    assert.equal(chunks.join(''), 'There are 3 words.');
    assert.deepEqual(turn2.at(-1), { type: 'message', text: 'There are 3 words.', turnNumber: 2 });
  });

  test('turn-end answering { stop: true, result } ends the loop with that result', async () => {
    const h = hooks((e) => (e.type === 'turn-end' && e.turnNumber === 2 ? { stop: true, result: { count: 3 } } : undefined));
    const out = await runAgentLoop(base(await replay('two-turns.yaml'), { onHook: h.onHook }));
    assert.deepEqual(out.stopped, { result: { count: 3 } });
    assert.equal(out.text, 'There are 3 words.');
  });

  test('the turn-end of a turn that used tools: { stop } ends the loop without another model call, { continue } is implied', async () => {
    const stopped = new ReplayModel({ turns: [{ text: 'Let me count.', invoke: 'return 3' }, { text: 'never played' }] });
    const h = hooks((e) => (e.type === 'turn-end' ? { stop: true, result: { count: 3 } } : undefined));
    const out = await runAgentLoop(base(stopped, { onHook: h.onHook }));
    assert.deepEqual(out.stopped, { result: { count: 3 } });
    assert.equal(stopped.turnsPlayed, 1);
    // Answering undefined (or continue) after a tool turn lets the model see the tool results.
    const going = new ReplayModel({ turns: [{ invoke: 'return 3' }, { text: 'Three.' }] });
    const out2 = await runAgentLoop(base(going, { onHook: hooks(() => undefined).onHook }));
    assert.equal(out2.text, 'Three.');
    assert.equal(going.turnsPlayed, 2);
  });

  test('turn-end answering { continue: true, message } sends the message and runs another turn', async () => {
    const cassette = new ReplayModel({ turns: [{ text: 'first' }, { text: 'second' }] });
    const spy2 = new SpyModel(cassette);
    let ends = 0;
    const h = hooks((e) => (e.type === 'turn-end' && ++ends === 1 ? { continue: true, message: 'Keep going.' } : undefined));
    const out = await runAgentLoop(base(spy2, { onHook: h.onHook }));
    assert.equal(out.text, 'second');
    assert.equal(out.turns, 2);
    const lastUser = spy2.calls[1]!.messages.at(-1);
    assert.equal(lastUser.role, 'user');
    assert.deepEqual(lastUser.content, [{ text: 'Keep going.' }]);
    assert.deepEqual(h.events.filter((e) => e.type === 'turn-end').map((e) => e.turnNumber), [1, 2]);
  });

  test('running out of cassette turns fails with E_MODEL saying how many turns the cassette had', async () => {
    const h = hooks((e) => (e.type === 'turn-end' ? { continue: true, message: 'more' } : undefined));
    await assert.rejects(runAgentLoop(base(await replay('two-turns.yaml'), { onHook: h.onHook })), (err: any) => {
      assert.equal(err.code, 'E_MODEL');
      assert.equal(err.message, `replay cassette ${TWO} has 2 turns; the agent asked for turn 3`);
      return true;
    });
    const errors = h.events.filter((e) => e.type === 'error');
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.attempt, 1);
    assert.match(String(errors[0]!.error), /has 2 turns/);
  });

  test('an error hook answering { continue: true } retries the model call, with the attempt count', async () => {
    /** Fails its first `failures` calls, then plays the cassette. */
    class Flaky extends Model<BaseModelConfig> {
      inner = new ReplayModel({ turns: [{ text: 'only' }] });
      failures = 3;
      updateConfig(): void {}
      getConfig(): BaseModelConfig {
        return { modelId: 'flaky' };
      }
      async *stream(messages: Message[], options?: StreamOptions): AsyncGenerator<ModelStreamEvent> {
        if (this.failures-- > 0) throw new Error('flaky model');
        yield* this.inner.stream(messages, options);
      }
    }
    let retries = 0;
    const h = hooks((e) => {
      if (e.type === 'error' && retries < 2) return (retries++, { continue: true });
      return undefined;
    });
    await assert.rejects(runAgentLoop(base(new Flaky(), { onHook: h.onHook })), /flaky model/);
    assert.deepEqual(h.events.filter((e) => e.type === 'error').map((e) => e.attempt), [1, 2, 3]);
    assert.equal(h.events.filter((e) => e.type === 'turn-start').length, 1, 'a retry is not a new turn');
    // Two retries are enough for a model that fails twice.
    const model = new Flaky();
    model.failures = 2;
    retries = 0;
    assert.equal((await runAgentLoop(base(model, { onHook: h.onHook }))).text, 'only');
  });

  test('a cassette that ran out is final: the error event says so, and no continue retries it', async () => {
    const h = hooks((e) => (e.type === 'turn-end' || e.type === 'error' ? { continue: true } : undefined));
    await assert.rejects(runAgentLoop(base(new ReplayModel({ turns: [{ text: 'only' }] }), { onHook: h.onHook })), { code: 'E_MODEL', message: /has 1 turn; the agent asked for turn 2/ });
    const errors = h.events.filter((e) => e.type === 'error');
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.final, true);
  });

  test('maxTurns model round-trips without finishing → E_AGENT_LIMIT', async () => {
    const codes: string[] = [];
    await assert.rejects(
      runAgentLoop(base(await replay('three-turns.yaml'), { maxTurns: 2, onCode: async (c) => (codes.push(c), 'ok') })),
      (err: any) => {
        assert.equal(err.code, 'E_AGENT_LIMIT');
        assert.match(err.message, /2 model turns \(model\.maxTurns\)/);
        return true;
      },
    );
    assert.deepEqual(codes, ['return 1;', 'return 2;']);
    // The same cassette finishes within 4 turns.
    assert.equal((await runAgentLoop(base(await replay('three-turns.yaml'), { maxTurns: 4 }))).text, 'All done.');
  });

  test('a continue directive cannot take the loop past maxTurns', async () => {
    const h = hooks((e) => (e.type === 'turn-end' ? { continue: true } : undefined));
    const model = new ReplayModel({ turns: [{ text: 'a' }, { text: 'b' }, { text: 'c' }] });
    await assert.rejects(runAgentLoop(base(model, { onHook: h.onHook, maxTurns: 2 })), { code: 'E_AGENT_LIMIT' });
    assert.equal(model.turnsPlayed, 2);
  });

  test('a tool-call answered with { deny } is not executed and the model is told why', async () => {
    const spy = new SpyModel(await replay('three-turns.yaml'));
    const codes: string[] = [];
    const h = hooks((e) => (e.type === 'tool-call' && (e.args as any).code === 'return 1;' ? { deny: 'no network access' } : undefined));
    const out = await runAgentLoop(base(spy, { onHook: h.onHook, onCode: async (c) => (codes.push(c), 'ok') }));
    assert.deepEqual(codes, ['return 2;', 'return 3;']);
    assert.equal(out.text, 'All done.');
    const seen = spy.calls[1]!.messages.at(-1).content[0].toolResult;
    assert.equal(seen.status, 'error');
    assert.equal(seen.content[0].text, 'tool call denied: no network access');
    const denied = h.events.find((e) => e.type === 'tool-result' && e.denied === true);
    assert.ok(denied, 'the denied call still gets a tool-result event');
  });

  test('onCode throwing is reported to the model as the tool error and the loop continues', async () => {
    const spy = new SpyModel(await replay('three-turns.yaml'));
    const h = hooks();
    const out = await runAgentLoop(
      base(spy, {
        onHook: h.onHook,
        onCode: async (c) => {
          if (c === 'return 2;') throw new Error('E_SANDBOX: boom');
          return { ok: true };
        },
      }),
    );
    assert.equal(out.text, 'All done.');
    assert.deepEqual(spy.calls[2]!.messages.at(-1).content[0].toolResult.content, [{ text: 'Error: E_SANDBOX: boom' }]);
    assert.equal(spy.calls[2]!.messages.at(-1).content[0].toolResult.status, 'error');
    const results = h.events.filter((e) => e.type === 'tool-result');
    assert.deepEqual(results.map((e) => e.error ?? e.result), [{ ok: true }, 'E_SANDBOX: boom', { ok: true }]);
  });

  test('tool-result answering { stop: true, result } ends the loop without another model call', async () => {
    const model = new ReplayModel({ turns: [{ invoke: 'ctx.manager.finish(42)' }, { text: 'never played' }] });
    const h = hooks((e) => (e.type === 'tool-result' ? { stop: true, result: 42 } : undefined));
    const out = await runAgentLoop(base(model, { onHook: h.onHook }));
    assert.deepEqual(out.stopped, { result: 42 });
    assert.equal(model.turnsPlayed, 1);
    // The turn still ends: its turn-end comes last, after the tool-result that stopped the run.
    assert.deepEqual(h.types().filter((t) => t !== 'usage'), ['turn-start', 'tool-call', 'tool-result', 'turn-end']);
  });

  test('{ stop: true } without a result from any hook (here turn-start) ends the loop with the latest model text', async () => {
    const model = new ReplayModel({ turns: [{ text: 'thinking', invoke: 'x' }, { text: 'never played' }] });
    const h = hooks((e) => (e.type === 'turn-start' && e.turnNumber === 2 ? { stop: true } : undefined));
    const out = await runAgentLoop(base(model, { onHook: h.onHook }));
    assert.deepEqual(out.stopped, { result: 'thinking' });
    assert.equal(model.turnsPlayed, 1);
    assert.equal(h.types().at(-1), 'turn-start');
  });

  test('an invoke call without a string code is an error result for the model, not a crash', async () => {
    class NoCode extends Model<BaseModelConfig> {
      n = 0;
      updateConfig(): void {}
      getConfig(): BaseModelConfig {
        return {};
      }
      async *stream(): AsyncGenerator<ModelStreamEvent> {
        yield { type: 'modelMessageStartEvent', role: 'assistant' };
        if (this.n++ === 0) {
          yield { type: 'modelContentBlockStartEvent', start: { type: 'toolUseStart', name: 'invoke', toolUseId: 't1' } };
          yield { type: 'modelContentBlockDeltaEvent', delta: { type: 'toolUseInputDelta', input: '{"source":"1+1"}' } };
          yield { type: 'modelContentBlockStopEvent' };
          yield { type: 'modelMessageStopEvent', stopReason: 'toolUse' };
        } else {
          yield { type: 'modelContentBlockStartEvent' };
          yield { type: 'modelContentBlockDeltaEvent', delta: { type: 'textDelta', text: 'sorry' } };
          yield { type: 'modelContentBlockStopEvent' };
          yield { type: 'modelMessageStopEvent', stopReason: 'endTurn' };
        }
      }
    }
    const spy = new SpyModel(new NoCode());
    let called = false;
    const out = await runAgentLoop(base(spy, { onCode: async () => ((called = true), 'x') }));
    assert.equal(called, false);
    assert.equal(out.text, 'sorry');
    const [result] = spy.lastToolResults();
    assert.equal(result!.status, 'error');
    assert.match(result!.text, /code argument is missing/);
  });

  test('aborting the signal stops the loop with E_ABORTED', async () => {
    const ac = new AbortController();
    const model = new ReplayModel({ turns: [{ invoke: 'a' }, { invoke: 'b' }, { text: 'c' }] });
    await assert.rejects(
      runAgentLoop(base(model, { signal: ac.signal, onCode: async () => (ac.abort('user pressed ^C'), 'ok') })),
      (err: any) => err.code === 'E_ABORTED' && /user pressed/.test(err.message),
    );
    assert.ok(model.turnsPlayed < 3);
    await assert.rejects(runAgentLoop(base(new ReplayModel({ turns: [] }), { signal: ac.signal })), { code: 'E_ABORTED' });
  });

  test('an error thrown by the hook ends the loop with that very error', async () => {
    const boom = Object.assign(new Error('hook failed'), { code: 'E_HOOK' });
    const h = hooks((e) => {
      if (e.type === 'tool-call') throw boom;
    });
    await assert.rejects(runAgentLoop(base(await replay('two-turns.yaml'), { onHook: h.onHook })), (err) => err === boom);
  });

  test('the loop prints nothing on stdout or stderr (printer off, SDK logger replaced)', async () => {
    const script = `
      import { installModuleHooks } from ${JSON.stringify(join(REPO, 'src/loader/module-hooks.ts'))};
      installModuleHooks(${JSON.stringify(pathToFileURL(join(REPO, 'src/index.ts')).href)});
      const { createModel } = await import(${JSON.stringify(join(REPO, 'skills/extensions/agent/strands/models.ts'))});
      const { runAgentLoop } = await import(${JSON.stringify(join(REPO, 'skills/extensions/agent/strands/loop.ts'))});
      const model = await createModel({ provider: 'replay', cassette: ${JSON.stringify(TWO)} });
      await runAgentLoop({ model, systemPrompt: 's', userMessage: 'u', onCode: async () => 1 });
      await createModel({ provider: 'openai', baseURL: 'http://127.0.0.1:9/v1' }); // no modelId: the SDK warns
    `;
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((res, rej) =>
      execFile(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO, timeout: 20_000 }, (err, stdout, stderr) =>
        err ? rej(Object.assign(err, { stderr })) : res({ stdout, stderr }),
      ),
    );
    assert.equal(stdout, '');
    assert.equal(stderr, '');
  });

  test('SDK log lines go to onLog, not the console', async () => {
    const lines: string[] = [];
    class BadJson extends Model<BaseModelConfig> {
      n = 0;
      updateConfig(): void {}
      getConfig(): BaseModelConfig {
        return {};
      }
      async *stream(): AsyncGenerator<ModelStreamEvent> {
        yield { type: 'modelMessageStartEvent', role: 'assistant' };
        yield { type: 'modelContentBlockStartEvent', start: { type: 'toolUseStart', name: 'invoke', toolUseId: 't1' } };
        yield { type: 'modelContentBlockDeltaEvent', delta: { type: 'toolUseInputDelta', input: '{"code": ' } };
        yield { type: 'modelContentBlockStopEvent' };
        yield { type: 'modelMessageStopEvent', stopReason: 'toolUse' };
      }
    }
    await assert.rejects(
      runAgentLoop(base(new BadJson(), { onLog: (level, text) => lines.push(`${level} ${text}`) })),
      (err: any) => err.code === 'E_MODEL' && /unable to parse tool input JSON/.test(err.message),
    );
    assert.ok(lines.some((l) => l.startsWith('error unable to parse tool input JSON')), lines.join('\n'));
  });
});

describe('cassettes and createModel', () => {
  test('cassette paths resolve against baseDir; absolute paths are used as they are', async () => {
    const rel = await createModel({ provider: 'replay', cassette: 'two-turns.yaml' }, { baseDir: CASSETTES });
    assert.equal(describeModel(rel)?.cassette, TWO);
    const abs = await createModel({ provider: 'replay', cassette: TWO }, { baseDir: '/nowhere' });
    assert.ok(abs instanceof ReplayModel);
    assert.equal((abs as ReplayModel).turnCount, 2);
  });

  test('a missing or malformed cassette is a configuration error naming the file', async () => {
    await assert.rejects(createModel({ provider: 'replay', cassette: 'nope.yaml' }, { baseDir: CASSETTES }), (err: any) => {
      assert.equal(err.code, 'E_CONFIG');
      assert.match(err.message, /nope\.yaml.*no such file — check model\.cassette/);
      return true;
    });
    assert.throws(() => parseCassette('turns: [\n  {text: ', 'x.yaml'), (err: any) => err.code === 'E_CONFIG' && /^x\.yaml:\d+/.test(err.message));
    assert.throws(() => parseCassette('turns: 3', 'x.yaml'), /needs a 'turns' list/);
    assert.throws(() => parseCassette('turns:\n  - code: x', 'x.yaml'), /turn 1 unknown key 'code'/);
    assert.throws(() => parseCassette('turns:\n  - text: 1', 'x.yaml'), /'text' must be a string/);
    await assert.rejects(createModel({ provider: 'replay' }), { code: 'E_CONFIG', message: /needs model\.cassette/ });
  });

  test("an unknown provider is E_CONFIG naming the four providers", async () => {
    await assert.rejects(createModel({ provider: 'gemini' }), {
      code: 'E_CONFIG',
      message: "unknown model.provider 'gemini' — use bedrock, openai, anthropic or replay",
    });
  });

  test('credentials come only from the environment', async () => {
    // A key in the config is the config's error; a key missing from the environment is the model's.
    await assert.rejects(createModel({ provider: 'openai', apiKey: 'sk-123' }), (err: any) => err.code === 'E_CONFIG' && /environment/.test(err.message));
    await assert.rejects(createModel({ provider: 'openai' }, { env: {} }), {
      code: 'E_MODEL',
      message: 'model.provider openai needs OPENAI_API_KEY in the environment, or model.baseURL for a local OpenAI-compatible server',
    });
    const local = await createModel({ provider: 'openai', baseURL: 'http://127.0.0.1:11434/v1', modelId: 'qwen3' }, { env: {} });
    assert.equal(describeModel(local)?.baseURL, 'http://127.0.0.1:11434/v1');
    await assert.rejects(createModel({ provider: 'anthropic' }, { env: {} }), { code: 'E_MODEL', message: 'model.provider anthropic needs ANTHROPIC_API_KEY in the environment' });
  });

  test('anthropic without @anthropic-ai/sdk installed fails with one line saying what to install', async (t) => {
    try {
      await import('@anthropic-ai/sdk' as string);
      t.skip('@anthropic-ai/sdk is installed here');
      return;
    } catch {}
    await assert.rejects(createModel({ provider: 'anthropic' }, { env: { ANTHROPIC_API_KEY: 'x' } }), {
      code: 'E_MODEL',
      message: 'model.provider anthropic needs the @anthropic-ai/sdk package — run: npm install @anthropic-ai/sdk',
    });
  });

  test('bedrock without AWS credentials fails with E_MODEL naming what to set', { timeout: 20_000 }, async () => {
    const keep = { ...process.env };
    for (const k of Object.keys(process.env)) if (k.startsWith('AWS_') && k !== 'AWS_CA_BUNDLE') delete process.env[k];
    Object.assign(process.env, {
      AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/credentials',
      AWS_CONFIG_FILE: '/nonexistent/config',
      AWS_EC2_METADATA_DISABLED: 'true',
    });
    try {
      const model = await createModel({ provider: 'bedrock', modelId: 'anthropic.claude-test', region: 'us-east-1' });
      await assert.rejects(runAgentLoop(base(model)), (err: any) => {
        assert.equal(err.code, 'E_MODEL');
        assert.match(err.message, /^Bedrock needs AWS credentials and a region: set AWS_REGION and AWS_PROFILE or AWS_ACCESS_KEY_ID/);
        assert.doesNotMatch(err.message, /\n/);
        return true;
      });
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in keep)) delete process.env[k];
      Object.assign(process.env, keep);
    }
  });

  test('stringifyCassette and parseCassette round-trip, multi-line code as a block literal', () => {
    const c = { turns: [{ text: 'a', invoke: 'line 1\nline 2\n' }, { text: 'done' }] };
    const yaml = stringifyCassette(c);
    assert.match(yaml, /invoke: \|/);
    assert.deepEqual(parseCassette(yaml), c);
  });
});

describe('recorder', () => {
  /** A recorded cassette without the requests: the model's side only. */
  const responses = (c: { turns: Record<string, unknown>[] }) => ({ turns: c.turns.map(({ request: _r, ...t }) => t) });

  test('recording a replay run yields a cassette equal to the input', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'strands-rec-'));
    try {
      for (const name of ['two-turns.yaml', 'three-turns.yaml']) {
        const model = await createModel({ provider: 'replay', cassette: name, record: join(dir, name) }, { baseDir: CASSETTES });
        assert.ok(model instanceof RecordingModel);
        await runAgentLoop(base(model));
        const recorded = parse(await readFile(join(dir, name), 'utf8'));
        const original = parse(await readFile(join(CASSETTES, name), 'utf8'));
        // Each recorded turn also keeps the request it answered (SPEC §18).
        assert.ok(recorded.turns.every((t: any) => /^[0-9a-f]{64}$/.test(t.request?.sha256)), name);
        assert.deepEqual(responses(recorded), original, name);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('the recorder writes after every turn, so a failed run leaves a partial cassette', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'strands-rec-'));
    try {
      const file = join(dir, 'sub', 'partial.yaml');
      const model = await createModel({ provider: 'replay', cassette: TWO, record: 'sub/partial.yaml' }, { baseDir: dir });
      const h = hooks((e) => (e.type === 'turn-end' ? { continue: true } : undefined));
      await assert.rejects(runAgentLoop(base(model, { onHook: h.onHook })), /has 2 turns/);
      assert.deepEqual(responses(parse(await readFile(file, 'utf8'))), parse(await readFile(TWO, 'utf8')));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('agent-strands skill', () => {
  function fakeCtx(handlers: Record<string, (args: any) => unknown>, signal = new AbortController().signal) {
    const logs: unknown[] = [];
    const ctx = {
      run: { signal },
      manager: {
        invoke: async (ref: string, args: unknown) => {
          const h = handlers[ref];
          if (!h) throw new Error(`no handler for ${ref}`);
          return h(args);
        },
        log: (e: unknown) => logs.push(e),
      },
    } as unknown as Context;
    return { ctx, logs };
  }

  test('frontmatter declares a hidden meta-internal skill with params for the provider args', () => {
    assert.equal(frontmatter.name, 'agent-strands');
    assert.equal(frontmatter.metadata.visibility, 'hidden');
    assert.deepEqual(frontmatter.metadata.tags, ['meta-internal']);
    assert.deepEqual(
      Object.keys(frontmatter.metadata.params.properties).sort(),
      ['agentSignal', 'config', 'hookRef', 'invokeRef', 'journal', 'prompt', 'skillName', 'userMessage'],
    );
  });

  test('runs code through invokeRef, events through hookRef, and returns the stop result', async () => {
    const codes: string[] = [];
    const types: string[] = [];
    const { ctx } = fakeCtx({
      'cb-invoke': ({ code }) => (codes.push(code), 3),
      'cb-hook': (e) => (types.push(e.type), e.type === 'turn-end' ? { stop: true, result: { count: 3 } } : undefined),
    });
    const out = await agentStrands(ctx, {
      prompt: 'sys',
      config: { provider: 'replay', cassette: 'two-turns.yaml', baseDir: CASSETTES },
      invokeRef: 'cb-invoke',
      hookRef: 'cb-hook',
      userMessage: 'go',
      skillName: 'counter',
    });
    assert.deepEqual(out, { count: 3 });
    assert.deepEqual(codes, [TWO_CODE]);
    assert.ok(types.includes('tool-call') && types.at(-1) === 'turn-end');
  });

  test('without hookRef it returns the final text; model.maxTurns applies', async () => {
    const { ctx } = fakeCtx({ 'cb-invoke': () => 'ok' });
    const config = { provider: 'replay', cassette: 'three-turns.yaml', baseDir: CASSETTES };
    assert.equal(await agentStrands(ctx, { prompt: 's', config, invokeRef: 'cb-invoke' }), 'All done.');
    await assert.rejects(agentStrands(ctx, { prompt: 's', config: { ...config, maxTurns: 1 }, invokeRef: 'cb-invoke' }), { code: 'E_AGENT_LIMIT' });
  });

  test('agentSignal (else ctx.run.signal) stops the loop', async () => {
    const ac = new AbortController();
    const { ctx } = fakeCtx({ 'cb-invoke': () => (ac.abort(), 'ok') }, ac.signal);
    const config = { provider: 'replay', cassette: 'three-turns.yaml', baseDir: CASSETTES };
    await assert.rejects(agentStrands(ctx, { prompt: 's', config, invokeRef: 'cb-invoke' }), { code: 'E_ABORTED' });
    const ac2 = new AbortController();
    const { ctx: ctx2 } = fakeCtx({ 'cb-invoke': () => (ac2.abort(), 'ok') });
    await assert.rejects(agentStrands(ctx2, { prompt: 's', config, invokeRef: 'cb-invoke', agentSignal: ac2.signal }), { code: 'E_ABORTED' });
  });

  test('replay loop overhead per model turn is small (measured, reported as a diagnostic)', async (t) => {
    const turns = Array.from({ length: 20 }, (_, i) => ({ text: `step ${i}`, invoke: `return ${i};` }));
    turns.push({ text: 'done' } as { text: string; invoke: string });
    const dir = await mkdtemp(join(tmpdir(), 'strands-bench-'));
    try {
      await writeFile(join(dir, 'c.yaml'), stringifyCassette({ turns }));
      const runOnce = async () => {
        const model = await createModel({ provider: 'replay', cassette: 'c.yaml' }, { baseDir: dir });
        const t0 = performance.now();
        await runAgentLoop(base(model, { onHook: async () => undefined, onCode: async () => 1 }));
        return (performance.now() - t0) / turns.length;
      };
      for (let i = 0; i < 3; i++) await runOnce();
      const samples: number[] = [];
      for (let i = 0; i < 10; i++) samples.push(await runOnce());
      samples.sort((a, b) => a - b);
      const median = samples[5]!;
      // Speed is measured, not asserted: the figure is a diagnostic only.
      t.diagnostic(`replay loop overhead: ${median.toFixed(3)} ms per model turn (median of 10 runs × ${turns.length} turns)`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
