// `agent-apps serve` with a `web` gateway (docs/serve.md), as a client sees it: a real CLI
// process on 127.0.0.1, real HTTP requests. Routes, args from path / query / body, status codes
// from error codes, SSE, the `gateway-message` event, signals and the start-up errors.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { spawnServe, startServe, until, workspace, type Owner } from './serve-helpers.ts';

const MAIN = `gateways:
  api:
    type: web
    routes:
      - { method: GET, path: /orders/:id, skill: order }
      - { method: POST, path: /orders, skill: create }
      - { method: GET, path: /boom, skill: boom }
      - { method: GET, path: /slow, skill: slow }
      - { method: GET, path: /hang, skill: hang }
  broken:
    type: web
    routes: 3
event:
  routes:
    - { topic: gateway-message, ref: record }`;

function fixture(t: Owner): { ws: string; seen: string } {
  let ws = '';
  const skills = {
    order: {
      meta: `{ params: { type: 'object', properties: { id: { type: 'string' }, full: { type: 'string' } }, required: ['id'] } }`,
      body: `async (ctx, a) => { ctx.manager.log({ type: 'step', level: 'info', text: 'looking up ' + a.id }); ctx.manager.log({ type: 'step', level: 'debug', text: 'not shown' }); return { id: a.id, full: a.full ?? null, path: ctx.nonlocals.request?.path, method: ctx.nonlocals.request?.method, gateway: ctx.nonlocals.gateway?.name, type: ctx.nonlocals.gateway?.type }; }`,
    },
    create: { meta: `{ params: { type: 'object', properties: { qty: { type: 'number' }, note: { type: 'string' } }, required: ['qty'] } }`, body: 'async (_c, a) => `created ${a.qty} ${a.note ?? ""}`.trim()' },
    boom: { body: `async () => { throw new Error('kaput'); }` },
    slow: { body: `async () => { (await import('node:fs')).writeFileSync(process.cwd() + '/slow-started', ''); await new Promise((r) => setTimeout(r, 400)); return { slow: 'done' }; }` },
    hang: { body: `async (ctx) => { const fs = await import('node:fs'); fs.writeFileSync(process.cwd() + '/hang-started', ''); const s = ctx.run.signal; if (!s.aborted) await new Promise((r) => s.addEventListener('abort', r, { once: true })); fs.writeFileSync(process.cwd() + '/hang-aborted', String(s.reason?.code ?? s.reason)); return 'gone'; }` },
    record: { body: `async (_c, a) => { (await import('node:fs')).appendFileSync(process.cwd() + '/seen.jsonl', JSON.stringify(a.event) + '\\n'); return 'ok'; }` },
  };
  ws = workspace(t, MAIN, skills);
  return { ws, seen: path.join(ws, 'seen.jsonl') };
}

describe('serve: a web gateway', () => {
  const owned: (() => unknown)[] = [];
  const owner: Owner = { after: (fn) => owned.push(fn) };
  let url = '';
  let ws = '';
  let seen = '';
  let stderr: () => string = () => '';
  before(async () => {
    ({ ws, seen } = fixture(owner));
    const proc = await startServe(owner, ws);
    url = proc.url;
    stderr = proc.stderr;
  });
  after(async () => {
    for (const fn of owned.reverse()) await fn();
  });

  test('GET /healthz answers 200', async () => {
    const r = await fetch(`${url}/healthz`);
    assert.equal(r.status, 200);
    assert.equal(((await r.json()) as { ok: boolean }).ok, true);
  });

  test('a GET route: path params and query are the args; nonlocals.request and .gateway are set; an object is JSON', async () => {
    const r = await fetch(`${url}/orders/42?full=yes`);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /application\/json/);
    assert.deepEqual(await r.json(), { id: '42', full: 'yes', path: '/orders/42', method: 'GET', gateway: 'api', type: 'web' });
  });

  test('a POST route takes a JSON body; a text result is text', async () => {
    const r = await fetch(`${url}/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ qty: 3, note: 'rush' }) });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /text\/plain/);
    assert.equal(await r.text(), 'created 3 rush');
  });

  test('args the params refuse: 400 with { code: E_VALIDATION, message }', async () => {
    const r = await fetch(`${url}/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ qty: 'many' }) });
    assert.equal(r.status, 400);
    const body = (await r.json()) as { code: string; message: string };
    assert.equal(body.code, 'E_VALIDATION');
    assert.match(body.message, /qty/);
  });

  test('an unknown route is 404', async () => {
    const r = await fetch(`${url}/nowhere`);
    assert.equal(r.status, 404);
    await r.arrayBuffer();
  });

  test('a skill that throws answers 500 with its error, and the next request is served', async () => {
    const r = await fetch(`${url}/boom`);
    assert.equal(r.status, 500);
    assert.match(((await r.json()) as { message: string }).message, /kaput/);
    const next = await fetch(`${url}/orders/7`);
    assert.equal(next.status, 200);
    assert.equal(((await next.json()) as { id: string }).id, '7');
  });

  test('Accept: text/event-stream: the run’s log events (info and up) stream, then a result event', async () => {
    const r = await fetch(`${url}/orders/9`, { headers: { accept: 'text/event-stream' } });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /text\/event-stream/);
    const events = (await r.text()).split('\n\n').filter(Boolean).map((block) => ({ event: /^event: (.*)$/m.exec(block)?.[1], data: JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null') }));
    const logs = events.filter((e) => e.event === 'log');
    assert.ok(logs.some((e) => e.data.text === 'looking up 9'), JSON.stringify(events));
    assert.ok(!logs.some((e) => e.data.text === 'not shown'));
    assert.deepEqual(events.at(-1), { event: 'result', data: { id: '9', full: null, path: '/orders/9', method: 'GET', gateway: 'api', type: 'web' } });
  });

  test('every message emits gateway-message (type = the gateway type, source = its name, data = the request)', async () => {
    const r = await fetch(`${url}/orders/77?full=x`);
    await r.arrayBuffer();
    const line = await until(() => (fs.existsSync(seen) ? fs.readFileSync(seen, 'utf8').split('\n').find((l) => l.includes('"/orders/77"')) : undefined), 10_000, 'the gateway-message route');
    const event = JSON.parse(line) as { topic: string; type: string; source: string; data: { method: string; path: string; params: Record<string, string>; query: Record<string, string> } };
    assert.equal(event.topic, 'gateway-message');
    assert.equal(event.type, 'web');
    assert.equal(event.source, 'api');
    assert.deepEqual([event.data.method, event.data.path, event.data.params, event.data.query], ['GET', '/orders/77', { id: '77' }, { full: 'x' }]);
  });

  test('a client that closes its connection aborts its run: the skill’s run.signal fires with E_ABORTED', async () => {
    const client = new AbortController();
    const answer = fetch(`${url}/hang`, { signal: client.signal }).catch((err: unknown) => err);
    await until(() => fs.existsSync(path.join(ws, 'hang-started')), 20_000, 'the hang skill to start');
    client.abort();
    await answer;
    await until(() => fs.existsSync(path.join(ws, 'hang-aborted')), 20_000, 'the run to be aborted');
    assert.equal(fs.readFileSync(path.join(ws, 'hang-aborted'), 'utf8'), 'E_ABORTED');
    assert.equal((await fetch(`${url}/healthz`)).status, 200);
  });

  test('a malformed gateway entry is one E_CONFIG line naming the file and key; the others serve', () => {
    const line = stderr().split('\n').find((l) => l.includes('E_CONFIG'));
    assert.ok(line, stderr());
    assert.match(line, /main\.md/);
    assert.match(line, /gateways\.broken/);
    assert.match(stderr(), /web gateway 'api' on http:\/\/127\.0\.0\.1:\d+/);
  });
});

