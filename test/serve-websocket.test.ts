// The websocket gateway (src/surfaces/serve/websocket.ts, docs/serve.md "websocket") on a real
// HTTP server with the `ws` client, its skills run by a real runtime as an untrusted caller: a
// frame is answered by a result frame tagged with its id; a route with `skills: [a, b]` runs the
// one a frame names and refuses one outside the list (E_ALLOWED_TOOLS); `$context` in args is
// E_UNTRUSTED_REF; a throwing skill is an error frame and the connection stays open; closing the
// socket aborts its runs.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { WebSocket } from 'ws';
import { serveGateway } from './serve-gateway-helpers.ts';
import { parseFrame, websocketGateway } from '../src/surfaces/serve/websocket.ts';

const FILES: Record<string, string> = {
  'skills/echo.skill.ts': `export const frontmatter = { name: 'echo', description: 'Echoes.' };
export default (_ctx: unknown, args: { message?: unknown }) => ({ echo: args.message ?? null });
`,
  'skills/a.skill.ts': `export const frontmatter = { name: 'a', description: 'A.' };
export default (_ctx: unknown, args: unknown) => ({ ran: 'a', args });
`,
  'skills/b.skill.ts': `export const frontmatter = { name: 'b', description: 'B.' };
export default (_ctx: unknown, args: unknown) => ({ ran: 'b', args });
`,
  'skills/c.skill.ts': `export const frontmatter = { name: 'c', description: 'C, not on the route.' };
export default () => ({ ran: 'c' });
`,
  'skills/throws.skill.ts': `export const frontmatter = { name: 'throws', description: 'Fails.' };
export default () => { throw Object.assign(new Error('it broke'), { code: 'E_BOOM' }); };
`,
  // Waits for its run's signal, then records that it was aborted.
  'skills/wait.skill.ts': `import fs from 'node:fs';
export const frontmatter = { name: 'wait', description: 'Waits to be aborted.' };
export default (ctx: { run: { signal: AbortSignal } }) => new Promise((resolve) => {
  fs.writeFileSync(new URL('../started', import.meta.url), '1');
  const done = () => { fs.writeFileSync(new URL('../aborted', import.meta.url), '1'); resolve('aborted'); };
  if (ctx.run.signal.aborted) done(); else ctx.run.signal.addEventListener('abort', done, { once: true });
});
`,
};

