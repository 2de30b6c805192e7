// The webhook gateway (src/surfaces/serve/webhook.ts, docs/serve.md "webhook") on a real HTTP
// server, its skill run by a real runtime as an untrusted caller: signed deliveries run the skill
// and answer its result; a bad signature is 401 and runs nothing (the marker file stays empty); a
// replayed delivery id is acknowledged and not re-run; Slack's timestamp window; a custom header;
// start-up refusals (a missing secret, verify: none off loopback) are E_CONFIG naming the key.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { runtimeAt, workspace } from './helpers.ts';
import { contextFor, ranLog, serveGateway } from './serve-gateway-helpers.ts';
import { DeliveryMemory, webhookGateway } from '../src/surfaces/serve/webhook.ts';

const SECRET = 'hook-secret-for-tests';
const ENV = 'AGENT_APPS_TEST_HOOK_SECRET';
process.env[ENV] = SECRET;

// Appends one line per run to ran.log beside skills/, and answers with what it got.
const FILES: Record<string, string> = {
  'skills/on-hook.skill.ts': `import fs from 'node:fs';
export const frontmatter = { name: 'on-hook', description: 'Records a delivery.' };
export default (_ctx: unknown, args: Record<string, unknown>) => {
  fs.appendFileSync(new URL('../ran.log', import.meta.url), JSON.stringify(args) + '\\n');
  return { ok: true, got: args };
};
`,
  // Runs until release exists beside skills/: a delivery still under way.
  'skills/slow-hook.skill.ts': `import fs from 'node:fs';
export const frontmatter = { name: 'slow-hook', description: 'Waits to be released.' };
export default async () => {
  fs.writeFileSync(new URL('../started', import.meta.url), '1');
  while (!fs.existsSync(new URL('../release', import.meta.url))) await new Promise((r) => setTimeout(r, 10));
  return 'finished';
};
`,
  'skills/boom.skill.ts': `export const frontmatter = { name: 'boom', description: 'Fails.' };
export default () => { throw Object.assign(new Error('it broke'), { code: 'E_BOOM' }); };
`,
};

const runs = ranLog;
const hmac = (data: string, secret = SECRET) => crypto.createHmac('sha256', secret).update(data).digest('hex');

