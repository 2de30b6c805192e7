// Fake model servers on 127.0.0.1 (port 0) for the provider tests: each records what it was sent
// and answers request n with replies[n] — streamed SSE chunks or a JSON error — and closes itself
// after 15 s at most. Nothing here mocks our code or Strands.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';

export type Reply = { status: number; json: unknown } | { sse: unknown[] };

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
    } else if ('sse' in reply) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const c of reply.sse) res.write(`data: ${typeof c === 'string' ? c : JSON.stringify(c)}\n\n`);
      res.end();
    } else {
      res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.json));
    }
  });
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
