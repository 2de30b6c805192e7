// Attacks on `agent-apps serve`'s web gateway performed as an outsider would: HTTP requests to a
// real serve process on 127.0.0.1 (docs/security.md, "The callers"; docs/serve.md). A gateway
// sender is an untrusted caller: its body is data only (no `$`-keys, no `__proto__`), a ref arg
// is a bare name, and the route's skill is the only one it may reach. A payload that would run
// shows itself by writing a marker file.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { startServe, workspace, type Owner } from '../serve-helpers.ts';

/**
 * A served workspace holding a payload that shows itself if it ever runs: `evil.skill.ts` beside
 * the skills and an `inline://` module of the same code, both writing the marker file.
 */
async function servedWithPayload(owner: Owner, main: string, skills: Parameters<typeof workspace>[2], env: Record<string, string> = {}) {
  const ws = workspace(owner, main, skills);
  const marker = path.join(ws, 'PWNED');
  const source = `import fs from 'node:fs'; fs.writeFileSync(${JSON.stringify(marker)}, 'pwned'); export default async () => 'pwned';`;
  fs.writeFileSync(path.join(ws, 'evil.skill.ts'), `export const frontmatter = { name: 'evil', description: 'Evil.' };\n${source}\n`);
  const url = (await startServe(owner, ws, [], env)).url;
  return { ws, url, marker, inline: `inline://code,${encodeURIComponent(source)}` };
}

describe('serve: ingress through a web gateway', () => {
  const owned: (() => unknown)[] = [];
  const owner: Owner = { after: (fn) => owned.push(fn) };
  let url = '';
  let marker = '';
  let inline = '';
  let ws = '';
  before(async () => {
    ({ ws, url, marker, inline } = await servedWithPayload(
      owner,
      `gateways:
  api:
    type: web
    routes:
      - { method: POST, path: /greet, skill: greet }
      - { method: POST, path: /relay, skill: relay }
      - { method: GET, path: /echo/:name, skill: greet }`,
      {
        greet: { meta: `{ params: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } }`, body: 'async (_c, a) => `Hello, ${a.name}!`' },
        secret: { body: `async () => 'the secret ran'` },
        // A workspace skill whose params declare a ref: it invokes the tool named.
        relay: { meta: `{ params: { type: 'object', properties: { target: { type: 'string', 'x-ref': true } }, required: ['target'] } }`, body: 'async (ctx, a) => ctx.manager.invoke(a.target, { name: "x" })' },
      },
    ));
  });
  after(async () => {
    for (const fn of owned.reverse()) await fn();
  });

  const post = async (route: string, body: unknown) => {
    const r = await fetch(`${url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
    const text = await r.text();
    let json: { code?: string; message?: string } = {};
    try {
      json = JSON.parse(text);
    } catch {
      // a text answer
    }
    return { status: r.status, text, ...json };
  };

  test('$context in a JSON body (top level or nested): 403 E_UNTRUSTED_REF, nothing loads', async () => {
    const middleware = { [inline]: {} };
    for (const body of [{ name: 'Ada', $context: { middleware } }, { name: 'Ada', nested: { deeper: [{ $context: { middleware } }] } }, { name: 'Ada', $delegate: inline }]) {
      const r = await post('/greet', body);
      assert.equal(r.status, 403, r.text);
      assert.equal(r.code, 'E_UNTRUSTED_REF');
    }
    assert.equal(fs.existsSync(marker), false, 'the payload must not have run');
  });

  test('__proto__ in a JSON body is refused', async () => {
    const r = await post('/greet', '{"name":"Ada","__proto__":{"polluted":true}}');
    assert.equal(r.status, 403, r.text);
    assert.equal(r.code, 'E_UNTRUSTED_REF');
  });

  test('a path or URI in a route skill’s x-ref arg is refused before anything resolves', async () => {
    for (const target of ['./evil.skill.ts', path.join(ws, 'evil.skill.ts'), inline, `file://${path.join(ws, 'evil.skill.ts')}`]) {
      const r = await post('/relay', { target });
      assert.equal(r.status, 403, `${target}: ${r.text}`);
      assert.equal(r.code, 'E_UNTRUSTED_REF');
    }
    assert.equal(fs.existsSync(marker), false, 'the payload must not have run');
  });

  test('the route’s skill is the only one callable: a body cannot name another', async () => {
    // By name through a ref arg: the allow-list is the route's skill.
    const r = await post('/relay', { target: 'secret' });
    assert.equal(r.status, 403, r.text);
    assert.equal(r.code, 'E_ALLOWED_TOOLS');
    // Fields that look like a skill's name are only args of the route's skill.
    const g = await post('/greet', { name: 'Ada', skill: 'secret', ref: 'secret', tool: 'secret' });
    assert.equal(g.status, 200, g.text);
    assert.equal(g.text, 'Hello, Ada!');
  });

  test('a path param or query cannot carry a $-key either', async () => {
    const r = await fetch(`${url}/echo/Ada?%24context=1`);
    assert.equal(r.status, 403);
    assert.equal(((await r.json()) as { code: string }).code, 'E_UNTRUSTED_REF');
  });
});

