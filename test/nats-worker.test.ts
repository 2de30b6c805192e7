// Workers and remote runs (SPEC §19) against a real nats-server: `agent-apps worker` processes,
// `agent-apps run SKILL --remote`, runtime.invoke(…, { remote: true }). A worker killed mid-task
// still yields exactly one result; SIGTERM drains; a malformed request is logged and skipped; a
// request that keeps killing its worker ends in the dead-letter subject; exit codes are a local
// run's; NATS unreachable is E_EVENTS naming the URL while skills that use no events still run.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cli, cliEnv, folder, startCli, type Running } from './cli-process.ts';
import { natsSkip, startNats, type NatsServer } from './nats-helpers.ts';
import { connectNats, type Nats } from '../src/nats/nats.ts';
import { createRuntime } from '../src/index.ts';

const SKILLS: Record<string, string> = {
  'skills/greet.skill.ts': `export const frontmatter = { name: 'greet', description: 'Greets.', metadata: { params: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false } } };
export default (_ctx: unknown, args: { name: string }) => 'hello ' + args.name;
`,
  // Appends one line per run (who ran it), then takes its time: a worker can be killed mid-task.
  'skills/slow.skill.ts': `import fs from 'node:fs';
export const frontmatter = { name: 'slow', description: 'Slow.', metadata: { params: { type: 'object', properties: { ms: { type: 'number' }, mark: { type: 'string' } }, required: ['ms', 'mark'] } } };
export default async (_ctx: unknown, args: { ms: number; mark: string }) => {
  fs.appendFileSync(args.mark, process.pid + '\\n');
  await new Promise((r) => setTimeout(r, args.ms));
  return { ranBy: process.pid };
};
`,
  // Ends the worker process itself: the poison request.
  'skills/crash.skill.ts': `import fs from 'node:fs';
export const frontmatter = { name: 'crash', description: 'Kills its worker.', metadata: { params: { type: 'object', properties: { mark: { type: 'string' } }, required: ['mark'] } } };
export default (_ctx: unknown, args: { mark: string }) => {
  fs.appendFileSync(args.mark, process.pid + '\\n');
  process.exit(7);
};
`,
  'skills/boom.skill.ts': `export const frontmatter = { name: 'boom', description: 'Fails.' };
export default () => { throw Object.assign(new Error('it broke'), { code: 'E_BOOM' }); };
`,
  'skills/nope.skill.ts': `export const frontmatter = { name: 'nope', description: 'Refuses.' };
export default (ctx: { manager: { abort(r: string): unknown } }) => ctx.manager.abort('not today');
`,
};

let server: NatsServer;
let ws: string;
let nats: Nats;
const workers = new Set<ChildProcess>();

type Worker = Running;

const startWorker = (args: string[] = []): Worker => startCli(['worker', ...args], ws, workers);

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

async function ready(w: Worker): Promise<void> {
  await until(() => /queue '.*' on nats/.test(w.stderr()), `the worker to start (stderr: ${w.stderr()})`);
}

const lines = (file: string): string[] => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : []);

/** How many results the results stream holds for a request id. */
async function resultsFor(id: string): Promise<number> {
  const info = await nats.jsm.streams.info(nats.names.stream('results'), { subjects_filter: nats.names.result(id) });
  return info.state.subjects?.[nats.names.result(id)] ?? 0;
}

