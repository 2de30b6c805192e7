// Bounds of MCP in both directions, each attacked the way an outsider would (docs/mcp.md: the
// server keys maxBytes and maxCallMs, "What a server cannot do", "Streamable HTTP"): an MCP server
// whose tools/call answer never ends (a JSON body, an SSE event) or that reports progress forever;
// a stdio server that prints a huge line; clients that open sessions of `mcp serve --http` until
// the table is full; and the bearer token kept off the command line.
// The attacking servers are hand-written (the attacker is the server); our side is the real
// runtime or the real CLI. Everything binds to 127.0.0.1 and is stopped when its test ends.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createRuntime } from '../../src/index.ts';
import { alive, hubOf, mcpWorkspace, outcome, until } from '../mcp-client-helpers.ts';
import { connectHttp, spawnServe, startHttp, tempDir, text } from '../mcp-server-helpers.ts';

// ── a hostile Streamable HTTP server (2025-11-25, stateless) ─────────────────────────────────

interface Rpc {
  jsonrpc: '2.0';
  id?: number | string;
  method?: string;
  params?: { name?: string; _meta?: { progressToken?: number | string }; requestId?: number | string };
}

interface Attacker {
  url: string;
  /** Every JSON-RPC message the client POSTed, in order. */
  received: Rpc[];
  /** Resolves when the connection that carried a tools/call of `tool` closed. */
  closed(tool: string): Promise<void>;
  /** Bytes the server wrote into the endless answers. */
  written(): number;
}

const TOOLS = ['echo', 'flood', 'sse-flood', 'stall'].map((name) => ({ name, description: `the ${name} tool`, inputSchema: { type: 'object' } }));