describe('serve: signals and start-up errors', () => {
  test('SIGTERM drains (a running request finishes) and exits 0', async (t) => {
    const { ws } = fixture(t);
    const proc = await startServe(t, ws);
    const slow = fetch(`${proc.url}/slow`);
    // The signal comes while the skill runs (it says so with a file), not before the request arrives.
    await until(() => fs.existsSync(path.join(ws, 'slow-started')), 20_000, 'the slow skill to start');
    proc.child.kill('SIGTERM');
    const r = await slow;
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), { slow: 'done' });
    assert.equal((await proc.exited).code, 0, proc.stderr());
  });

  test('a drain that runs out (--drain-ms) aborts what still runs: its run.signal fires with E_ABORTED, exit 0', async (t) => {
    const { ws } = fixture(t);
    const proc = await startServe(t, ws, ['--drain-ms', '50']);
    const answer = fetch(`${proc.url}/hang`).catch((err: unknown) => err);
    await until(() => fs.existsSync(path.join(ws, 'hang-started')), 20_000, 'the hang skill to start');
    proc.child.kill('SIGTERM');
    assert.equal((await proc.exited).code, 0, proc.stderr());
    await answer;
    assert.equal(fs.readFileSync(path.join(ws, 'hang-aborted'), 'utf8'), 'E_ABORTED');
  });

  test('--max-ms: a request past it is aborted and answers 504 E_TIMEOUT; the server goes on', async (t) => {
    const { ws } = fixture(t);
    const proc = await startServe(t, ws, ['--max-ms', '100']);
    const r = await fetch(`${proc.url}/slow`);
    assert.equal(r.status, 504);
    assert.equal(((await r.json()) as { code: string }).code, 'E_TIMEOUT');
    assert.equal((await fetch(`${proc.url}/healthz`)).status, 200);
  });

  test('SIGINT exits 130', async (t) => {
    const { ws } = fixture(t);
    const proc = await startServe(t, ws);
    proc.child.kill('SIGINT');
    assert.equal((await proc.exited).code, 130, proc.stderr());
  });

  test('a non-loopback --http without a token: exit 2 before anything listens', async (t) => {
    const { ws } = fixture(t);
    const proc = spawnServe(t, ws, ['--http', '0.0.0.0:0']);
    assert.equal((await proc.exited).code, 2);
    assert.match(proc.stderr(), /not loopback.*token/);
  });

  test('a port in use: one line naming it, exit 2', async (t) => {
    const { ws } = fixture(t);
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    t.after(() => new Promise<void>((r) => blocker.close(() => r())));
    const port = (blocker.address() as net.AddressInfo).port;
    const proc = spawnServe(t, ws, ['--http', `127.0.0.1:${port}`]);
    assert.equal((await proc.exited).code, 2);
    const lines = proc.stderr().trim().split('\n').filter((l) => l.includes(String(port)));
    assert.equal(lines.length, 1, proc.stderr());
    assert.match(lines[0]!, new RegExp(`127\\.0\\.0\\.1:${port}.*in use`));
  });

  test('with a token (AGENT_APPS_SERVE_TOKEN) every request but /healthz needs it as a bearer token', async (t) => {
    const { ws } = fixture(t);
    const proc = await startServe(t, ws, [], { AGENT_APPS_SERVE_TOKEN: 's3cret-token' });
    assert.equal((await fetch(`${proc.url}/healthz`)).status, 200);
    const denied = await fetch(`${proc.url}/orders/1`);
    assert.equal(denied.status, 401);
    await denied.arrayBuffer();
    const ok = await fetch(`${proc.url}/orders/1`, { headers: { authorization: 'Bearer s3cret-token' } });
    assert.equal(ok.status, 200);
    await ok.arrayBuffer();
  });
});