describe('workers and remote runs', { skip: natsSkip }, () => {
  before(async () => {
    server = await startNats();
    ws = folder({
      ...SKILLS,
      'skills/main.md': `---\nname: main\ndescription: A workspace whose events and work run on NATS.\nmetadata:\n  events:\n    backend: nats\n    url: ${server.url}\n    namespace: wt\n    ackWaitMs: 1000\n---\n`,
    });
    nats = await connectNats({ backend: 'nats', url: server.url, namespace: 'wt', ackWaitMs: 1000, from: 'test' });
  });
  after(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await nats?.close();
    await server?.stop();
  });

  test('run --remote gives the result on stdout and a local run\'s exit code for each outcome', async () => {
    const w = startWorker(['--concurrency', '2']);
    try {
      await ready(w);
      const ok = await cli(['run', 'greet', '--name', 'Ada', '--remote', '--remote-timeout', '20000'], ws);
      assert.equal(ok.code, 0, ok.stderr);
      assert.equal(ok.stdout, 'hello Ada\n');
      const invalid = await cli(['run', 'greet', '--remote'], ws);
      assert.equal(invalid.code, 2, invalid.stderr);
      assert.match(invalid.stderr, /E_VALIDATION/);
      const unknown = await cli(['run', 'no-such-skill', '--remote'], ws);
      assert.equal(unknown.code, 2, unknown.stderr);
      assert.match(unknown.stderr, /E_TOOL_NOT_FOUND/);
      const failed = await cli(['run', 'boom', '--remote'], ws);
      assert.equal(failed.code, 1, failed.stderr);
      assert.match(failed.stderr, /E_BOOM.*it broke|it broke/);
      const refused = await cli(['run', 'nope', '--remote'], ws);
      assert.equal(refused.code, 3, refused.stderr);
      assert.match(refused.stderr, /not today/);
      // A remote party runs the workspace's own skills by name, no library built-in (shell).
      const hidden = await cli(['run', 'shell', '--remote', '--args-json', '{"command":"echo hi"}'], ws);
      assert.equal(hidden.code, 1, hidden.stderr);
      assert.match(hidden.stderr, /E_ALLOWED_TOOLS.*built-in/);
      const injected = await cli(['run', 'greet', '--remote', '--args-json', '{"name":"x","$context":{"middleware":{"shell":{"command":"id"}}}}'], ws);
      assert.equal(injected.code, 1, injected.stderr);
      assert.match(injected.stderr, /E_UNTRUSTED_REF.*\$context/);
    } finally {
      w.child.kill('SIGTERM');
      assert.equal(await w.exited, 0);
    }
  });

  test('runtime.invoke(ref, args, { remote: true }) returns the worker\'s result; without a worker, --remote-timeout ends the wait with E_TIMEOUT (exit 1)', async () => {
    const late = await cli(['run', 'greet', '--name', 'Bo', '--remote', '--remote-timeout', '300', '--queue', 'nobody'], ws);
    assert.equal(late.code, 1, late.stderr);
    assert.match(late.stderr, /E_TIMEOUT/);
    const w = startWorker(['--queue', 'api']);
    const rt = await createRuntime({ cwd: ws });
    try {
      await ready(w);
      assert.equal(await rt.invoke('greet', { name: 'Cy' }, { remote: { queue: 'api', timeoutMs: 20_000 } }), 'hello Cy');
      await assert.rejects(rt.invoke('greet', {}, { remote: { queue: 'api' } }), { code: 'E_VALIDATION' });
    } finally {
      await rt.close();
      w.child.kill('SIGTERM');
      await w.exited;
    }
  });

  test('a worker killed (SIGKILL) mid-task: the request is redelivered to another worker and yields exactly one result', async () => {
    const mark = path.join(ws, 'slow-runs.txt');
    const a = startWorker(['--queue', 'kill']);
    await ready(a);
    const run = cli(['run', 'slow', '--ms', '1500', '--mark', mark, '--remote', '--queue', 'kill', '--json'], ws);
    await until(() => lines(mark).length === 1, 'the first worker to start the task');
    assert.equal(lines(mark)[0], String(a.child.pid));
    a.child.kill('SIGKILL');
    await a.exited;
    const b = startWorker(['--queue', 'kill']);
    try {
      const done = await run;
      assert.equal(done.code, 0, done.stderr);
      assert.deepEqual(JSON.parse(done.stdout), { ranBy: b.child.pid });
      assert.deepEqual(lines(mark), [String(a.child.pid), String(b.child.pid)]);
      // Exactly one result for the request, however often it ran.
      const ids = await nats.jsm.streams.info(nats.names.stream('results'), { subjects_filter: `${nats.names.prefix}.results.>` });
      const perId = Object.values(ids.state.subjects ?? {});
      assert.ok(perId.length > 0 && perId.every((n) => n === 1), JSON.stringify(ids.state.subjects));
    } finally {
      b.child.kill('SIGTERM');
      await b.exited;
    }
  });

  test('SIGTERM drains: the running request finishes and is answered, nothing new is taken, exit 0', async () => {
    const mark = path.join(ws, 'drain-runs.txt');
    const w = startWorker(['--queue', 'drain', '--concurrency', '1']);
    await ready(w);
    const running = cli(['run', 'slow', '--ms', '1500', '--mark', mark, '--remote', '--queue', 'drain'], ws);
    await until(() => lines(mark).length === 1, 'the task to start');
    w.child.kill('SIGTERM');
    const queued = cli(['run', 'greet', '--name', 'later', '--remote', '--queue', 'drain', '--remote-timeout', '4000'], ws);
    const r = await running;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await w.exited, 0, w.stderr());
    assert.match(w.stderr(), /draining/);
    assert.match(w.stderr(), /drained — 1 done/);
    // Taken by nobody: it waits for the next worker.
    const q = await queued;
    assert.equal(q.code, 1);
    assert.match(q.stderr, /E_TIMEOUT/);
    const status = await cli(['worker', '--status', '--json'], ws);
    assert.equal(status.code, 0, status.stderr);
    const drain = (JSON.parse(status.stdout) as { queues: { queue: string; pending: number; workers: unknown[] }[] }).queues.find((x) => x.queue === 'drain')!;
    assert.equal(drain.pending, 1);
    assert.deepEqual(drain.workers, []);
  });

  test('a malformed request is terminated and logged, and the worker goes on', async () => {
    const w = startWorker(['--queue', 'bad']);
    try {
      await ready(w);
      await nats.stream('invoke');
      await nats.js.publish(nats.names.invoke('bad'), 'this is not json');
      await nats.js.publish(nats.names.invoke('bad'), JSON.stringify({ id: 'r1', args: {} }));
      await until(() => /names no 'skill'/.test(w.stderr()), 'the second malformed request to be logged');
      assert.match(w.stderr(), /malformed request on 'bad'.*not JSON.*terminated/);
      const ok = await cli(['run', 'greet', '--name', 'after', '--remote', '--queue', 'bad', '--remote-timeout', '20000'], ws);
      assert.equal(ok.stdout, 'hello after\n');
      assert.equal(await resultsFor('r1'), 1); // answered with E_BAD_REQUEST, since it had an id
    } finally {
      w.child.kill('SIGTERM');
      assert.equal(await w.exited, 0);
    }
  });

  test('a poison request that kills its worker three times goes to the dead-letter subject, shown by worker --status', async () => {
    const mark = path.join(ws, 'crash-runs.txt');
    const run = cli(['run', 'crash', '--mark', mark, '--remote', '--queue', 'poison'], ws);
    let last: Worker | undefined;
    for (let i = 1; i <= 3; i++) {
      last = startWorker(['--queue', 'poison']);
      assert.equal(await last.exited, 7, `delivery ${i} kills the worker`);
    }
    assert.equal(lines(mark).length, 3);
    const fourth = startWorker(['--queue', 'poison']);
    try {
      const r = await run;
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /E_DEAD_LETTER/);
      assert.equal(lines(mark).length, 3, 'a dead request does not run again');
      assert.match(fourth.stderr(), /moved to agent-apps\.wt\.dead/);
      const status = await cli(['worker', '--status', '--json'], ws);
      assert.equal((JSON.parse(status.stdout) as { dead: number }).dead, 1);
      const text = await cli(['worker', '--status'], ws);
      assert.match(text.stdout, /dead letters: 1/);
      assert.match(text.stdout, /poison/);
      const dead = await nats.jsm.streams.getMessage(nats.names.stream('dead'), { last_by_subj: nats.names.deadOf('poison') });
      assert.equal(dead!.json<{ skill: string }>().skill, 'crash');
    } finally {
      fourth.child.kill('SIGTERM');
      await fourth.exited;
    }
  });

  test('NATS unreachable: event skills and workers fail with E_EVENTS naming the URL; list and other skills are unaffected', async () => {
    const env = { AGENT_APPS_EVENTS: 'nats://127.0.0.1:9' };
    const emit = await cli(['run', 'event-emit', '--topic', 't', '--type', 'x'], ws, { env });
    assert.equal(emit.code, 1);
    assert.match(emit.stderr, /E_EVENTS.*nats:\/\/127\.0\.0\.1:9/);
    const worker = await cli(['worker'], ws, { env });
    assert.equal(worker.code, 1);
    assert.match(worker.stderr, /E_EVENTS.*nats:\/\/127\.0\.0\.1:9/);
    const greet = await cli(['run', 'greet', '--name', 'x'], ws, { env });
    assert.equal(greet.code, 0, greet.stderr);
    assert.equal(greet.stdout, 'hello x\n');
    const list = await cli(['list'], ws, { env });
    assert.equal(list.code, 0, list.stderr);
  });

  test('events through the CLI go over NATS: emitted by one run, waited for by another', async () => {
    const sub = await cli(['run', 'event-subscribe', '--topic', 'deploys', '--queue', 'ops'], ws);
    assert.equal(sub.code, 0, sub.stderr);
    const emit = await cli(['run', 'event-emit', '--topic', 'deploys', '--type', 'done', '--args-json', '{"data":{"v":2}}'], ws);
    assert.equal(emit.code, 0, emit.stderr);
    const wait = await cli(['run', 'event-wait', '--topic', 'deploys', '--queue', 'ops', '--timeout', '5000', '--json'], ws);
    assert.equal(wait.code, 0, wait.stderr);
    const events = JSON.parse(wait.stdout) as { type: string; data: unknown }[];
    assert.deepEqual(events.map((e) => [e.type, e.data]), [['done', { v: 2 }]]);
  });
});