async function attacker(t: TestContext): Promise<Attacker> {
  const received: Rpc[] = [];
  const closings = new Map<string, Promise<void>>();
  let written = 0;
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => (body += d));
    req.on('end', () => {
      const msg = JSON.parse(body) as Rpc;
      received.push(msg);
      if (msg.id === undefined) return void res.writeHead(202).end();
      const reply = (result: unknown) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
      if (msg.method === 'initialize') return reply({ protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'attacker', version: '1' } });
      if (msg.method === 'tools/list') return reply({ tools: TOOLS });
      if (msg.method !== 'tools/call') return reply({});
      const tool = msg.params?.name ?? '';
      closings.set(tool, new Promise((resolve) => res.once('close', () => resolve())));
      if (tool === 'echo') return reply({ content: [{ type: 'text', text: 'still here' }] });
      if (tool === 'stall') {
        // Progress every 100 ms, and never the answer.
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        let n = 0;
        const token = msg.params?._meta?.progressToken;
        const beat = setInterval(() => res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: ++n } })}\n\n`), 100);
        res.once('close', () => clearInterval(beat));
        return;
      }
      // flood: a JSON body that never ends; sse-flood: one SSE event that never ends.
      const sse = tool === 'sse-flood';
      res.writeHead(200, { 'Content-Type': sse ? 'text/event-stream' : 'application/json' });
      res.write(`${sse ? 'event: message\ndata: ' : ''}{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"result":{"content":[{"type":"text","text":"`);
      const chunk = Buffer.alloc(64 * 1024, 'A');
      const pump = () => {
        for (let more = true; more && !res.destroyed; ) {
          more = res.write(chunk);
          written += chunk.length;
        }
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    received,
    closed: (tool) => closings.get(tool) ?? Promise.reject(new Error(`no call of ${tool}`)),
    written: () => written,
  };
}

/** A workspace whose skills/main.md configures `srv` (mcp.servers.srv) with `keys`. */
function mainWorkspace(t: TestContext, url: string, keys: Record<string, unknown>): string {
  const entry = Object.entries({ type: 'http', url, protocol: '2025-11-25', ...keys }).map(([k, v]) => `        ${k}: ${JSON.stringify(v)}`);
  return mcpWorkspace(t, undefined, {
    'skills/main.md': ['---', 'name: main', 'description: The workspace main.', 'metadata:', '  mcp:', '    servers:', '      srv:', ...entry, '---', ''].join('\n'),
  });
}

function memory(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

describe('MCP client: a server cannot grow the host or hold a call forever', () => {
  test('an HTTP answer that never ends (JSON body, SSE event) fails E_MCP naming maxBytes; its connection is closed; memory stays bounded', async (t) => {
    const srv = await attacker(t);
    const ws = mainWorkspace(t, srv.url, { maxBytes: 65536, timeoutMs: 5000 });
    const rt = await createRuntime({ cwd: ws });
    t.after(() => rt.close());
    assert.deepEqual(await rt.invoke('srv-echo', {}), 'still here');

    for (const tool of ['flood', 'sse-flood']) {
      const before = memory();
      const r = await outcome(rt.invoke(`srv-${tool}`, {}));
      assert.equal(r.code, 'E_MCP', `${tool}: ${r.message}`);
      assert.match(r.message, /^MCP server 'srv': a response during tools\/call '[a-z-]+' exceeded maxBytes \(65536 bytes, mcp\.servers\.srv\.maxBytes\); its stream is cancelled/);
      // The server sees its connection closed: the client stopped reading and hung up.
      await srv.closed(tool);
      assert.ok(memory() - before < 64 * 1024 * 1024, `${tool}: memory grew by ${Math.round((memory() - before) / 1048576)} MiB`);
    }
    assert.ok(srv.written() > 65536, 'the server did write more than maxBytes');
    // The connection is still good for the next call.
    assert.deepEqual(await rt.invoke('srv-echo', {}), 'still here');
  });

  test('progress every 100 ms does not keep a call alive past maxCallMs: E_MCP, and the call is cancelled', async (t) => {
    const srv = await attacker(t);
    const ws = mainWorkspace(t, srv.url, { maxCallMs: 1500, timeoutMs: 1000 });
    const rt = await createRuntime({ cwd: ws });
    t.after(() => rt.close());
    const r = await outcome(rt.invoke('srv-stall', {}));
    assert.equal(r.code, 'E_MCP', r.message);
    assert.match(r.message, /^MCP server 'srv' did not finish tools\/call 'stall' within 1500 ms \(mcp\.servers\.srv\.maxCallMs\), progress notwithstanding/);
    const call = srv.received.find((m) => m.method === 'tools/call' && m.params?.name === 'stall')!;
    assert.ok(await until(() => srv.received.some((m) => m.method === 'notifications/cancelled' && m.params?.requestId === call.id)), 'the server got notifications/cancelled for the call');
    await srv.closed('stall');
  });

  test('stdio: a line over maxBytes (.mcp.json) fails the call E_MCP; the server is stopped and starts again on next use', async (t) => {
    // A stdio MCP server that answers normally, except `big`, whose answer is one 200 KB line.
    const script = `
      import readline from 'node:readline';
      const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
      readline.createInterface({ input: process.stdin }).on('line', (line) => {
        const m = JSON.parse(line);
        if (m.id === undefined) return;
        if (m.method === 'initialize') return send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'big', version: '1' } } });
        if (m.method === 'tools/list') return send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'big', inputSchema: { type: 'object' } }, { name: 'small', inputSchema: { type: 'object' } }] } });
        if (m.method === 'tools/call') return send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: m.params.name === 'big' ? 'x'.repeat(200000) : 'ok' }] } });
        send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no' } });
      });
    `;
    const ws = mcpWorkspace(t, { big: { command: process.execPath, args: ['server.mjs'], protocol: '2025-11-25', maxBytes: 65536 } }, { 'server.mjs': script });
    const rt = await createRuntime({ cwd: ws });
    t.after(() => rt.close());
    assert.equal(await rt.invoke('big-small', {}), 'ok');
    const pid = (await hubOf(rt)).connections().find((c) => c.server.name === 'big')!.pid!;
    const r = await outcome(rt.invoke('big-big', {}));
    assert.equal(r.code, 'E_MCP', r.message);
    assert.match(r.message, /^MCP server 'big': a response during tools\/call 'big' exceeded maxBytes \(65536 bytes, mcpServers\.big\.maxBytes\); the server is stopped/);
    assert.ok(await until(() => !alive(pid)), 'the server process is stopped');
    assert.equal(await rt.invoke('big-small', {}), 'ok');
  });

  test('maxBytes and maxCallMs are checked where they are configured: E_CONFIG naming the key', async (t) => {
    const ws = mcpWorkspace(t, { a: { command: 'x', maxBytes: -1 }, b: { type: 'http', url: 'http://127.0.0.1:1/mcp', maxCallMs: 'long' } });
    const rt = await createRuntime({ cwd: ws });
    t.after(() => rt.close());
    const errors = Object.fromEntries((await rt.list()).filter((s) => s.kind === 'mcp' && s.error).map((s) => [s.name, s.error]));
    assert.match(errors.a!, /\(mcpServers\.a\.maxBytes\): MCP server 'a': maxBytes must be a positive whole number of bytes, got -1/);
    assert.match(errors.b!, /\(mcpServers\.b\.maxCallMs\): MCP server 'b': maxCallMs must be a positive number of milliseconds, got "long"/);
    const r = await outcome(rt.invoke('a-tool', {}));
    assert.equal(r.code, 'E_CONFIG', r.message);
    assert.match(r.message, /mcpServers\.a\.maxBytes/);
  });
});

// ── mcp serve --http ───────────────────────────────────────────────────────────────────────

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
const HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: string; session: string | null }> {
  const res = await fetch(url, { method: 'POST', headers: { ...HEADERS, ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.text(), session: res.headers.get('mcp-session-id') };
}

describe('mcp serve --http: sessions and tokens', () => {
  test('a full session table refuses new sessions with 503; a session in use is never evicted', async (t) => {
    const { url } = await startHttp(t);
    const a = await connectHttp(t, url, { era: 'legacy' });
    assert.equal(a.client.getProtocolEra(), 'legacy');
    assert.equal(text(await a.client.callTool({ name: 'greet', arguments: { name: 'Ada' } })), 'Hello, Ada!');

    // Another client opens sessions until the table is full (256, one of them A's).
    const statuses: number[] = [];
    const sessions: string[] = [];
    for (let i = 0; i < 260; i++) {
      const r = await post(url, { ...INITIALIZE, id: i + 1 });
      statuses.push(r.status);
      if (r.session) sessions.push(r.session);
      if (r.status === 503) {
        const body = JSON.parse(r.body) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
        assert.equal(body.jsonrpc, '2.0');
        assert.equal(body.id, i + 1);
        assert.match(body.error.message, /session limit .*try again later, or close idle sessions/);
      }
    }
    assert.equal(statuses.filter((s) => s === 200).length, 255, `statuses: ${[...new Set(statuses)].join(', ')}`);
    assert.deepEqual(statuses.slice(255), [503, 503, 503, 503, 503]);

    // A is still served in its own session.
    assert.equal(text(await a.client.callTool({ name: 'greet', arguments: { name: 'Grace' } })), 'Hello, Grace!');
    // Closing a session frees its place.
    const del = await fetch(url, { method: 'DELETE', headers: { 'Mcp-Session-Id': sessions[0]! } });
    assert.equal(del.status, 200);
    assert.equal((await post(url, INITIALIZE)).status, 200);
    assert.equal((await post(url, INITIALIZE)).status, 503);
  });

  test('--token-file: the token comes from the file (401 without it, 200 with); no warning', async (t) => {
    const file = path.join(tempDir(t), 'token');
    fs.writeFileSync(file, 'from-a-file\n', { mode: 0o600 });
    const guarded = await startHttp(t, ['--token-file', file]);
    assert.equal((await post(guarded.url, INITIALIZE)).status, 401);
    assert.equal((await post(guarded.url, INITIALIZE, { Authorization: 'Bearer from-a-file' })).status, 200);
    assert.equal((await post(guarded.url, INITIALIZE, { Authorization: 'Bearer from-a-file-not' })).status, 401);
    assert.doesNotMatch(guarded.stderr(), /warning/);
  });

  test('--token still works, with one warning line that the command line is readable by other local users', async (t) => {
    const guarded = await startHttp(t, ['--token', 'on-the-line']);
    assert.equal((await post(guarded.url, INITIALIZE, { Authorization: 'Bearer on-the-line' })).status, 200);
    const warnings = guarded.stderr().split('\n').filter((l) => /warning/.test(l));
    assert.equal(warnings.length, 1, guarded.stderr());
    assert.match(warnings[0]!, /^agent-apps mcp: warning: --token: other local users can read a process's command line \(\/proc\/PID\/cmdline, ps\) — use --token-file <path> or AGENT_APPS_MCP_TOKEN instead$/);
  });

  test('--token with --token-file, an unreadable or an empty token file: exit 2 (E_USAGE) naming it', async (t) => {
    const dir = tempDir(t);
    const empty = path.join(dir, 'empty');
    fs.writeFileSync(empty, '\n');
    const missing = path.join(dir, 'missing');
    const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const cases: [string[], RegExp][] = [
      [['--token', 'x', '--token-file', empty], /E_USAGE.*--token <token> and --token-file <path>: give one of them/],
      [['--token-file', missing], new RegExp(`E_USAGE.*--token-file: cannot read ${escape(missing)} \\(ENOENT\\)`)],
      [['--token-file', empty], new RegExp(`E_USAGE.*--token-file: ${escape(empty)} is empty`)],
    ];
    for (const [args, message] of cases) {
      const proc = spawnServe(t, ['--http', '127.0.0.1:0', ...args]);
      assert.equal((await proc.exited).code, 2, proc.stderr());
      assert.match(proc.stderr(), message);
    }
  });
});
