// `agent-apps mcp serve --http` (SPEC §16, server): Streamable HTTP at /mcp on 127.0.0.1, both
// protocol eras, the bearer token, DNS-rebinding protection, and the official conformance suite
// (@modelcontextprotocol/conformance) with its committed baseline. Binds only to 127.0.0.1.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { REPO, baseEnv, connectHttp, spawnServe, startHttp, tempDir, text, until, type ServeProcess } from './mcp-server-helpers.ts';

// The tests that need a plain server share one: spawning is most of their cost.
const closers: (() => unknown)[] = [];
after(async () => {
  for (const close of closers) await close();
});
let plain: Promise<ServeProcess & { url: string }> | undefined;
const server = () => (plain ??= startHttp({ after: (fn) => closers.push(fn) }));

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

/** A raw POST to the endpoint (node:http, so that Host and Origin can be anything). */
function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      let data = '';
      res.setEncoding('utf8').on('data', (d: string) => (data += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('mcp serve --http', () => {
  test('serves both protocol eras at /mcp on 127.0.0.1', async (t) => {
    const { url } = await server();
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    for (const era of ['legacy', 'modern'] as const) {
      const { client } = await connectHttp(t, url, { era });
      assert.equal(client.getProtocolEra(), era);
      assert.ok((await client.listTools()).tools.some((tool) => tool.name === 'stats'));
      const stats = await client.callTool({ name: 'stats', arguments: { text: 'a b' } });
      assert.deepEqual(stats.structuredContent, { words: 2, chars: 3 });
      const invalid = await client.callTool({ name: 'stats', arguments: {} });
      assert.equal(invalid.isError, true);
      assert.match(text(invalid), /^E_VALIDATION: /);
      assert.deepEqual((await client.listPrompts()).prompts.map((p) => p.name), ['report', 'review', 'summarize']);
    }
    assert.equal((await post(url.replace('/mcp', '/other'), INITIALIZE)).status, 404);
  });

  test('progress and cancellation, in a 2025-11-25 session and in the 2026-07-28 era', async (t) => {
    const { url } = await server();
    for (const era of ['legacy', 'modern'] as const) {
      const { client, wire } = await connectHttp(t, url, { era });
      await client.callTool({ name: 'chatty', arguments: { steps: 2 } }, { onprogress: () => {} });
      assert.deepEqual(wire.filter((m) => m.method === 'notifications/progress').map((m) => m.params?.message), ['chatty: step 1 of 2', 'chatty: step 2 of 2'], era);
      const marker = path.join(tempDir(t), 'finally.txt');
      const controller = new AbortController();
      await assert.rejects(client.callTool({ name: 'linger', arguments: { marker } }, { signal: controller.signal, onprogress: () => controller.abort('enough') }));
      await until(() => fs.existsSync(marker), 5000, `the finally block (${era})`);
    }
  });

  test('a token given on loopback is checked: 401 without it, served with it', async (t) => {
    const guarded = await startHttp(t, ['--token', 's3cret']);
    const without = await post(guarded.url, INITIALIZE);
    assert.equal(without.status, 401);
    assert.match(String(without.headers['www-authenticate']), /^Bearer/);
    assert.equal((await post(guarded.url, INITIALIZE, { Authorization: 'Bearer wrong' })).status, 401);
    const withToken = await post(guarded.url, INITIALIZE, { Authorization: 'Bearer s3cret' });
    assert.equal(withToken.status, 200);
    assert.match(withToken.body, /"protocolVersion":"2025-11-25"/);
    const { client } = await connectHttp(t, guarded.url, { token: 's3cret' });
    assert.equal(text(await client.callTool({ name: 'greet', arguments: { name: 'Ada' } })), 'Hello, Ada!');
  });

  test('AGENT_APPS_MCP_TOKEN is the token when --token is not given', async (t) => {
    const guarded = await startHttp(t, [], { env: { AGENT_APPS_MCP_TOKEN: 'from-env' } });
    assert.equal((await post(guarded.url, INITIALIZE)).status, 401);
    assert.equal((await post(guarded.url, INITIALIZE, { Authorization: 'Bearer from-env' })).status, 200);
  });

  test('a non-loopback bind without a token is refused with exit 2', async (t) => {
    const proc = spawnServe(t, ['--http', '0.0.0.0:0']);
    const { code } = await proc.exited;
    assert.equal(code, 2);
    assert.match(proc.stderr(), /needs a bearer token — pass --token-file <path>, set AGENT_APPS_MCP_TOKEN/);
    const bad = spawnServe(t, ['--http', 'nonsense']);
    assert.equal((await bad.exited).code, 2);
    assert.match(bad.stderr(), /--http: expected \[HOST:\]PORT/);
  });

  test('DNS-rebinding protection: a foreign Host or Origin is refused', async (t) => {
    const { url } = await server();
    const port = new URL(url).port;
    assert.equal((await post(url, INITIALIZE, { Host: `evil.example:${port}` })).status, 403);
    assert.equal((await post(url, INITIALIZE, { Origin: 'http://evil.example' })).status, 403);
    assert.equal((await post(url, INITIALIZE, { Host: `localhost:${port}`, Origin: `http://localhost:${port}` })).status, 200);
  });
});

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

/** Runs the conformance suite against `url`; returns scenario → its checks. */
async function conformance(url: string, out: string, extra: string[]): Promise<Map<string, Check[]>> {
  const bin = path.join(REPO, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'server', '--url', url, '--suite', 'all', '-o', out, ...extra], { env: baseEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    // Its exit code counts failures; what they are is judged below, against the baseline.
    child.on('close', (code) => (code === null ? reject(new Error(`conformance was killed: ${stderr}`)) : resolve()));
  });
  const results = new Map<string, Check[]>();
  for (const dir of fs.readdirSync(out)) {
    const scenario = dir.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, '');
    results.set(scenario, JSON.parse(fs.readFileSync(path.join(out, dir, 'checks.json'), 'utf8')) as Check[]);
  }
  return results;
}