test('NATS loads only when used: a plain run in a workspace configured for NATS, and event skills on the in-memory bus, load no @nats-io module', async () => {
  const plain = folder({ 'skills/greet.skill.ts': SKILLS['skills/greet.skill.ts']! });
  const configured = folder({ ...SKILLS, 'skills/main.md': '---\nname: main\ndescription: NATS configured.\nmetadata:\n  events: { backend: nats, url: nats://127.0.0.1:9 }\n---\n' });
  const script = `
    import { registerHooks } from 'node:module';
    const loaded = [];
    registerHooks({ resolve(spec, ctx, next) { const r = next(spec, ctx); if (/@nats-io|src\\/nats\\/nats|nats-bus/.test(r.url)) loaded.push(r.url); return r; } });
    const { createRuntime } = await import(${JSON.stringify(new URL('../src/index.ts', import.meta.url).href)});
    const memory = await createRuntime({ cwd: process.argv[1] });
    await memory.invoke('greet', { name: 'x' });
    await memory.invoke('event-emit', { topic: 't', type: 'x' });
    await memory.invoke('event-wait', { topic: 't', timeout: 0 });
    await memory.close();
    const nats = await createRuntime({ cwd: process.argv[2] });
    await nats.invoke('greet', { name: 'y' });
    const before = [...loaded];
    // The control: an event skill there does load the client (and fails: nothing listens on :9).
    const code = await nats.invoke('event-emit', { topic: 't', type: 'x' }).then(() => 'ok', (e) => e.code);
    await nats.close();
    process.stdout.write(JSON.stringify({ before, after: loaded.length > 0, code }));
  `;
  const r = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, plain, configured], { env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.once('close', (code) => resolve({ code, out, err }));
  });
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(JSON.parse(r.out), { before: [], after: true, code: 'E_EVENTS' });
});
