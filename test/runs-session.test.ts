// The `session` middleware and the `$agent` sentinel (seed 004, SPEC §18), in process: the real
// pipeline, the real `agent` skill and sandbox, the fixture workspace's scripted provider
// (test/fixtures/agent-ws). After an agent ran, the entries ordered after `$agent` run with its
// trace on locals.agent; `session` records each agent run — nested and direct ones too — as one
// `agent-run` log event (what the CLI's run file holds); a code skill never reaches them.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Context } from '../src/index.ts';
import { logs, skill } from './helpers.ts';
import { agentRuntime, type TraceEntry } from './agent-helpers.ts';

const TEXT = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
const COUNT = "ctx.manager.finish({ count: await ctx.manager.invoke('wordcount', { text: ctx.args.text }) })";

interface AgentRun {
  type: string;
  tool: string;
  skill: string;
  agentId?: string;
  parentAgentId?: string;
  ok: boolean;
  result?: unknown;
  error?: { code: string; message: string };
  usage: { inputTokens: number; outputTokens: number; totalTokens: number };
  denials: unknown[];
  turns: number;
  startedAt: number;
  durationMs: number;
  trace: TraceEntry[];
  record?: boolean;
  level: string;
}

const agentRuns = (rt: Parameters<typeof logs>[0]) => logs(rt, { type: 'agent-run' }) as unknown as AgentRun[];

describe('the $agent sentinel', () => {
  test('an entry ordered after $agent runs once the agent ran, with its trace, usage and answer; its value is the result', async (t) => {
    const rt = await agentRuntime(t, { counter: { params: TEXT, 'allowed-tools': 'wordcount', model: { agent: 'scripted-agent', script: [{ text: 'Counting.', code: COUNT }] } } });
    const seen: { trace?: string[]; usage?: unknown; result?: unknown }[] = [];
    const after = {
      'after-agent': {
        after: ['$agent'],
        fn: async (served: Context) => {
          const agent = served.locals.agent as { trace: TraceEntry[]; usage: unknown };
          seen.push({ trace: agent.trace.map((e) => e.type), usage: { ...(agent.usage as object) }, result: served.locals.result });
          const value = await served.manager.next();
          return { ...(value as object), checked: true };
        },
      },
    };
    const value = await rt.invoke('counter', { text: 'a b c' }, { context: { middleware: after } } as never);
    assert.deepEqual(value, { count: 3, checked: true }, 'what the entry returns is the result');
    assert.equal(seen.length, 1);
    assert.deepEqual(seen[0]!.trace, ['turn-start', 'message', 'tool-call', 'tool-result']);
    assert.deepEqual(seen[0]!.result, { count: 3 }, "the agent's answer is on locals.result");
  });

  test('describe puts an entry ordered after $agent after agent-execute, whatever its place in the cascade', async (t) => {
    const rt = await agentRuntime(t, { counter: { params: TEXT, 'allowed-tools': 'wordcount', metadata: { audit: true, $order: { audit: { after: ['$agent'] } } } } });
    const chain = (await rt.describe('counter')).chain.map((e) => e.name);
    assert.ok(chain.indexOf('audit') > chain.indexOf('agent-execute'), chain.join(' '));
    assert.equal(chain.at(-1), 'audit');
    assert.ok(chain.includes('session'), chain.join(' '));
    assert.ok(!chain.some((n) => n.startsWith('$')), 'the sentinel is not an entry');
  });

  test('a code skill never reaches the entries after $agent: no session record, the after-$agent entry never runs', async (t) => {
    const rt = await agentRuntime(t);
    rt.register(skill('plain', () => 'plain'));
    let ran = 0;
    const after = { 'after-agent': { after: ['$agent'], fn: (served: Context) => (ran++, served.manager.next()) } };
    assert.equal(await rt.invoke('plain', {}, { context: { middleware: after } } as never), 'plain');
    assert.equal(await rt.invoke('wordcount', { text: 'a b' }), 2);
    assert.equal(ran, 0);
    assert.deepEqual(agentRuns(rt), []);
  });
});

