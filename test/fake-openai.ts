// Fake model servers on 127.0.0.1 (port 0) for the provider tests: each records what it was sent
// and answers request n with replies[n] — streamed SSE chunks, a JSON error (with headers such as
// Retry-After), a connection dropped before any answer or in the middle of the stream — and
// closes itself after 15 s at most. Nothing here mocks our code or Strands.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';

export type Reply =
  | { status: number; json: unknown; headers?: Record<string, string> }
  /** `dropAfter`: the connection is cut after that many chunks (no end of stream). */
  | { sse: unknown[]; dropAfter?: number }
  /** The connection is cut as soon as the request is read: no status, no body. */
  | { drop: true };

export interface FakeServer {
  baseURL: string;
  requests: Array<{ url: string; headers: IncomingMessage['headers']; body: any }>;
  close(): Promise<void>;
}

/**
 * A server on 127.0.0.1 (port 0) that records every request and lets `answer` reply to the
 * n-th one; it closes itself after 15 s at most. The OpenAI and Anthropic fakes are built on it.
 */
export async function recordingServer(answer: (n: number, res: ServerResponse) => void): Promise<FakeServer> {
  const requests: FakeServer['requests'] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => {
      requests.push({ url: req.url ?? '', headers: req.headers, body: raw ? JSON.parse(raw) : undefined });
      answer(requests.length - 1, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const guard = setTimeout(() => void close(), 15_000);
  guard.unref();
  function close(): Promise<void> {
    clearTimeout(guard);
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  }
  return { baseURL: `http://127.0.0.1:${port}/v1`, requests, close };
}

export function fakeOpenAI(replies: Reply[]): Promise<FakeServer> {
  return recordingServer((n, res) => {
    const reply = replies[n];
    if (!reply) {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'no more replies' } }));
    } else {
      answerWith(res, reply, (c) => `data: ${typeof c === 'string' ? c : JSON.stringify(c)}\n\n`);
    }
  });
}

/** Answers one request with `reply`; `frame` writes one SSE chunk. */
function answerWith(res: ServerResponse, reply: Reply, frame: (chunk: unknown) => string): void {
  if ('drop' in reply) {
    res.socket?.destroy();
  } else if ('sse' in reply) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const upTo = reply.dropAfter ?? reply.sse.length;
    for (const c of reply.sse.slice(0, upTo)) res.write(frame(c));
    // Cut after the chunks are on the wire: the client has read part of a response.
    if (reply.dropAfter !== undefined) setTimeout(() => res.socket?.destroy(), 20);
    else res.end();
  } else {
    res.writeHead(reply.status, { 'content-type': 'application/json', ...(reply.headers ?? {}) }).end(JSON.stringify(reply.json));
  }
}

/** Anthropic's SSE: `[event, data]` pairs. */
export type AnthropicEvent = [event: string, data: object];

/**
 * A fake Anthropic Messages API (the SDK posts to `${baseURL}/v1/messages`): reply n is a stream of
 * events (`{ sse: AnthropicEvent[] }`), an error with headers, or a dropped connection, as for
 * fakeOpenAI. `baseURL` is the server's root.
 */
export async function fakeAnthropic(replies: Reply[]): Promise<FakeServer> {
  const srv = await recordingServer((n, res) => {
    const reply = replies[n];
    if (!reply) {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: 'no more replies' } }));
      return;
    }
    answerWith(res, reply, (c) => {
      const [event, data] = c as AnthropicEvent;
      return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    });
  });
  return { ...srv, baseURL: srv.baseURL.replace(/\/v1$/, '') };
}

/** An Anthropic response: optional text, then optional `invoke` code; usage in and out. */
export function anthropicReply(opts: { text?: string; code?: string; input?: number; output?: number }): Reply {
  const events: AnthropicEvent[] = [
    ['message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-test', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: opts.input ?? 50, output_tokens: 1 } } }],
  ];
  let index = 0;
  if (opts.text !== undefined) {
    events.push(
      ['content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }],
      ['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: opts.text } }],
      ['content_block_stop', { type: 'content_block_stop', index }],
    );
    index++;
  }
  if (opts.code !== undefined) {
    events.push(
      ['content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: `toolu_${index}`, name: 'invoke', input: {} } }],
      ['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify({ code: opts.code }) } }],
      ['content_block_stop', { type: 'content_block_stop', index }],
    );
  }
  events.push(
    ['message_delta', { type: 'message_delta', delta: { stop_reason: opts.code !== undefined ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: opts.output ?? 12 } }],
    ['message_stop', { type: 'message_stop' }],
  );
  return { sse: events };
}

export const chunk = (delta: unknown, finish: string | null = null) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 0,
  model: 'fake-model',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

export const usage = (p: number, c: number) => ({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 0, model: 'fake-model', choices: [], usage: { prompt_tokens: p, completion_tokens: c, total_tokens: p + c } });

/** A streamed `invoke` tool call whose JSON arguments arrive in five pieces, optionally after some text. */
export function toolCallReply(code: string, text?: string): Reply {
  const args = JSON.stringify({ code });
  const cuts = [0, 4, 17, Math.floor(args.length / 2), args.length - 3, args.length];
  const pieces = cuts.slice(1).map((end, i) => args.slice(cuts[i], end));
  return {
    sse: [
      chunk({ role: 'assistant', content: text ?? null }),
      chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'invoke', arguments: '' } }] }),
      ...pieces.map((p) => chunk({ tool_calls: [{ index: 0, function: { arguments: p } }] })),
      chunk({}, 'tool_calls'),
      usage(120, 30),
      '[DONE]',
    ],
  };
}

export function textReply(...parts: string[]): Reply {
  return { sse: [chunk({ role: 'assistant', content: '' }), ...parts.map((p) => chunk({ content: p })), chunk({}, 'stop'), usage(160, 8), '[DONE]'] };
}