describe('the official MCP conformance suite', () => {
  test('every scenario outside the committed baseline passes; the baseline lists exactly what fails', async (t) => {
    const baseline = JSON.parse(fs.readFileSync(path.join(REPO, 'test', 'fixtures', 'mcp-conformance-baseline.json'), 'utf8')) as { scenarios: Record<string, { reason: string; checks: string[] }> };
    const { url } = await server();
    const out = tempDir(t, 'agent-apps-conformance-');
    const legs = [
      await conformance(url, path.join(out, 'default'), []),
      await conformance(url, path.join(out, '2026-07-28'), ['--spec-version', '2026-07-28']),
    ];
    const unexpected: string[] = [];
    const failedInBaseline = new Map<string, Set<string>>();
    let passed = 0;
    for (const leg of legs) {
      assert.ok(leg.size > 30, `the suite ran (${leg.size} scenarios)`);
      for (const [scenario, checks] of leg) {
        const expected = baseline.scenarios[scenario];
        for (const c of checks) {
          if (c.status !== 'FAILURE') {
            if (c.status === 'SUCCESS') passed++;
            continue;
          }
          if (expected?.checks.includes(c.id)) {
            if (!failedInBaseline.has(scenario)) failedInBaseline.set(scenario, new Set());
            failedInBaseline.get(scenario)!.add(c.id);
          } else unexpected.push(`${scenario} / ${c.id}: ${c.errorMessage ?? ''}`);
        }
      }
    }
    assert.deepEqual(unexpected, [], 'failures outside the baseline');
    const stale = Object.keys(baseline.scenarios).filter((s) => !failedInBaseline.has(s));
    assert.deepEqual(stale, [], 'baseline entries that no longer fail (remove them)');
    t.diagnostic(`conformance: ${passed} checks passed; ${failedInBaseline.size} scenarios fail only on the suite's own fixtures (baselined)`);
  });
});
