// The anthropic provider against a fake Anthropic Messages API on 127.0.0.1: the real
// @anthropic-ai/sdk client, its SSE parsing and the real Strands loop — no network.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { recordingServer } from './fake-openai.ts';
import { createModel, runAgentLoop } from './strands-modules.ts';

type Sse = [event: string, data: object][];

/** A fake Anthropic Messages API: the SDK posts to `${baseURL}/v1/messages`. */
async function fakeAnthropic(replies: Sse[]) {
  const srv = await recordingServer((n, res) => {
    const reply = replies[n];
    if (!reply) {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: 'no more replies' } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const [event, data] of reply) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    res.end();
  });
  return { ...srv, baseURL: srv.baseURL.replace(/\/v1$/, '') };
}

const start = (): [string, object] => ['message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-test', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 50, output_tokens: 1 } } }];
const stop = (reason: string, out = 12): [string, object][] => [
  ['message_delta', { type: 'message_delta', delta: { stop_reason: reason, stop_sequence: null }, usage: { output_tokens: out } }],
  ['message_stop', { type: 'message_stop' }],
];
const text = (index: number, ...parts: string[]): [string, object][] => [
  ['content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }],
  ...parts.map((p): [string, object] => ['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: p } }]),
  ['content_block_stop', { type: 'content_block_stop', index }],
];
function toolUse(index: number, code: string): [string, object][] {
  const json = JSON.stringify({ code });
  const cut = Math.floor(json.length / 2);
  return [
    ['content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: 'toolu_1', name: 'invoke', input: {} } }],
    ['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json.slice(0, cut) } }],
    ['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json.slice(cut) } }],
    ['content_block_stop', { type: 'content_block_stop', index }],
  ];
}

test('anthropic: a streamed tool_use runs the code, its result goes back, the final text is the answer', { timeout: 15_000 }, async (t) => {
  const code = "const n = await ctx.manager.invoke('wordcount', { text: 'a b' });\nctx.manager.finish(n);";
  const srv = await fakeAnthropic([
    [start(), ...text(0, 'Counting', ' now.'), ...toolUse(1, code), ...stop('tool_use')],
    [start(), ...text(0, 'There are 2 words.'), ...stop('end_turn')],
  ]);
  t.after(srv.close);
  const model = await createModel({ provider: 'anthropic', baseURL: srv.baseURL, modelId: 'claude-test', maxTokens: 256 }, { env: { ANTHROPIC_API_KEY: 'sk-test' } });
  const codes: string[] = [];
  const out = await runAgentLoop({ model, systemPrompt: 'You count words.', userMessage: 'Count "a b".', onCode: async (c) => (codes.push(c), 2) });
  assert.deepEqual(codes, [code]);
  assert.equal(out.text, 'There are 2 words.');
  assert.equal(srv.requests.length, 2);
  assert.equal(srv.requests[0]!.url, '/v1/messages');
  assert.equal(srv.requests[0]!.headers['x-api-key'], 'sk-test');
  const first = srv.requests[0]!.body;
  assert.equal(first.model, 'claude-test');
  assert.match(JSON.stringify(first.system), /You count words\./);
  assert.deepEqual(first.tools.map((x: { name: string }) => x.name), ['invoke']);
  // The second request carries the tool result for toolu_1.
  assert.match(JSON.stringify(srv.requests[1]!.body.messages), /"tool_use_id":"toolu_1"/);
  assert.ok(out.usage.inputTokens >= 100, `usage ${JSON.stringify(out.usage)}`);
});

test('anthropic without ANTHROPIC_API_KEY fails at once with one line naming the variable', async () => {
  await assert.rejects(createModel({ provider: 'anthropic', modelId: 'claude-test' }, { env: {} }), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'E_MODEL');
    assert.match(err.message, /ANTHROPIC_API_KEY/);
    assert.equal(err.message.split('\n').length, 1);
    return true;
  });
});
