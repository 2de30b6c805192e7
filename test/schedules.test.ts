// Schedules (docs/serve.md, "Schedules"): schedule-create / -list / -delete keep the workspace's
// .agent-apps/schedules.json; startSchedules (what `agent-apps serve` runs) fires them through the
// pipeline, each fire a run file with trigger: schedule; a skill's own `schedule:` key is armed too.
// The clock and the timers are the test's.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cli, folder } from './cli-process.ts';
import { runtimeAt, tempDir, writeFiles } from './helpers.ts';
import { writeAgentSkills } from './agent-helpers.ts';
import { startSchedules, type SetTimer } from '../src/surfaces/serve/schedules.ts';
import type { Runtime } from '../src/index.ts';
import type { TestContext } from 'node:test';

// A skill that notes each call (with the trigger it saw) in a file, and waits on a gate when one is set.
const MARK = `import fs from 'node:fs';
export const frontmatter = { name: 'mark', description: 'notes a call', metadata: { params: { type: 'object', properties: { file: { type: 'string' } }, required: ['file'] } } };
export default async function mark(ctx, args) {
  fs.appendFileSync(args.file, JSON.stringify({ trigger: ctx.nonlocals.trigger ?? null, schedule: ctx.nonlocals.schedule ?? null }) + '\\n');
  if (globalThis.__scheduleGate) await globalThis.__scheduleGate;
  return 'marked';
}
`;

const HELLO = '---\nname: hello\ndescription: says hello\n---\nSay hello.\n';

function marks(file: string): { trigger: string | null; schedule: string | null }[] {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/** A clock the test moves: timers fire in order as it advances. */
function fakeClock(start: number) {
  let t = start;
  let timers: { at: number; fn: () => void }[] = [];
  const setTimer: SetTimer = (fn, ms) => {
    const e = { at: t + ms, fn };
    timers.push(e);
    return () => {
      timers = timers.filter((x) => x !== e);
    };
  };
  return {
    now: () => t,
    setTimer,
    pending: () => timers.length,
    async advance(ms: number) {
      const end = t + ms;
      for (;;) {
        timers.sort((a, b) => a.at - b.at);
        const e = timers[0];
        if (!e || e.at > end) break;
        timers.shift();
        t = e.at;
        e.fn();
        await new Promise((r) => setImmediate(r));
      }
      t = end;
    },
  };
}

async function markWorkspace(t: TestContext): Promise<{ ws: string; rt: Runtime; out: string }> {
  const ws = tempDir(t, 'agent-apps-sched-');
  writeFiles(ws, { 'skills/mark.skill.ts': MARK, 'skills/hello.md': HELLO });
  const rt = await runtimeAt(t, ws);
  return { ws, rt, out: path.join(ws, 'marks.jsonl') };
}

const quiet = { log: () => {}, watch: false };

describe('schedule-create / -list / -delete (the CLI)', () => {
  test('create, list and delete through agent-apps run; the store is .agent-apps/schedules.json', async () => {
    const ws = folder({ 'skills/hello.md': HELLO });
    const created = await cli(['run', 'schedule-create', '--name', 'n', '--every', '1s', '--ref', 'hello'], ws);
    assert.equal(created.code, 0, created.stderr);
    const made = JSON.parse(created.stdout);
    assert.equal(made.name, 'n');
    assert.equal(made.every, 1000);
    assert.equal(made.overlap, 'skip');
    assert.equal(made.catchUp, 'none');
    const store = JSON.parse(fs.readFileSync(path.join(ws, '.agent-apps', 'schedules.json'), 'utf8'));
    assert.deepEqual(store.schedules.map((s: { name: string; ref: string }) => [s.name, s.ref]), [['n', 'hello']]);
    // Written whole and renamed in: no temporary file is left behind.
    assert.deepEqual(fs.readdirSync(path.join(ws, '.agent-apps')).filter((f) => f.endsWith('.tmp')), []);

    const listed = await cli(['run', 'schedule-list', '--json'], ws);
    assert.equal(listed.code, 0, listed.stderr);
    const list = JSON.parse(listed.stdout);
    assert.equal(list.length, 1);
    assert.equal(list[0].name, 'n');
    assert.match(list[0].next, /^\d{4}-\d{2}-\d{2}T/);

    const deleted = await cli(['run', 'schedule-delete', '--name', 'n'], ws);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.deepEqual(JSON.parse((await cli(['run', 'schedule-list', '--json'], ws)).stdout), []);
    const again = await cli(['run', 'schedule-delete', '--name', 'n'], ws);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /no schedule named 'n'/);
  });

  test('an invalid cron, time zone, duration or time is E_VALIDATION naming the field', async () => {
    const ws = folder({ 'skills/hello.md': HELLO });
    const bad = async (args: string[], field: string) => {
      const r = await cli(['run', 'schedule-create', '--ref', 'hello', ...args], ws);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /E_VALIDATION/);
      assert.match(r.stderr, new RegExp(`/${field}\\b`));
    };
    await bad(['--cron', 'not a cron'], 'cron');
    await bad(['--cron', '0 9 * * *', '--timezone', 'Mars/Olympus'], 'timezone');
    await bad(['--every', 'soon'], 'every');
    await bad(['--at', 'tomorrow'], 'at');
    assert.equal(fs.existsSync(path.join(ws, '.agent-apps', 'schedules.json')), false);
    const ok = await cli(['run', 'schedule-create', '--name', 'daily', '--cron', '0 9 * * *', '--timezone', 'Europe/Berlin', '--ref', 'hello'], ws);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(JSON.parse(ok.stdout).cron, '0 9 * * *');
  });
});

