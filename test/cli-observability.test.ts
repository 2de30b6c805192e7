// The CLI's observability and shutdown (SPEC §8, §10, §12): jsonl run files, `agent-apps tail`,
// `agent-apps debug`, `--profile`, and SIGINT / SIGTERM with `shutdown` handlers. Real processes
// of bin/agent-apps.js in throw-away workspaces.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(REPO, 'bin', 'agent-apps.js');

const temps: string[] = [];
after(() => {
  for (const dir of temps) fs.rmSync(dir, { recursive: true, force: true });
});
function tempDir(prefix = 'agent-apps-obs-'): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  temps.push(dir);
  return dir;
}
const HOME = tempDir('agent-apps-obs-home-');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** When the process closed (Date.now()). */
  closedAt: number;
}

function cli(args: string[], opts: { cwd: string; env?: Record<string, string>; onSpawn?: (child: ChildProcess) => void }): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, AGENT_APPS_HOME: HOME, ...opts.env };
  for (const key of ['AGENT_APPS_PATH', 'NO_COLOR', 'FORCE_COLOR', 'NODE_OPTIONS', 'NODE_TEST_CONTEXT']) if (!opts.env?.[key]) delete env[key];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: opts.cwd, env, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, closedAt: Date.now() }));
    child.stdin.end();
    opts.onSpawn?.(child);
  });
}

