// Remote approvals through a `web` gateway (docs/serve.md, "Remote approvals"), as the people
// involved see them: a real `agent-apps serve` process on 127.0.0.1, an agent skill (the Strands
// loop on the replay model, isolated-vm) whose code makes a gated call, the approval page behind
// its single-use link answered with real HTTP requests — for a run a web route started, and for a
// headless `agent-apps run --approvals-via api` whose gate goes to that serve.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BIN, baseEnv } from './mcp-server-helpers.ts';
import { startServe, tempDir, until, type Owner } from './serve-helpers.ts';
import { writeAgentSkills } from './agent-helpers.ts';

// The args carry markup, as a model's may: the page must show them as text.
const CALL = `const n = await ctx.manager.invoke('wordcount', { text: '<script>alert(1)</script> gated' });
ctx.manager.finish('counted ' + n);`;

describe('remote approvals through a web gateway', () => {
  const owned: (() => unknown)[] = [];
  const owner: Owner = { after: (fn) => owned.push(fn) };
  let ws = '';
  let url = '';
  let stderr: () => string = () => '';
  before(async () => {
    ws = tempDir(owner, 'agent-apps-serve-approvals-');
    fs.mkdirSync(path.join(ws, 'skills'));
    fs.writeFileSync(
      path.join(ws, 'skills', 'main.md'),
      `---\nname: main\ndescription: A served workspace with approvals.\nmetadata:\n  gateways:\n    api:\n      type: web\n      routes:\n        - { method: POST, path: /gated, skill: gated }\n  approvals: { via: api, approvers: [web], timeoutMs: 60000 }\n---\nThe main.\n`,
    );
    writeAgentSkills(path.join(ws, 'skills'), { gated: { 'allowed-tools': 'skill-list', metadata: { 'ask-tools': 'wordcount' }, turns: [{ invoke: CALL }] } });
    fs.writeFileSync(path.join(ws, 'skills', 'wordcount.skill.mjs'), `export const frontmatter = { name: 'wordcount', description: 'Counts words.' };\nexport default (_c, a) => String(a.text ?? '').split(/\\s+/).filter(Boolean).length;\n`);
    const proc = await startServe(owner, ws);
    url = proc.url;
    stderr = proc.stderr;
  });
  after(async () => {
    for (const fn of owned.reverse()) await fn();
  });

  /** The link of the n-th gate serve printed. */
  const link = (n: number) => until(() => [...stderr().matchAll(/waits for an answer at (\/approvals\/[0-9a-f]{16}\?token=[A-Za-z0-9_-]+)/g)][n]?.[1], 30_000, `gate ${n + 1} to be printed`);
  const answer = (path: string, value: string, token: string) =>
    fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token, value }).toString() });

  test('a run a web route started: the page shows the call escaped; Allow lets it run; a second click is refused', async () => {
    const run = fetch(`${url}/gated`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const href = await link(0);
    const [pagePath, query] = href.split('?');
    const token = new URLSearchParams(query).get('token')!;
    const page = await fetch(`${url}${href}`);
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /Allow <code>wordcount<\/code>\?/);
    assert.match(html, /&#60;script&#62;alert\(1\)&#60;\/script&#62; gated/, 'the args are escaped');
    assert.doesNotMatch(html, /<script>/);
    assert.match(html, /Run of <b>gated<\/b> \(web api\)/);
    // Without the token the page is not shown.
    assert.equal((await fetch(`${url}${pagePath}?token=nope`)).status, 404);
    const allowed = await answer(pagePath!, 'allow', token);
    assert.equal(allowed.status, 200);
    assert.match(await allowed.text(), /<h1>Allowed<\/h1>/);
    const result = await run;
    assert.equal(result.status, 200);
    assert.equal(await result.text(), 'counted 2');
    const again = await answer(pagePath!, 'deny', token);
    assert.equal(again.status, 409);
    assert.match(await again.text(), /already settled \(allow by web through api\)/);
    assert.match(stderr(), /approval [0-9a-f]{16} of wordcount: allowed by web through api/);
  });

  test('a headless run with --approvals-via api: its gate goes to serve; Deny ends it E_DENIED, the denial names who answered', async () => {
    const child = spawn(process.execPath, [BIN, 'run', 'gated', '--approvals-via', 'api', '--output-format', 'stream-json'], { cwd: ws, env: baseEnv({ AGENT_APPS_SERVE_URL: url }), stdio: ['ignore', 'pipe', 'pipe'] });
    owned.push(() => child.exitCode === null && child.kill('SIGKILL'));
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    const href = await link(1);
    const [pagePath, query] = href.split('?');
    const page = await (await fetch(`${url}${href}`)).text();
    assert.match(page, /Run of <b>gated<\/b> \(run\)/);
    const denied = await answer(pagePath!, 'deny', new URLSearchParams(query).get('token')!);
    assert.equal(denied.status, 200);
    assert.equal(await exited, 1, err);
    const last = JSON.parse(out.trim().split('\n').at(-1)!) as { ok: boolean; denials: { tool: string; code: string; answeredBy?: string; answeredVia?: string; answeredAt?: string }[] };
    assert.equal(last.ok, false);
    assert.deepEqual(last.denials.map((d) => [d.tool, d.code, d.answeredBy, d.answeredVia]), [['wordcount', 'E_DENIED', 'web', 'api']]);
    assert.match(last.denials[0]!.answeredAt!, /^\d{4}-\d\d-\d\dT/);
    assert.match(err, /web denied the call of 'wordcount' through api/);
  });

  test('--approvals-via with no serve listening: the gate fails naming where it looked', async () => {
    const r = await new Promise<{ code: number | null; err: string }>((resolve) => {
      const c = spawn(process.execPath, [BIN, 'run', 'gated', '--approvals-via', 'api'], { cwd: ws, env: baseEnv({ AGENT_APPS_SERVE_URL: 'http://127.0.0.1:9' }), stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      c.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
      c.on('close', (code) => resolve({ code, err }));
    });
    assert.notEqual(r.code, 0);
    assert.match(r.err, /--approvals-via api: cannot reach agent-apps serve at http:\/\/127\.0\.0\.1:9/);
  });
});
