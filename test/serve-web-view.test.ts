// The web view of `agent-apps serve` (docs/serve.md, "The web view") as a person sees it: a real
// serve process on 127.0.0.1 in a workspace with runs recorded by the CLI, opened in headless
// Chromium (Debian's, driven by playwright-core: test/browser-helpers.ts). The runs list, markup
// from a run shown as text and never run, a run's transcript as `runs show` prints it, a run's
// lines appearing while it goes on, an approval gate answered with the view's Allow button (and
// the old form refused), and the bearer token signed in once with ?token=.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { BIN, baseEnv } from './mcp-server-helpers.ts';
import { startServe, tempDir, until, type Owner } from './serve-helpers.ts';
import { writeAgentSkills } from './agent-helpers.ts';
import { browserSkip, launchBrowser } from './browser-helpers.ts';

const PWNED = '<script>window.__pwned=1</script>';
const IMG = '<img src=x onerror="window.__pwned=2">';
// The gated call's args carry markup, as a model's may.
const CALL = `const n = await ctx.manager.invoke('wordcount', { text: '<script>window.__pwned=3</script> gated' });
ctx.manager.finish('counted ' + n);`;
const TOKEN = 'view-test-token-5b1f0e';

describe('the web view of serve, in a real browser', { ...(browserSkip ? { skip: browserSkip } : {}) }, () => {
  const owned: (() => unknown)[] = [];
  const owner: Owner = { after: (fn) => owned.push(fn) };
  let ws = '';
  let url = '';
  let stderr: () => string = () => '';
  let browser: Browser;
  const ids: Record<string, string> = {};

  const cli = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { cwd: ws, env: baseEnv(), encoding: 'utf8' });
  /** A fresh browser profile (no cookies) with one page; a script dialog (alert) fails the test. */
  async function open(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width: 1000, height: 700 } });
    owned.push(() => context.close());
    const page = await context.newPage();
    page.on('dialog', (d) => {
      void d.dismiss();
      assert.fail(`a script of the run's ran: ${d.message()}`);
    });
    return { context, page };
  }
  // Page expressions are strings: the tests are type-checked without the DOM's types.
  const pwned = (page: Page) => page.evaluate('window.__pwned');

  before(async () => {
    // The view's heading is the workspace folder's name.
    ws = path.join(tempDir(owner, 'agent-apps-web-view-'), 'orders');
    const skills = path.join(ws, 'skills');
    fs.mkdirSync(skills, { recursive: true });
    fs.writeFileSync(
      path.join(skills, 'main.md'),
      `---\nname: main\ndescription: A served workspace with a web view.\nmetadata:\n  gateways:\n    api:\n      type: web\n      routes:\n        - { method: POST, path: /gated, skill: gated }\n  approvals: { via: api, approvers: [web], timeoutMs: 120000 }\n---\nThe main.\n`,
    );
    writeAgentSkills(skills, {
      xss: { turns: [{ text: `Here it is: ${IMG}`, invoke: `ctx.manager.finish('${PWNED}')` }] },
      gated: { 'allowed-tools': 'skill-list', metadata: { 'ask-tools': 'wordcount' }, turns: [{ invoke: CALL }] },
    });
    fs.writeFileSync(path.join(skills, 'wordcount.skill.mjs'), `export const frontmatter = { name: 'wordcount', description: 'Counts words.' };\nexport default (_c, a) => String(a.text ?? '').split(/\\s+/).filter(Boolean).length;\n`);
    fs.writeFileSync(path.join(skills, 'talk.skill.mjs'), `export const frontmatter = { name: 'talk', description: 'Says something.' };\nexport default (ctx) => { ctx.manager.log({ level: 'info', text: 'said <b>bold</b>' }); return 'ok'; };\n`);
    fs.writeFileSync(path.join(skills, 'broken.skill.mjs'), `export const frontmatter = { name: 'broken', description: 'Fails.' };\nexport default () => { throw new Error('${IMG.replace(/'/g, "\\'")}'); };\n`);
    // Logs a line, waits for the file `go`, logs another, waits for `stop`: a run that goes on
    // for as long as the test wants.
    fs.writeFileSync(
      path.join(skills, 'slow.skill.mjs'),
      `import fs from 'node:fs';\nexport const frontmatter = { name: 'slow', description: 'Goes on until told.' };\nconst wait = async (f) => { while (!fs.existsSync(f)) await new Promise((r) => setTimeout(r, 20)); };\nexport default async (ctx) => {\n  ctx.manager.log({ level: 'info', text: 'line 1 <u>first</u>' });\n  await wait('go');\n  ctx.manager.log({ level: 'info', text: 'line 2 <u>second</u>' });\n  await wait('stop');\n  return 'stopped';\n};\n`,
    );
    // Three runs recorded by the CLI, oldest first.
    for (const [skill, code] of [['talk', 0], ['broken', 1], ['xss', 0]] as const) {
      const r = cli('run', skill);
      assert.equal(r.status, code, `${skill}: ${r.stderr}`);
    }
    const listed = JSON.parse(cli('runs', '--json').stdout) as { id: string; skill: string }[];
    for (const r of listed) ids[r.skill] = r.id;
    const proc = await startServe(owner, ws);
    url = proc.url;
    stderr = proc.stderr;
    browser = await launchBrowser(owner);
  });
  after(async () => {
    for (const fn of owned.reverse()) await fn();
  });

  test('/ lists the recorded runs newest first, as agent-apps runs does; markup from a run shows as text and never runs', async () => {
    const { page } = await open();
    const res = await page.goto(`${url}/`);
    assert.equal(res?.status(), 200);
    const headers = res!.headers();
    assert.match(headers['content-security-policy']!, /script-src 'nonce-[A-Za-z0-9+/=]+'/);
    assert.doesNotMatch(headers['content-security-policy']!, /unsafe-inline/);
    assert.equal(headers['x-frame-options'], 'DENY');
    assert.equal(headers['cache-control'], 'no-store');
    const rows = await page.$$eval('tr.run', (trs) => trs.map((tr) => ({ id: tr.getAttribute('data-run'), cells: [...tr.querySelectorAll('td')].map((td) => td.textContent!.trim()) })));
    const listed = JSON.parse(cli('runs', '--json').stdout) as { id: string; skill: string }[];
    assert.deepEqual(
      rows.map((r) => r.id),
      listed.map((r) => r.id),
    );
    assert.deepEqual(
      rows.map((r) => r.cells.slice(1, 4)),
      [
        ['xss', 'run', 'ok (exit 0)'],
        ['broken', 'run', 'failed (exit 1)'],
        ['talk', 'run', 'ok (exit 0)'],
      ],
    );
    const [xss, broken, talk] = rows;
    assert.ok(Number(xss!.cells[5]) > 0, `the agent run's tokens: ${xss!.cells[5]}`);
    assert.equal(xss!.cells[6], '-', 'the replay model has no price');
    assert.equal(talk!.cells[5], '-', 'no agent ran');
    assert.match(xss!.cells[4]!, /^\d+(\.\d)? m?s$/);
    // What each run ended with, as text: the agent's result, the error.
    assert.equal(await page.textContent(`tr.run[data-run="${ids.xss}"] + tr.outcome`), PWNED);
    assert.equal(await page.textContent(`tr.run[data-run="${ids.broken}"] + tr.outcome`), `[E_SKILL] ${IMG}`);
    assert.equal(await page.locator('script').count(), 0, 'the list has no script of its own, and none of the runs');
    assert.equal(await page.locator('img').count(), 0);
    assert.equal(await pwned(page), undefined);
    assert.equal(broken!.cells[0], ids.broken!.slice(0, 8));
  });

  test('a run\'s page (its link in the list) shows the transcript as agent-apps runs show prints it', async () => {
    const { page } = await open();
    await page.goto(`${url}/`);
    await Promise.all([page.waitForURL(`${url}/runs/${ids.xss}`), page.click(`tr.run[data-run="${ids.xss}"] a`)]);
    const shown = cli('runs', 'show', ids.xss!);
    assert.equal(shown.status, 0, shown.stderr);
    assert.equal(await page.textContent('#transcript'), shown.stdout);
    assert.match(shown.stdout, /result: <script>window\.__pwned=1<\/script>/);
    assert.match(shown.stdout, /model: Here it is: <img/);
    assert.equal(await page.textContent('#state'), 'ok');
    assert.equal(await page.locator('img').count(), 0);
    assert.equal(await pwned(page), undefined);
    // A finished run's page follows nothing.
    assert.equal(await page.locator('script').count(), 0);
    const talk = await page.goto(`${url}/runs/${ids.talk!.slice(0, 8)}`);
    assert.equal(talk?.status(), 200, 'a unique start of an id names the run, as in runs show');
    assert.match((await page.textContent('#transcript'))!, /info talk: said <b>bold<\/b>/);
    assert.equal((await page.goto(`${url}/runs/00000000-no-such-run`))?.status(), 404);
  });

  test('a run that goes on: its page shows each new line as the run writes it, and the whole transcript when it ends', async () => {
    const child = spawn(process.execPath, [BIN, 'run', 'slow'], { cwd: ws, env: baseEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    owned.push(() => child.exitCode === null && child.kill('SIGKILL'));
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.stdout.resume();
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    const runs = path.join(ws, '.agent-apps', 'runs');
    // The run is under way once its file holds its first line.
    const id = await until(
      () => fs.readdirSync(runs).map((f) => f.replace(/\.jsonl$/, '')).find((f) => !Object.values(ids).includes(f) && !f.endsWith('.live') && fs.readFileSync(path.join(runs, `${f}.jsonl`), 'utf8').includes('line 1')),
      30_000,
      'the slow run to log its first line',
    );
    const { page } = await open();
    await page.goto(`${url}/`);
    const row = (await page.$$eval(`tr.run[data-run="${id}"] td`, (tds) => tds.map((td) => td.textContent!.trim()))).slice(1, 4);
    assert.deepEqual(row, ['slow', 'run', 'running']);
    await Promise.all([page.waitForURL(`${url}/runs/${id}`), page.click(`tr.run[data-run="${id}"] a`)]);
    assert.match((await page.textContent('#state'))!, /^running/);
    assert.match((await page.textContent('#transcript'))!, /info slow: line 1 <u>first<\/u>/);
    assert.doesNotMatch((await page.textContent('#transcript'))!, /line 2/);
    // The same document from here on: no reload, the lines come over the event stream.
    await page.evaluate('window.__same = 1');
    fs.writeFileSync(path.join(ws, 'go'), '');
    // (Locators, not waitForFunction: the page's Content-Security-Policy allows no eval, a test's either.)
    await page.locator('#transcript', { hasText: 'line 2 <u>second</u>' }).waitFor({ timeout: 30_000 });
    assert.equal(await page.locator('u').count(), 0, 'the live line is text too');
    fs.writeFileSync(path.join(ws, 'stop'), '');
    await page.locator('#state', { hasText: /^ok$/ }).waitFor({ timeout: 30_000 });
    assert.equal(await exited, 0, err);
    assert.equal(await page.evaluate('window.__same'), 1);
    const shown = cli('runs', 'show', id);
    assert.equal(await page.textContent('#transcript'), shown.stdout, 'once it ended, the page holds what runs show prints');
  });

  test('a gate waiting for approval: Allow in the view lets the run go on; the old form is refused (already settled)', async () => {
    const run = fetch(`${url}/gated`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    await until(() => /waits for an answer at \/approvals\/[0-9a-f]{16}\?token=/.exec(stderr()), 30_000, 'the gate to be sent');
    const { page } = await open();
    await page.goto(`${url}/`);
    assert.equal(await page.textContent('h1'), 'orders');
    assert.equal(await page.locator('#approvals article.gate').count(), 1);
    assert.equal(await page.textContent('#approvals article.gate h1'), 'Allow wordcount?');
    assert.match((await page.textContent('#approvals article.gate'))!, /Run of gated \(web api\)/);
    assert.match((await page.textContent('#approvals article.gate pre'))!, /<script>window\.__pwned=3<\/script> gated/, 'the args, as text');
    assert.equal(await pwned(page), undefined);
    // The same view in a second tab: its form stays on the screen after the first answer.
    const { page: old } = await open();
    await old.goto(`${url}/`);
    // docs/images/serve-web-view.png: AGENT_APPS_WEB_VIEW_SCREENSHOT=PATH (1000×700, zoomed out to hold the gate and the runs).
    const shot = process.env.AGENT_APPS_WEB_VIEW_SCREENSHOT;
    if (shot) {
      const context = await browser.newContext({ viewport: { width: 1250, height: 875 }, deviceScaleFactor: 0.8 });
      const view = await context.newPage();
      await view.goto(`${url}/`);
      await view.screenshot({ path: shot });
      await context.close();
    }
    await Promise.all([page.waitForURL(/\/approvals\/[0-9a-f]{16}$/), page.click('#approvals button.allow')]);
    assert.equal(await page.textContent('h1'), 'Allowed');
    const result = await run;
    assert.equal(result.status, 200);
    assert.equal(await result.text(), 'counted 2');
    await Promise.all([old.waitForURL(/\/approvals\/[0-9a-f]{16}$/), old.click('#approvals button.allow')]);
    assert.equal(await old.textContent('h1'), 'Refused');
    assert.match((await old.textContent('body'))!, /the gate was already settled \(allow by web through api\)/);
    await page.goto(`${url}/`);
    assert.equal(await page.locator('#approvals article.gate').count(), 0);
    assert.equal(await page.textContent('#approvals p'), 'Nothing waits for an approval.');
    assert.match(stderr(), /approval [0-9a-f]{16}: refused an answer from web through api: the gate was already settled/);
  });

  test('with a bearer token: /?token= once sets an HttpOnly, SameSite=Strict cookie and drops the token from the address', async () => {
    const secured = await startServe(owner, ws, [], { AGENT_APPS_SERVE_TOKEN: TOKEN });
    const { context, page } = await open();
    assert.equal((await page.goto(`${secured.url}/`))?.status(), 401);
    assert.equal((await page.goto(`${secured.url}/?token=wrong`))?.status(), 401);
    const res = await page.goto(`${secured.url}/?token=${TOKEN}`);
    assert.equal(res?.status(), 200);
    assert.equal(page.url(), `${secured.url}/`, 'the token is not left in the address (history, a Referer)');
    assert.equal(await page.locator('tr.run').count(), 4);
    const cookies = await context.cookies();
    assert.equal(cookies.length, 1);
    assert.equal(cookies[0]!.name, 'agent_apps_serve');
    assert.equal(cookies[0]!.httpOnly, true);
    assert.equal(cookies[0]!.sameSite, 'Strict');
    assert.ok(!cookies[0]!.value.includes(TOKEN), 'the cookie holds a value derived from the token, not the token');
    assert.equal(await page.evaluate('document.cookie'), '', 'no script reads it');
    await Promise.all([page.waitForURL(`${secured.url}/runs/${ids.talk}`), page.click(`tr.run[data-run="${ids.talk}"] a`)]);
    assert.match((await page.textContent('#transcript'))!, /said <b>bold<\/b>/);
    // Outside the browser the token is still the bearer's.
    assert.equal((await fetch(`${secured.url}/`)).status, 401);
    assert.equal((await fetch(`${secured.url}/`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200);
  });
});