// The same attacks through the other gateways of a real serve process: WebSocket frames (the `ws`
// client) and webhook deliveries — signed with the hook's secret, since an unsigned one never
// reaches the policy (401, nothing runs).
describe('serve: ingress through websocket and webhook gateways', () => {
  const owned: (() => unknown)[] = [];
  const owner: Owner = { after: (fn) => owned.push(fn) };
  const SECRET = 'ingress-hook-secret';
  let url = '';
  let marker = '';
  let inline = '';
  before(async () => {
    ({ url, marker, inline } = await servedWithPayload(
      owner,
      `gateways:
  live:
    type: websocket
    skill: greet
    skills: [greet, relay]
  gh:
    type: webhook
    verify: github
    secretEnv: INGRESS_HOOK_SECRET
    skill: on-hook`,
      {
        greet: { meta: `{ params: { type: 'object', properties: { name: { type: 'string' } } } }`, body: 'async (_c, a) => `Hello, ${a.name}!`' },
        secret: { body: `async () => 'the secret ran'` },
        relay: { meta: `{ params: { type: 'object', properties: { target: { type: 'string', 'x-ref': true } }, required: ['target'] } }`, body: 'async (ctx, a) => ctx.manager.invoke(a.target, { name: "x" })' },
        'on-hook': { body: `async (_c, a) => ({ got: a.event })` },
      },
      { INGRESS_HOOK_SECRET: SECRET },
    ));
  });
  after(async () => {
    for (const fn of owned.reverse()) await fn();
  });

  /** Sends each frame on one connection and collects the answer tagged with its id. */
  async function frames(sent: object[]): Promise<Map<string, { type: string; code?: string; result?: unknown }>> {
    const { WebSocket } = await import('ws');
    const sock = new WebSocket(`${url.replace('http', 'ws')}/ws/live`);
    const answers = new Map<string, { type: string; code?: string; result?: unknown }>();
    await new Promise<void>((resolve, reject) => {
      sock.once('error', reject);
      sock.once('open', () => {
        for (const f of sent) sock.send(JSON.stringify(f));
      });
      sock.on('message', (data) => {
        const m = JSON.parse(String(data)) as { id?: string; type: string; code?: string; error?: { code?: string }; result?: unknown };
        if (m.id === undefined || (m.type !== 'result' && m.type !== 'error')) return;
        answers.set(m.id, { type: m.type, code: m.code ?? m.error?.code, result: m.result });
        if (answers.size === sent.length) resolve();
      });
    });
    sock.close();
    return answers;
  }

  test('websocket: $context and __proto__ in a frame, a path ref, another skill by name — each refused, the connection serves on', async () => {
    const answers = await frames([
      { id: 'ctx', skill: 'greet', args: { name: 'Ada', $context: { middleware: { [inline]: {} } } } },
      { id: 'nested', skill: 'greet', args: { name: 'Ada', deep: [{ $delegate: inline }] } },
      { id: 'path', skill: 'relay', args: { target: './evil.skill.ts' } },
      { id: 'uri', skill: 'relay', args: { target: inline } },
      { id: 'other', skill: 'secret', args: {} },
      { id: 'by-ref', skill: 'relay', args: { target: 'secret' } },
      { id: 'ok', skill: 'greet', args: { name: 'Ada' } },
    ]);
    assert.deepEqual(Object.fromEntries([...answers].map(([id, a]) => [id, a.type === 'result' ? a.result : a.code])), {
      ctx: 'E_UNTRUSTED_REF',
      nested: 'E_UNTRUSTED_REF',
      path: 'E_UNTRUSTED_REF',
      uri: 'E_UNTRUSTED_REF',
      other: 'E_ALLOWED_TOOLS',
      'by-ref': 'E_ALLOWED_TOOLS',
      ok: 'Hello, Ada!',
    });
    assert.equal(fs.existsSync(marker), false, 'the payload must not have run');
  });

  const hook = (body: string, signWith: string | undefined, delivery: string) =>
    fetch(`${url}/hooks/gh`, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'push',
        'x-github-delivery': delivery,
        ...(signWith === undefined ? {} : { 'x-hub-signature-256': `sha256=${crypto.createHmac('sha256', signWith).update(body).digest('hex')}` }),
      },
    });

  test('webhook: unsigned or signed with another secret is 401 and runs nothing; a signed payload carrying $context is 403', async () => {
    const body = JSON.stringify({ ref: 'refs/heads/main' });
    assert.equal((await hook(body, undefined, 'w-1')).status, 401);
    assert.equal((await hook(body, 'not-the-secret', 'w-2')).status, 401);
    const evil = await hook(JSON.stringify({ ref: 'x', $context: { middleware: { [inline]: {} } } }), SECRET, 'w-3');
    assert.equal(evil.status, 403);
    assert.equal(((await evil.json()) as { error: { code: string } }).error.code, 'E_UNTRUSTED_REF');
    const ok = await hook(body, SECRET, 'w-4');
    assert.equal(ok.status, 200);
    assert.deepEqual(await ok.json(), { got: 'push' });
    assert.equal(fs.existsSync(marker), false, 'the payload must not have run');
  });
});
