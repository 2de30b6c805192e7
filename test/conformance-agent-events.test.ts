// Conformance of events, logging and the agent with SPEC §8–§11 and seeds 003 / 004, probed the
// way an outside suite would: public skills and the programmatic API, Markdown agent skills with
// replay cassettes in temp workspaces, the real Strands loop and the real isolated-vm sandbox.
// Each test states the rule it checks; nothing of the runtime is mocked.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO, logs, tempDir, workspace } from './helpers.ts';
import { agentRuntime, eventQueue, invokeWithTrace, types } from './agent-helpers.ts';

describe('SPEC §11 / seed 004: the trace and the agent events', () => {
  test('every model turn ends with a turn-end, also a turn that finished inside its tool call', async (t) => {
    // The cassette of SPEC §11: finish() in turn 1, so turn 2 is never played.
    const rt = await agentRuntime(t, {
      counter: {
        'allowed-tools': 'wordcount',
        model: { events: 'progress' },
        turns: [
          { text: 'Let me count.', invoke: "const n = await ctx.manager.invoke('wordcount', { text: 'a b c' });\nctx.manager.finish({ count: n });" },
          { text: 'Done.' },
        ],
      },
      stepper: {
        turns: [{ text: 'One.', invoke: 'return 1' }, { text: 'Two.', invoke: 'return 2' }, { text: 'All done.' }],
      },
    });
    const progress = await eventQueue(rt, 'progress');
    const run = await invokeWithTrace(rt, 'counter');
    assert.deepEqual(run.value, { count: 3 });
    const kinds = types(run.trace).filter((k) => k !== 'usage');
    assert.deepEqual(kinds, ['turn-start', 'message', 'tool-call', 'tool-result', 'turn-end']);
    assert.deepEqual(run.trace.at(-1)!.result, 'Let me count.');
    assert.equal(run.trace.at(-1)!.turnNumber, 1);
    const events = (await progress.drain()).map((e) => e.type);
    for (const kind of ['agent-start', 'turn-start', 'agent-message', 'tool-call', 'tool-result', 'turn-end', 'agent-complete']) {
      assert.ok(events.includes(kind), `${kind} is emitted (got ${events.join(', ')})`);
    }
    assert.ok(events.indexOf('turn-end') < events.indexOf('agent-complete'));

    // Turns that only used tools are turns too: one turn-end per turn-start, in order.
    const steps = await invokeWithTrace(rt, 'stepper');
    assert.equal(steps.value, 'All done.');
    const bounds = steps.trace.filter((e) => e.type === 'turn-start' || e.type === 'turn-end').map((e) => `${e.type}:${e.turnNumber}`);
    assert.deepEqual(bounds, ['turn-start:1', 'turn-end:1', 'turn-start:2', 'turn-end:2', 'turn-start:3', 'turn-end:3']);
    assert.deepEqual(steps.trace.filter((e) => e.type === 'turn-end').map((e) => e.result), ['One.', 'Two.', 'All done.']);
  });
});

