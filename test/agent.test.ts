// The agent (seed 004, SPEC §11), end to end: Markdown agent skills through agent-execute, the
// `agent` policy skill, the real Strands loop with the `replay` model (cassettes), the real
// isolated-vm sandbox and the real pipeline. Nothing of the kernel is mocked. Sections follow the
// seed's headings; the security routes (untrustedRef, allowed-tools, escapes) are in
// agent-security.test.ts, discovery in agent-discovery.test.ts, the openai provider through the
// full path in agent-openai.test.ts, the CLI in agent-cli.test.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';
import { logs } from './helpers.ts';
import { agentRuntime, eventQueue, invokeWithTrace, types, wsSkill, type TraceEntry } from './agent-helpers.ts';

const COUNT_RETURNS = { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] };
const TEXT_PARAMS = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };

const toolResults = (trace: TraceEntry[]) => trace.filter((e) => e.type === 'tool-result');
const turns = (trace: TraceEntry[]) => trace.filter((e) => e.type === 'turn-start').length;

describe('Agent as a Tool', () => {
  test('agent-execute runs the agent for a Markdown skill and finishes with its result', async (t) => {
    const rt = await agentRuntime(t);
    const run = await invokeWithTrace(rt, 'count', { text: 'a b c' });
    assert.equal(run.error, undefined);
    assert.deepEqual(run.value, { count: 3 });
    // The served skill's own context holds the result and the agent's trace.
    assert.deepEqual(run.served!.locals.result, { count: 3 });
    assert.deepEqual(types(run.trace), ['turn-start', 'message', 'usage', 'tool-call', 'tool-result', 'turn-end']);
    // The cassette's second turn is never played: finish() ended the run (and its turn).
    assert.equal(turns(run.trace), 1);
  });

  test('agent-execute passes the expanded prompt (directives), config, allowedTools and returns; the provider gets serializable refs', async (t) => {
    const rt = await agentRuntime(t, {
      probe: {
        params: TEXT_PARAMS,
        returns: COUNT_RETURNS,
        'allowed-tools': 'wordcount',
        body: 'Count the words.\n\nThe text is: :arg{name=text}',
        model: { agent: 'scripted-agent', script: [{ code: "ctx.manager.finish({ count: await ctx.manager.invoke('wordcount', { text: ctx.args.text }) })" }] },
      },
    });
    const value = await rt.invoke('probe', { text: 'one two three four' });
    assert.deepEqual(value, { count: 4 });
    const [given] = logs(rt, { type: 'provider-args' }) as any[];
    // The system prompt starts with the skill's prompt, directives expanded …
    assert.match(given.prompt, /^Count the words\.\n\nThe text is: one two three four\n/);
    // … then how to act, the returns schema, and the tools (constrained mode: wordcount in full).
    assert.match(given.prompt, /## How you act/);
    assert.ok(given.prompt.includes(JSON.stringify(COUNT_RETURNS)));
    assert.match(given.prompt, /### wordcount\nCount the words in a text\.\nparams: \{"type":"object"/);
    // The user message: the args as YAML under a one-line instruction.
    assert.equal(given.userMessage, 'Carry out the task described in your instructions with these args:\n\ntext: one two three four');
    assert.equal(given.skillName, 'probe');
    // invokeRef and hookRef are plain names of ephemeral tools, released when the agent ends.
    assert.match(given.invokeRef, /^agent-invoke-[0-9a-f]{8}$/);
    assert.match(given.hookRef, /^agent-hook-[0-9a-f]{8}$/);
    await assert.rejects(rt.invoke(given.invokeRef, { code: 'return 1' }), { code: 'E_TOOL_NOT_FOUND' });
    await assert.rejects(rt.invoke(given.hookRef, { type: 'turn-end' }), { code: 'E_TOOL_NOT_FOUND' });
  });

  test("a params-declared `message` arg is the user message as it is; no args is a one-line instruction", async (t) => {
    const script = [{ text: 'ok' }];
    const rt = await agentRuntime(t, {
      chat: { params: { type: 'object', properties: { message: { type: 'string' } } }, model: { agent: 'scripted-agent', script } },
      noargs: { model: { agent: 'scripted-agent', script } },
    });
    assert.equal(await rt.invoke('chat', { message: 'Hello there' }), 'ok');
    assert.equal(await rt.invoke('noargs', {}), 'ok');
    const messages = logs(rt, { type: 'provider-args' }).map((e: any) => e.userMessage);
    assert.deepEqual(messages, ['Hello there', 'Carry out the task described in your instructions.']);
  });

  test('model.agent selects a custom provider skill that drives invokeRef and hookRef (the seed skeleton)', async (t) => {
    const rt = await agentRuntime(t, {
      custom: {
        params: TEXT_PARAMS,
        returns: COUNT_RETURNS,
        'allowed-tools': 'wordcount',
        model: {
          agent: 'scripted-agent',
          script: [
            { text: 'Counting.', code: "memory.n = await ctx.manager.invoke('wordcount', { text: ctx.args.text }); return memory.n;" },
            { code: 'ctx.manager.finish({ count: memory.n })' },
          ],
        },
      },
    });
    const run = await invokeWithTrace(rt, 'custom', { text: 'x y' });
    assert.deepEqual(run.value, { count: 2 });
    assert.deepEqual(types(run.trace), ['turn-start', 'message', 'tool-call', 'tool-result', 'turn-end', 'turn-start', 'tool-call', 'tool-result']);
    assert.equal(toolResults(run.trace)[0]!.result, 'result: 2');
    // The default provider was not involved.
    assert.equal(logs(rt, { type: 'strands' }).length, 0);
  });

  test('a provider named agent-strands earlier on the search path shadows the bundled one', async (t) => {
    const scripted = pathToFileURL(wsSkill('scripted-agent.skill.ts')).href;
    const rt = await agentRuntime(
      t,
      { shadowed: { model: { script: [{ text: 'from the shadow' }] } } },
      {
        files: {
          'agent-strands.skill.ts': `export { default } from ${JSON.stringify(scripted)};\nexport const frontmatter = { name: 'agent-strands', description: 'shadow provider', metadata: { visibility: 'hidden' } };\n`,
        },
      },
    );
    assert.equal(await rt.invoke('shadowed', {}), 'from the shadow');
    assert.equal(logs(rt, { type: 'provider-args' }).length, 1);
  });
  test("the agent skill's name arg is this invocation's display name in logs and events", async (t) => {
    const rt = await agentRuntime(t, { named: { turns: [{ text: 'ok' }] } });
    const cassette = (await import('node:path')).join((await invokeWithTrace(rt, 'named')).served!.locals.config.model!.baseDir as string, 'named.cassette.yaml');
    const q = await eventQueue(rt, 'named-events');
    assert.equal(await rt.invoke('agent', { prompt: 'p', name: 'Counter #1', events: 'named-events', config: { provider: 'replay', cassette } }), 'ok');
    const usage = logs(rt, { type: 'agent-usage' }).at(-1)!;
    assert.equal(usage.tool, 'Counter #1');
    assert.equal((await q.drain())[0]!.data.name, 'Counter #1');
  });

  // "Promptly" without a clock: the sandbox sleeps 20 s and this test's timeout is 15 s, so only a
  // cancel that stopped the sandbox, not one that waited the sleep out, can reject in time.
  test('cancelling the invocation stops the provider and the sandbox: E_ABORTED, promptly', { timeout: 15_000 }, async (t) => {
    const rt = await agentRuntime(t, { sleeper: { model: { events: 'sleep-events' }, turns: [{ invoke: 'await new Promise((resolve) => setTimeout(resolve, 20000));' }, { text: 'never' }] } });
    const q = await eventQueue(rt, 'sleep-events');
    const controller = new AbortController();
    const pending = rt.invoke('sleeper', {}, { context: { signal: controller.signal } });
    setTimeout(() => controller.abort('user cancelled'), 300);
    await assert.rejects(pending, { code: 'E_ABORTED' });
    const events = (await q.drain()).map((e) => e.type);
    assert.equal(events.at(-1), 'agent-error');
  });
});

describe('Code Execution Model', () => {
  test('a finish() value that does not match returns is a tool error and the agent gets a reminder at turn-end; a matching one ends the run', async (t) => {
    const rt = await agentRuntime(t, {
      retry: {
        returns: COUNT_RETURNS,
        turns: [
          { text: 'Done.', invoke: "await ctx.manager.finish({ count: 'three' });" },
          { text: 'I believe I am done.' },
          { invoke: 'ctx.manager.finish({ count: 3 });' },
          { text: 'never played' },
        ],
      },
    });
    const run = await invokeWithTrace(rt, 'retry');
    assert.deepEqual(run.value, { count: 3 });
    const [bad, good] = toolResults(run.trace);
    assert.match(bad!.error, /finish\(\) value does not match the returns schema: \/count must be integer/);
    assert.equal(good!.result, 'finished: {"count":3}');
    // Turn 2 ended without finishing: the hook answered { continue } and a third turn ran; the
    // matching finish() in turn 3 ended the run before the cassette's fourth turn. Every turn
    // has its turn-end, with the turn's text.
    assert.equal(turns(run.trace), 3);
    assert.deepEqual(run.trace.filter((e) => e.type === 'turn-end').map((e) => e.result), ['Done.', 'I believe I am done.', '']);
  });

  test('the reminder tells the model to call finish() with a value matching the schema', async (t) => {
    const rt = await agentRuntime(t, {
      remind: {
        returns: COUNT_RETURNS,
        model: { agent: 'scripted-agent', script: [{ text: 'Three words.' }, { code: 'ctx.manager.finish({ count: 3 })' }] },
      },
    });
    assert.deepEqual(await rt.invoke('remind', {}), { count: 3 });
    const sent = logs(rt, { type: 'provider-turn' }).map((e) => e.text);
    assert.equal(sent.length, 2);
    assert.equal(sent[1], `You have not finished. Call ctx.manager.finish(value) from the invoke tool with a value matching this JSON Schema: ${JSON.stringify(COUNT_RETURNS)}`);
  });

  test("without returns, the model's final text is the result", async (t) => {
    const rt = await agentRuntime(t, {
      answer: {
        params: TEXT_PARAMS,
        turns: [{ invoke: "return await ctx.manager.invoke('wordcount', { text: ctx.args.text });" }, { text: 'There are 3 words.' }],
      },
    });
    const run = await invokeWithTrace(rt, 'answer', { text: 'a b c' });
    assert.equal(run.value, 'There are 3 words.');
    assert.equal(toolResults(run.trace)[0]!.result, 'result: 3');
    assert.deepEqual(run.trace.at(-1)!.type, 'turn-end');
  });

  test('finish() without returns ends the run with that value, whatever it is', async (t) => {
    const rt = await agentRuntime(t, { free: { turns: [{ invoke: "ctx.manager.finish(['any', { json: true }])" }, { text: 'never' }] } });
    assert.deepEqual(await rt.invoke('free', {}), ['any', { json: true }]);
  });

  test('code composes: loops, Promise.all, try/catch; every call goes through the pipeline (args validated, unknown tools reported)', async (t) => {
    const rt = await agentRuntime(t, {
      compose: {
        'allowed-tools': 'wordcount echo',
        turns: [
          {
            invoke: `
const texts = ['a', 'a b', 'a b c'];
const counts = await Promise.all(texts.map((text) => ctx.manager.invoke('wordcount', { text })));
let total = 0;
for (const n of counts) total += n;
const errors = {};
try { await ctx.manager.invoke('wordcount', { text: 5 }); } catch (e) { errors.invalid = e.code; }
try { await ctx.manager.invoke('wordcount', {}); } catch (e) { errors.missing = e.code; }
try { await ctx.manager.invoke('echo', { text: 1 }); } catch (e) { errors.echo = e.code; }
try { await ctx.manager.invoke('no-such-tool', {}); } catch (e) { errors.unknown = e.code; }
ctx.manager.finish({ counts, total, errors });`,
          },
        ],
      },
    });
    assert.deepEqual(await rt.invoke('compose', {}), {
      counts: [1, 2, 3],
      total: 6,
      errors: { invalid: 'E_VALIDATION', missing: 'E_VALIDATION', echo: 'E_VALIDATION', unknown: 'E_TOOL_NOT_FOUND' },
    });
  });

  test('an error thrown by agent code (throw new Error) comes back to the model as the tool error, with its line; the model goes on', async (t) => {
    const rt = await agentRuntime(t, {
      thrower: { turns: [{ invoke: "const x = 1;\nthrow new Error('reason');" }, { text: 'The code failed: reason.' }] },
    });
    const run = await invokeWithTrace(rt, 'thrower');
    assert.equal(run.value, 'The code failed: reason.');
    assert.equal(toolResults(run.trace)[0]!.error, 'reason (line 2)');
  });

  test('memory persists across turns and holds any JS value (closures too); the memory arg seeds it', async (t) => {
    const rt = await agentRuntime(t, {
      mem: {
        turns: [
          { invoke: 'memory.count = (memory.count ?? 0) + 1;\nmemory.double = (x) => x * 2;\nmemory.seen = new Map([["a", 1]]);\nreturn memory.count;' },
          { invoke: 'memory.count = (memory.count ?? 0) + 1;\nreturn memory.count;' },
          { invoke: 'ctx.manager.finish({ count: memory.count, doubled: memory.double(21), map: memory.seen.get("a"), seed: memory.seed ?? null });' },
        ],
      },
    });
    const run = await invokeWithTrace(rt, 'mem');
    assert.deepEqual(run.value, { count: 2, doubled: 42, map: 1, seed: null });
    assert.deepEqual(toolResults(run.trace).map((e) => e.result), ['result: 1', 'result: 2', 'finished: {"count":2,"doubled":42,"map":1,"seed":null}']);

    // The agent skill's `memory` arg (Object.assign before the first turn); the agent invoked directly.
    const value = await rt.invoke('agent', {
      prompt: 'You are seeded.',
      config: { provider: 'replay', cassette: (await import('node:path')).join(run.served!.locals.config.model!.baseDir as string, 'mem.cassette.yaml') },
      memory: { seed: 'planted', count: 10 },
    });
    assert.deepEqual(value, { count: 12, doubled: 42, map: 1, seed: 'planted' });
  });

  test('console output is returned to the model with the result, and with an error', async (t) => {
    const rt = await agentRuntime(t, {
      talk: {
        turns: [
          { invoke: "console.log('counted', 3, { words: ['a'] });\nconsole.error('careful');\nreturn 'ok';" },
          { invoke: "console.log('before the failure');\nthrow new Error('bad');" },
          { text: 'Finished talking.' },
        ],
      },
    });
    const run = await invokeWithTrace(rt, 'talk');
    assert.equal(run.value, 'Finished talking.');
    const [ok, failed] = toolResults(run.trace);
    assert.equal(ok!.result, "result: \"ok\"\nconsole:\ncounted 3 { words: [ 'a' ] }\ncareful");
    assert.equal(failed!.error, 'bad (line 2)\nconsole:\nbefore the failure');
  });
});

describe('Middleware mode', () => {
  test('a Markdown middleware (role: middleware) runs its agent as a chain entry; its code calls target.manager.next()', async (t) => {
    const rt = await agentRuntime(t);
    const description = await rt.describe('audited-echo');
    assert.ok(description.chain.some((e) => e.name === 'audit'));
    const run = await invokeWithTrace(rt, 'audited-echo', { text: 'hi' });
    assert.equal(run.value, 'audited: echo hi');
  });

  test('outside middleware mode, target.manager.next() is an error the model sees', async (t) => {
    const rt = await agentRuntime(t, {
      plain: { turns: [{ invoke: 'return await target.manager.next();' }, { text: 'No pipeline to advance.' }] },
    });
    const run = await invokeWithTrace(rt, 'plain');
    assert.equal(run.value, 'No pipeline to advance.');
    assert.match(toolResults(run.trace)[0]!.error, /^TypeError: target\.manager\.next is not a function \(line 1\)$/);
  });
});

describe('Sandbox', () => {
  test('a runaway while(true) {} is killed after model.sandbox.timeoutMs, reported to the model as E_SANDBOX, and the agent goes on', async (t) => {
    const rt = await agentRuntime(t, {
      runaway: {
        model: { sandbox: { timeoutMs: 200 } },
        turns: [
          { invoke: 'memory.kept = 1; return "saved";' },
          { invoke: 'memory.lost = 2;\nwhile (true) {}' },
          { invoke: 'ctx.manager.finish({ kept: memory.kept ?? null, lost: memory.lost ?? null });' },
        ],
      },
    });
    // No clock: the loop never ends by itself, so the run finishing at all, with the timeout error
    // below, is the kill (a missed kill would hang into the test's timeout).
    const run = await invokeWithTrace(rt, 'runaway');
    // The isolate was rebuilt from the last memory snapshot: what the killed code set is gone.
    assert.deepEqual(run.value, { kept: 1, lost: null });
    assert.equal(toolResults(run.trace)[1]!.error, 'execution timed out after 200 ms (model.sandbox.timeoutMs)');
  });

  test('E_SANDBOX reaches the caller only when the run ends on it', async (t) => {
    const rt = await agentRuntime(t, {
      'ends-on-it': { model: { maxTurns: 1, sandbox: { timeoutMs: 100 } }, turns: [{ invoke: 'while (true) {}' }] },
    });
    const run = await invokeWithTrace(rt, 'ends-on-it');
    assert.equal(run.error.code, 'E_SANDBOX');
    assert.match(run.error.message, /^execution timed out after 100 ms \(model\.sandbox\.timeoutMs\) — and then: the agent used its 1 model turn/);
  });

  test('bad sandbox limits fail before the model is asked anything', async (t) => {
    // In frontmatter, the model middleware's params catch a wrong type, naming the file and key …
    const rt = await agentRuntime(t, { 'bad-timeout': { model: { sandbox: { timeoutMs: 'soon' } }, turns: [{ text: 'never' }] } });
    const run = await invokeWithTrace(rt, 'bad-timeout');
    assert.equal(run.error.code, 'E_CONFIG');
    assert.match(run.error.message, /\/bad-timeout\.md \(model\.sandbox\.timeoutMs\): must be number$/);
    // … from overrides (like --set) too, naming the flag; and the agent checks the limits themselves, wherever they come from.
    for (const [sandbox, message] of [
      [{ timeoutMs: 'soon' }, /^--set model\.sandbox\.timeoutMs: must be number$/],
      [{ memoryMb: 1 }, /^model\.sandbox\.memoryMb must be a number ≥ 8 \(got 1\)$/],
    ] as const) {
      const rt2 = await agentRuntime(t, { limited: { turns: [{ text: 'never' }] } }, { overrides: { model: { sandbox } } });
      const run2 = await invokeWithTrace(rt2, 'limited');
      assert.equal(run2.error.code, 'E_CONFIG');
      assert.match(run2.error.message, message);
      assert.deepEqual(run2.trace, []);
    }
  });

  test('agent code has no Node.js APIs', async (t) => {
    const rt = await agentRuntime(t, {
      bare: { turns: [{ invoke: 'ctx.manager.finish([typeof process, typeof require, typeof fetch, typeof Buffer, typeof setTimeout]);' }] },
    });
    assert.deepEqual(await rt.invoke('bare', {}), ['undefined', 'undefined', 'undefined', 'undefined', 'function']);
  });
});

describe('Limits', () => {
  test('maxTurns: the model turns run out → E_AGENT_LIMIT', async (t) => {
    const rt = await agentRuntime(t, {
      'turns-out': { model: { maxTurns: 2 }, returns: COUNT_RETURNS, turns: [{ invoke: 'return 1' }, { invoke: 'return 2' }, { invoke: 'return 3' }] },
    });
    const run = await invokeWithTrace(rt, 'turns-out');
    assert.equal(run.error.code, 'E_AGENT_LIMIT');
    assert.equal(run.error.message, 'the agent used its 2 model turns (model.maxTurns) without finishing');
    assert.equal(turns(run.trace), 2);
  });

  test('maxSteps: once exhausted the invoke callback returns an error, and the next turn-end throws E_AGENT_LIMIT', async (t) => {
    const rt = await agentRuntime(t, {
      'steps-out': { model: { maxSteps: 2 }, turns: [{ invoke: 'return 1' }, { invoke: 'return 2' }, { invoke: 'return 3' }, { text: 'I give up.' }] },
    });
    const run = await invokeWithTrace(rt, 'steps-out');
    assert.equal(run.error.code, 'E_AGENT_LIMIT');
    assert.equal(run.error.message, "maxSteps (2) exhausted before 'steps-out' finished");
    const results = toolResults(run.trace);
    assert.deepEqual(results.map((e) => e.result ?? e.error), ['result: 1', 'result: 2', 'maxSteps (2) exhausted: no more invoke calls']);
    assert.equal(run.trace.at(-1)!.type, 'turn-end');
  });

  test('the defaults: 30 invoke calls (the system prompt says so) and 30 model turns', async (t) => {
    const rt = await agentRuntime(t, {
      defaults: { model: { agent: 'scripted-agent', script: [{ text: 'ok' }] } },
      endless: { turns: Array.from({ length: 31 }, () => ({ invoke: 'return 1' })) },
    });
    await rt.invoke('defaults', {});
    const [given] = logs(rt, { type: 'provider-args' }) as any[];
    assert.match(given.prompt, /You have at most 30 invoke calls\./);
    assert.equal(given.maxTurns, 30);
    const run = await invokeWithTrace(rt, 'endless');
    assert.equal(run.error.message, 'the agent used its 30 model turns (model.maxTurns) without finishing');
    assert.equal(turns(run.trace), 30);
  });

  test('invalid limits are E_CONFIG', async (t) => {
    const rt = await agentRuntime(t, {
      'neg-turns': { model: { maxTurns: -1 } },
      'zero-steps': { model: { maxSteps: 0 } },
    });
    await assert.rejects(rt.invoke('neg-turns', {}), { code: 'E_CONFIG', message: 'model.maxTurns must be a positive number, got -1' });
    await assert.rejects(rt.invoke('zero-steps', {}), { code: 'E_CONFIG', message: 'model.maxSteps must be a positive number, got 0' });
  });

  test('persistent mode with returns is E_CONFIG', async (t) => {
    const rt = await agentRuntime(t, { both: { returns: COUNT_RETURNS, model: { persistent: true } } });
    await assert.rejects(rt.invoke('both', {}), { code: 'E_CONFIG', message: "'both': model.persistent cannot be combined with returns (a persistent agent never finishes)" });
  });

  test('persistent mode: turn-end always continues, maxTurns does not apply, and finish() still ends it', async (t) => {
    const rt = await agentRuntime(t, {
      forever: {
        model: { persistent: true, maxTurns: 1 },
        turns: [{ text: 'Waiting.' }, { text: 'Still waiting.' }, { invoke: "memory.n = 1; return 'tick';" }, { invoke: "ctx.manager.finish('stopped after 4 turns');" }],
      },
    });
    const run = await invokeWithTrace(rt, 'forever');
    assert.equal(run.value, 'stopped after 4 turns');
    assert.equal(turns(run.trace), 4);
    assert.deepEqual(run.trace.filter((e) => e.type === 'turn-end').map((e) => e.result), ['Waiting.', 'Still waiting.', '', '']);
  });

  test('persistent mode retries a model error after a backoff; without it the error ends the run', async (t) => {
    const script = [{ error: 'flaky model' }, { code: "ctx.manager.finish('recovered')" }];
    const rt = await agentRuntime(t, {
      retrying: { model: { agent: 'scripted-agent', persistent: true, script } },
      failing: { model: { agent: 'scripted-agent', script } },
    });
    // The backoff by event order, not a clock: a 1 s timer started before the run has fired by the
    // time it ends, which only a retry that waited out a 1 s backoff (started later) can guarantee.
    let aSecondPassed = false;
    const second = setTimeout(() => (aSecondPassed = true), 1000);
    t.after(() => clearTimeout(second));
    const run = await invokeWithTrace(rt, 'retrying');
    assert.equal(run.value, 'recovered');
    assert.equal(aSecondPassed, true, 'first backoff is 1 s: the retry came after a 1 s timer started before the run');
    assert.deepEqual(run.trace.filter((e) => e.type === 'error').map((e) => [e.error, e.attempt]), [['flaky model', 1]]);
    await assert.rejects(rt.invoke('failing', {}), /flaky model/);
  });

  test('contextEdit is accepted and passed to the provider; agent-strands does not edit context (documented gap)', async (t) => {
    const rt = await agentRuntime(t, { edit: { model: { contextEdit: true }, turns: [{ text: 'fine' }] } });
    assert.equal(await rt.invoke('edit', {}), 'fine');
  });
});

describe('Persistent Agent Scope', () => {
  test('nonlocals.agent holds the events topic, the served context id and, for a nested agent, the parent agent context id', async (t) => {
    const rt = await agentRuntime(t, {
      outer: {
        'allowed-tools': 'inner',
        model: { events: 'scope-events' },
        turns: [
          {
            invoke:
              "const inner = await ctx.manager.invoke('inner', {});\nctx.manager.finish({ scope: await ctx.manager.get('nonlocals.agent'), id: await ctx.manager.get('envelope.id'), inner });",
          },
        ],
      },
      inner: { turns: [{ invoke: "ctx.manager.finish({ scope: await ctx.manager.get('nonlocals.agent'), id: await ctx.manager.get('envelope.id') });" }] },
    });
    const q = await eventQueue(rt, 'scope-events');
    const run = await invokeWithTrace(rt, 'outer');
    const { scope, id, inner } = run.value as any;
    assert.equal(id, run.served!.envelope.id);
    assert.deepEqual(scope, { events: 'scope-events', contextId: id });
    assert.deepEqual(inner.scope, { events: 'scope-events', contextId: inner.id, ancestorContextId: id });
    // The nested agent inherited the topic: both agents' events arrive on it.
    const sources = new Set((await q.drain()).map((e) => e.source));
    assert.deepEqual([...sources].sort(), ['inner', 'outer']);
  });
});

describe('Self-Recursion Prevention', () => {
  test('naming the skill itself in allowed-tools enables recursion', async (t) => {
    const rt = await agentRuntime(t, {
      recur: {
        'allowed-tools': 'recur',
        params: { type: 'object', properties: { depth: { type: 'integer' } }, required: ['depth'] },
        turns: [
          {
            invoke:
              "if (ctx.args.depth === 0) ctx.manager.finish(0);\nelse ctx.manager.finish(1 + await ctx.manager.invoke('recur', { depth: ctx.args.depth - 1 }));",
          },
        ],
      },
    });
    assert.equal(await rt.invoke('recur', { depth: 3 }), 3);
  });
});

describe('Agent Trace', () => {
  test('target.locals.agent.trace: timestamped entries of every hook event (turn-start, message, usage, tool-call, tool-result, turn-end)', async (t) => {
    const rt = await agentRuntime(t, {
      traced: { turns: [{ text: 'Working.', invoke: 'return 1 + 1;' }, { text: 'Two.' }] },
    });
    const run = await invokeWithTrace(rt, 'traced');
    assert.deepEqual(types(run.trace), ['turn-start', 'message', 'usage', 'tool-call', 'tool-result', 'turn-end', 'turn-start', 'message', 'usage', 'turn-end']);
    for (const e of run.trace) assert.equal(typeof e.timestamp, 'number');
    assert.deepEqual(
      run.trace.map((e) => e.timestamp),
      run.trace.map((e) => e.timestamp).sort((a, b) => a - b),
    );
    const [start, message, , call, result, toolTurnEnd] = run.trace;
    const end = run.trace.at(-1);
    assert.equal(start!.turnNumber, 1);
    assert.equal(message!.text, 'Working.');
    assert.deepEqual([call!.tool, call!.args], ['invoke', { code: 'return 1 + 1;' }]);
    assert.equal(result!.result, 'result: 2');
    assert.deepEqual([toolTurnEnd!.type, toolTurnEnd!.result, toolTurnEnd!.turnNumber], ['turn-end', 'Working.', 1]);
    assert.deepEqual([end!.result, end!.turnNumber], ['Two.', 2]);
    // Token usage is summed on locals.agent.usage (replay estimates it).
    assert.ok(run.usage.totalTokens > 0);
  });

  test('with model.deltas the trace has streamed message chunks (delta: true)', async (t) => {
    const rt = await agentRuntime(t, { streamed: { model: { deltas: true }, turns: [{ text: 'one two three' }] } });
    const run = await invokeWithTrace(rt, 'streamed');
    const deltas = run.trace.filter((e) => e.type === 'message' && e.delta === true).map((e) => e.text);
    assert.equal(deltas.join(''), 'one two three');
    assert.ok(deltas.length > 1);
  });

  test('a failed run keeps its trace, with the model error and its attempt count', async (t) => {
    const rt = await agentRuntime(t, { short: { turns: [{ invoke: 'return 1' }] } });
    const run = await invokeWithTrace(rt, 'short');
    assert.equal(run.error.code, 'E_MODEL');
    assert.match(run.error.message, /^replay cassette .*short\.cassette\.yaml has 1 turn; the agent asked for turn 2$/);
    const error = run.trace.find((e) => e.type === 'error')!;
    assert.equal(error.attempt, 1);
    assert.match(error.error, /has 1 turn/);
  });
});

describe('Events', () => {
  test('model.events: agent-start, turn-start, agent-message, tool-call, tool-result, tool-error, turn-end and agent-complete on the topic', async (t) => {
    const rt = await agentRuntime(t, {
      evented: {
        model: { events: 'progress' },
        turns: [{ text: 'Trying.', invoke: "throw new Error('nope')" }, { invoke: 'return 2' }, { text: 'Done.' }],
      },
    });
    const q = await eventQueue(rt, 'progress');
    assert.equal(await rt.invoke('evented', {}), 'Done.');
    const events = await q.drain();
    assert.deepEqual(events.map((e) => e.type), [
      'agent-start',
      'turn-start',
      'agent-message',
      'tool-call',
      'tool-error',
      'turn-end',
      'turn-start',
      'tool-call',
      'tool-result',
      'turn-end',
      'turn-start',
      'agent-message',
      'turn-end',
      'agent-complete',
    ]);
    for (const e of events) assert.equal(e.source, 'evented');
    assert.deepEqual(events[0]!.data, { skill: 'evented', provider: 'agent-strands', mode: 'discovery', tools: ['skill-list', 'skill-describe'] });
    assert.equal(events[4]!.data.error, 'nope (line 1)');
    const done = events.at(-1)!.data;
    assert.equal(done.result, 'Done.');
    assert.equal(done.steps, 2);
    assert.equal(typeof done.durationMs, 'number');
    assert.ok(done.usage.totalTokens > 0);
  });

  test('agent-error ends a failed run on the topic (after the model error was reported)', async (t) => {
    const rt = await agentRuntime(t, { failing: { model: { events: 'fail-events' }, turns: [] } });
    const q = await eventQueue(rt, 'fail-events');
    await assert.rejects(rt.invoke('failing', {}), { code: 'E_MODEL' });
    const events = await q.drain();
    assert.deepEqual(events.map((e) => e.type), ['agent-start', 'turn-start', 'agent-error', 'agent-error']);
    assert.equal(events.at(-1)!.data.error.code, 'E_MODEL');
  });

  test("the topic comes from the agent's events arg, else nonlocals.agent.events, else model.events", async (t) => {
    const rt = await agentRuntime(t, { topical: { model: { events: 'from-model' }, turns: [{ text: 'ok' }] } });
    const fromModel = await eventQueue(rt, 'from-model');
    const fromArg = await eventQueue(rt, 'from-arg');
    const fromScope = await eventQueue(rt, 'from-scope');
    const cassette = (await import('node:path')).join((await invokeWithTrace(rt, 'topical')).served!.locals.config.model!.baseDir as string, 'topical.cassette.yaml');
    assert.ok((await fromModel.drain()).length > 0);
    await rt.invoke('agent', { prompt: 'p', config: { provider: 'replay', cassette, events: 'from-model' }, events: 'from-arg' });
    assert.ok((await fromArg.drain()).length > 0);
    assert.equal((await fromModel.drain()).length, 0);
    await rt.invoke('agent', { prompt: 'p', config: { provider: 'replay', cassette, events: 'from-model' } }, { context: { nonlocals: { agent: { events: 'from-scope' } } } });
    assert.ok((await fromScope.drain()).length > 0);
    assert.equal((await fromModel.drain()).length, 0);
  });

  test('without a topic no events are emitted', async (t) => {
    const rt = await agentRuntime(t);
    const q = await eventQueue(rt, 'progress');
    await rt.invoke('count', { text: 'a' });
    assert.deepEqual(await q.drain(), []);
  });
});