const SKILLS: Record<string, string> = {
  'skills/greet.skill.ts': `
export const frontmatter = { name: 'greet', description: 'Greets.', metadata: { params: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false } } };
export default function greet(_ctx: unknown, args: { name: string }) { return 'Hello, ' + args.name + '.'; }
`,
  'skills/echo.skill.ts': `
export const frontmatter = { name: 'echo', description: 'Returns its args.' };
export default function echo(_ctx: unknown, args: unknown) { return args; }
`,
  'skills/chatty.skill.ts': `
import type { Context } from 'agent-apps';
export const frontmatter = { name: 'chatty', description: 'Logs a few events.' };
export default function chatty(ctx: Context) {
  ctx.manager.log({ type: 'step', tag: 'work', level: 'info', text: 'step one' });
  ctx.manager.log({ type: 'step', tag: 'work', level: 'debug', text: 'step detail' });
  ctx.manager.log({ type: 'careful', tag: 'work', level: 'warn', text: 'watch out' });
  ctx.manager.log('a user message');
  return 'chatted';
}
`,
  'skills/fail.skill.ts': `
export const frontmatter = { name: 'fail', description: 'Throws.' };
export default function fail() { throw new Error('it failed'); }
`,
  // Writes "started" to stderr, then sleeps (or until the run is aborted).
  'skills/slow.skill.ts': `
import { setTimeout as sleep } from 'node:timers/promises';
import type { Context } from 'agent-apps';
export const frontmatter = { name: 'slow', description: 'Takes its time.', metadata: { params: { type: 'object', properties: { ms: { type: 'number' } } } } };
export default async function slow(ctx: Context, args: { ms?: number }) {
  ctx.manager.log({ type: 'slow-start', tag: 'work', level: 'info' });
  process.stderr.write('started\\n');
  await sleep(args.ms ?? 800, undefined, { signal: ctx.run.signal });
  ctx.manager.log({ type: 'slow-end', tag: 'work', level: 'info' });
  return 'slept';
}
`,
  // The shutdown handler of seed 003's standard topic, declared with event: { route: shutdown }:
  // invoked with { event } it is the handler; invoked without, it is the long-running skill.
  'skills/long.skill.ts': `
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Context, Event } from 'agent-apps';
export const frontmatter = { name: 'long', description: 'Runs until interrupted; handles shutdown.', metadata: { event: { route: 'shutdown' }, params: { type: 'object', properties: { event: { type: 'object' } } } } };
export default async function long(ctx: Context, args: { event?: Event }) {
  if (args.event) {
    fs.writeFileSync(process.env.MARKER!, JSON.stringify({ handler: 'long', type: args.event.type, topic: args.event.topic, data: args.event.data }));
    process.stderr.write('handler ran\\n');
    if (process.env.HANG_MS) await sleep(Number(process.env.HANG_MS), undefined, { signal: ctx.run.signal });
    return 'handled';
  }
  process.stderr.write('waiting\\n');
  await sleep(30_000, undefined, { signal: ctx.run.signal });
  return 'done';
}
`,
  // The same through event-subscribe from inside a running skill.
  'skills/subscriber.skill.ts': `
import { setTimeout as sleep } from 'node:timers/promises';
import type { Context } from 'agent-apps';
export const frontmatter = { name: 'subscriber', description: 'Subscribes on-shutdown, then waits.' };
export default async function subscriber(ctx: Context) {
  await ctx.manager.invoke('event-subscribe', { topic: 'shutdown', ref: 'on-shutdown' });
  process.stderr.write('waiting\\n');
  await sleep(30_000, undefined, { signal: ctx.run.signal });
  return 'done';
}
`,
  // Subscribes a shutdown handler and returns at once: the runtime announces shutdown when it closes.
  'skills/tidy.skill.ts': `
import type { Context } from 'agent-apps';
export const frontmatter = { name: 'tidy', description: 'Subscribes on-shutdown and returns.' };
export default async function tidy(ctx: Context) {
  await ctx.manager.invoke('event-subscribe', { topic: 'shutdown', ref: 'on-shutdown' });
  return 'tidy';
}
`,
  'skills/on-shutdown.skill.ts': `
import fs from 'node:fs';
import type { Context, Event } from 'agent-apps';
export const frontmatter = { name: 'on-shutdown', description: 'Shutdown handler.' };
export default function onShutdown(_ctx: Context, args: { event: Event }) {
  fs.writeFileSync(process.env.MARKER!, JSON.stringify({ handler: 'on-shutdown', type: args.event.type, topic: args.event.topic, data: args.event.data }));
  return 'handled';
}
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
const runFiles = (ws: string) => (fs.existsSync(runsDir(ws)) ? fs.readdirSync(runsDir(ws)).filter((f) => f.endsWith('.jsonl')) : []);
/** The events of a run file. */
const readRun = (ws: string, file: string): Record<string, unknown>[] =>
  fs.readFileSync(path.join(runsDir(ws), file), 'utf8').trimEnd().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
/** The one run file that `before` did not have. */
function newRun(ws: string, before: string[]): string {
  const added = runFiles(ws).filter((f) => !before.includes(f));
  assert.equal(added.length, 1, `one new run file expected, got ${added.join(', ')}`);
  return added[0]!;
}

const STACK = /^\s+at /m;

// ——— run files ———

describe('jsonl run files', { concurrency: true }, () => {
  test('every CLI run — ok, failed, unknown skill, debug — writes <workspace>/.agent-apps/runs/<rootContextId>.jsonl', async () => {
    const ws = workspace();
    const cases: [string[], number][] = [
      [['run', 'greet', '--name', 'Ada'], 0],
      [['run', 'fail'], 1],
      [['run', 'gret'], 2],
      [['debug', 'greet', '--name', 'Bo'], 0],
    ];
    for (const [args, code] of cases) {
      const before = runFiles(ws);
      const r = await cli(args, { cwd: ws });
      assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
      const file = newRun(ws, before);
      const id = file.replace(/\.jsonl$/, '');
      const events = readRun(ws, file);
      assert.ok(events.length >= 1);
      for (const e of events) {
        assert.equal(e.rootContextId, id);
        assert.equal(typeof e.contextId, 'string');
        assert.equal(typeof e.tool, 'string');
        assert.equal(typeof e.timestamp, 'number');
      }
      assert.equal(events.at(-1)!.type, 'run-end', args.join(' '));
      assert.equal(fs.existsSync(path.join(runsDir(ws), `${id}.live`)), false, 'the live marker is gone once the run ended');
    }
  });

  test('a sub-folder cwd records into its workspace', async () => {
    const ws = workspace();
    const sub = path.join(ws, 'skills');
    const r = await cli(['run', 'greet', '--name', 'Ada'], { cwd: sub });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(runFiles(ws).length, 1);
  });

  test('secrets in args are redacted in the run file', async () => {
    const ws = workspace();
    const r = await cli(['run', 'echo', '--apiKey', 'sk-live-123', '--region', 'eu'], { cwd: ws });
    assert.equal(r.code, 0, r.stderr);
    const [file] = runFiles(ws);
    const text = fs.readFileSync(path.join(runsDir(ws), file!), 'utf8');
    assert.ok(!text.includes('sk-live-123'), text);
    const start = readRun(ws, file!).find((e) => e.type === 'run-start') as { args: Record<string, unknown> };
    assert.deepEqual(start.args, { apiKey: '[REDACTED]', region: 'eu' });
  });

  test('the runs directory is pruned to the newest 50 runs', async () => {
    const ws = workspace();
    fs.mkdirSync(runsDir(ws), { recursive: true });
    const old = Date.now() / 1000 - 10_000;
    for (let i = 0; i < 55; i++) {
      const f = path.join(runsDir(ws), `old-${String(i).padStart(2, '0')}.jsonl`);
      fs.writeFileSync(f, '');
      fs.utimesSync(f, old + i, old + i);
    }
    const r = await cli(['run', 'greet', '--name', 'Ada'], { cwd: ws });
    assert.equal(r.code, 0, r.stderr);
    const files = runFiles(ws);
    assert.equal(files.length, 50);
    assert.equal(files.filter((f) => !f.startsWith('old-')).length, 1, 'the new run is kept');
    assert.ok(!files.includes('old-05.jsonl') && files.includes('old-06.jsonl'), 'the oldest went first');
  });
});

// ——— tail ———

describe('agent-apps tail', { concurrency: true }, () => {
  /** A workspace with two recorded runs: greet, then chatty (the latest). */
  async function twoRuns(): Promise<{ ws: string; first: string; second: string }> {
    const ws = workspace();
    const r1 = await cli(['run', 'greet', '--name', 'Ada'], { cwd: ws });
    assert.equal(r1.code, 0, r1.stderr);
    const [first] = runFiles(ws);
    await new Promise((r) => setTimeout(r, 20)); // distinct modification times
    const r2 = await cli(['--log-level', 'debug', 'run', 'chatty'], { cwd: ws });
    assert.equal(r2.code, 0, r2.stderr);
    const second = newRun(ws, [first!]);
    return { ws, first: first!.replace(/\.jsonl$/, ''), second: second.replace(/\.jsonl$/, '') };
  }

  test('shows the latest run by default, one formatted line per event, on stdout', async () => {
    const { ws } = await twoRuns();
    const r = await cli(['tail'], { cwd: ws });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    const lines = r.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^\d\d:\d\d:\d\d\.\d{3} info +cli +run-start +root: run chatty$/);
    assert.ok(lines.some((l) => /warn +work +careful +chatty: watch out$/.test(l)), r.stdout);
    assert.ok(lines.some((l) => /error +user +message +chatty: a user message$/.test(l)), r.stdout);
    assert.match(lines.at(-1)!, /run-end +root: run chatty: ok$/);
    assert.ok(!r.stdout.includes('run greet'));
  });

  test('--run takes an id or a unique prefix; an unknown or ambiguous one is a usage error', async () => {
    const { ws, first } = await twoRuns();
    const byPrefix = await cli(['tail', '--run', first.slice(0, 8)], { cwd: ws });
    assert.equal(byPrefix.code, 0, byPrefix.stderr);
    assert.match(byPrefix.stdout, /run-start +root: run greet/);
    const full = await cli(['tail', '--run', first], { cwd: ws });
    assert.equal(full.stdout, byPrefix.stdout);

    const unknown = await cli(['tail', '--run', 'zzzz'], { cwd: ws });
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /no run 'zzzz'/);
    fs.writeFileSync(path.join(runsDir(ws), 'dup-1.jsonl'), '');
    fs.writeFileSync(path.join(runsDir(ws), 'dup-2.jsonl'), '');
    const ambiguous = await cli(['tail', '--run', 'dup'], { cwd: ws });
    assert.equal(ambiguous.code, 2);
    assert.match(ambiguous.stderr, /'dup' matches 2 runs/);
    assertNoStack(ambiguous);
  });

  test('--last, --tag, --type and --level filter; they combine', async () => {
    const { ws } = await twoRuns();
    const types = async (...args: string[]) => {
      const r = await cli(['tail', '--json', ...args], { cwd: ws });
      assert.equal(r.code, 0, r.stderr);
      return r.stdout.trimEnd().split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { type: string; text?: string }).text ?? (JSON.parse(l) as { type: string }).type);
    };
    assert.deepEqual(await types('--tag', 'work'), ['step one', 'step detail', 'watch out']);
    assert.deepEqual(await types('--type', 'step'), ['step one', 'step detail']);
    assert.deepEqual(await types('--level', 'warn'), ['watch out', 'a user message']);
    assert.deepEqual(await types('--last', '2'), ['a user message', 'run chatty: ok']);
    assert.deepEqual(await types('--tag', 'work', '--level', 'info', '--last', '1'), ['watch out']);
    const bad = await cli(['tail', '--level', 'loud'], { cwd: ws });
    assert.equal(bad.code, 2);
    const badLast = await cli(['tail', '--last', 'many'], { cwd: ws });
    assert.equal(badLast.code, 2);
    assert.match(badLast.stderr, /--last expects a whole number/);
  });

  test('--json prints one parseable event per line with rootContextId, contextId, tool, timestamp', async () => {
    const { ws, second } = await twoRuns();
    const r = await cli(['tail', '--json'], { cwd: ws });
    const lines = r.stdout.trimEnd().split('\n');
    assert.ok(lines.length >= 5);
    for (const line of lines) {
      const e = JSON.parse(line) as Record<string, unknown>;
      assert.equal(e.rootContextId, second);
      for (const key of ['contextId', 'tool', 'type', 'tag', 'level']) assert.equal(typeof e[key], 'string', key);
      assert.equal(typeof e.timestamp, 'number');
    }
  });

  test('a workspace with no recorded runs says so (exit 2)', async () => {
    const r = await cli(['tail'], { cwd: workspace() });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /no recorded runs in .*\.agent-apps\/runs — run a skill first/);
    assertNoStack(r);
  });

  test('--follow prints the run as it goes and ends when the run ends', async () => {
    const ws = workspace();
    let follow: Promise<Run> | undefined;
    const slow = await cli(['run', 'slow', '--ms', '1200'], {
      cwd: ws,
      onSpawn: (child) => {
        child.stderr!.on('data', (d: Buffer | string) => {
          if (!follow && String(d).includes('started')) follow = cli(['tail', '--follow'], { cwd: ws });
        });
      },
    });
    assert.equal(slow.code, 0, slow.stderr);
    assert.ok(follow, 'the slow run started');
    const tail = await follow!;
    assert.equal(tail.code, 0, tail.stderr);
    const lines = tail.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /run-start +root: run slow/);
    assert.ok(lines.some((l) => / slow-end /.test(l)), tail.stdout);
    assert.match(lines.at(-1)!, /run-end +root: run slow: ok/);
    // It followed to the end: the run's last event is its last line (no timing assertion — the
    // machine may be loaded; a tail that never ended would fail the cli() helper's own bound).
    assert.ok(lines.filter((l) => /run-end/.test(l)).length === 1, tail.stdout);
  });

  test('--follow on a finished run prints it and exits', async (t) => {
    const { ws } = await twoRuns();
    // No clock on its speed: a kill bound only stops a tail that would follow forever, and the
    // assertion is that the process exited by itself (no signal), with code 0.
    let killer: NodeJS.Timeout | undefined;
    let child: ChildProcess | undefined;
    t.after(() => clearTimeout(killer));
    const r = await cli(['tail', '--follow', '--type', 'run-end'], { cwd: ws, onSpawn: (c) => ((child = c), (killer = setTimeout(() => c.kill('SIGKILL'), 30_000))) });
    clearTimeout(killer);
    assert.equal(child!.signalCode, null, 'exited by itself, not killed by the hang bound');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout.trim(), /run-end +root: run chatty: ok$/);
  });
});

// ——— debug and --profile ———

describe('agent-apps debug and --profile', { concurrency: true }, () => {
  test('debug SKILL prints the pipeline tree with timings on stderr and only the result on stdout', async () => {
    const ws = workspace();
    const r = await cli(['debug', 'greet', '--name', 'Ada'], { cwd: ws });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'Hello, Ada.\n');
    const lines = r.stderr.trimEnd().split('\n');
    assert.match(lines[0]!, /^▸ greet \d+\.\d{3} ms$/);
    const entries = lines.slice(1).map((l) => /^( +)· ([\w-]+) \d+\.\d{3} ms$/.exec(l));
    assert.ok(entries.every(Boolean), r.stderr);
    assert.deepEqual(entries.map((m) => m![2]), ['params', 'validate-returns', 'validate-args', 'validate-allowed-tools', 'directives', 'execute']);
    assert.ok(entries.every((m) => m![1]!.length >= 2), 'chain entries are indented under their pipeline');
    // The same events are in the run file.
    const tail = await cli(['tail', '--tag', 'debug', '--json'], { cwd: ws });
    const kinds = new Set(tail.stdout.trimEnd().split('\n').map((l) => (JSON.parse(l) as { type: string }).type));
    assert.deepEqual([...kinds].sort(), ['next-enter', 'next-exit', 'pipeline-enter', 'pipeline-exit']);
  });

  test('debug --break TOOL, not interactive: the breakpoint is printed and the run goes on', async () => {
    const ws = workspace();
    const r = await cli(['debug', 'greet', '--name', 'Ada', '--break', 'execute'], { cwd: ws });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'Hello, Ada.\n');
    assert.match(r.stderr, /^ +⏸ breakpoint at greet › execute$/m);
    const tail = await cli(['tail', '--type', 'breakpoint-hit'], { cwd: ws });
    assert.match(tail.stdout, /breakpoint-hit +greet › execute: breakpoint at greet › execute/);
  });

  // A terminal needs a pseudo-terminal: util-linux `script` provides one.
  const hasScript = (() => {
    try {
      return /util-linux/.test(execFileSync('script', ['--version'], { encoding: 'utf8' }));
    } catch {
      return false;
    }
  })();

  test('debug --break in a terminal stops: s steps to the next entry, i inspects the context, c continues', { skip: !hasScript && 'needs util-linux script', timeout: 30_000 }, async (t) => {
    const ws = workspace();
    const command = [process.execPath, BIN, '--no-color', 'debug', 'greet', '--name', 'Ada', '--break', 'directives'].map((a) => `'${a}'`).join(' ');
    const out = await new Promise<string>((resolve, reject) => {
      // A terminal of its own kind: the pause view is the terminal UI's, which TERM=dumb turns off.
      const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: ws, env: { ...process.env, AGENT_APPS_HOME: HOME, TERM: 'xterm-256color' }, detached: true });
      // Whatever happens to the test, the terminal and the CLI under it are stopped.
      t.after(() => {
        if (child.exitCode === null && child.pid) {
          try {
            process.kill(-child.pid, 'SIGKILL');
          } catch {}
        }
      });
      let text = '';
      const answered = new Set<string>();
      // A key is typed once the pause view has been drawn and its keys read (a moment after its
      // text appears): typed at once, on a busy machine it could reach the terminal first.
      const answer = (when: string, what: string) => {
        if (!answered.has(when) && text.includes(when)) {
          answered.add(when);
          setTimeout(() => child.stdin.write(what), 150);
        }
      };
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        text += d;
        // The terminal UI's pause view (src/surfaces/tui/debug-view.ts): one key each, no Enter.
        answer('paused at greet › directives', 's');
        answer('paused at greet › execute', 'i');
        answer('"rootContextId"', 'c');
      });
      child.on('error', reject);
      child.on('close', () => resolve(text));
    });
    assert.match(out, /paused at greet › directives/);
    assert.match(out, /step to the next entry/);
    assert.match(out, /paused at greet › execute/, 'step stopped at the next entry');
    assert.match(out, /"args": \{\s+"name": "Ada"/, 'inspect printed the served context');
    assert.match(out, /Hello, Ada\./);
    assert.match(out, /▸ greet \d+\.\d{3} ms/);
  });

  test('debug with --log-level warn says why there is no tree instead of printing nothing', async () => {
    const r = await cli(['--log-level', 'warn', 'debug', 'greet', '--name', 'Ada'], { cwd: workspace() });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'Hello, Ada.\n');
    assert.equal(r.stderr, 'warn: no pipeline tree — --log-level warn hides the debug events (level info)\n');
  });

  test('debug of a failing skill shows the error in the tree and exits 1', async () => {
    const ws = workspace();
    const r = await cli(['debug', 'fail'], { cwd: ws });
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^▸ fail \d+\.\d{3} ms ✗ it failed$/m);
    assert.match(r.stderr, /it failed/);
  });

  test('--profile prints the timing table on stderr; stdout keeps only the result', async () => {
    const ws = workspace();
    const r = await cli(['--profile', 'run', 'greet', '--name', 'Ada'], { cwd: ws });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'Hello, Ada.\n');
    assert.match(r.stderr, /^KIND +NAME +COUNT +TOTAL ms +MEAN ms +MAX ms$/m);
    assert.match(r.stderr, /^pipeline +greet +1 +\d+\.\d{3} +\d+\.\d{3} +\d+\.\d{3}$/m);
    assert.match(r.stderr, /^entry +greet › execute +1 /m);
    assert.match(r.stderr, /entry times are inclusive/);
  });
});

// ——— shutdown ———

function assertNoStack(r: Run) {
  assert.doesNotMatch(r.stderr, STACK, `no stack trace expected:\n${r.stderr}`);
}

describe('SIGINT / SIGTERM: the shutdown topic', { concurrency: true }, () => {
  /**
   * Runs `args`, sends `signals` once the skill prints "waiting" (the next one after `gap` ms).
   * `waited` is whether a `graceMs` timer, started as the first signal is sent, fired before the
   * process closed: by event order, not a clock — the CLI's own grace timer starts only once it has
   * the signal, so a CLI that waited its grace out always closes after this timer is due.
   */
  async function interrupt(args: string[], signals: NodeJS.Signals[], env: Record<string, string> = {}, gap = 0, graceMs = 0) {
    const ws = workspace();
    const marker = path.join(ws, 'marker.json');
    let sentAt = 0;
    let waited = false;
    let sentinel: NodeJS.Timeout | undefined;
    const r = await cli(args, {
      cwd: ws,
      env: { MARKER: marker, ...env },
      onSpawn: (child) => {
        child.stderr!.on('data', (d: Buffer | string) => {
          if (sentAt || !String(d).includes('waiting')) return;
          sentAt = Date.now();
          if (graceMs) sentinel = setTimeout(() => (waited = true), graceMs);
          const [first, ...rest] = signals;
          child.kill(first);
          if (rest.length) {
            // The second signal once the first is being handled.
            child.stderr!.on('data', (more: Buffer | string) => {
              if (String(more).includes('shutting down')) setTimeout(() => rest.forEach((s) => child.kill(s)), gap);
            });
          }
        });
      },
    });
    // One timer turn after the close: a sentinel already due runs first (timers fire in expiry order).
    await new Promise((resolve) => setTimeout(resolve, 1));
    clearTimeout(sentinel);
    const handled = fs.existsSync(marker) ? (JSON.parse(fs.readFileSync(marker, 'utf8')) as Record<string, unknown>) : undefined;
    return { ...r, ms: r.closedAt - sentAt, waited, handled, ws };
  }

  // No clock on how fast they exit (the time is a diagnostic): where a test shows the CLI did not
  // wait for something, that something (a grace or a handler's hang of 60 s) outlasts the test's
  // own 20 s timeout, so a CLI that waited for it cannot pass.

  test('SIGINT: a handler routed with event: { route: shutdown } runs, then the process exits 130', { timeout: 20_000 }, async (t) => {
    // A 60 s grace: exiting at all shows the CLI exits once the handler is done, not at the grace's end.
    const r = await interrupt(['--shutdown-grace', '60000', 'run', 'long'], ['SIGINT']);
    t.diagnostic(`exited ${r.ms} ms after the signal`);
    assert.equal(r.code, 130, r.stderr);
    assert.deepEqual(r.handled, { handler: 'long', type: 'sigint', topic: 'shutdown', data: { signal: 'SIGINT' } });
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /interrupted — shutting down/);
    assertNoStack(r);
    const [file] = runFiles(r.ws);
    const end = readRun(r.ws, file!).at(-1)!;
    assert.deepEqual([end.type, end.level, end.text], ['run-end', 'warn', 'run long: SIGINT']);
  });

  test('SIGTERM: a handler subscribed with event-subscribe runs, then the process exits 143', { timeout: 20_000 }, async (t) => {
    // A 60 s grace: exiting at all shows the CLI exits once the handler is done, not at the grace's end.
    const r = await interrupt(['--shutdown-grace', '60000', 'run', 'subscriber'], ['SIGTERM']);
    t.diagnostic(`exited ${r.ms} ms after the signal`);
    assert.equal(r.code, 143, r.stderr);
    assert.deepEqual(r.handled, { handler: 'on-shutdown', type: 'sigterm', topic: 'shutdown', data: { signal: 'SIGTERM' } });
    assertNoStack(r);
  });

  test('a handler that outlives --shutdown-grace is cut off: the process exits once the grace is over', { timeout: 20_000 }, async (t) => {
    // The handler hangs 60 s: exiting at all is the cut-off; `waited` is the 300 ms grace, waited out.
    const r = await interrupt(['--shutdown-grace', '300', 'run', 'long'], ['SIGINT'], { HANG_MS: '60000' }, 0, 300);
    t.diagnostic(`exited ${r.ms} ms after the signal`);
    assert.equal(r.code, 130, r.stderr);
    assert.equal(r.handled?.type, 'sigint', 'the handler started');
    assert.equal(r.waited, true, 'waited the grace out for the handler');
    assertNoStack(r);
  });

  test('the default grace lets a slow handler finish within 3 s, and no longer', { timeout: 20_000 }, async (t) => {
    // The handler hangs 60 s: exiting at all is "no longer"; `waited` is the default 3 s grace, waited out.
    const r = await interrupt(['run', 'long'], ['SIGINT'], { HANG_MS: '60000' }, 0, 3000);
    t.diagnostic(`exited ${r.ms} ms after the signal`);
    assert.equal(r.code, 130, r.stderr);
    assert.equal(r.handled?.type, 'sigint', 'the handler started');
    assert.equal(r.waited, true, 'the handler had the default 3 s grace');
  });

  test('a run that ends normally still announces shutdown (type close) to its handlers as the runtime closes', async () => {
    const ws = workspace();
    const marker = path.join(ws, 'marker.json');
    const r = await cli(['run', 'tidy'], { cwd: ws, env: { MARKER: marker } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'tidy\n');
    assert.deepEqual(JSON.parse(fs.readFileSync(marker, 'utf8')), { handler: 'on-shutdown', type: 'close', topic: 'shutdown', data: { reason: 'runtime.close()' } });
  });

  test('a second SIGINT exits at once, without waiting for the grace', { timeout: 20_000 }, async (t) => {
    // The grace and the handler's hang are 60 s each: exiting at all is not waiting for them.
    const r = await interrupt(['--shutdown-grace', '60000', 'run', 'long'], ['SIGINT', 'SIGINT'], { HANG_MS: '60000' }, 100);
    t.diagnostic(`exited ${r.ms} ms after the signal`);
    assert.equal(r.code, 130, r.stderr);
    assertNoStack(r);
  });
});

test('a skill awaiting a promise that never settles keeps the CLI alive until SIGINT, then exits 130', { timeout: 15_000 }, async (t) => {
  const { spawn } = await import('node:child_process');
  const fs = await import('node:fs');
  const os = await import('node:os');
  const path = await import('node:path');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aa-hang-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, 'skills'));
  fs.writeFileSync(path.join(dir, 'skills', 'hang.skill.ts'), 'export default async () => { await new Promise(() => {}); };\n');
  const bin = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'bin', 'agent-apps.js');
  const child = spawn(process.execPath, [bin, 'run', 'hang'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(child.exitCode, null, `exited early (${child.exitCode}): ${stderr}`);
  child.kill('SIGINT');
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  assert.equal(code, 130);
  assert.doesNotMatch(stderr, /\n\s+at /);
});
