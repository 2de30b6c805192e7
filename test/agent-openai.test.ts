// The openai provider through the FULL agent path (Markdown skill → agent-execute → agent →
// agent-strands → Strands OpenAIModel → HTTP) against a fake OpenAI-compatible chat-completions
// server on 127.0.0.1 (node:http, port 0, stopped by each test): streamed SSE, a tool call whose
// arguments arrive in pieces, what the model is sent, and the failure modes (SPEC §11).
import { describe, test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createServer } from 'node:http';
import { fakeOpenAI, textReply, toolCallReply, type Reply } from './fake-openai.ts';
import YAML from 'yaml';
import { tempDir } from './helpers.ts';
import { agentRuntime, eventQueue, invokeWithTrace, types } from './agent-helpers.ts';

/** The fake server for this test, stopped when the test ends. */
async function fakeServer(t: TestContext, replies: Reply[]) {
  const srv = await fakeOpenAI(replies);
  t.after(srv.close);
  return srv;
}

const openai = (baseURL: string, extra: Record<string, unknown> = {}) => ({ model: { provider: 'openai', baseURL, modelId: 'fake-model', ...extra } });

const COUNT_RETURNS = { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] };
const TEXT_PARAMS = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };

describe('openai provider through the full agent path (fake OpenAI-compatible server)', () => {
  test('a Markdown agent skill: the streamed tool call runs in the sandbox, finish() ends the run after one request', { timeout: 15_000 }, async (t) => {
    const code = "const n = await ctx.manager.invoke('wordcount', { text: ctx.args.text });\nconsole.log('counted', n);\nctx.manager.finish({ count: n });";
    const srv = await fakeServer(t, [toolCallReply(code, 'Counting.')]);
    const rt = await agentRuntime(t, {}, { overrides: openai(srv.baseURL) });
    const run = await invokeWithTrace(rt, 'count', { text: 'a b c' });
    assert.equal(run.error, undefined, run.error?.message);
    assert.deepEqual(run.value, { count: 3 });
    assert.equal(srv.requests.length, 1);
    const [req] = srv.requests;
    assert.equal(req!.url, '/v1/chat/completions');
    assert.equal(req!.body.model, 'fake-model');
    assert.equal(req!.body.stream, true);
    assert.equal(req!.body.parallel_tool_calls, false);
    assert.deepEqual(req!.body.tools.map((x: any) => x.function.name), ['invoke']);
    // What the model is given: the expanded prompt + tool docs as the system message, the args as YAML.
    const [system, user] = req!.body.messages;
    assert.equal(system.role, 'system');
    const systemText = JSON.stringify(system.content);
    assert.match(systemText, /You count words with the `wordcount` tool\.\\n\\nThe text is: a b c/);
    assert.match(systemText, /### wordcount/);
    assert.equal(user.role, 'user');
    assert.match(JSON.stringify(user.content), /Carry out the task described in your instructions with these args:\\n\\ntext: a b c/);
    // The trace saw the text, the reassembled code, and the result.
    const call = run.trace.find((e) => e.type === 'tool-call')!;
    assert.equal(call.args.code, code);
    assert.equal(run.trace.find((e) => e.type === 'tool-result')!.result, 'finished: {"count":3}\nconsole:\ncounted 3');
    assert.equal(run.trace.find((e) => e.type === 'message')!.text, 'Counting.');
    assert.equal(run.usage.totalTokens, 150);
  });

  test('the tool result, console output included, is what the model sees next; its final text is the result', { timeout: 15_000 }, async (t) => {
    const srv = await fakeServer(t, [toolCallReply("console.log('two words');\nreturn await ctx.manager.invoke('wordcount', { text: ctx.args.text });", 'Let me count.'), textReply('There are ', '2 words.')]);
    const rt = await agentRuntime(t, { answer: { params: TEXT_PARAMS, 'allowed-tools': 'wordcount' } }, { overrides: openai(srv.baseURL) });
    assert.equal(await rt.invoke('answer', { text: 'x y' }), 'There are 2 words.');
    assert.equal(srv.requests.length, 2);
    const tool = srv.requests[1]!.body.messages.find((m: any) => m.role === 'tool');
    assert.equal(tool.tool_call_id, 'call_1');
    assert.match(JSON.stringify(tool.content), /result: 2\\nconsole:\\ntwo words/);
    // The text the model streamed before its tool call stays in the conversation (stream-fix.ts).
    const assistant = srv.requests[1]!.body.messages.find((m: any) => m.role === 'assistant');
    assert.match(JSON.stringify(assistant.content), /Let me count\./);
    assert.equal(assistant.tool_calls.length, 1);
  });

  test('a tool error (E_UNTRUSTED_REF) goes back to the model as the tool result, and the run goes on', { timeout: 15_000 }, async (t) => {
    const srv = await fakeServer(t, [toolCallReply("return await ctx.manager.invoke('file:///etc/passwd', {});"), textReply('I may not do that.')]);
    const rt = await agentRuntime(t, { sneaky: {} }, { overrides: openai(srv.baseURL) });
    assert.equal(await rt.invoke('sneaky', {}), 'I may not do that.');
    const tool = srv.requests[1]!.body.messages.find((m: any) => m.role === 'tool');
    assert.match(JSON.stringify(tool.content), /agent code may only invoke tools by name/);
  });

  test('returns: a turn that ends without finish() gets the reminder as the next user message', { timeout: 15_000 }, async (t) => {
    const srv = await fakeServer(t, [textReply('Three.'), toolCallReply('ctx.manager.finish({ count: 3 });')]);
    const rt = await agentRuntime(t, { strict: { returns: COUNT_RETURNS } }, { overrides: openai(srv.baseURL) });
    assert.deepEqual(await rt.invoke('strict', {}), { count: 3 });
    assert.equal(srv.requests.length, 2);
    const last = srv.requests[1]!.body.messages.at(-1);
    assert.equal(last.role, 'user');
    assert.match(JSON.stringify(last.content), /You have not finished\. Call ctx\.manager\.finish\(value\) from the invoke tool with a value matching this JSON Schema/);
  });

  test('persistent mode: a server error is reported (error), retried after the backoff (retry), and the run recovers', { timeout: 15_000 }, async (t) => {
    const srv = await fakeServer(t, [{ status: 500, json: { error: { message: 'overloaded' } } }, toolCallReply("ctx.manager.finish('recovered');")]);
    const rt = await agentRuntime(t, { keeper: {} }, { overrides: openai(srv.baseURL, { persistent: true, maxRetries: 0 }) });
    const run = await invokeWithTrace(rt, 'keeper');
    assert.equal(run.value, 'recovered', run.error?.message);
    assert.equal(srv.requests.length, 2);
    const [error, retry] = run.trace.filter((e) => e.type === 'error' || e.type === 'retry');
    assert.equal(error!.attempt, 1);
    assert.match(error!.error, /overloaded|500/);
    assert.deepEqual([retry!.type, retry!.attempt, retry!.turnNumber], ['retry', 2, 1]);
    assert.deepEqual(types(run.trace).slice(0, 3), ['turn-start', 'error', 'retry']);
  });

  test('a refused connection is E_MODEL, one line naming model.baseURL; agent-error on the topic', { timeout: 15_000 }, async (t) => {
    // A port that was just free: nothing listens there.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const deadURL = `http://127.0.0.1:${port}/v1`;
    const rt = await agentRuntime(t, { offline: { model: { events: 'offline-events' } } }, { overrides: openai(deadURL) });
    const q = await eventQueue(rt, 'offline-events');
    const run = await invokeWithTrace(rt, 'offline');
    // Fails at once, not after a round of backoffs: an unreachable server is not retried (the test's
    // own timeout bounds a hang; no clock is asserted).
    assert.deepEqual(run.trace.filter((e) => e.type === 'retry'), [], 'an unreachable server is not retried');
    assert.equal(run.error.code, 'E_MODEL');
    assert.equal(run.error.message, `cannot reach the model at ${deadURL} — check model.baseURL (is the server running?)`);
    assert.ok(!run.error.message.includes('\n'));
    const events = await q.drain();
    assert.equal(events.at(-1)!.type, 'agent-error');
    assert.equal(events.at(-1)!.data.error.code, 'E_MODEL');
  });

  test('model.record writes a cassette of the live run, and replaying it gives the same result offline', { timeout: 15_000 }, async (t) => {
    const code = "ctx.manager.finish({ count: await ctx.manager.invoke('wordcount', { text: ctx.args.text }) });";
    const srv = await fakeServer(t, [toolCallReply(code, 'Counting.')]);
    const dir = tempDir(t);
    const recorded = path.join(dir, 'recorded.yaml');
    const live = await agentRuntime(t, {}, { overrides: openai(srv.baseURL, { record: recorded }) });
    assert.deepEqual(await live.invoke('count', { text: 'one two three four' }), { count: 4 });
    // The model's side, and the request it answered (SPEC §18).
    const cassette = YAML.parse(fs.readFileSync(recorded, 'utf8'));
    assert.deepEqual(cassette.turns.map(({ request: _r, ...t }: any) => t), [{ text: 'Counting.', invoke: code }]);
    assert.match(cassette.turns[0].request.sha256, /^[0-9a-f]{64}$/);
    const offline = await agentRuntime(t, {}, { overrides: { model: { provider: 'replay', cassette: recorded } } });
    assert.deepEqual(await offline.invoke('count', { text: 'one two three four' }), { count: 4 });
  });
});