describe('SPEC §11: errors the run ends on, and cassettes that run out', () => {
  test('E_SANDBOX reaches the caller when the run ends on it: the cassette has no turn after the runaway execution', async (t) => {
    const rt = await agentRuntime(t, {
      spin: { model: { sandbox: { timeoutMs: 200 } }, turns: [{ text: 'Looping.', invoke: 'while (true) {}' }] },
      'spin-then-answer': { model: { sandbox: { timeoutMs: 200 } }, turns: [{ invoke: 'while (true) {}' }, { text: 'I gave up.' }] },
    });
    await assert.rejects(rt.invoke('spin', {}), (err: any) => {
      assert.equal(err.code, 'E_SANDBOX');
      assert.match(err.message, /timed out after 200 ms/);
      // Still says how many turns the cassette had.
      assert.match(err.message, /has 1 turn/);
      return true;
    });
    // Reported to the model as the tool's error: a run that goes on does not fail, the host keeps running.
    const run = await invokeWithTrace(rt, 'spin-then-answer');
    assert.equal(run.value, 'I gave up.');
    const failed = run.trace.find((e) => e.type === 'tool-result')!;
    assert.match(failed.error, /timed out after 200 ms/);
    assert.equal(failed.code, 'E_SANDBOX', 'the trace keeps the error code');
  });

  test('a call outside allowed-tools or by path that the run ends on reaches the caller with its code', async (t) => {
    const rt = await agentRuntime(t, {
      grabby: { 'allowed-tools': 'wordcount', turns: [{ invoke: "await ctx.manager.invoke('echo', { text: 'x' })" }] },
      escaping: { turns: [{ invoke: "await ctx.manager.invoke('inline://code,export%20default%20()%20%3D%3E%201', {})" }] },
      // A plain thrown error, when the cassette ends right after it, is what the run ended on:
      // its code (E_SKILL), with the cassette's end as why the run stopped.
      thrower: { turns: [{ invoke: "throw new Error('cannot comply')" }] },
      // An error the code recovered from is not what the run ended on.
      recovered: { 'allowed-tools': 'wordcount', turns: [{ invoke: "await ctx.manager.invoke('echo', {})" }, { invoke: 'return 1' }] },
    });
    await assert.rejects(rt.invoke('grabby', {}), { code: 'E_ALLOWED_TOOLS', message: /may not invoke 'echo'.*has 1 turn/s });
    await assert.rejects(rt.invoke('escaping', {}), { code: 'E_UNTRUSTED_REF', message: /has 1 turn/ });
    await assert.rejects(rt.invoke('thrower', {}), { code: 'E_SKILL', message: /^cannot comply \(line 1\) — and then: replay cassette .* has 1 turn; the agent asked for turn 2$/ });
    await assert.rejects(rt.invoke('recovered', {}), { code: 'E_MODEL', message: /has 2 turns; the agent asked for turn 3/ });
  });

  test('a finish() value that breaks returns, when the run ends on it, is the ValidationError (phase returns)', async (t) => {
    const returns = { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] };
    const rt = await agentRuntime(t, {
      wrong: { returns, turns: [{ invoke: "ctx.manager.finish({ count: 'three' })" }] },
      // The reminder gets a second chance: a matching finish() ends the run.
      fixed: { returns, turns: [{ invoke: "ctx.manager.finish({ count: 'three' })" }, { invoke: 'ctx.manager.finish({ count: 3 })' }] },
    });
    await assert.rejects(rt.invoke('wrong', {}), (err: any) => {
      assert.equal(err.code, 'E_VALIDATION');
      assert.equal(err.phase, 'returns');
      assert.ok(Array.isArray(err.errors) && err.errors.length > 0);
      assert.match(err.message, /count must be integer.*has 1 turn/s);
      return true;
    });
    // finish() without await (the seed's idiom): the refused value is still that call's error.
    const fixed = await invokeWithTrace(rt, 'fixed');
    assert.deepEqual(fixed.value, { count: 3 });
    const [refused, accepted] = fixed.trace.filter((e) => e.type === 'tool-result');
    assert.match(refused!.error, /finish\(\) value does not match the returns schema: \/count must be integer/);
    assert.equal(refused!.code, 'E_VALIDATION');
    assert.equal(accepted!.result, 'finished: {"count":3}');
  });

  test('a persistent agent whose cassette runs out ends with the cassette error instead of retrying forever', async (t) => {
    const rt = await agentRuntime(t, { waiting: { model: { persistent: true }, turns: [{ text: 'Waiting.' }, { text: 'Still waiting.' }] } });
    const run = await invokeWithTrace(rt, 'waiting');
    assert.equal(run.error?.code, 'E_MODEL');
    assert.match(run.error.message, /has 2 turns; the agent asked for turn 3/);
    // No backoff and no second attempt (counted on the trace, not by the clock): it ran out once.
    assert.equal(run.trace.filter((e) => e.type === 'error').length, 1);
    assert.equal(run.trace.filter((e) => e.type === 'retry').length, 0);
  });
});

describe('seed 004: the agent skill invoked directly', () => {
  test('memory seeds the sandbox, events names the topic, and a relative cassette is found from the runtime cwd', async (t) => {
    const dir = tempDir(t);
    fs.writeFileSync(path.join(dir, 'direct.yaml'), 'turns:\n  - invoke: |\n      ctx.manager.finish({ n: memory.n + 1 })\n');
    const { createRuntime } = await import('../src/index.ts');
    const rt = await createRuntime({ cwd: dir });
    t.after(() => rt.close());
    await rt.invoke('event-subscribe', { topic: 'direct' });
    const value = await rt.invoke('agent', { prompt: 'Add one.', config: { provider: 'replay', cassette: 'direct.yaml' }, memory: { n: 41 }, events: 'direct' });
    assert.deepEqual(value, { n: 42 });
    const kinds = ((await rt.invoke('event-wait', { topic: 'direct', timeout: 0 })) as { type: string }[]).map((e) => e.type);
    assert.equal(kinds[0], 'agent-start');
    assert.equal(kinds.at(-1), 'agent-complete');
  });
});