async function post(url: string, body: string, headers: Record<string, string>): Promise<{ status: number; json: any }> {
  const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

describe('webhook gateway', () => {
  test('github: a signed delivery runs the skill and answers its result; a bad signature is 401 and runs nothing; a replay is acknowledged, not re-run', async (t) => {
    const s = await serveGateway(t, FILES, webhookGateway, 'gh', 'webhook', { type: 'webhook', verify: 'github', secretEnv: ENV, skill: 'on-hook' });
    const url = `${s.base}/hooks/gh`;
    const body = JSON.stringify({ action: 'opened', number: 7 });
    const good = { 'x-hub-signature-256': `sha256=${hmac(body)}`, 'x-github-event': 'pull_request', 'x-github-delivery': 'd-1' };

    const bad = await post(url, body, { ...good, 'x-hub-signature-256': `sha256=${hmac(body, 'wrong')}` });
    assert.equal(bad.status, 401);
    assert.equal(bad.json.error.code, 'E_SIGNATURE');
    const unsigned = await post(url, body, { 'x-github-event': 'push', 'x-github-delivery': 'd-0' });
    assert.equal(unsigned.status, 401);
    assert.deepEqual(runs(s.dir), [], 'nothing ran');
    assert.equal(s.messages.length, 0, 'nothing was dispatched');

    const ok = await post(url, body, good);
    assert.equal(ok.status, 200);
    assert.equal(ok.json.ok, true);
    assert.deepEqual(ok.json.got.payload, { action: 'opened', number: 7 });
    assert.equal(ok.json.got.event, 'pull_request');
    assert.equal(ok.json.got.delivery, 'd-1');
    assert.equal(ok.json.got.headers['x-github-event'], 'pull_request');
    assert.equal(ok.json.got.headers['x-hub-signature-256'], undefined, 'the signature is not handed on');
    assert.deepEqual(s.messages[0]!.data, { delivery: 'd-1', event: 'pull_request', headers: ok.json.got.headers });

    const again = await post(url, body, good);
    assert.equal(again.status, 200);
    assert.deepEqual(again.json, { duplicate: true, delivery: 'd-1' });
    assert.equal(runs(s.dir).length, 1, 'the replay did not run');

    // A bad signature with a fresh id does not poison that id.
    assert.equal((await post(url, body, { ...good, 'x-github-delivery': 'd-2', 'x-hub-signature-256': 'sha256=00' })).status, 401);
    assert.equal((await post(url, body, { ...good, 'x-github-delivery': 'd-2' })).status, 200);
    assert.equal(runs(s.dir).length, 2);
  });

  test('a repeated delivery id while the first is still running is 202, not run twice', async (t) => {
    const s = await serveGateway(t, FILES, webhookGateway, 'gh', 'webhook', { type: 'webhook', verify: 'github', secretEnv: ENV, skill: 'slow-hook' });
    const body = '{}';
    const headers = { 'x-hub-signature-256': `sha256=${hmac(body)}`, 'x-github-delivery': 'd-slow' };
    const first = post(`${s.base}/hooks/gh`, body, headers);
    const end = Date.now() + 10_000;
    while (!fs.existsSync(path.join(s.dir, 'started'))) {
      if (Date.now() > end) throw new Error('the skill did not start');
      await new Promise((r) => setTimeout(r, 10));
    }
    const second = await post(`${s.base}/hooks/gh`, body, headers);
    assert.equal(second.status, 202);
    assert.deepEqual(second.json, { duplicate: true, delivery: 'd-slow' });
    fs.writeFileSync(path.join(s.dir, 'release'), '1');
    assert.deepEqual(await first, { status: 200, json: 'finished' });
    assert.equal(s.messages.length, 1);
  });

  test('refusals before anything runs: GET is 405, a body over 1 MiB 413, a signed body that is not JSON 400', async (t) => {
    const s = await serveGateway(t, FILES, webhookGateway, 'gh', 'webhook', { type: 'webhook', verify: 'github', secretEnv: ENV, skill: 'on-hook' });
    const url = `${s.base}/hooks/gh`;
    assert.equal((await fetch(url)).status, 405);
    const big = JSON.stringify({ x: 'a'.repeat(1024 * 1024) });
    assert.equal((await post(url, big, { 'x-hub-signature-256': `sha256=${hmac(big)}` })).status, 413);
    const notJson = 'not json';
    const r = await post(url, notJson, { 'x-hub-signature-256': `sha256=${hmac(notJson)}` });
    assert.equal(r.status, 400);
    // Chunked, with no content-length: cut off at the cap as it streams.
    const chunks = new ReadableStream({
      start(c) {
        for (let i = 0; i < 20; i++) c.enqueue(new TextEncoder().encode('x'.repeat(64 * 1024)));
        c.close();
      },
    });
    const streamed = await fetch(url, { method: 'POST', body: chunks, duplex: 'half', headers: { 'x-hub-signature-256': 'sha256=00' } } as RequestInit).then((r) => r.status, (err: Error) => err.message);
    assert.equal(streamed, 413);
    assert.equal((await fetch(`${s.base}/hooks/other`, { method: 'POST', body: '{}' })).status, 404, 'another path is not this gateway’s');
    assert.deepEqual(runs(s.dir), []);
  });

  test('a failing skill answers its code; the delivery id is forgotten so that a redelivery runs again', async (t) => {
    const s = await serveGateway(t, FILES, webhookGateway, 'gh', 'webhook', { type: 'webhook', verify: 'github', secretEnv: ENV, skill: 'boom' });
    const body = '{}';
    const headers = { 'x-hub-signature-256': `sha256=${hmac(body)}`, 'x-github-delivery': 'd-9' };
    const first = await post(`${s.base}/hooks/gh`, body, headers);
    assert.equal(first.status, 500);
    assert.equal(first.json.error.code, 'E_BOOM');
    const second = await post(`${s.base}/hooks/gh`, body, headers);
    assert.equal(second.json.error?.code, 'E_BOOM', 'run again, not acknowledged as a duplicate');
    assert.equal(s.messages.length, 2);
  });

  test('a payload with a $-key is refused by the untrusted-caller policy (403), the skill not run', async (t) => {
    const s = await serveGateway(t, FILES, webhookGateway, 'gh', 'webhook', { type: 'webhook', verify: 'github', secretEnv: ENV, skill: 'on-hook' });
    const body = JSON.stringify({ $context: { middleware: { shell: {} } } });
    const r = await post(`${s.base}/hooks/gh`, body, { 'x-hub-signature-256': `sha256=${hmac(body)}` });
    assert.equal(r.status, 403);
    assert.equal(r.json.error.code, 'E_UNTRUSTED_REF');
    assert.deepEqual(runs(s.dir), []);
  });

  test('slack: a good signature runs; a timestamp six minutes old and a bad signature are 401', async (t) => {
    const s = await serveGateway(t, FILES, webhookGateway, 'sl', 'webhook', { type: 'webhook', verify: 'slack', secretEnv: ENV, skill: 'on-hook' });
    const url = `${s.base}/hooks/sl`;
    const body = JSON.stringify({ type: 'event_callback', event: { type: 'app_mention', text: 'hi' } });
    const now = Math.floor(Date.now() / 1000);
    const signed = (ts: number, b = body, secret = SECRET) => ({ 'x-slack-request-timestamp': String(ts), 'x-slack-signature': `v0=${hmac(`v0:${ts}:${b}`, secret)}` });

    const stale = await post(url, body, signed(now - 6 * 60));
    assert.equal(stale.status, 401);
    const bad = await post(url, body, signed(now, body, 'wrong'));
    assert.equal(bad.status, 401);
    assert.deepEqual(runs(s.dir), []);

    const ok = await post(url, body, signed(now));
    assert.equal(ok.status, 200);
    assert.equal(ok.json.got.event, 'app_mention');
    assert.equal(ok.json.got.payload.event.text, 'hi');

    // A retry of an Events API delivery carries the same event_id: acknowledged, not re-run.
    const evt = JSON.stringify({ type: 'event_callback', event_id: 'Ev1', event: { type: 'message' } });
    assert.equal((await post(url, evt, signed(now, evt))).status, 200);
    assert.deepEqual((await post(url, evt, { ...signed(now, evt), 'x-slack-retry-num': '1' })).json, { duplicate: true, delivery: 'Ev1' });
    assert.equal(runs(s.dir).length, 2);

    // Slack's url_verification challenge is echoed, without running the skill.
    const challenge = JSON.stringify({ type: 'url_verification', challenge: 'abc123' });
    const c = await post(url, challenge, signed(now, challenge));
    assert.deepEqual(c.json, { challenge: 'abc123' });
    assert.equal(runs(s.dir).length, 2);
  });

  test('hmac-sha256 with a custom header and delivery header', async (t) => {
    const s = await serveGateway(t, FILES, webhookGateway, 'gen', 'webhook', { type: 'webhook', verify: 'hmac-sha256', secretEnv: ENV, header: 'X-Signature', deliveryHeader: 'X-Request-Id', skill: 'on-hook' });
    const url = `${s.base}/hooks/gen`;
    const body = JSON.stringify({ hello: 'world' });
    assert.equal((await post(url, body, { 'x-hub-signature-256': `sha256=${hmac(body)}` })).status, 401, 'the GitHub header is not this entry’s');
    const ok = await post(url, body, { 'x-signature': hmac(body), 'x-request-id': 'r-1' });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.json.got.payload, { hello: 'world' });
    assert.equal(ok.json.got.delivery, 'r-1');
    assert.equal(ok.json.got.headers['x-signature'], undefined);
    const replay = await post(url, body, { 'x-signature': hmac(body), 'x-request-id': 'r-1' });
    assert.deepEqual(replay.json, { duplicate: true, delivery: 'r-1' });
    assert.equal(runs(s.dir).length, 1);
  });

  test('start-up: a missing secret env var, verify: none off loopback, an unknown scheme and hmac-sha256 without header are E_CONFIG naming the key', async (t) => {
    const dir = workspace(t, FILES);
    const rt = await runtimeAt(t, dir);
    const refused = (config: Record<string, unknown>, key: RegExp, loopback = true) =>
      assert.throws(() => webhookGateway(contextFor(rt, 'gh', 'webhook', config as never, { loopback })), (err: any) => err.code === 'E_CONFIG' && key.test(err.message));
    delete process.env.AGENT_APPS_TEST_HOOK_MISSING;
    refused({ type: 'webhook', verify: 'github', secretEnv: 'AGENT_APPS_TEST_HOOK_MISSING', skill: 'on-hook' }, /gateways\.gh\.secretEnv.*AGENT_APPS_TEST_HOOK_MISSING/);
    refused({ type: 'webhook', verify: 'github', skill: 'on-hook' }, /gateways\.gh\.secretEnv/);
    refused({ type: 'webhook', verify: 'none', skill: 'on-hook' }, /gateways\.gh\.verify.*loopback/, false);
    refused({ type: 'webhook', verify: 'md5', secretEnv: ENV, skill: 'on-hook' }, /gateways\.gh\.verify/);
    refused({ type: 'webhook', verify: 'hmac-sha256', secretEnv: ENV, skill: 'on-hook' }, /gateways\.gh\.header/);
    refused({ type: 'webhook', verify: 'github', secretEnv: ENV }, /gateways\.gh\.skill/);
    // verify: none on loopback is allowed.
    const gw = await webhookGateway(contextFor(rt, 'gh', 'webhook', { type: 'webhook', verify: 'none', skill: 'on-hook' }));
    await gw.close();
  });

  test('verify: none on loopback runs unsigned requests', async (t) => {
    const s = await serveGateway(t, FILES, webhookGateway, 'local', 'webhook', { type: 'webhook', verify: 'none', skill: 'on-hook' });
    const r = await post(`${s.base}/hooks/local`, '{"a":1}', {});
    assert.equal(r.status, 200);
    assert.deepEqual(r.json.got.payload, { a: 1 });
  });

  test('the delivery memory keeps the last N ids', () => {
    const m = new DeliveryMemory(3);
    for (const id of ['a', 'b', 'c']) m.set(id, 'done');
    m.get('a'); // recently seen: kept
    m.set('d', 'done');
    assert.equal(m.get('b'), undefined);
    assert.equal(m.get('a'), 'done');
    assert.equal(m.size, 3);
  });
});
