// Attacks on `agent-apps serve`'s web gateway performed as an outsider would: HTTP requests to a
// real serve process on 127.0.0.1 (docs/security.md, "The callers"; docs/serve.md). A gateway
// sender is an untrusted caller: its body is data only (no `$`-keys, no `__proto__`), a ref arg
// is a bare name, and the route's skill is the only one it may reach. A payload that would run
// shows itself by writing a marker file.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startServe, workspace, type Owner } from '../serve-helpers.ts';

describe('serve: ingress through a web gateway', () => {
  const owned: (() => unknown)[] = [];
  const owner: Owner = { after: (fn) => owned.push(fn) };
  let url = '';
  let marker = '';
  let inline = '';
  let ws = '';
  before(async () => {
    ws = workspace(
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
    );
    marker = path.join(ws, 'PWNED');
    const source = `import fs from 'node:fs'; fs.writeFileSync(${JSON.stringify(marker)}, 'pwned'); export default async () => 'pwned';`;
    inline = `inline://code,${encodeURIComponent(source)}`;
    fs.writeFileSync(path.join(ws, 'evil.skill.ts'), `export const frontmatter = { name: 'evil', description: 'Evil.' };\n${source}\n`);
    url = (await startServe(owner, ws)).url;
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
