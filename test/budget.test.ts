// model.budget (SPEC §18): the most input + output tokens, and USD, one agent run may use — counted
// by the agent skill from its provider's `usage` events, so it holds for every provider: the
// bundled one against the fake OpenAI-compatible server (the server's token counts), a replay,
// and a provider of our own that ignores the error. A run over budget stops with E_AGENT_LIMIT
// naming the budget; usd needs a price (model.prices, or a default estimate); model.maxTokens
// stays the per-response limit. And the price table itself.
import { describe, test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { fakeOpenAI, textReply, toolCallReply, type Reply } from './fake-openai.ts';
import { agentRuntime, invokeWithTrace } from './agent-helpers.ts';
import { cli } from './cli-process.ts';
import { headlessWorkspace } from './headless-helpers.ts';
import { DEFAULT_PRICES, costUsd, familyOf, priceFor } from '../src/agent/prices.ts';

async function serve(t: TestContext, replies: Reply[]) {
  const srv = await fakeOpenAI(replies);
  t.after(srv.close);
  return srv;
}

const openai = (baseURL: string, extra: Record<string, unknown> = {}) => ({ model: { provider: 'openai', baseURL, modelId: 'fake-model', ...extra } });
// The fake server's usage: a tool call reply is 120 + 30 tokens, a text reply 160 + 8.
const COUNT = "return await ctx.manager.invoke('wordcount', { text: ctx.args.text });";
const TWO_TURNS = () => [toolCallReply(COUNT), textReply('Three.')];
const TEXT = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };

