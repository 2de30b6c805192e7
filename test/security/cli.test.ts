// Red-team tests for the CLI (SPEC §8, §12, §15; issue 7 items 9 and 11): real processes of
// bin/agent-apps.js in throw-away workspaces. SIGINT is never lost, not even during a synchronous
// skill; a forced exit still closes the run file; prototype keys in --set and in args are usage
// errors (exit 2) that never reach a host object; logged text reaches the terminal escaped.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRuntime, type Context } from '../../src/index.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const BIN = path.join(REPO, 'bin', 'agent-apps.js');

const temps: string[] = [];
after(() => {
  for (const dir of temps) fs.rmSync(dir, { recursive: true, force: true });
});
function tempDir(prefix = 'agent-apps-sec-cli-'): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  temps.push(dir);
  return dir;
}
const HOME = tempDir('agent-apps-sec-cli-home-');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], opts: { cwd: string; onSpawn?: (child: ChildProcess) => void }): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, AGENT_APPS_HOME: HOME };
  for (const key of ['AGENT_APPS_PATH', 'NO_COLOR', 'FORCE_COLOR', 'NODE_OPTIONS', 'NODE_TEST_CONTEXT']) delete env[key];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: opts.cwd, env, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end();
    opts.onSpawn?.(child);
  });
}

const SKILLS: Record<string, string> = {
  // Computes synchronously for 1.5 s: no signal handler can run until it returns.
  'skills/busy.skill.ts': `
export const frontmatter = { name: 'busy', description: 'Busy-loops 1.5 s.' };
export default function busy() {
  process.stderr.write('busy\\n');
  const end = Date.now() + 1500;
  let n = 0;
  while (Date.now() < end) n++;
  return 'finished ' + (n > 0);
}
`,
  // Waits until aborted; its shutdown handler (event: { route: shutdown }) hangs for 20 s.
  'skills/stuck.skill.ts': `
import { setTimeout as sleep } from 'node:timers/promises';
import type { Context, Event } from 'agent-apps';
export const frontmatter = { name: 'stuck', description: 'Waits; its shutdown handler hangs.', metadata: { event: { route: 'shutdown' }, params: { type: 'object', properties: { event: { type: 'object' } } } } };
export default async function stuck(ctx: Context, args: { event?: Event }) {
  if (args.event) {
    process.stderr.write('handler hangs\\n');
    await new Promise((resolve) => setTimeout(resolve, 60_000));
    return 'handled';
  }
  process.stderr.write('waiting\\n');
  await sleep(30_000, undefined, { signal: ctx.run.signal });
  return 'done';
}
`,
  'skills/show.skill.ts': `
export const frontmatter = { name: 'show', description: 'Reports on its args.', metadata: { params: { type: 'object', properties: { opts: { type: 'object' }, list: { type: 'array' } } } } };
export default function show(_ctx: unknown, args: Record<string, unknown>) {
  return { ran: true, proto: Object.getPrototypeOf(args) === Object.prototype, polluted: ({} as Record<string, unknown>).polluted ?? null };
}
`,
  'skills/noisy.skill.ts': `
import type { Context } from 'agent-apps';
export const frontmatter = { name: 'noisy', description: 'Logs control characters.' };
export default function noisy(ctx: Context) {
  ctx.manager.log('a\\nb\\x1b[31mred');
  ctx.manager.log({ type: 'w', tag: 'work', level: 'warn', text: 'over\\rwrite\\x1b]0;title\\x07' });
  return 'ok';
}
`,
  'skills/bad.skill.ts': `
export const frontmatter = { name: 'bad', description: 'Fails with control characters in its message.' };
export default function bad() { throw new Error('model said: \\x1b[2J\\x1b[31mgone\\rover'); }
`,
};

