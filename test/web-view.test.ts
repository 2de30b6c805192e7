// The web view's pages and event stream (src/surfaces/serve/web-view.ts, docs/serve.md "The web
// view") over real HTTP on 127.0.0.1, without a browser: run files written as the CLI writes
// them (a finished agent run, one killed outright, one still going, a file not named as a run),
// gates of a real ApprovalBroker through a web channel and another one, and the sign-in cookie.
// test/serve-web-view.test.ts has the same in a real browser against a real serve process.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { ApprovalBroker } from '../src/policy/remote-approval.ts';
import { viewSession, webView, VIEW_COOKIE, type WebView } from '../src/surfaces/serve/web-view.ts';
import { tempDir, until, type Owner } from './mcp-server-helpers.ts';
import { startServe, workspace } from './serve-helpers.ts';

const DONE = 'aaaaaaaa-1111-4111-8111-000000000001';
const KILLED = 'bbbbbbbb-2222-4222-8222-000000000002';
const LIVE = 'cccccccc-3333-4333-8333-000000000003';
const T0 = Date.parse('2026-12-01T10:00:00Z');

const line = (e: Record<string, unknown>) => JSON.stringify({ tool: 'root', level: 'info', ...e }) + '\n';
const agentRun = (e: Record<string, unknown>) => line({ type: 'agent-run', tag: 'agent', trace: [{ type: 'turn-start', turnNumber: 1, timestamp: T0 + 10 }], turns: 1, ok: true, ...e });

/** The events of an SSE answer's text. */
function events(text: string): { event?: string; id?: string; data?: unknown }[] {
  return text
    .split('\n\n')
    .filter((b) => b.trim() && !b.startsWith(':'))
    .map((b) => {
      const e: { event?: string; id?: string; data?: unknown } = {};
      for (const l of b.split('\n')) {
        const [k, ...v] = l.split(': ');
        if (k === 'event') e.event = v.join(': ');
        else if (k === 'id') e.id = v.join(': ');
        else if (k === 'data') e.data = JSON.parse(v.join(': '));
      }
      return e;
    });
}

