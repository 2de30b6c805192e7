// `agent-apps runs` (SPEC §18) as real CLI processes on copies of test/fixtures/headless-ws (agent
// skills replayed from cassettes, code skills that fail, refuse or wait for a signal): past runs
// listed newest first with their status and exit code, a run shown as a transcript from the
// session middleware's record, prune, `tail --run` with a listed id, a run killed outright, and run
// files with lines that are not events.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BIN, cli, cliEnv, tempDir } from './cli-process.ts';
import { headlessWorkspace } from './headless-helpers.ts';

interface Listed {
  id: string;
  skill: string | null;
  status: string;
  exitCode: number | null;
  durationMs: number | null;
  startedAt: string;
  error?: { code?: string; message: string };
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function listed(ws: string, extra: string[] = []): Promise<Listed[]> {
  const r = await cli(['runs', '--json', ...extra], ws);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Listed[];
}

/** `long` in `ws`, started; `waiting` resolves once it waits for a signal (it says so on stderr). */
function startLong(ws: string): { child: ChildProcess; waiting: Promise<void>; closed: Promise<number | null> } {
  const child = spawn(process.execPath, [BIN, 'run', 'long'], { cwd: ws, env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  const guard = setTimeout(() => child.kill('SIGKILL'), 20_000);
  let stderr = '';
  const waiting = new Promise<void>((resolve) => {
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      if (stderr.includes('waiting')) resolve();
    });
  });
  child.stdout!.resume();
  const closed = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve(code);
    }),
  );
  return { child, waiting, closed };
}

/** A run file as the CLI writes one: run-start at `t`, run-end `ms` later with `exitCode`. */
function syntheticRun(ws: string, id: string, t: number, exitCode = 0, ms = 5): void {
  const dir = path.join(ws, '.agent-apps', 'runs');
  fs.mkdirSync(dir, { recursive: true });
  const base = { rootContextId: id, contextId: id, tool: 'root' };
  const lines = [
    { type: 'run-start', tag: 'cli', level: 'info', text: 'run greet', skill: 'greet', args: {}, pid: 1, record: true, timestamp: t, ...base },
    { type: 'run-end', tag: 'cli', level: exitCode ? 'error' : 'info', text: `run greet: ${exitCode ? 'it broke' : 'ok'}`, skill: 'greet', exitCode, durationMs: ms, record: true, timestamp: t + ms, ...base },
  ];
  fs.writeFileSync(path.join(dir, `${id}.jsonl`), lines.map((l) => JSON.stringify(l) + '\n').join(''));
}