/** A connected client and the frames it receives, parsed, in order. */
async function connect(url: string): Promise<{ ws: WebSocket; frames: any[]; next(): Promise<any> }> {
  const ws = new WebSocket(url);
  const frames: any[] = [];
  const waiting: ((f: any) => void)[] = [];
  let seen = 0;
  ws.on('message', (data) => {
    frames.push(JSON.parse(data.toString()));
    waiting.shift()?.(undefined);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const next = async () => {
    while (frames.length <= seen) await new Promise((r) => waiting.push(r));
    return frames[seen++];
  };
  return { ws, frames, next };
}

async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('websocket gateway', () => {
  test('a text frame is the route skill’s message; an envelope’s id tags its result', async (t) => {
    const s = await serveGateway(t, FILES, websocketGateway, 'chat', 'websocket', { type: 'websocket', skill: 'echo' });
    const c = await connect(`ws://127.0.0.1:${s.port}/ws/chat`);
    t.after(() => c.ws.close());
    c.ws.send('hello');
    assert.deepEqual(await c.next(), { id: null, type: 'result', result: { echo: 'hello' } });
    c.ws.send(JSON.stringify({ id: 'q1', message: 'hi there' }));
    assert.deepEqual(await c.next(), { id: 'q1', type: 'result', result: { echo: 'hi there' } });
    c.ws.send(JSON.stringify({ id: 2, args: { message: 42 } }));
    assert.deepEqual(await c.next(), { id: 2, type: 'result', result: { echo: 42 } });
    // JSON that is not an envelope is a message like any text.
    c.ws.send('{"hello":1}');
    assert.deepEqual(await c.next(), { id: null, type: 'result', result: { echo: '{"hello":1}' } });
    assert.equal(s.messages[0]!.skill, 'echo');
    assert.deepEqual(s.messages[1]!.data, { id: 'q1', connection: 1, skill: 'echo' });
  });

  test('skills: [a, b] — a frame naming b runs b; one naming c is E_ALLOWED_TOOLS; $context is E_UNTRUSTED_REF; a throwing skill leaves the connection open', async (t) => {
    const s = await serveGateway(t, FILES, websocketGateway, 'multi', 'websocket', { type: 'websocket', skill: 'a', skills: ['a', 'b', 'throws'] });
    const c = await connect(`ws://127.0.0.1:${s.port}/ws/multi`);
    t.after(() => c.ws.close());

    c.ws.send(JSON.stringify({ id: 1, skill: 'b', args: { x: 1 } }));
    assert.deepEqual(await c.next(), { id: 1, type: 'result', result: { ran: 'b', args: { x: 1 } } });

    c.ws.send(JSON.stringify({ id: 2, skill: 'c', args: {} }));
    const refused = await c.next();
    assert.equal(refused.id, 2);
    assert.equal(refused.type, 'error');
    assert.equal(refused.error.code, 'E_ALLOWED_TOOLS');

    c.ws.send(JSON.stringify({ id: 3, skill: 'a', args: { $context: { middleware: { shell: {} } } } }));
    const untrusted = await c.next();
    assert.equal(untrusted.id, 3);
    assert.equal(untrusted.error.code, 'E_UNTRUSTED_REF');

    c.ws.send(JSON.stringify({ id: 4, skill: './skills/c.skill.ts' }));
    assert.equal((await c.next()).error.code, 'E_UNTRUSTED_REF', 'a path is not a name');

    c.ws.send(JSON.stringify({ id: 5, skill: 'throws' }));
    const failed = await c.next();
    assert.deepEqual(failed, { id: 5, type: 'error', error: { code: 'E_BOOM', message: 'it broke' } });

    assert.equal(c.ws.readyState, WebSocket.OPEN, 'the connection survives');
    c.ws.send(JSON.stringify({ id: 6, message: 'still here' }));
    assert.deepEqual(await c.next(), { id: 6, type: 'result', result: { ran: 'a', args: { message: 'still here' } } });
  });

  test('closing the socket aborts its runs', async (t) => {
    const s = await serveGateway(t, FILES, websocketGateway, 'w', 'websocket', { type: 'websocket', skill: 'wait' });
    const c = await connect(`ws://127.0.0.1:${s.port}/ws/w`);
    c.ws.send('go');
    await until(() => fs.existsSync(path.join(s.dir, 'started')), 'the skill to start');
    c.ws.close();
    await until(() => fs.existsSync(path.join(s.dir, 'aborted')), 'the run to be aborted');
  });

  test('a frame over 1 MiB closes the socket (1009); another path is not this gateway’s', async (t) => {
    const s = await serveGateway(t, FILES, websocketGateway, 'chat', 'websocket', { type: 'websocket', skill: 'echo' });
    const c = await connect(`ws://127.0.0.1:${s.port}/ws/chat`);
    const closed = new Promise<number>((resolve) => c.ws.once('close', (code) => resolve(code)));
    c.ws.send('x'.repeat(1024 * 1024 + 1));
    assert.equal(await closed, 1009);
    assert.equal(s.messages.length, 0);

    const other = new WebSocket(`ws://127.0.0.1:${s.port}/ws/other`);
    await new Promise<void>((resolve) => other.once('error', () => resolve()));
  });

  test('a browser origin other than the host’s is refused (403) unless origins lists it', async (t) => {
    const s = await serveGateway(t, FILES, websocketGateway, 'chat', 'websocket', { type: 'websocket', skill: 'echo', origins: ['https://app.example.com'] });
    const url = `ws://127.0.0.1:${s.port}/ws/chat`;
    const status = (origin: string) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(url, { origin });
        ws.once('open', () => {
          ws.close();
          resolve(101);
        });
        ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.once('error', () => {});
      });
    assert.equal(await status('https://evil.example'), 403);
    assert.equal(await status('https://app.example.com'), 101);
    assert.equal(await status(`http://127.0.0.1:${s.port}`), 101, 'a page of this host');
    assert.ok(s.logged.some((l) => l.includes('evil.example')));
  });

  test('parseFrame: text, envelopes, JSON that is not an envelope', () => {
    assert.deepEqual(parseFrame('hi'), { id: null, args: { message: 'hi' } });
    assert.deepEqual(parseFrame('{"id":"x","skill":"b","args":{"k":1}}'), { id: 'x', skill: 'b', args: { k: 1 } });
    assert.deepEqual(parseFrame('{"message":"m"}'), { id: null, args: { message: 'm' } });
    assert.deepEqual(parseFrame('[1,2]'), { id: null, args: { message: '[1,2]' } });
    assert.deepEqual(parseFrame('{}'), { id: null, args: { message: '{}' } });
    assert.deepEqual(parseFrame('{"text":"t"}'), { id: null, args: { message: '{"text":"t"}' } });
  });
});