describe('the web view, over HTTP', () => {
  const owned: (() => unknown)[] = [];
  const owner: Owner = { after: (fn) => owned.push(fn) };
  let ws = '';
  let runs = '';
  let base = '';
  let view: WebView;
  const tokens = new Map<string, string>();
  const withdraw = new AbortController();

  before(async () => {
    ws = tempDir(owner, 'agent-apps-web-view-unit-');
    runs = path.join(ws, '.agent-apps', 'runs');
    fs.mkdirSync(runs, { recursive: true });
    // A finished run with two agents (one nested), tokens and a cost; its skill name holds markup.
    fs.writeFileSync(
      path.join(runs, `${DONE}.jsonl`),
      line({ type: 'run-start', tag: 'cli', text: 'run x', skill: 'report<script>', args: {}, pid: 1, timestamp: T0 }) +
        agentRun({ skill: 'inner', agentId: 'a2', parentAgentId: 'a1', result: 'inner done', usage: { inputTokens: 30, outputTokens: 5 }, costUsd: 0.001, timestamp: T0 + 20 }) +
        agentRun({ skill: 'report', agentId: 'a1', result: { summary: '<b>all good</b>' }, usage: { inputTokens: 100, outputTokens: 20 }, costUsd: 0.002, timestamp: T0 + 30 }) +
        line({ type: 'run-end', tag: 'cli', skill: 'report<script>', text: 'run x: ok', exitCode: 0, durationMs: 42, timestamp: T0 + 42 }),
    );
    // Killed outright: no run-end, a marker whose process is gone.
    fs.writeFileSync(path.join(runs, `${KILLED}.jsonl`), line({ type: 'run-start', tag: 'cli', text: 'run k', skill: 'killed', args: {}, pid: 2147483646, timestamp: T0 + 1000 }));
    fs.writeFileSync(path.join(runs, `${KILLED}.live`), '2147483646');
    // Still going: its process is this one.
    fs.writeFileSync(path.join(runs, `${LIVE}.jsonl`), line({ type: 'run-start', tag: 'cli', text: 'run l', skill: 'going', args: {}, pid: process.pid, timestamp: T0 + 2000 }));
    fs.writeFileSync(path.join(runs, `${LIVE}.live`), String(process.pid));
    // Not named as the CLI names runs: not listed, not reachable.
    fs.writeFileSync(path.join(runs, 'not a run.jsonl'), line({ type: 'run-start', tag: 'cli', skill: 'odd', timestamp: T0 + 3000 }));

    const broker = new ApprovalBroker({ approvers: ['web'], timeoutMs: 120_000, log: () => {} });
    broker.register('api', { send: async (p, token) => void tokens.set(p.id, token) });
    broker.register('team', { send: async () => {} });
    const question = (tool: string) => ({ kind: 'approval' as const, text: `Allow ${tool}?`, tool, args: { path: '<img src=x>' }, because: { kind: 'ask-tools' as const, pattern: tool }, choices: [] });
    void broker.request(question('deploy'), { skill: 'ship', trigger: 'web api' }, 'api', withdraw.signal).catch(() => {});
    void broker.request(question('page-oncall'), { skill: 'alert', trigger: 'slack team' }, 'team', withdraw.signal).catch(() => {});
    await until(() => tokens.size === 1, 5000, 'the web gate to be sent');
    view = webView({ workspace: ws, approvals: broker, tokenOf: (via, id) => (via === 'api' ? tokens.get(id) : undefined) });
    const server = http.createServer((req, res) => {
      if (!view.http(req, res, new URL(req.url ?? '/', 'http://localhost'))) res.writeHead(404).end('not the view');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    owned.push(() => new Promise((r) => server.close(r)));
    owned.push(() => server.closeAllConnections());
    owned.push(() => view.close());
    owned.push(() => withdraw.abort());
  });
  after(async () => {
    for (const fn of owned.reverse()) await fn();
  });

  test('GET /: runs newest first with tokens and cost summed over the agents, every value escaped; web gates answerable, others read-only', async () => {
    const res = await fetch(`${base}/`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-frame-options'), 'DENY');
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const nonce = /script-src 'nonce-([^']+)'/.exec(res.headers.get('content-security-policy')!)![1]!;
    const html = await res.text();
    assert.ok(html.includes(`<style nonce="${nonce}">`), 'the style carries this response’s nonce');
    const order = [...html.matchAll(/<tr class="run[^"]*" data-run="([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(order, [LIVE, KILLED, DONE]);
    assert.doesNotMatch(html, /not a run|odd/);
    assert.match(html, /<td data-label="Skill">report&#60;script&#62;<\/td>/);
    assert.doesNotMatch(html, /<script>|<b>all good/);
    assert.match(html, /data-run="aaaaaaaa[^>]*>.*<td data-label="Tokens" class="num">155<\/td><td data-label="Cost" class="num">\$0\.0030<\/td>/);
    assert.match(html, /<tr class="outcome"><td colspan="8">\{&#34;summary&#34;:&#34;&#60;b&#62;all good&#60;\/b&#62;&#34;\}<\/td>/, "the top agent's result, not the nested one's");
    assert.match(html, /data-run="bbbbbbbb[^>]*>.*?st-interrupted/);
    assert.match(html, /data-run="cccccccc[^>]*>.*?st-running/);
    // The web gate: the same form as its approval page, with its token. The other: no form.
    const [web, other] = html.split('<article class="gate"').slice(1);
    const id = [...tokens.keys()][0]!;
    assert.match(web!, /Allow <code>deploy<\/code>\?/);
    assert.ok(web!.includes(`<form method="post" action="/approvals/${id}"><input type="hidden" name="token" value="${tokens.get(id)}">`));
    assert.match(web!, /&#60;img src=x&#62;/);
    assert.match(other!, /Allow <code>page-oncall<\/code>\?/);
    assert.match(other!, /Sent through <b>team<\/b>: it is answered there, not here\./);
    assert.doesNotMatch(other!, /<form/);
  });

  test('methods and paths: HEAD has no body, POST is 405, an id names a run whole or by a unique start, anything else is not one', async () => {
    const head = await fetch(`${base}/`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
    assert.equal((await fetch(`${base}/`, { method: 'POST' })).status, 405);
    assert.equal((await fetch(`${base}/runs/${DONE}/events`, { method: 'POST' })).status, 405);
    const byStart = await fetch(`${base}/runs/aaaaaaaa`);
    assert.equal(byStart.status, 200);
    assert.match(await byStart.text(), new RegExp(`run ${DONE}\\nskill    report&#60;script&#62;`));
    for (const p of ['/runs/not%20a%20run', '/runs/zzzz', '/runs/..%2F..%2Fetc%2Fpasswd', '/runs/%E0%A4%A']) assert.equal((await fetch(`${base}${p}`)).status, 404, p);
    assert.equal(await (await fetch(`${base}/runs/a/b/c`)).text(), 'not the view');
    assert.equal(await (await fetch(`${base}/approvals/x`)).text(), 'not the view');
  });

  test("a finished run's events: its records' transcript lines, then `end` with the whole transcript; from its end, only `end`", async () => {
    const all = events(await (await fetch(`${base}/runs/${DONE}/events`)).text());
    assert.deepEqual(
      all.map((e) => e.event),
      ['record', 'record', 'end'],
    );
    assert.match((all[0]!.data as string[]).join('\n'), /agent inner — 1 turn, 35 tokens \(30 in, 5 out\), about \$0\.0010/);
    assert.equal(Number(all[1]!.id), fs.statSync(path.join(runs, `${DONE}.jsonl`)).size - line({ type: 'run-end', tag: 'cli', skill: 'report<script>', text: 'run x: ok', exitCode: 0, durationMs: 42, timestamp: T0 + 42 }).length);
    const end = all[2]!.data as { status: string; transcript: string };
    assert.equal(end.status, 'ok');
    assert.match(end.transcript, /status   ok \(exit 0\) in 42 ms/);
    const page = await (await fetch(`${base}/runs/${DONE}`)).text();
    const from = /data-from="(\d+)"/.exec(page)![1]!;
    assert.equal(Number(from), fs.statSync(path.join(runs, `${DONE}.jsonl`)).size);
    assert.doesNotMatch(page, /<script/, 'a finished run follows nothing');
    assert.deepEqual(
      events(await (await fetch(`${base}/runs/${DONE}/events?from=${from}`)).text()).map((e) => e.event),
      ['end'],
    );
    const killed = events(await (await fetch(`${base}/runs/${KILLED}/events`)).text());
    assert.deepEqual(
      killed.map((e) => [e.event, (e.data as { status?: string }).status]),
      [['end', 'interrupted']],
    );
  });

  test('a run that goes on: each line appended to its file comes as an event; its run-end ends the stream', async () => {
    const page = await (await fetch(`${base}/runs/${LIVE}`)).text();
    const nonce = /<script nonce="([^"]+)">/.exec(page)?.[1];
    assert.ok(nonce, "a running run's page has its script, with the nonce");
    const res = await fetch(`${base}/runs/${LIVE}/events?from=${/data-from="(\d+)"/.exec(page)![1]}`);
    assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    const reader = res.body!.getReader();
    let text = '';
    const read = async (until: (t: string) => boolean) => {
      while (!until(text)) {
        const { value, done } = await reader.read();
        if (done) return true;
        text += Buffer.from(value).toString('utf8');
      }
      return false;
    };
    await read((t) => t.includes(': following'));
    const file = path.join(runs, `${LIVE}.jsonl`);
    fs.appendFileSync(file, line({ type: 'message', tag: 'user', tool: 'going', text: 'step <1>', timestamp: T0 + 2100 }));
    // A debug event adds nothing to the transcript: no event for it.
    fs.appendFileSync(file, line({ type: 'detail', tag: 'going', level: 'debug', text: 'quiet', timestamp: T0 + 2150 }));
    fs.appendFileSync(file, line({ type: 'message', tag: 'user', tool: 'going', text: 'step 2', timestamp: T0 + 2200 }));
    await read((t) => t.includes('step 2'));
    const live = events(text);
    assert.deepEqual(
      live.map((e) => e.data),
      [
        ['', 'info going: step <1>'],
        ['', 'info going: step 2'],
      ],
    );
    assert.equal(Number(live[1]!.id), fs.statSync(file).size);
    // Half a line is not sent until it is whole.
    const end = line({ type: 'run-end', tag: 'cli', skill: 'going', text: 'run l: ok', exitCode: 0, durationMs: 300, timestamp: T0 + 2300 });
    fs.appendFileSync(file, end.slice(0, 20));
    fs.appendFileSync(file, end.slice(20));
    assert.equal(await read(() => false), true, 'the stream ended');
    const last = events(text).at(-1)!;
    assert.equal(last.event, 'end');
    assert.equal((last.data as { status: string }).status, 'ok');
    assert.match((last.data as { transcript: string }).transcript, /info going: step <1>\n\ninfo going: step 2\n/);
    fs.rmSync(path.join(runs, `${LIVE}.live`));
  });

  test('close() ends the streams that are open (serve stops)', async () => {
    const id = 'dddddddd-4444-4444-8444-000000000004';
    fs.writeFileSync(path.join(runs, `${id}.jsonl`), line({ type: 'run-start', tag: 'cli', skill: 'going', args: {}, pid: process.pid, timestamp: T0 + 4000 }));
    fs.writeFileSync(path.join(runs, `${id}.live`), String(process.pid));
    const res = await fetch(`${base}/runs/${id}/events`);
    const reader = res.body!.getReader();
    await reader.read();
    view.close();
    for (;;) if ((await reader.read()).done) break;
    fs.rmSync(path.join(runs, `${id}.live`));
  });
});

describe('signing in to the view with the bearer token', () => {
  const session = viewSession('s3cret-token');
  const req = (url: string, headers: Record<string, string> = {}, method = 'GET') => ({ req: { method, headers } as unknown as IncomingMessage, url: new URL(url, 'http://localhost') });
  function answer() {
    const got: { status?: number; headers?: Record<string, string> } = {};
    const res = { writeHead: (status: number, headers: Record<string, string>) => ((got.status = status), (got.headers = headers), { end: () => {} }) } as unknown as ServerResponse;
    return { res, got };
  }

  test('/?token=TOKEN: 303 to the page without the token, a cookie derived from it (HttpOnly, SameSite=Strict) that admits', () => {
    const { req: r, url } = req('/?token=s3cret-token');
    const { res, got } = answer();
    assert.equal(session.signIn(r, res, url), true);
    assert.equal(got.status, 303);
    assert.equal(got.headers!.location, '/');
    const cookie = got.headers!['set-cookie']!;
    assert.match(cookie, new RegExp(`^${VIEW_COOKIE}=[A-Za-z0-9_-]+; Path=/; HttpOnly; SameSite=Strict$`));
    assert.ok(!cookie.includes('s3cret-token'));
    const value = cookie.split(';')[0]!;
    assert.equal(session.admits(req('/', { cookie: `other=1; ${value}` }).req), true);
    assert.equal(session.admits(req('/', { cookie: `${VIEW_COOKIE}=forged` }).req), false);
    assert.equal(session.admits(req('/').req), false);
    assert.equal(viewSession('another-token').admits(req('/', { cookie: value }).req), false, 'a cookie for another token does not admit');
  });

  test("a run's page keeps its other query; behind a TLS proxy the cookie is Secure; a wrong token, another path or a POST is not a sign-in", () => {
    const a = answer();
    const r = req(`/runs/${DONE}?token=s3cret-token&x=1`, { 'x-forwarded-proto': 'https' });
    assert.equal(session.signIn(r.req, a.res, r.url), true);
    assert.equal(a.got.headers!.location, `/runs/${DONE}?x=1`);
    assert.match(a.got.headers!['set-cookie']!, /; Secure$/);
    for (const [url, method] of [['/?token=wrong', 'GET'], ['/approvals/0123456789abcdef?token=s3cret-token', 'GET'], [`/runs/${DONE}/events?token=s3cret-token`, 'GET'], ['/?token=s3cret-token', 'POST'], ['/', 'GET']] as const) {
      const { res, got } = answer();
      const x = req(url, {}, method);
      assert.equal(session.signIn(x.req, res, x.url), false, `${method} ${url}`);
      assert.equal(got.status, undefined);
    }
  });
});

describe('the web view in a serve process', () => {
  test('served with no gateway and no schedule; a web route of its own on / wins, the view keeps the paths left to it', async (t) => {
    const bare = workspace(t, 'description: nothing served', {});
    const plain = await startServe(t, bare);
    const view = await fetch(`${plain.url}/`);
    assert.equal(view.status, 200);
    assert.match(view.headers.get('content-type')!, /^text\/html/);
    assert.match(await view.text(), /No recorded runs yet/);
    const ws = workspace(t, 'gateways:\n  site:\n    type: web\n    routes:\n      - { method: GET, path: /, skill: home }', { home: { body: "async () => 'the home page'" } });
    fs.mkdirSync(path.join(ws, '.agent-apps', 'runs'), { recursive: true });
    fs.writeFileSync(path.join(ws, '.agent-apps', 'runs', `${DONE}.jsonl`), line({ type: 'run-start', tag: 'cli', skill: 'home', args: {}, timestamp: T0 }) + line({ type: 'run-end', tag: 'cli', skill: 'home', text: 'run home: ok', exitCode: 0, durationMs: 5, timestamp: T0 + 5 }));
    const served = await startServe(t, ws);
    assert.equal(await (await fetch(`${served.url}/`)).text(), 'the home page');
    const run = await fetch(`${served.url}/runs/${DONE}`);
    assert.equal(run.status, 200);
    assert.match(await run.text(), /status   ok \(exit 0\) in 5 ms/);
  });
});