describe('agent-apps runs', { concurrency: 2 }, () => {
  test('a replayed agent run: runs --json lists it, runs show prints the model text, the code, the tool result, usage', { timeout: 60_000 }, async () => {
    const ws = headlessWorkspace();
    const run = await cli(['run', 'count', '--text', 'a b c'], ws);
    assert.equal(run.code, 0, run.stderr);
    const [only, ...more] = await listed(ws);
    assert.equal(more.length, 0);
    assert.equal(only!.skill, 'count');
    assert.equal(only!.status, 'ok');
    assert.equal(only!.exitCode, 0);
    assert.ok(Number.isInteger(only!.durationMs) && only!.durationMs! > 0, String(only!.durationMs));
    assert.match(only!.startedAt, ISO);
    assert.deepEqual(Object.keys(only!).sort(), ['durationMs', 'exitCode', 'id', 'skill', 'startedAt', 'status']);
    assert.ok(fs.existsSync(path.join(ws, '.agent-apps', 'runs', `${only!.id}.jsonl`)), 'the id is the run file’s');

    const show = await cli(['runs', 'show', only!.id], ws);
    assert.equal(show.code, 0, show.stderr);
    assert.equal(show.stderr, '');
    const out = show.stdout;
    assert.match(out, new RegExp(`^run ${only!.id}\n`));
    assert.match(out, /\nskill +count\n/);
    assert.match(out, /\nargs +\{"text":"a b c"\}\n/);
    assert.match(out, /\nstatus +ok \(exit 0\) in /);
    assert.match(out, /\nagent count — 1 turn, \d+ tokens \(\d+ in, \d+ out\)/);
    assert.match(out, /\n {2}── turn 1\n {2}model: Counting\.\n/, 'the model’s text');
    // The code the model ran, line by line, …
    assert.match(out, /\n {2}tool call invoke:\n {4}│ const count = await ctx\.manager\.invoke\('wordcount', \{ text: ctx\.args\.text \}\);\n {4}│ ctx\.manager\.finish\(\{ count \}\);\n/);
    // … what it returned, and the agent's answer.
    assert.match(out, /\n {2}tool result: finished: \{"count":3\}\n/);
    assert.match(out, /\n {2}result: \{"count":3\}\n$/);

    // --json: the run file's events as recorded, the session's agent-run among them.
    const raw = await cli(['runs', 'show', only!.id.slice(0, 8), '--json'], ws);
    assert.equal(raw.code, 0, raw.stderr);
    const events = raw.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
    assert.equal(events[0]!.type, 'run-start');
    assert.equal(events.at(-1)!.type, 'run-end');
    const agent = events.find((e) => e.type === 'agent-run')!;
    assert.deepEqual(agent.result, { count: 3 });
    assert.equal(agent.ok, true);
    assert.deepEqual(
      agent.trace.map((e: { type: string }) => e.type),
      ['turn-start', 'message', 'usage', 'tool-call', 'tool-result', 'turn-end'],
    );
    assert.equal(agent.usage.totalTokens, agent.usage.inputTokens + agent.usage.outputTokens);
    assert.ok(agent.usage.totalTokens > 0);
    assert.equal(fs.readFileSync(path.join(ws, '.agent-apps', 'runs', `${only!.id}.jsonl`), 'utf8').trimEnd().split('\n').length, events.length);
  });

  test('a nested agent run: runs show puts the inner agent where the outer agent’s code called it, denials included', { timeout: 60_000 }, async () => {
    const ws = headlessWorkspace();
    const run = await cli(['run', 'outer', '--text', 'a b c'], ws);
    assert.equal(run.code, 0, run.stderr);
    const [{ id }] = (await listed(ws)) as [Listed];
    const show = await cli(['runs', 'show', id], ws);
    assert.equal(show.code, 0, show.stderr);
    const lines = show.stdout.split('\n');
    const at = (re: RegExp) => {
      const i = lines.findIndex((l) => re.test(l));
      assert.ok(i >= 0, `${re} in:\n${show.stdout}`);
      return i;
    };
    const outer = at(/^agent outer — 1 turn/);
    const call = at(/^ {2}tool call invoke:$/);
    const inner = at(/^ {4}agent sneaky — 1 turn/);
    const innerDenied = at(/^ {6}denied shout \[E_ALLOWED_TOOLS\]: 'sneaky' may not invoke 'shout'/);
    const innerResult = at(/^ {6}result: \{"count":3,"refused":"E_ALLOWED_TOOLS"\}$/);
    const outerDenied = at(/^ {2}denied wordcount \[E_ALLOWED_TOOLS\]: 'outer' may not invoke 'wordcount'/);
    const outerResult = at(/^ {2}tool result: finished: \{"inner":/);
    assert.ok(outer < call && call < inner && inner < innerDenied && innerDenied < innerResult && innerResult < outerDenied && outerDenied < outerResult, show.stdout);
    assert.match(show.stdout, /\n {6}model: Let me try shouting first\.\n/);
  });

  test('a failed agent run: the transcript shows its turns, the model error and the failure', { timeout: 60_000 }, async () => {
    const ws = headlessWorkspace();
    fs.writeFileSync(path.join(ws, 'skills', 'short.md'), '---\nname: short\ndescription: Its cassette ends too soon.\nmetadata:\n  allowed-tools: wordcount\n  model: { provider: replay, cassette: short.cassette.yaml }\n---\nCount.\n');
    fs.writeFileSync(path.join(ws, 'skills', 'short.cassette.yaml'), "turns:\n  - text: Thinking.\n    invoke: |\n      console.log('counted', await ctx.manager.invoke('wordcount', { text: 'x y' }));\n");
    const run = await cli(['run', 'short'], ws);
    assert.equal(run.code, 1, run.stderr);
    const [only] = await listed(ws);
    assert.equal(only!.status, 'failed');
    assert.equal(only!.exitCode, 1);
    assert.equal(only!.error!.code, 'E_MODEL');
    assert.match(only!.error!.message, /has 1 turn; the agent asked for turn 2/);
    const show = await cli(['runs', 'show', only!.id], ws);
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /\nstatus +failed \(exit 1\) in /);
    assert.match(show.stdout, /\nerror +\[E_MODEL\] replay cassette .* has 1 turn/);
    assert.match(show.stdout, /\n {2}tool result:\n {4}│ result: null\n {4}│ console:\n {4}│ counted 2\n/, 'console output, one line each');
    assert.match(show.stdout, /\n {2}── turn 2\n {2}model error \(attempt 1\): replay cassette .* has 1 turn/);
    assert.match(show.stdout, /\n {2}failed \[E_MODEL\]: replay cassette .* has 1 turn; the agent asked for turn 2\n$/);
  });

  test('statuses ok, failed (1, 2), refused (3), interrupted (SIGINT, 130) — newest first, --limit', { timeout: 60_000 }, async () => {
    const ws = headlessWorkspace();
    assert.equal((await cli(['run', 'count', '--text', 'a'], ws)).code, 0);
    assert.equal((await cli(['run', 'boom'], ws)).code, 1);
    assert.equal((await cli(['run', 'nope'], ws)).code, 3);
    assert.equal((await cli(['run', 'no-such-skill'], ws)).code, 2);
    const long = startLong(ws);
    await long.waiting;
    long.child.kill('SIGINT');
    assert.equal(await long.closed, 130);

    const all = await listed(ws);
    assert.deepEqual(
      all.map((r) => [r.skill, r.status, r.exitCode]),
      [
        ['long', 'interrupted', 130],
        ['no-such-skill', 'failed', 2],
        ['nope', 'refused', 3],
        ['boom', 'failed', 1],
        ['count', 'ok', 0],
      ],
    );
    assert.deepEqual(all.map((r) => r.startedAt), all.map((r) => r.startedAt).sort().reverse(), 'newest first');
    assert.deepEqual(all.find((r) => r.skill === 'boom')!.error, { code: 'E_BROKE', message: 'it broke' });
    assert.deepEqual(all.find((r) => r.skill === 'nope')!.error, { code: 'E_ABORTED', message: 'aborted: not today' });
    assert.equal(all.find((r) => r.skill === 'no-such-skill')!.error!.code, 'E_TOOL_NOT_FOUND');
    for (const r of all) assert.ok(typeof r.durationMs === 'number' && r.durationMs >= 0, JSON.stringify(r));

    assert.deepEqual((await listed(ws, ['--limit', '2'])).map((r) => r.id), all.slice(0, 2).map((r) => r.id));
    assert.deepEqual(await listed(ws, ['--limit', '0']), []);

    // The text table: a header, one row each, in the same order, with the shortest unique ids.
    const table = await cli(['runs'], ws);
    assert.equal(table.code, 0, table.stderr);
    const rows = table.stdout.trimEnd().split('\n');
    assert.match(rows[0]!, /^ID +SKILL +STATUS +EXIT +DURATION +STARTED$/);
    assert.equal(rows.length, all.length + 1);
    all.forEach((r, i) => {
      const row = rows[i + 1]!;
      assert.ok(row.startsWith(r.id.slice(0, 8) + ' '), row);
      assert.match(row, new RegExp(` ${r.skill} +${r.status} +${r.exitCode} +\\S+ m?s +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d$`));
    });

    // tail --run takes a listed id.
    const boom = all.find((r) => r.skill === 'boom')!;
    const tail = await cli(['tail', '--run', boom.id.slice(0, 8)], ws);
    assert.equal(tail.code, 0, tail.stderr);
    assert.match(tail.stdout, /run-start +root: run boom\n/);
    assert.match(tail.stdout, /careful +boom: about to fail\n/);
    assert.match(tail.stdout, /run-end +root \[E_BROKE\]: run boom: it broke/);
  });

  test('a run killed outright is running while its process lives, then interrupted; prune never deletes a running run', { timeout: 60_000 }, async () => {
    const ws = headlessWorkspace();
    const long = startLong(ws);
    try {
      await long.waiting;
      const [live] = await listed(ws);
      assert.deepEqual([live!.skill, live!.status, live!.exitCode], ['long', 'running', null]);
      assert.ok(typeof live!.durationMs === 'number' && live!.durationMs >= 0);
      const start = fs.readFileSync(path.join(ws, '.agent-apps', 'runs', `${live!.id}.jsonl`), 'utf8').split('\n')[0]!;
      assert.equal(JSON.parse(start).pid, long.child.pid, 'run-start records the pid');
      const prune = await cli(['runs', 'prune', '--keep', '0', '--json'], ws);
      assert.equal(prune.code, 0, prune.stderr);
      assert.deepEqual(JSON.parse(prune.stdout), { removed: [], kept: 1 });
    } finally {
      long.child.kill('SIGKILL');
    }
    assert.equal(await long.closed, null);
    const [dead] = await listed(ws);
    assert.deepEqual([dead!.skill, dead!.status, dead!.exitCode, dead!.durationMs], ['long', 'interrupted', null, null]);
    const show = await cli(['runs', 'show', dead!.id], ws);
    assert.match(show.stdout, /\nstatus +interrupted\n/);
    const prune = await cli(['runs', 'prune', '--keep', '0'], ws);
    assert.equal(prune.stdout, 'removed 1 run, kept 0\n');
    assert.deepEqual(fs.readdirSync(path.join(ws, '.agent-apps', 'runs')), [], 'the run file and its .live marker went');
  });

  test('runs prune keeps the newest 50 by default, --keep N the newest N', { timeout: 60_000 }, async () => {
    const ws = headlessWorkspace();
    const t0 = Date.UTC(2026, 0, 1);
    const ids = Array.from({ length: 53 }, (_, i) => `run-${String(i).padStart(2, '0')}`);
    // Written in a shuffled order, so that neither the file order nor mtimes give the answer.
    for (const i of [...ids.keys()].sort((a, b) => ((a * 37) % 53) - ((b * 37) % 53))) syntheticRun(ws, ids[i]!, t0 + i * 1000, i % 3 === 0 ? 1 : 0);
    const all = await listed(ws);
    assert.deepEqual(all.map((r) => r.id), [...ids].reverse(), 'newest first by when they started');
    assert.deepEqual(all[0], { id: 'run-52', skill: 'greet', startedAt: new Date(t0 + 52_000).toISOString(), status: 'ok', exitCode: 0, durationMs: 5 });
    assert.deepEqual(all.at(-1)!.error, { message: 'it broke' });

    const pruned = await cli(['runs', 'prune'], ws);
    assert.equal(pruned.code, 0, pruned.stderr);
    assert.equal(pruned.stdout, 'removed 3 runs, kept 50\n');
    assert.deepEqual((await listed(ws)).map((r) => r.id), [...ids].reverse().slice(0, 50));

    const json = await cli(['runs', 'prune', '--keep', '2', '--json'], ws);
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout), { removed: [...ids].reverse().slice(2, 50), kept: 2 });
    assert.deepEqual((await listed(ws)).map((r) => r.id), ['run-52', 'run-51']);
    assert.deepEqual(fs.readdirSync(path.join(ws, '.agent-apps', 'runs')).sort(), ['run-51.jsonl', 'run-52.jsonl']);
  });

  test('run file lines that are not events are skipped with a warning; runs and runs show go on', { timeout: 60_000 }, async () => {
    const ws = headlessWorkspace();
    assert.equal((await cli(['run', 'count', '--text', 'a b'], ws)).code, 0);
    const [{ id }] = (await listed(ws)) as [Listed];
    const file = path.join(ws, '.agent-apps', 'runs', `${id}.jsonl`);
    const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
    fs.writeFileSync(file, [lines[0], 'not json at all', '[1, 2]', '{"no":"type"}', ...lines.slice(1)].join('\n') + '\n{"type":"run-e');
    // A file with nothing but garbage is listed too, for what it is.
    fs.writeFileSync(path.join(ws, '.agent-apps', 'runs', 'garbage.jsonl'), '\u0000\u0001\n{\n');

    const r = await cli(['runs', '--json'], ws);
    assert.equal(r.code, 0, r.stderr);
    const list = JSON.parse(r.stdout) as Listed[];
    const ok = list.find((x) => x.id === id)!;
    assert.deepEqual([ok.skill, ok.status, ok.exitCode], ['count', 'ok', 0], 'the partial last line (a run still writing) is left out, not an error');
    const garbage = list.find((x) => x.id === 'garbage')!;
    assert.deepEqual([garbage.skill, garbage.status, garbage.exitCode], [null, 'interrupted', null]);
    assert.match(r.stderr, new RegExp(`warn: run ${id}: lines 2, 3, 4 \\(3\\) are not JSON events — skipped\n`));
    assert.match(r.stderr, /warn: run garbage: lines 1, 2 \(2\) are not JSON events — skipped\n/);

    const show = await cli(['runs', 'show', id], ws);
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /\n {2}model: Counting\.\n/);
    assert.match(show.stderr, /lines 2, 3, 4 \(3\) are not JSON events/);
  });

  test('--log-level warn still records the run and its agent: runs reads it as ok', { timeout: 60_000 }, async () => {
    const ws = headlessWorkspace();
    assert.equal((await cli(['--log-level', 'warn', 'run', 'count', '--text', 'a b'], ws)).code, 0);
    const [only] = await listed(ws);
    assert.deepEqual([only!.skill, only!.status, only!.exitCode], ['count', 'ok', 0]);
    const show = await cli(['runs', 'show', only!.id], ws);
    assert.match(show.stdout, /\n {2}result: \{"count":2\}\n$/);
  });

  test('usage errors exit 2 with one line: outside a workspace, no runs, an unknown or ambiguous id, bad numbers', { timeout: 60_000 }, async () => {
    const outside = tempDir();
    for (const args of [['runs'], ['runs', 'show', 'x'], ['runs', 'prune']]) {
      const r = await cli(args, outside);
      assert.equal(r.code, 2, args.join(' '));
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /^error \[E_USAGE\]: no workspace at or above .* so no recorded runs: runs are recorded inside a workspace — agent-apps init makes one\n$/);
    }
    const ws = headlessWorkspace();
    const empty = await cli(['runs', '--json'], ws);
    assert.deepEqual([empty.code, empty.stdout], [0, '[]\n']);
    const emptyText = await cli(['runs'], ws);
    assert.deepEqual([emptyText.code, emptyText.stdout], [0, '']);
    assert.match(emptyText.stderr, /^no recorded runs in .* yet/);
    assert.match((await cli(['runs', 'show', 'abc'], ws)).stderr, /^error \[E_USAGE\]: no recorded runs in .* — run a skill first/);

    syntheticRun(ws, 'aaaa1111', Date.now() - 2000);
    syntheticRun(ws, 'aaaa2222', Date.now() - 1000);
    const unknown = await cli(['runs', 'show', 'zzz'], ws);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^error \[E_USAGE\]: no run 'zzz' in .* — agent-apps runs lists them\n$/);
    const ambiguous = await cli(['runs', 'show', 'aaaa'], ws);
    assert.equal(ambiguous.code, 2);
    assert.equal(ambiguous.stderr, "error [E_USAGE]: 'aaaa' matches 2 runs — give more of the id\n");
    assert.equal((await cli(['tail', '--run', 'aaaa'], ws)).stderr, "error [E_USAGE]: 'aaaa' matches 2 runs — give more of the id\n");
    const ids = (await cli(['runs'], ws)).stdout.split('\n').slice(1, 3).map((l) => l.split(' ')[0]);
    assert.deepEqual(ids, ['aaaa2222', 'aaaa1111']);
    assert.equal((await cli(['runs', 'show', 'aaaa1'], ws)).code, 0, 'a unique prefix');
    for (const [args, message] of [
      [['runs', '--limit', 'x'], "--limit expects a whole number, got 'x'"],
      [['runs', '--limit', '-1'], "--limit expects a whole number, got '-1'"],
      [['runs', 'prune', '--keep', '1.5'], "--keep expects a whole number, got '1.5'"],
    ] as const) {
      const r = await cli([...args], ws);
      assert.equal(r.code, 2, args.join(' '));
      assert.equal(r.stderr, `error [E_USAGE]: ${message}\n`);
    }
    assert.equal((await cli(['runs', 'show'], ws)).code, 2, 'show needs an id');
  });

  test('--help of runs, runs show and runs prune: what each does, with examples', { timeout: 60_000 }, async () => {
    const ws = tempDir();
    const runs = await cli(['runs', '--help'], ws);
    assert.equal(runs.code, 0);
    assert.match(runs.stdout, /Status is ok \(exit 0\), failed \(1, 2\), refused \(3\), interrupted/);
    assert.match(runs.stdout, /Examples:\n {2}\$ agent-apps runs\n {2}\$ agent-apps runs --limit 5\n/);
    assert.match(runs.stdout, /show \[options\] <id>/);
    assert.match(runs.stdout, /prune \[options\]/);
    const show = await cli(['runs', 'show', '--help'], ws);
    assert.match(show.stdout, /Examples:\n {2}\$ agent-apps runs show 6af2d444\n/);
    const prune = await cli(['runs', 'prune', '--help'], ws);
    assert.match(prune.stdout, /--keep <n>/);
    assert.match(prune.stdout, /Examples:\n {2}\$ agent-apps runs prune\n/);
    const top = await cli(['--help'], ws);
    assert.match(top.stdout, /\$ agent-apps runs +past runs, newest first/);
  });
});