describe('model.budget', { concurrency: true }, () => {
  test('tokens: the second call takes the run to 318 of 200 tokens — E_AGENT_LIMIT naming model.budget.tokens', { timeout: 60_000 }, async (t) => {
    const srv = await serve(t, TWO_TURNS());
    const rt = await agentRuntime(t, { tally: { params: TEXT } }, { overrides: openai(srv.baseURL, { budget: { tokens: 200 } }) });
    const run = await invokeWithTrace(rt, 'tally', { text: 'a b c' });
    assert.equal(run.error?.code, 'E_AGENT_LIMIT');
    assert.equal(run.error.message, "model.budget.tokens (200) exhausted: the run's model calls used 318 tokens (input + output)");
    assert.equal(srv.requests.length, 2);
    assert.equal(run.usage.totalTokens, 318);
  });

  test('tokens within the budget: the run finishes', { timeout: 60_000 }, async (t) => {
    const srv = await serve(t, TWO_TURNS());
    const rt = await agentRuntime(t, { tally: { params: TEXT } }, { overrides: openai(srv.baseURL, { budget: { tokens: 318 } }) });
    const run = await invokeWithTrace(rt, 'tally', { text: 'a b c' });
    assert.equal(run.error, undefined, run.error?.message);
    assert.equal(run.value, 'Three.');
  });

  test('usd: the first call costs $0.15 of $0.1 — the run stops before its code runs, naming model.budget.usd', { timeout: 60_000 }, async (t) => {
    const srv = await serve(t, TWO_TURNS());
    const prices = { 'fake-model': { input: 1000, output: 1000 } };
    const rt = await agentRuntime(t, { tally: { params: TEXT } }, { overrides: openai(srv.baseURL, { prices, budget: { usd: 0.1 } }) });
    const run = await invokeWithTrace(rt, 'tally', { text: 'a b c' });
    assert.equal(run.error?.code, 'E_AGENT_LIMIT');
    assert.equal(run.error.message, "model.budget.usd ($0.1) exhausted: the run's model calls cost $0.150 at model.prices (or the default estimates)");
    assert.equal(srv.requests.length, 1);
    assert.equal(run.trace.filter((e) => e.type === 'tool-call').length, 0, 'the over-budget response’s code never ran');
  });

  test('usd with a well-known model id uses the default estimate (gpt-4o-mini: $0.15 / $0.60 per million)', { timeout: 60_000 }, async (t) => {
    const srv = await serve(t, TWO_TURNS());
    // 150 tokens at gpt-4o-mini's estimate: 120 × 0.15 + 30 × 0.6 = 36 millionths of a dollar.
    const rt = await agentRuntime(t, { tally: { params: TEXT } }, { overrides: openai(srv.baseURL, { modelId: 'gpt-4o-mini', budget: { usd: 0.00004 } }) });
    const run = await invokeWithTrace(rt, 'tally', { text: 'a b c' });
    assert.equal(run.error?.code, 'E_AGENT_LIMIT');
    // 36e-6 after the first call, + 160 × 0.15 + 8 × 0.6 = 28.8e-6 after the second.
    assert.match(run.error.message, /^model\.budget\.usd \(\$0\.00004\) exhausted: the run's model calls cost \$0\.0000648 /);
    assert.equal(srv.requests.length, 2);
  });

  test('usd without a price for the model is E_CONFIG saying to set model.prices — before any request', { timeout: 60_000 }, async (t) => {
    const srv = await serve(t, TWO_TURNS());
    const rt = await agentRuntime(t, { tally: { params: TEXT } }, { overrides: openai(srv.baseURL, { budget: { usd: 1 } }) });
    const run = await invokeWithTrace(rt, 'tally', { text: 'a' });
    assert.equal(run.error?.code, 'E_CONFIG');
    assert.equal(run.error.message, "model.budget.usd needs a price for model 'fake-model': set model.prices.fake-model: { input, output } — USD per million input and output tokens");
    const fallback = await agentRuntime(t, { tally: { params: TEXT } }, { overrides: openai(srv.baseURL, { prices: { 'fake-model': { input: 1, output: 1 } }, budget: { usd: 1 }, fallback: [{ provider: 'openai', baseURL: srv.baseURL }] }) });
    const second = await invokeWithTrace(fallback, 'tally', { text: 'a' });
    assert.equal(second.error?.code, 'E_CONFIG');
    assert.match(second.error.message, /^model\.budget\.usd needs the price of every model the run may use: set model\.fallback\[0\]\.modelId/);
    assert.equal(srv.requests.length, 0);
  });

  test('a malformed budget is E_CONFIG naming the key', { timeout: 60_000 }, async (t) => {
    for (const [budget, message] of [
      [{ tokens: -5 }, /^model\.budget\.tokens must be a whole number > 0 \(got -5\)$/],
      [{ usd: 'a lot' }, /^model\.budget\.usd must be a number > 0/],
      [{ dollars: 3 }, /unknown key 'dollars'/],
      [7, /^model\.budget must be \{ tokens\?, usd\? \}/],
    ] as const) {
      const rt = await agentRuntime(t, {}, { overrides: { model: { budget } } });
      const run = await invokeWithTrace(rt, 'count', { text: 'a' });
      assert.equal(run.error?.code, 'E_CONFIG', JSON.stringify(budget));
      assert.match(run.error.message, message);
    }
  });

  test('model.maxTokens keeps its per-response meaning: it is what the server is asked for, the budget is not', { timeout: 60_000 }, async (t) => {
    const srv = await serve(t, TWO_TURNS());
    const rt = await agentRuntime(t, { tally: { params: TEXT } }, { overrides: openai(srv.baseURL, { maxTokens: 64, budget: { tokens: 10_000 } }) });
    const run = await invokeWithTrace(rt, 'tally', { text: 'a b' });
    assert.equal(run.error, undefined, run.error?.message);
    for (const r of srv.requests) assert.equal(r.body.max_completion_tokens ?? r.body.max_tokens, 64);
  });

  test('a replayed run is held to the budget too (the replay model estimates its tokens)', { timeout: 60_000 }, async (t) => {
    const rt = await agentRuntime(t, {}, { overrides: { model: { budget: { tokens: 50 } } } });
    const run = await invokeWithTrace(rt, 'count', { text: 'a b c' });
    assert.equal(run.error?.code, 'E_AGENT_LIMIT');
    assert.match(run.error.message, /^model\.budget\.tokens \(50\) exhausted: the run's model calls used \d+ tokens/);
  });

  test('any provider: one that swallows the budget error still ends E_AGENT_LIMIT', { timeout: 60_000 }, async (t) => {
    const provider = `export const frontmatter = { name: 'spender', description: 'A provider that reports 600 tokens a turn and ignores what the hook says.', metadata: { visibility: 'hidden' } };
export default async function (ctx, args) {
  for (let turnNumber = 1; turnNumber <= 3; turnNumber++) {
    try { await ctx.manager.invoke(args.hookRef, { type: 'usage', inputTokens: 500, outputTokens: 100, totalTokens: 600, turnNumber }); } catch {}
  }
  return 'spent';
}
`;
    const rt = await agentRuntime(t, { thrifty: { model: { agent: 'spender', budget: { tokens: 1000 } } } }, { files: { 'spender.skill.ts': provider } });
    const run = await invokeWithTrace(rt, 'thrifty', {});
    assert.equal(run.error?.code, 'E_AGENT_LIMIT');
    assert.equal(run.error.message, "model.budget.tokens (1000) exhausted: the run's model calls used 1200 tokens (input + output)");
    // Without the budget the same provider succeeds.
    const free = await agentRuntime(t, { thrifty: { model: { agent: 'spender' } } }, { files: { 'spender.skill.ts': provider } });
    assert.equal((await invokeWithTrace(free, 'thrifty', {})).value, 'spent');
  });

  test('sub-agents started by agent code spend from their caller’s budget', { timeout: 60_000 }, async (t) => {
    // Each run reports 600 tokens; the outer one's code starts a sub-agent (its own run of the
    // same provider) and returns what it said.
    const provider = `export const frontmatter = { name: 'nester', description: 'A provider that spends 600 tokens and, at the top, starts a sub-agent from its code.', metadata: { visibility: 'hidden' } };
export default async function (ctx, args) {
  const sub = args.userMessage === 'sub';
  await ctx.manager.invoke(args.hookRef, { type: 'turn-start', turnNumber: 1 });
  await ctx.manager.invoke(args.hookRef, { type: 'usage', inputTokens: 500, outputTokens: 100, totalTokens: 600, turnNumber: 1 });
  if (sub) return 'sub done';
  return await ctx.manager.invoke(args.invokeRef, { code: "try { return await ctx.manager.invoke('agent', { prompt: 'p', userMessage: 'sub' }); } catch (e) { return 'sub failed: ' + e.message; }" });
}
`;
    const skills = (tokens: number) => ({ outer: { 'allowed-tools': 'agent', model: { agent: 'nester', budget: { tokens } } } });
    const shared = await agentRuntime(t, skills(1000), { files: { 'nester.skill.ts': provider } });
    const over = await invokeWithTrace(shared, 'outer', {});
    assert.equal(over.error?.code, 'E_AGENT_LIMIT');
    assert.equal(over.error.message, "model.budget.tokens (1000) exhausted: the run's model calls used 1200 tokens (input + output)");
    // With room for both, the same runs finish: each alone was always within 1000.
    const roomy = await agentRuntime(t, skills(1200), { files: { 'nester.skill.ts': provider } });
    const ok = await invokeWithTrace(roomy, 'outer', {});
    assert.equal(ok.error, undefined, ok.error?.message);
    assert.match(String(ok.value), /sub done/);
  });

  test('the CLI: over budget exits 1 with the one line; usd without a price exits 2', { timeout: 60_000 }, async (t) => {
    const ws = headlessWorkspace();
    const srv = await serve(t, TWO_TURNS());
    const over = await cli(['run', 'tally', '--text', 'a b c', '--set', `model.baseURL=${srv.baseURL}`, '--set', 'model.budget.tokens=200'], ws);
    assert.equal(over.code, 1);
    assert.equal(over.stderr, "error [E_AGENT_LIMIT]: model.budget.tokens (200) exhausted: the run's model calls used 318 tokens (input + output)\n");
    const unpriced = await cli(['run', 'tally', '--text', 'a b c', '--set', `model.baseURL=${srv.baseURL}`, '--set', 'model.budget.usd=1'], ws);
    assert.equal(unpriced.code, 2);
    assert.match(unpriced.stderr, /^error \[E_CONFIG\]: model\.budget\.usd needs a price for model 'fake-model': set model\.prices\.fake-model/);
  });
});

describe('prices', () => {
  test('a model id finds its family: Bedrock prefixes and versions, dates, -latest', () => {
    assert.equal(familyOf('us.anthropic.claude-sonnet-4-5-20250929-v1:0'), 'claude-sonnet-4-5');
    assert.equal(familyOf('global.anthropic.claude-sonnet-4-6'), 'claude-sonnet-4-6');
    assert.equal(familyOf('gpt-4o-2024-08-06'), 'gpt-4o');
    assert.equal(familyOf('claude-3-5-haiku-latest'), 'claude-3-5-haiku');
    assert.equal(familyOf('amazon.nova-pro-v1:0'), 'nova-pro');
    assert.deepEqual(priceFor('us.anthropic.claude-sonnet-4-5-20250929-v1:0', undefined), { input: 3, output: 15 });
    assert.equal(priceFor('fake-model', undefined), undefined);
    assert.equal(priceFor(undefined, { x: { input: 1, output: 1 } }), undefined);
  });

  test('model.prices wins over the defaults, by id and by family; a malformed entry is E_CONFIG', () => {
    assert.deepEqual(priceFor('gpt-4o', { 'gpt-4o': { input: 1, output: 2 } }), { input: 1, output: 2 });
    assert.deepEqual(priceFor('gpt-4o-2024-08-06', { 'gpt-4o': { input: 1, output: 2 } }), { input: 1, output: 2 });
    assert.throws(() => priceFor('m', { m: { input: -1, output: 0 } }), { code: 'E_CONFIG', message: /^model\.prices\.m must be \{ input, output \}/ });
    assert.equal(costUsd({ inputTokens: 1_000_000, outputTokens: 500_000 }, { input: 3, output: 15 }), 10.5);
    for (const [id, p] of Object.entries(DEFAULT_PRICES)) assert.ok(p.input > 0 && p.output >= p.input, id);
  });
});