describe('the session middleware', () => {
  test('records an agent run as one agent-run event: trace (no deltas), usage, result, turns, ids, timing', async (t) => {
    const rt = await agentRuntime(t, { counter: { params: TEXT, 'allowed-tools': 'wordcount', model: { agent: 'scripted-agent', script: [{ text: 'Counting.', code: COUNT }] } } });
    const before = Date.now();
    assert.deepEqual(await rt.invoke('counter', { text: 'a b c' }), { count: 3 });
    const [run, ...more] = agentRuns(rt);
    assert.equal(more.length, 0);
    assert.equal(run!.tool, 'counter');
    assert.equal(run!.skill, 'counter');
    assert.equal(run!.level, 'info');
    assert.equal(run!.record, true, 'kept whatever the log level');
    assert.equal(run!.ok, true);
    assert.deepEqual(run!.result, { count: 3 });
    assert.equal(run!.error, undefined);
    assert.equal(run!.turns, 1);
    assert.deepEqual(run!.trace.map((e) => e.type), ['turn-start', 'message', 'tool-call', 'tool-result']);
    assert.equal(run!.trace[1]!.text, 'Counting.');
    assert.equal(run!.trace[2]!.args.code, COUNT);
    assert.match(String(run!.trace[3]!.result), /finished: \{"count":3\}/);
    assert.deepEqual(run!.denials, []);
    assert.ok(run!.startedAt >= before && run!.durationMs >= 0, JSON.stringify({ startedAt: run!.startedAt, before }));
    assert.match(run!.agentId!, /^[0-9a-f-]{36}$/);
    assert.equal(run!.parentAgentId, undefined);
  });

  test('records a failed agent run with its error, and the error still reaches the caller', async (t) => {
    const rt = await agentRuntime(t, { flaky: { params: TEXT, model: { agent: 'scripted-agent', script: [{ text: 'Trying.', code: 'return 1' }, { error: 'the model is down' }] } } });
    await assert.rejects(rt.invoke('flaky', { text: 'x' }), (err: { code?: string; message: string }) => err.code === 'E_MODEL' && /the model is down/.test(err.message));
    const [run] = agentRuns(rt);
    assert.equal(run!.ok, false);
    assert.equal(run!.error!.code, 'E_MODEL');
    assert.match(run!.error!.message, /the model is down/);
    assert.ok(!('result' in run!), 'a failed run has no result');
    assert.deepEqual(run!.trace.map((e) => e.type).slice(0, 3), ['turn-start', 'message', 'tool-call']);
    assert.ok(run!.trace.some((e) => e.type === 'error' && /the model is down/.test(String(e.error))), JSON.stringify(run!.trace));
  });

  test('a nested agent run — agent code invoking an agent skill — is recorded too, linked to its caller', async (t) => {
    const rt = await agentRuntime(t, {
      inner: { params: TEXT, 'allowed-tools': 'wordcount', model: { agent: 'scripted-agent', script: [{ code: COUNT }] } },
      outer: { params: TEXT, 'allowed-tools': 'inner', model: { agent: 'scripted-agent', script: [{ text: 'Asking inner.', code: "ctx.manager.finish({ inner: await ctx.manager.invoke('inner', { text: ctx.args.text }) })" }] } },
    });
    assert.deepEqual(await rt.invoke('outer', { text: 'a b' }), { inner: { count: 2 } });
    const runs = agentRuns(rt);
    assert.deepEqual(runs.map((r) => r.skill), ['inner', 'outer'], 'each is recorded when it ends');
    const [inner, outer] = runs;
    assert.equal(inner!.parentAgentId, outer!.agentId);
    assert.notEqual(inner!.agentId, outer!.agentId);
    assert.deepEqual(inner!.result, { count: 2 });
    assert.ok(inner!.startedAt >= outer!.startedAt);
  });

  test('the agent skill invoked directly (a sub-agent of a code skill) is recorded', async (t) => {
    const rt = await agentRuntime(t);
    rt.register(
      skill('direct', (ctx: Context) =>
        ctx.manager.invoke('agent', { prompt: 'Count the words.', allowedTools: 'wordcount', name: 'counting', config: { agent: 'scripted-agent', script: [{ code: "ctx.manager.finish(await ctx.manager.invoke('wordcount', { text: 'a b c d' }))" }] } }),
      ),
    );
    assert.equal(await rt.invoke('direct'), 4);
    const [run, ...more] = agentRuns(rt);
    assert.equal(more.length, 0, 'one record: the agent skill’s own');
    assert.equal(run!.skill, 'agent');
    assert.deepEqual(run!.result, 4);
    assert.deepEqual(run!.trace.map((e) => e.type), ['turn-start', 'tool-call', 'tool-result']);
  });

  test('session: false turns the record off; --log-level above info does not', async (t) => {
    const spec = { counter: { params: TEXT, 'allowed-tools': 'wordcount', model: { agent: 'scripted-agent', script: [{ code: COUNT }] } } };
    const off = await agentRuntime(t, spec, { overrides: { session: false } });
    assert.deepEqual(await off.invoke('counter', { text: 'a' }), { count: 1 });
    assert.deepEqual(agentRuns(off), []);
    const quiet = await agentRuntime(t, spec);
    quiet.root.manager.configure({ level: 'error', global: true });
    assert.deepEqual(await quiet.invoke('counter', { text: 'a' }), { count: 1 });
    assert.equal(agentRuns(quiet).length, 1);
    assert.deepEqual(logs(quiet, { type: 'agent-usage' }), [], 'other info events are still dropped');
  });
});