describe('startSchedules (agent-apps serve)', () => {
  test('fires ref with args through the pipeline, trigger schedule; each fire is a run file agent-apps runs lists', async (t) => {
    const { ws, rt, out } = await markWorkspace(t);
    const made = (await rt.invoke('schedule-create', { name: 'tick', every: '5m', ref: 'mark', args: { file: out } })) as { createdAt: string };
    const clock = fakeClock(Date.parse(made.createdAt));
    const s = await startSchedules(rt, { ...quiet, now: clock.now, setTimer: clock.setTimer });
    assert.match(s.lines.join('\n'), /schedule tick: every 300000ms → mark/);
    await clock.advance(299_999);
    await s.idle();
    assert.equal(marks(out).length, 0);
    await clock.advance(1);
    await s.idle();
    await clock.advance(300_000);
    await s.idle();
    assert.deepEqual(marks(out), [
      { trigger: 'schedule', schedule: 'tick' },
      { trigger: 'schedule', schedule: 'tick' },
    ]);
    await s.close();
    assert.equal(clock.pending(), 0);

    const dir = path.join(ws, '.agent-apps', 'runs');
    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
    assert.equal(files.length, 2);
    const events = fs.readFileSync(path.join(dir, files[0]!), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(events.map((e) => [e.type, e.trigger, e.schedule, e.skill]), [
      ['run-start', 'schedule', 'tick', 'mark'],
      ['run-end', 'schedule', 'tick', 'mark'],
    ]);
    assert.equal(events[1].exitCode, 0);
    const runs = await cli(['runs', '--json'], ws);
    assert.equal(runs.code, 0, runs.stderr);
    const listed = JSON.parse(runs.stdout) as { id: string; skill: string; status: string; trigger?: string; schedule?: string }[];
    assert.deepEqual(listed.map((r) => [r.skill, r.status, r.trigger, r.schedule]), [['mark', 'ok', 'schedule', 'tick'], ['mark', 'ok', 'schedule', 'tick']]);
    assert.deepEqual(listed.map((r) => `${r.id}.jsonl`).sort(), files.sort());
    // The table says what fired them; the transcript says when the fire was due.
    const table = await cli(['runs'], ws);
    assert.match(table.stdout, /^ID +SKILL +STATUS +EXIT +DURATION +STARTED +TRIGGER$/m);
    assert.match(table.stdout, /mark +ok +0 .* schedule tick$/m);
    const shown = await cli(['runs', 'show', listed[0]!.id], ws);
    assert.match(shown.stdout, /trigger +schedule tick \(due \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\)/);
    // The store notes the last fire (what catch-up counts from).
    const store = JSON.parse(fs.readFileSync(path.join(ws, '.agent-apps', 'schedules.json'), 'utf8'));
    assert.equal(store.schedules[0].lastFiredAt, new Date(Date.parse(made.createdAt) + 600_000).toISOString());
  });

  test('overlap skip skips a fire while the previous one runs; queue runs it after', async (t) => {
    for (const overlap of ['skip', 'queue'] as const) {
      const { rt, out } = await markWorkspace(t);
      const made = (await rt.invoke('schedule-create', { name: 'slow', every: 1000, ref: 'mark', args: { file: out }, overlap })) as { createdAt: string };
      const clock = fakeClock(Date.parse(made.createdAt));
      const s = await startSchedules(rt, { ...quiet, now: clock.now, setTimer: clock.setTimer });
      let open!: () => void;
      (globalThis as { __scheduleGate?: Promise<void> }).__scheduleGate = new Promise<void>((r) => (open = r));
      try {
        await clock.advance(1000);
        // The first fire is in the skill, held at the gate.
        for (let i = 0; i < 50 && marks(out).length < 1; i++) await new Promise((r) => setTimeout(r, 10));
        assert.equal(marks(out).length, 1);
        await clock.advance(1000);
        await clock.advance(1000);
      } finally {
        delete (globalThis as { __scheduleGate?: Promise<void> }).__scheduleGate;
        open();
      }
      await s.idle();
      assert.equal(marks(out).length, overlap === 'skip' ? 1 : 3, overlap);
      await s.close();
    }
  });

  test('a fire missed while no serve ran: catchUp latest runs once at start, none skips it', async (t) => {
    for (const catchUp of ['latest', 'none'] as const) {
      const { rt, out } = await markWorkspace(t);
      const made = (await rt.invoke('schedule-create', { name: 'c', every: '1s', ref: 'mark', args: { file: out }, catchUp })) as { createdAt: string };
      const t0 = Date.parse(made.createdAt);
      const clock = fakeClock(t0);
      const first = await startSchedules(rt, { ...quiet, now: clock.now, setTimer: clock.setTimer });
      await clock.advance(1000);
      await first.close();
      assert.equal(marks(out).length, 1);
      // The serve is down for ten seconds and more: ten fires missed.
      await clock.advance(10_500);
      const second = await startSchedules(rt, { ...quiet, now: clock.now, setTimer: clock.setTimer });
      await second.idle();
      assert.equal(marks(out).length, catchUp === 'latest' ? 2 : 1, catchUp);
      // Armed again as usual: the next fire is at t0 + 12s.
      await clock.advance(500);
      await second.idle();
      assert.equal(marks(out).length, catchUp === 'latest' ? 3 : 2, catchUp);
      await second.close();
    }
  });

  test('an at schedule fires once; a schedule deleted while serving is disarmed', async (t) => {
    const { rt, out } = await markWorkspace(t);
    const start = Date.now();
    const clock = fakeClock(start);
    await rt.invoke('schedule-create', { name: 'once', at: new Date(start + 60_000).toISOString(), ref: 'mark', args: { file: out } });
    await rt.invoke('schedule-create', { name: 'gone', every: '1s', ref: 'mark', args: { file: out } });
    const s = await startSchedules(rt, { ...quiet, now: clock.now, setTimer: clock.setTimer });
    await rt.invoke('schedule-delete', { name: 'gone' });
    await s.reload();
    await clock.advance(120_000);
    await s.idle();
    assert.deepEqual(marks(out), [{ trigger: 'schedule', schedule: 'once' }]);
    assert.equal(clock.pending(), 0);
    await s.close();
  });
});

describe("a skill's own schedule: key", () => {
  test('is armed by startSchedules, kept in the store (schedule-list shows it), caught up across a restart, and dropped when the key goes', async (t) => {
    const ws = tempDir(t, 'agent-apps-sched-declared-');
    const out = path.join(ws, 'marks.jsonl');
    const declaring = (schedule: unknown) =>
      MARK.replace("metadata: { params:", `metadata: { schedule: ${JSON.stringify(schedule)}, params:`);
    writeFiles(ws, { 'skills/mark.skill.ts': declaring({ every: '1m', args: { file: out }, catchUp: 'latest' }) });
    const rt = await runtimeAt(t, ws);
    const clock = fakeClock(Date.now());
    const first = await startSchedules(rt, { ...quiet, now: clock.now, setTimer: clock.setTimer });
    assert.match(first.lines.join('\n'), /schedule mark: every 60000ms → mark/);
    await clock.advance(60_000);
    await first.idle();
    await first.close();
    assert.deepEqual(marks(out), [{ trigger: 'schedule', schedule: 'mark' }]);
    const listed = (await rt.invoke('schedule-list', {})) as { name: string; declaredBy?: string }[];
    assert.deepEqual(listed.map((s) => [s.name, s.declaredBy]), [['mark', 'mark']]);
    await assert.rejects(rt.invoke('schedule-delete', { name: 'mark' }), { code: 'E_USAGE', message: /declared by the skill mark/ });

    // Down for five minutes: catchUp latest runs the latest missed fire once, at start.
    await clock.advance(300_000);
    const second = await startSchedules(rt, { ...quiet, now: clock.now, setTimer: clock.setTimer });
    await second.idle();
    await second.close();
    assert.equal(marks(out).length, 2);

    // The key removed: the schedule goes from the store at the next start.
    fs.writeFileSync(path.join(ws, 'skills', 'mark.skill.ts'), MARK);
    const rt3 = await runtimeAt(t, ws);
    const third = await startSchedules(rt3, { ...quiet, now: clock.now, setTimer: clock.setTimer });
    assert.deepEqual(third.lines, []);
    await third.close();
    assert.deepEqual(await rt3.invoke('schedule-list', {}), []);
  });

  test('a bad declaration is logged, naming the skill and the field; the other schedules are armed', async (t) => {
    const ws = tempDir(t, 'agent-apps-sched-declared-bad-');
    writeFiles(ws, { 'skills/mark.skill.ts': MARK.replace("metadata: { params:", "metadata: { schedule: { cron: 'nope' }, params:"), 'skills/hello.md': HELLO });
    const rt = await runtimeAt(t, ws);
    await rt.invoke('schedule-create', { name: 'h', every: '1h', ref: 'hello' });
    const logged: string[] = [];
    const s = await startSchedules(rt, { log: (_l, text) => logged.push(text), watch: false });
    assert.match(logged.join('\n'), /schedule mark: mark's schedule: key — .*\/cron/);
    assert.deepEqual(s.lines.map((l) => l.split(':')[0]), ['schedule h']);
    await s.close();
  });
});

describe('schedule-create from agent code (untrusted)', () => {
  test('ref is an x-ref: an inline:// ref is E_UNTRUSTED_REF; a bare name the agent may call is stored', async (t) => {
    const ws = tempDir(t, 'agent-apps-sched-agent-');
    writeFiles(ws, { 'skills/mark.skill.ts': MARK });
    const code = [
      'const out = {};',
      "try { await ctx.manager.invoke('schedule-create', { name: 'x', every: '1s', ref: 'inline://code,export%20default%20()%20%3D%3E%201' }); out.inline = 'ok'; } catch (e) { out.inline = e.code; }",
      "try { await ctx.manager.invoke('schedule-create', { name: 'y', every: '1s', ref: './skills/mark.skill.ts' }); out.path = 'ok'; } catch (e) { out.path = e.code; }",
      "try { await ctx.manager.invoke('schedule-create', { name: 'z', every: '1s', ref: 'mark', args: { file: 'm' } }); out.bare = 'ok'; } catch (e) { out.bare = e.code; }",
      'ctx.manager.finish(out);',
    ].join('\n');
    writeAgentSkills(path.join(ws, 'skills'), { planner: { 'allowed-tools': 'schedule-create mark', turns: [{ invoke: code }] } });
    const rt = await runtimeAt(t, ws);
    assert.deepEqual(await rt.invoke('planner', {}), { inline: 'E_UNTRUSTED_REF', path: 'E_UNTRUSTED_REF', bare: 'ok' });
    const store = JSON.parse(fs.readFileSync(path.join(ws, '.agent-apps', 'schedules.json'), 'utf8'));
    assert.deepEqual(store.schedules.map((s: { name: string }) => s.name), ['z']);
  });
});