function workspace(): string {
  const dir = tempDir();
  for (const [rel, text] of Object.entries(SKILLS)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

const runsDir = (ws: string) => path.join(ws, '.agent-apps', 'runs');
/** The events of the workspace's one run file, and whether its `.live` marker is still there. */
function theRun(ws: string): { events: Record<string, unknown>[]; live: boolean } {
  const files = fs.readdirSync(runsDir(ws)).filter((f) => f.endsWith('.jsonl'));
  assert.equal(files.length, 1, `one run file expected, got ${files.join(', ')}`);
  const file = files[0]!;
  const events = fs.readFileSync(path.join(runsDir(ws), file), 'utf8').trimEnd().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  return { events, live: fs.existsSync(path.join(runsDir(ws), file.replace(/\.jsonl$/, '.live'))) };
}

/** Sends `signal` when stderr first shows `cue`, `delay` ms later; then `then` when stderr shows `thenCue`. */
function signalOn(cue: string, delay: number, again?: { cue: string; delay: number }) {
  return (child: ChildProcess) => {
    let seen = '';
    let sent = false;
    let sentAgain = false;
    child.stderr!.on('data', (d: Buffer | string) => {
      seen += String(d);
      if (!sent && seen.includes(cue)) {
        sent = true;
        setTimeout(() => child.kill('SIGINT'), delay);
      }
      if (again && sent && !sentAgain && seen.includes(again.cue)) {
        sentAgain = true;
        setTimeout(() => child.kill('SIGINT'), again.delay);
      }
    });
  };
}

const STACK = /^\s+at /m;

describe('signals', { concurrency: true }, () => {
  test('SIGINT during a synchronous code skill is not lost: the CLI exits 130 and prints no result', { timeout: 20_000 }, async () => {
    const ws = workspace();
    const r = await cli(['run', 'busy'], { cwd: ws, onSpawn: signalOn('busy', 300) });
    assert.equal(r.code, 130, r.stderr);
    assert.equal(r.stdout, '', 'no result on stdout');
    assert.match(r.stderr, /interrupted/);
    assert.doesNotMatch(r.stderr, STACK);
    const { events, live } = theRun(ws);
    assert.deepEqual([events.at(-1)!.type, events.at(-1)!.level, events.at(-1)!.text], ['run-end', 'warn', 'run busy: SIGINT']);
    assert.equal(live, false);
  });

  test('a second SIGINT exits at once and still writes run-end and removes the .live marker', { timeout: 20_000 }, async () => {
    const ws = workspace();
    // No clock: the grace and the handler's hang (60 s each) outlast this test's timeout (20 s), so
    // a CLI that exited 130 at all did not wait for the grace.
    const r = await cli(['--shutdown-grace', '60000', 'run', 'stuck'], { cwd: ws, onSpawn: signalOn('waiting', 0, { cue: 'handler hangs', delay: 100 }) });
    assert.equal(r.code, 130, r.stderr);
    const { events, live } = theRun(ws);
    const end = events.at(-1)!;
    assert.equal(end.type, 'run-end', `the run file ends with run-end: ${JSON.stringify(end)}`);
    assert.equal(end.level, 'warn');
    assert.match(String(end.text), /^run stuck: SIGINT/);
    assert.equal(live, false, 'no stale .live marker');
  });
});

describe('prototype keys from the command line', { concurrency: true }, () => {
  test('--set with __proto__ or constructor.prototype in the key path is a usage error (exit 2) naming the key', async () => {
    const ws = workspace();
    for (const key of ['__proto__.x', 'constructor.prototype.x', 'model.__proto__.polluted', 'prototype']) {
      const r = await cli(['--set', `${key}=1`, 'run', 'show'], { cwd: ws });
      assert.equal(r.code, 2, `${key}: ${r.stderr}`);
      assert.ok(r.stderr.includes(`'${key}'`), `${key}: the message names the key: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.doesNotMatch(r.stderr, STACK);
    }
    const inValue = await cli(['--set', 'x={"__proto__": {"polluted": 1}}', 'run', 'show'], { cwd: ws });
    assert.equal(inValue.code, 2, inValue.stderr);
    assert.match(inValue.stderr, /x\.__proto__/);
  });

  test('a __proto__ (or constructor / prototype) key in CLI args is refused with E_VALIDATION, exit 2, before the skill runs', async () => {
    const ws = workspace();
    const cases: [string[], RegExp][] = [
      [['--args-json', '{"__proto__": {"polluted": 1}}'], /--args-json: \/__proto__ /],
      [['--args-json', '{"opts": {"a": [{"__proto__": {"polluted": 1}}]}}'], /--args-json: \/opts\/a\/0\/__proto__ /],
      [['--args-json', '{"opts": {"constructor": {"prototype": {"polluted": 1}}}}'], /\/opts\/constructor /],
      [['--opts', '{"__proto__": {"polluted": 1}}'], /--opts: \/opts\/__proto__ /],
      [['--list', '[{"__proto__": {"polluted": 1}}]'], /--list: \/list\/0\/__proto__ /],
      [['--__proto__.x', '1'], /__proto__/],
      [['--__proto__', '{"polluted": 1}'], /__proto__/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(['run', 'show', ...args], { cwd: ws });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message, args.join(' '));
      if (args[0] !== '--__proto__.x' && args[0] !== '--__proto__') assert.match(r.stderr, /E_VALIDATION/);
      assert.equal(r.stdout, '', 'the skill did not run');
    }
    const ok = await cli(['run', 'show', '--json', '--args-json', '{"opts": {"a": 1}}'], { cwd: ws });
    assert.equal(ok.code, 0, ok.stderr);
    assert.deepEqual(JSON.parse(ok.stdout), { ran: true, proto: true, polluted: null });
  });
});

test('args holding a __proto__ key from the API stay data: the args prototype is Object.prototype and ({}).polluted stays undefined', async (t) => {
  const rt = await createRuntime({ cwd: tempDir() });
  t.after(() => rt.close());
  let seen: { proto: boolean; own: string[]; nested: boolean } | undefined;
  rt.register({
    name: 'inspect',
    frontmatter: { name: 'inspect', description: 'Looks at its args.', metadata: { params: { type: 'object', properties: { opts: { type: 'object', properties: { mode: { type: 'string', default: 'fast' } }, default: {} } } } } },
    fn: (_ctx: Context, args: Record<string, unknown>) => {
      const opts = args.opts as Record<string, unknown>;
      seen = { proto: Object.getPrototypeOf(args) === Object.prototype, own: Object.keys(args).sort(), nested: Object.getPrototypeOf(opts) === Object.prototype };
      return 'ok';
    },
  });
  const hostile = JSON.parse('{"__proto__": {"polluted": 1}, "opts": {"__proto__": {"polluted": 2}}}') as Record<string, unknown>;
  assert.equal(await rt.invoke('inspect', hostile), 'ok');
  assert.deepEqual(seen, { proto: true, own: ['__proto__', 'opts'], nested: true });
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted'), false);
});

test('a log event with text "a\\nb\\x1b[31mred" reaches stderr as one escaped line with no raw ESC byte; the run file keeps it exact', async () => {
  const ws = workspace();
  const r = await cli(['run', 'noisy'], { cwd: ws });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'ok\n');
  assert.doesNotMatch(r.stderr, /\x1b|\r|\x07/, 'no raw control character on stderr');
  const lines = r.stderr.split('\n');
  assert.ok(lines.includes('a\\nb\\x1b[31mred'), r.stderr);
  assert.ok(lines.some((l) => l.endsWith('noisy: over\\rwrite\\x1b]0;title\\x07')), r.stderr);
  const { events } = theRun(ws);
  assert.ok(events.some((e) => e.text === 'a\nb\x1b[31mred'), 'the run file has the text as logged');
});

test('a failing skill whose message holds control characters is reported on one line with them escaped (exit 1)', async () => {
  const ws = workspace();
  const r = await cli(['run', 'bad'], { cwd: ws });
  assert.equal(r.code, 1, r.stderr);
  assert.doesNotMatch(r.stderr, /\x1b|\r/);
  assert.match(r.stderr, /^error \[E_SKILL\]: model said: \\x1b\[2J\\x1b\[31mgone\\rover/m);
});