describe('SPEC §10: logging', () => {
  test('secrets are redacted before any reporter sees them: numbers and lists too, counts of tokens stay', async (t) => {
    const seen: any[] = [];
    const { createRuntime } = await import('../src/index.ts');
    const rt = await createRuntime({ cwd: tempDir(t), reporters: [{ name: 'mem', report: (e) => void seen.push(e) }] });
    t.after(() => rt.close());
    rt.root.manager.log({ type: 'cfg', level: 'warn', config: { token: 123456, password: 4242, apiKeys: ['sk-a', 'sk-b'], secrets: { db: 'x' }, hasKey: true, maxTokens: 4096, usage: { totalTokens: 10 } } });
    const expected = { token: '[REDACTED]', password: '[REDACTED]', apiKeys: '[REDACTED]', secrets: '[REDACTED]', hasKey: true, maxTokens: 4096, usage: { totalTokens: 10 } };
    assert.deepEqual(seen.find((e) => e.type === 'cfg')?.config, expected);
    assert.deepEqual((logs(rt, { type: 'cfg' })[0] as any).config, expected);
    const e = seen.find((x) => x.type === 'cfg');
    for (const field of ['rootContextId', 'contextId', 'tool', 'timestamp']) assert.ok(e[field] !== undefined, `every event carries ${field}`);
  });
});

describe('SPEC §8 / seed 003: event skills and the event middleware', () => {
  test('a routed skill is invoked with the route args and the event envelope under `event` — nothing of the event at the top level', async (t) => {
    const { createRuntime } = await import('../src/index.ts');
    const dir = tempDir(t);
    fs.mkdirSync(path.join(dir, 'skills'));
    fs.writeFileSync(
      path.join(dir, 'skills', 'router.skill.ts'),
      "export const frontmatter = { name: 'router', description: 'routes', metadata: { event: { routes: [{ topic: 'deploy', ref: 'on-deploy', args: { channel: 'ops' } }] } } };\nexport default () => 'routed';\n",
    );
    fs.writeFileSync(
      path.join(dir, 'skills', 'on-deploy.skill.ts'),
      "export const frontmatter = { name: 'on-deploy', description: 'records', metadata: { params: { type: 'object', properties: { channel: { type: 'string' }, event: { type: 'object' } }, required: ['event'], additionalProperties: false } } };\n" +
        "export default (ctx, args) => ctx.manager.invoke('event-emit', { topic: 'seen', type: 'seen', data: args });\n",
    );
    const rt = await createRuntime({ cwd: dir });
    t.after(() => rt.close());
    await rt.invoke('event-subscribe', { topic: 'seen' });
    assert.equal(await rt.invoke('router', {}), 'routed');
    const sent = (await rt.invoke('event-emit', { topic: 'deploy', type: 'started', data: { version: 7 } })) as Record<string, unknown>;
    const [seen] = (await rt.invoke('event-wait', { topic: 'seen', timeout: 2000 })) as { data: Record<string, any> }[];
    const args = seen!.data;
    assert.deepEqual(Object.keys(args).sort(), ['channel', 'event'], 'the route args and the envelope, no event field at the top level');
    assert.deepEqual(args.event, sent);
    assert.equal(args.channel, 'ops');
  });

  test('event-ack with an empty ids list settles nothing and does not fail', async (t) => {
    const rt = await agentRuntime(t);
    assert.deepEqual(await rt.invoke('event-ack', { topic: 'jobs', ids: [] }), { acked: [], nacked: [], unknown: [] });
  });
});

