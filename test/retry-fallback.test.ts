// Retries and fallback (SPEC §18) through the full agent path against the fake OpenAI-compatible
// and Anthropic servers on 127.0.0.1: a 429 with Retry-After, 5xx, a connection cut before the
// answer and one cut in the middle of the stream are retried `model.retries` times — the servers
// count the requests, so the SDKs' own retries being off is checked too — after the backoff or
// the server's Retry-After (asserted on the delays the trace and the log report, never on the
// clock); then `model.fallback` takes over and the run stays on it. Each retry is a `retry` trace
// entry and a `retry` log event.
import { describe, test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { anthropicReply, fakeAnthropic, fakeOpenAI, toolCallReply, type Reply } from './fake-openai.ts';
import { agentRuntime, invokeWithTrace, types } from './agent-helpers.ts';
import { logs } from './helpers.ts';

async function serve(t: TestContext, make: typeof fakeOpenAI, replies: Reply[]) {
  const srv = await make(replies);
  t.after(srv.close);
  return srv;
}

/** The agent-ws `count` skill (wordcount, returns { count }) on a live model; retryDelayMs keeps the backoff short. */
const openai = (baseURL: string, extra: Record<string, unknown> = {}) => ({ model: { provider: 'openai', baseURL, modelId: 'fake-model', retryDelayMs: 5, ...extra } });
const anthropic = (baseURL: string, extra: Record<string, unknown> = {}) => ({ provider: 'anthropic', baseURL, modelId: 'claude-test', apiKeyEnv: 'RETRY_TEST_ANTHROPIC_KEY', maxTokens: 256, ...extra });
process.env.RETRY_TEST_ANTHROPIC_KEY = 'sk-test';

const FINISH = "ctx.manager.finish({ count: await ctx.manager.invoke('wordcount', { text: ctx.args.text }) });";
const err500: Reply = { status: 500, json: { error: { message: 'overloaded' } } };

describe('retries of transient model errors', { concurrency: true }, () => {
  test('a 429 with Retry-After: the wait is the server’s (1 s), one retry, then the answer — trace and log say so', { timeout: 60_000 }, async (t) => {
    const srv = await serve(t, fakeOpenAI, [{ status: 429, json: { error: { message: 'slow down' } }, headers: { 'retry-after': '1' } }, toolCallReply(FINISH)]);
    const rt = await agentRuntime(t, {}, { overrides: openai(srv.baseURL) });
    const run = await invokeWithTrace(rt, 'count', { text: 'a b c' });
    assert.equal(run.error, undefined, run.error?.message);
    assert.deepEqual(run.value, { count: 3 });
    assert.equal(srv.requests.length, 2, 'one request, one retry: the OpenAI client did not retry on its own');
    assert.deepEqual(types(run.trace).slice(0, 3), ['turn-start', 'error', 'retry']);
    const error = run.trace.find((e) => e.type === 'error')!;
    assert.equal(error.status, 429);
    assert.equal(error.retrying, true);
    const retry = run.trace.find((e) => e.type === 'retry')!;
    assert.deepEqual(
      { attempt: retry.attempt, turnNumber: retry.turnNumber, delayMs: retry.delayMs, retryAfterMs: retry.retryAfterMs, status: retry.status, retry: retry.retry, retries: retry.retries },
      { attempt: 2, turnNumber: 1, delayMs: 1000, retryAfterMs: 1000, status: 429, retry: 1, retries: 3 },
    );
    const [log] = logs(rt, { type: 'retry' });
    assert.equal(log!.level, 'warn');
    assert.equal(log!.tag, 'agent');
    assert.match(String(log!.text), /^the model failed \(openai fake-model\): 429 slow down — retry 1 of 3 in 1000 ms \(the server's Retry-After\)$/);
    assert.equal((log as { delayMs?: unknown }).delayMs, 1000);
  });

  test('Retry-After as retry-after-ms and as an HTTP date are honoured too', { timeout: 60_000 }, async (t) => {
    // A date two minutes ahead is longer than agent-apps waits: the message says how long it was
    // asked to wait, which shows the date was read (and nothing here waits for it).
    const date = new Date(Date.now() + 120_000).toUTCString();
    const srv = await serve(t, fakeOpenAI, [
      { status: 503, json: { error: { message: 'busy' } }, headers: { 'retry-after-ms': '30' } },
      { status: 429, json: { error: { message: 'busy' } }, headers: { 'retry-after': date } },
      toolCallReply(FINISH),
    ]);
    const rt = await agentRuntime(t, {}, { overrides: openai(srv.baseURL) });
    const run = await invokeWithTrace(rt, 'count', { text: 'a b' });
    assert.equal(srv.requests.length, 2);
    const [ms] = run.trace.filter((e) => e.type === 'retry');
    assert.deepEqual([ms!.delayMs, ms!.retryAfterMs, ms!.status], [30, 30, 503]);
    assert.equal(run.error?.code, 'E_MODEL');
    assert.match(run.error.message, / — the server asked to wait 1[12]\d s \(Retry-After\), longer than the 60 s agent-apps waits$/);
  });

  test('500 four times with retries 3: exactly 4 requests, exponential delays, then E_MODEL saying how many attempts', { timeout: 60_000 }, async (t) => {
    const srv = await serve(t, fakeOpenAI, [err500, err500, err500, err500, toolCallReply(FINISH)]);
    const rt = await agentRuntime(t, {}, { overrides: openai(srv.baseURL, { retryDelayMs: 10 }) });
    const run = await invokeWithTrace(rt, 'count', { text: 'a b c' });
    assert.equal(run.error?.code, 'E_MODEL');
    assert.match(run.error.message, /500/);
    assert.match(run.error.message, /: 500 overloaded — gave up after 4 attempts \(model\.retries: 3\)$/);
    assert.equal(srv.requests.length, 4, 'the fifth reply was never asked for');
    const retries = run.trace.filter((e) => e.type === 'retry');
    assert.deepEqual(retries.map((e) => [e.attempt, e.delayMs, e.retry]), [[2, 10, 1], [3, 20, 2], [4, 40, 3]]);
    assert.deepEqual(logs(rt, { type: 'retry' }).map((l) => (l as { delayMs?: number }).delayMs), [10, 20, 40]);
    // The last error is not retried.
    assert.equal(run.trace.filter((e) => e.type === 'error').at(-1)!.retrying, undefined);
  });

  test('model.retries: 0 — one request, no retry', { timeout: 60_000 }, async (t) => {
    const srv = await serve(t, fakeOpenAI, [err500, toolCallReply(FINISH)]);
    const rt = await agentRuntime(t, {}, { overrides: openai(srv.baseURL, { retries: 0 }) });
    const run = await invokeWithTrace(rt, 'count', { text: 'a' });
    assert.equal(run.error?.code, 'E_MODEL');
    assert.equal(srv.requests.length, 1);
    assert.equal(run.trace.filter((e) => e.type === 'retry').length, 0);
  });

  test('a connection cut before any answer, and one cut in the middle of the stream, are retried', { timeout: 60_000 }, async (t) => {
    const cut = { ...(toolCallReply(FINISH) as { sse: unknown[] }), dropAfter: 3 };
    const srv = await serve(t, fakeOpenAI, [{ drop: true }, cut, toolCallReply(FINISH)]);
    const rt = await agentRuntime(t, {}, { overrides: openai(srv.baseURL) });
    const run = await invokeWithTrace(rt, 'count', { text: 'a b c d' });
    assert.equal(run.error, undefined, run.error?.message);
    assert.deepEqual(run.value, { count: 4 });
    assert.equal(srv.requests.length, 3);
    assert.deepEqual(run.trace.filter((e) => e.type === 'retry').map((e) => [e.attempt, e.delayMs]), [[2, 5], [3, 10]]);
    assert.deepEqual(run.trace.filter((e) => e.type === 'retry').map((e) => e.reason), [
      `the connection to the model at ${srv.baseURL} was cut before the answer was complete`,
      `the connection to the model at ${srv.baseURL} was cut before the answer was complete`,
    ]);
    // The code of the cut response never ran: one tool call, from the third response.
    assert.equal(run.trace.filter((e) => e.type === 'tool-call').length, 1);
  });

  test('not transient (a 401) fails at once, one request', { timeout: 60_000 }, async (t) => {
    const srv = await serve(t, fakeOpenAI, [{ status: 401, json: { error: { message: 'bad key' } } }, toolCallReply(FINISH)]);
    const rt = await agentRuntime(t, {}, { overrides: openai(srv.baseURL) });
    const run = await invokeWithTrace(rt, 'count', { text: 'a' });
    assert.equal(run.error?.code, 'E_MODEL');
    assert.match(run.error.message, /refused the API key \(401\)/);
    assert.equal(srv.requests.length, 1);
  });

  test('a Retry-After longer than 60 s is not waited for: the model is given up at once', { timeout: 60_000 }, async (t) => {
    const srv = await serve(t, fakeOpenAI, [{ status: 429, json: { error: { message: 'quota' } }, headers: { 'retry-after': '3600' } }, toolCallReply(FINISH)]);
    const rt = await agentRuntime(t, {}, { overrides: openai(srv.baseURL) });
    const run = await invokeWithTrace(rt, 'count', { text: 'a' });
    assert.equal(run.error?.code, 'E_MODEL');
    assert.match(run.error.message, / — the server asked to wait 3600 s \(Retry-After\), longer than the 60 s agent-apps waits$/);
    assert.equal(srv.requests.length, 1);
  });

  test('anthropic: 429 with Retry-After and 529 overloaded are retried, the Anthropic client itself never retries', { timeout: 60_000 }, async (t) => {
    const srv = await serve(t, fakeAnthropic, [
      { status: 429, json: { type: 'error', error: { type: 'rate_limit_error', message: 'slow' } }, headers: { 'retry-after': '0' } },
      { status: 529, json: { type: 'error', error: { type: 'overloaded_error', message: 'overloaded' } } },
      anthropicReply({ text: 'Counting.', code: FINISH }),
    ]);
    const rt = await agentRuntime(t, {}, { overrides: { model: anthropic(srv.baseURL, { retryDelayMs: 7 }) } });
    const run = await invokeWithTrace(rt, 'count', { text: 'a b' });
    assert.equal(run.error, undefined, run.error?.message);
    assert.deepEqual(run.value, { count: 2 });
    assert.equal(srv.requests.length, 3);
    assert.deepEqual(run.trace.filter((e) => e.type === 'retry').map((e) => [e.status, e.delayMs]), [[429, 0], [529, 14]]);
  });
});

describe('model.fallback', { concurrency: true }, () => {
  test('the primary exhausts its retries, the fallback (anthropic) answers, and the run stays on it', { timeout: 60_000 }, async (t) => {
    const primary = await serve(t, fakeOpenAI, [err500, err500, err500, err500]);
    const backup = await serve(t, fakeAnthropic, [anthropicReply({ text: 'Counting.', code: "return await ctx.manager.invoke('wordcount', { text: ctx.args.text });" }), anthropicReply({ code: 'ctx.manager.finish({ count: 3 });' })]);
    const rt = await agentRuntime(t, {}, { overrides: openai(primary.baseURL, { retries: 1, fallback: [anthropic(backup.baseURL)] }) });
    const run = await invokeWithTrace(rt, 'count', { text: 'a b c' });
    assert.equal(run.error, undefined, run.error?.message);
    assert.deepEqual(run.value, { count: 3 });
    assert.equal(primary.requests.length, 2, 'one attempt and one retry on the primary, and none at turn 2');
    assert.equal(backup.requests.length, 2);
    // Turn 2 went to the fallback with the conversation so far (the tool result of turn 1).
    assert.match(JSON.stringify(backup.requests[1]!.body.messages), /"tool_result"/);
    const retries = run.trace.filter((e) => e.type === 'retry');
    assert.deepEqual(retries.map((e) => [e.attempt, e.delayMs, e.fallback, e.modelId]), [[2, 5, undefined, undefined], [3, 0, 1, 'claude-test']]);
    const log = logs(rt, { type: 'retry' }).at(-1)!;
    assert.match(String(log.text), /^the model failed \(openai fake-model\): 500 overloaded — falling back to model\.fallback\[0\] \(claude-test\)$/);
    // Usage is reported per model: the fallback's calls carry its model id.
    assert.deepEqual([...new Set(run.trace.filter((e) => e.type === 'usage').map((e) => e.modelId))], ['claude-test']);
  });

  test('a fallback inherits retries and retryDelayMs, and fails like any model when it fails too', { timeout: 60_000 }, async (t) => {
    const primary = await serve(t, fakeOpenAI, [err500]);
    const backup = await serve(t, fakeOpenAI, [err500, err500]);
    const rt = await agentRuntime(t, {}, { overrides: openai(primary.baseURL, { retries: 0, fallback: [{ provider: 'openai', baseURL: backup.baseURL, modelId: 'backup-model', retries: 1 }] }) });
    const run = await invokeWithTrace(rt, 'count', { text: 'a' });
    assert.equal(run.error?.code, 'E_MODEL');
    assert.match(run.error.message, / — gave up on model\.fallback\[0\] after 2 attempts \(model\.retries: 1\)$/);
    assert.equal(primary.requests.length, 1);
    assert.equal(backup.requests.length, 2);
    assert.equal(backup.requests[0]!.body.model, 'backup-model');
    assert.deepEqual(run.trace.filter((e) => e.type === 'retry').map((e) => [e.delayMs, e.fallback ?? null]), [[0, 1], [5, null]]);
  });

  test('a malformed fallback or retries is E_CONFIG before any request', { timeout: 60_000 }, async (t) => {
    const srv = await serve(t, fakeOpenAI, [toolCallReply(FINISH)]);
    for (const [extra, message] of [
      [{ fallback: 'gpt-4o' }, /model\.fallback must be a list of model configs/],
      [{ fallback: [{ provider: 'nope' }] }, /unknown model\.fallback\[0\]\.provider 'nope'/],
      [{ retries: -1 }, /model\.retries must be a whole number ≥ 0/],
      [{ fallback: [{ provider: 'openai', baseURL: srv.baseURL, retries: 1.5 }] }, /model\.fallback\[0\]\.retries must be a whole number/],
    ] as const) {
      const rt = await agentRuntime(t, {}, { overrides: openai(srv.baseURL, extra) });
      const run = await invokeWithTrace(rt, 'count', { text: 'a' });
      assert.equal(run.error?.code, 'E_CONFIG', JSON.stringify(extra));
      assert.match(run.error.message, message);
    }
    assert.equal(srv.requests.length, 0);
  });
});
