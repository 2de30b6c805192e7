// The openai provider against a fake OpenAI-compatible chat-completions server on 127.0.0.1:
// the real HTTP client, the real SSE parsing, the real Strands loop — no network.

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { fakeOpenAI, textReply, toolCallReply } from './fake-openai.ts';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { HookEvent } from '../src/index.ts';
import { createModel, runAgentLoop } from './strands-modules.ts';

type AgentHookEvent = HookEvent & Record<string, any>;

const SYSTEM = 'You are a word counter. Use the invoke tool.';
const CODE = "const n = await ctx.manager.invoke('wordcount', { text: \"a b\" });\nctx.manager.finish({ count: n });";


const fakeServer = fakeOpenAI;

describe('openai provider (fake OpenAI-compatible server)', () => {
  test('a streamed tool call is reassembled for onCode, its result is sent back, and the final text returned', { timeout: 15_000 }, async () => {
    const srv = await fakeServer([toolCallReply(CODE), textReply('The count ', 'is 2.')]);
    try {
      const model = await createModel({ provider: 'openai', baseURL: srv.baseURL, modelId: 'fake-model', temperature: 0 }, { env: {} });
      const codes: string[] = [];
      const events: AgentHookEvent[] = [];
      const out = await runAgentLoop({
        model,
        systemPrompt: SYSTEM,
        userMessage: 'Count the words in "a b".',
        onCode: async (code) => (codes.push(code), { count: 2 }),
        onHook: async (e) => (events.push(e), undefined),
      });
      assert.deepEqual(codes, [CODE]);
      assert.equal(out.text, 'The count is 2.');
      assert.equal(out.turns, 2);
      assert.deepEqual(out.usage, { inputTokens: 280, outputTokens: 38, totalTokens: 318 });

      assert.equal(srv.requests.length, 2);
      const [first, second] = srv.requests;
      assert.equal(first!.url, '/v1/chat/completions');
      assert.equal(first!.headers.authorization, 'Bearer local');
      assert.equal(first!.body.model, 'fake-model');
      assert.equal(first!.body.stream, true);
      assert.equal(first!.body.parallel_tool_calls, false);
      assert.equal(first!.body.temperature, 0);
      const system = first!.body.messages[0];
      assert.equal(system.role, 'system');
      assert.match(JSON.stringify(system.content), /You are a word counter/);
      assert.equal(first!.body.tools.length, 1, 'exactly one tool');
      assert.equal(first!.body.tools[0].function.name, 'invoke');
      assert.deepEqual(first!.body.tools[0].function.parameters.required, ['code']);
      assert.equal(first!.body.tools[0].function.parameters.properties.code.type, 'string');

      const toolMsg = second!.body.messages.find((m: any) => m.role === 'tool');
      assert.equal(toolMsg.tool_call_id, 'call_1');
      assert.match(JSON.stringify(toolMsg.content), /\{\\"count\\":2\}/);
      const assistant = second!.body.messages.find((m: any) => m.role === 'assistant');
      assert.equal(JSON.parse(assistant.tool_calls[0].function.arguments).code, CODE);

      assert.deepEqual(events.filter((e) => e.type === 'usage').map((e) => e.totalTokens), [150, 168]);
      assert.deepEqual(events.at(-1), { type: 'turn-end', result: 'The count is 2.', turnNumber: 2 });
    } finally {
      await srv.close();
    }
  });

  test('model.record on a live run writes the cassette of what the model produced', { timeout: 15_000 }, async () => {
    const srv = await fakeServer([toolCallReply(CODE), textReply('Done.')]);
    const dir = await mkdtemp(join(tmpdir(), 'strands-rec-'));
    try {
      const model = await createModel({ provider: 'openai', baseURL: srv.baseURL, modelId: 'fake-model', record: 'live.yaml' }, { env: {}, baseDir: dir });
      await runAgentLoop({ model, systemPrompt: SYSTEM, userMessage: 'go', onCode: async () => 2 });
      // The model's side, and the request each response answered (SPEC §18).
      const recorded = parse(await readFile(join(dir, 'live.yaml'), 'utf8'));
      assert.deepEqual(recorded.turns.map(({ request: _r, ...t }: any) => t), [{ invoke: CODE }, { text: 'Done.' }]);
      assert.ok(recorded.turns.every((t: any) => /^[0-9a-f]{64}$/.test(t.request?.sha256)));
      // … and replaying it runs the same code.
      const replayed = await createModel({ provider: 'replay', cassette: 'live.yaml' }, { baseDir: dir });
      const codes: string[] = [];
      const out = await runAgentLoop({ model: replayed, systemPrompt: SYSTEM, userMessage: 'go', onCode: async (c) => (codes.push(c), 2) });
      assert.deepEqual([codes, out.text], [[CODE], 'Done.']);
    } finally {
      await srv.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a refused connection is E_MODEL with one line naming model.baseURL, within a few seconds', { timeout: 15_000 }, async () => {
    const srv = await fakeServer([]);
    await srv.close(); // a port that was just free: nothing listens there now
    const model = await createModel({ provider: 'openai', baseURL: srv.baseURL, modelId: 'm' }, { env: {} });
    const events: AgentHookEvent[] = [];
    await assert.rejects(
      runAgentLoop({ model, systemPrompt: 's', userMessage: 'u', onCode: async () => 1, onHook: async (e) => (events.push(e), undefined) }),
      (err: any) => {
        assert.equal(err.code, 'E_MODEL');
        assert.equal(err.message, `cannot reach the model at ${srv.baseURL} — check model.baseURL (is the server running?)`);
        return true;
      },
    );
    // "Within a few seconds" without a clock: one attempt and no retry (so no backoff to wait out);
    // a hang would hit the test's timeout.
    const error = events.find((e) => e.type === 'error');
    assert.equal(error?.attempt, 1);
    assert.deepEqual(events.filter((e) => e.type === 'retry'), [], 'an unreachable server is not retried');
    assert.match(String(error?.error), /cannot reach the model/);
  });

  test('a 401 from the server is E_MODEL saying which key to set', { timeout: 15_000 }, async () => {
    const srv = await fakeServer([{ status: 401, json: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } } }]);
    try {
      const model = await createModel({ provider: 'openai', baseURL: srv.baseURL, modelId: 'm' }, { env: { OPENAI_API_KEY: 'sk-wrong' } });
      await assert.rejects(runAgentLoop({ model, systemPrompt: 's', userMessage: 'u', onCode: async () => 1 }), {
        code: 'E_MODEL',
        message: `the model server at ${srv.baseURL} refused the API key (401) — set OPENAI_API_KEY (or model.apiKeyEnv)`,
      });
      assert.equal(srv.requests[0]!.headers.authorization, 'Bearer sk-wrong');
    } finally {
      await srv.close();
    }
  });

  test('an unknown model (404) is E_MODEL pointing at model.modelId', { timeout: 15_000 }, async () => {
    const srv = await fakeServer([{ status: 404, json: { error: { message: "model 'nope' not found" } } }]);
    try {
      const model = await createModel({ provider: 'openai', baseURL: srv.baseURL, modelId: 'nope' }, { env: {} });
      await assert.rejects(runAgentLoop({ model, systemPrompt: 's', userMessage: 'u', onCode: async () => 1 }), (err: any) =>
        err.code === 'E_MODEL' && /no model 'nope'/.test(err.message) && /check model\.modelId/.test(err.message),
      );
    } finally {
      await srv.close();
    }
  });
});