describe('SPEC §8: shutdown of a CLI run that blocks in event-wait', () => {
  test('SIGINT while a skill waits for an event (no timeout): shutdown handlers run, the wait ends, exit 130', async (t) => {
    const dir = workspace(t, {
      'skills/waiter.skill.ts':
        "export const frontmatter = { name: 'waiter', description: 'waits for a job', metadata: {} };\n" +
        "export default async (ctx) => { ctx.manager.log({ level: 'warn', type: 'waiting', text: 'waiting' }); return ctx.manager.invoke('event-wait', { topic: 'jobs' }); };\n",
    });
    const child = spawn(process.execPath, [path.join(REPO, 'bin', 'agent-apps.js'), 'run', 'waiter'], { cwd: dir, stdio: 'pipe', env: { ...process.env, NO_COLOR: '1' } });
    t.after(() => child.kill('SIGKILL'));
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // Signal once the skill is blocked in its wait.
    for (let i = 0; i < 100 && !stderr.includes('waiting') && child.exitCode === null; i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(stderr.includes('waiting'), `the skill started (stderr: ${stderr})`);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(child.exitCode, null, `still waiting, not ended by an empty event loop (stderr: ${stderr})`);
    child.kill('SIGINT');
    assert.equal(await exited, 130, stderr);
    assert.doesNotMatch(stderr, /unsettled top-level await/);
  });
});

describe('SPEC §11 / seed 004: the result and the turn-end directives', () => {
  test("without finish(), the model's final text is the result when it matches returns", async (t) => {
    const rt = await agentRuntime(t, {
      hello: { returns: { type: 'string' }, turns: [{ text: 'Hello there.' }] },
      // A text that does not match gets the reminder; finish() then ends the run.
      counted: {
        returns: { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] },
        turns: [{ text: 'Three.' }, { invoke: 'ctx.manager.finish({ count: 3 })' }],
      },
    });
    assert.equal(await rt.invoke('hello', {}), 'Hello there.');
    assert.deepEqual(await rt.invoke('counted', {}), { count: 3 });
  });

  test("a provider written to the seed's skeleton: the turn-end of a turn that called tools answers continue", async (t) => {
    // scripted-agent ends the run on an undefined turn-end directive, as the seed's skeleton does.
    const rt = await agentRuntime(t, {
      skeleton: { model: { agent: 'scripted-agent', script: [{ text: 'Counting.', code: "return await ctx.manager.invoke('wordcount', { text: 'a b' })" }, { text: 'Two words.' }] } },
    });
    const run = await invokeWithTrace(rt, 'skeleton');
    assert.equal(run.value, 'Two words.');
    assert.deepEqual(run.trace.filter((e) => e.type === 'turn-end').map((e) => e.result), ['Counting.', 'Two words.']);
  });
});

describe('SPEC §11: the cassette', () => {
  test('"a list of model turns": a bare YAML list plays like turns:', async (t) => {
    const rt = await agentRuntime(t, { bare: { model: { cassette: 'bare.yaml' } } }, { files: { 'bare.yaml': "- text: Counting.\n  invoke: return 2\n- text: Two.\n" } });
    const run = await invokeWithTrace(rt, 'bare');
    assert.equal(run.value, 'Two.');
    assert.equal(run.trace.filter((e) => e.type === 'turn-start').length, 2);
  });
});

describe('seed 004: one discovery filter for the agent and the toolchain', () => {
  test('skill-list and skill-describe called by agent code show only what the agent may call', async (t) => {
    const rt = await agentRuntime(t, {
      explorer: {
        turns: [
          {
            invoke:
              "const all = (await ctx.manager.invoke('skill-list', { all: true })).map((s) => s.name);\n" +
              "let self; try { await ctx.manager.invoke('skill-describe', { name: 'explorer' }); self = 'described'; } catch (e) { self = e.code; }\n" +
              "const wc = await ctx.manager.invoke('skill-describe', { name: 'wordcount' });\n" +
              'ctx.manager.finish({ all, self, wc: wc.tool.name });',
          },
        ],
      },
    });
    const value = (await rt.invoke('explorer', {})) as { all: string[]; self: string; wc: string };
    assert.ok(value.all.includes('wordcount'));
    for (const hidden of ['explorer', 'agent', 'agent-strands', 'shell', 'file-write']) assert.ok(!value.all.includes(hidden), `${hidden} is not listed`);
    assert.equal(value.self, 'E_ALLOWED_TOOLS');
    assert.equal(value.wc, 'wordcount');
    // The toolchain outside agent code is unchanged.
    const listed = ((await rt.invoke('skill-list', { all: true })) as { name: string }[]).map((s) => s.name);
    assert.ok(listed.includes('explorer') && listed.includes('shell'));
  });
});
