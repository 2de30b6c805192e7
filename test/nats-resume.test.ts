// Worker requests that survive their worker (docs/runs.md, "Workers"): a real nats-server, real
// `agent-apps worker` processes in a copy of test/fixtures/resume-ws — agent skills on the replay
// model whose code calls `bump`, which appends to counter.txt and waits on a gate file — killed
// with SIGKILL while a call waits on the gate (between its start and its result, after a
// journaled call). The request is redelivered to a second worker, which resumes from the journal
// the first kept in the namespace's KV bucket: the journaled call is not run again (counter.txt),
// the unverified one runs again only for an idempotent tool (else E_RESUME), one result per
// request id, and the journal is gone once the result is published. A journal that is not a
// worker's fails the request cleanly; one that is another request's is dropped.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KV } from '@nats-io/kv';
import { startCli, tempDir, type Running } from './cli-process.ts';
import { REPO } from './helpers.ts';
import { natsSkip, startNats, type NatsServer } from './nats-helpers.ts';
import { connectNats, type Nats } from '../src/nats/nats.ts';
import { bucket } from '../src/nats/kv.ts';
import { ensureWorkQueue, type InvokeResult } from '../src/nats/work-queue.ts';

const FIXTURE = path.join(REPO, 'test', 'fixtures', 'resume-ws');
const NS = 'wr';

let server: NatsServer;
let nats: Nats;
let journals: KV;
const workers = new Set<ChildProcess>();

type Worker = Running;

function workspace(): string {
  const dir = tempDir('agent-apps-worker-resume-');
  fs.cpSync(FIXTURE, dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'skills', 'main.md'), `---\nname: main\ndescription: resume-ws on NATS.\nmetadata:\n  events:\n    backend: nats\n    url: ${server.url}\n    namespace: ${NS}\n    ackWaitMs: 1000\n---\n`);
  return dir;
}

const startWorker = (ws: string, queue: string, more: string[] = []): Worker => startCli(['worker', '--queue', queue, '--concurrency', '1', ...more], ws, workers);

async function stop(w: Worker): Promise<void> {
  if (w.child.exitCode !== null) return;
  w.child.kill('SIGTERM');
  await w.exited;
}

async function until<T>(check: () => T | undefined | Promise<T | undefined>, what: string, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const counter = (ws: string): string[] => {
  const file = path.join(ws, 'counter.txt');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
};

/** Puts a request on `queue` as a submitter does (work-queue.ts); its id. */
async function submit(queue: string, skill: string, args: Record<string, unknown> = {}): Promise<string> {
  const id = `r${randomUUID().replace(/-/g, '')}`;
  await ensureWorkQueue(nats, queue);
  await nats.js.publish(nats.names.invoke(queue), JSON.stringify({ id, skill, args }), { msgID: id });
  return id;
}

async function resultOf(id: string): Promise<InvokeResult | undefined> {
  const m = await nats.jsm.streams.getMessage(nats.names.stream('results'), { last_by_subj: nats.names.result(id) }).catch(() => null);
  return m ? m.json<InvokeResult>() : undefined;
}

async function resultsFor(id: string): Promise<number> {
  const info = await nats.jsm.streams.info(nats.names.stream('results'), { subjects_filter: nats.names.result(id) });
  return info.state.subjects?.[nats.names.result(id)] ?? 0;
}

/** The journal lines kept for a request, as `[key, line]` in the order they were written (by key: delivery, line). */
async function journalOf(id: string): Promise<[string, Record<string, any>][]> {
  const out: [string, Record<string, any>][] = [];
  for await (const e of await journals.history({ key: `${id}.>` })) if (e.operation === 'PUT') out.push([e.key, JSON.parse(e.string()) as Record<string, any>]);
  const order = (k: string) => k.split('.').slice(1).map(Number);
  return out.sort(([a], [b]) => order(a)[0]! - order(b)[0]! || order(a)[1]! - order(b)[1]!);
}

/**
 * The request's one result, once a worker gave it — with what holds for every request here: the
 * counter holds `counted` (no journaled call ran twice), one result for the id, the journal deleted.
 */
async function answered(ws: string, id: string, counted: string[]): Promise<InvokeResult> {
  const result = await until(() => resultOf(id), `request ${id} to be answered`);
  assert.deepEqual(counter(ws), counted, 'counter.txt: what the tool did, each call once');
  assert.equal(await resultsFor(id), 1, 'one result for the request id');
  assert.deepEqual(await journalOf(id), [], 'answered: its journal is deleted');
  return result;
}

/**
 * Starts a worker on `queue`, submits `skill`, and SIGKILLs the worker once the skill's second
 * `bump` waits on the gate: the first call is journaled, the second started and left no result.
 */
async function killedAtGate(ws: string, queue: string, skill: string): Promise<{ id: string; first: Worker }> {
  const first = startWorker(ws, queue);
  const id = await submit(queue, skill);
  await until(() => first.stderr().includes('waiting for go') || undefined, `the first worker to reach the gate (stderr: ${first.stderr()})`);
  first.child.kill('SIGKILL');
  await first.exited;
  return { id, first };
}

/**
 * Opens the gate and starts one more worker on `queue`: it resumes request `id` of `tally-idem`
 * from the journal (`journal`: what its stderr says of it, "5 lines, 1 earlier delivery") and
 * answers { a: 1, b: 2 }, 'one' played back and 'two' run once more.
 */
async function idemResumes(ws: string, queue: string, id: string, journal: string): Promise<void> {
  fs.writeFileSync(path.join(ws, 'go'), '');
  const worker = startWorker(ws, queue);
  try {
    const result = await answered(ws, id, ['one', 'two']);
    assert.deepEqual(result.result, { a: 1, b: 2 });
    assert.match(worker.stderr(), new RegExp(`request ${id} \\(tally-idem\\) resumes from its journal \\(${journal}\\)`));
  } finally {
    await stop(worker);
  }
}

describe('a worker request resumes from its journal after its worker died', { skip: natsSkip }, () => {
  before(async () => {
    server = await startNats();
    nats = await connectNats({ backend: 'nats', url: server.url, namespace: NS, ackWaitMs: 1000, from: 'test' });
    await Promise.all([nats.stream('invoke'), nats.stream('results')]);
    journals = await bucket(nats, 'journals');
  });
  after(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await nats?.close();
    await server?.stop();
  });

  test('killed mid-call: the journal is in KV under the request id; a second worker plays back the journaled call and, the tool not idempotent, answers E_RESUME naming the unverified call — one result, nothing run twice, the journal deleted', { timeout: 120_000 }, async () => {
    const ws = workspace();
    const { id } = await killedAtGate(ws, 'tally', 'tally');
    assert.deepEqual(counter(ws), ['one']);
    // What the first worker kept, as it happened: its header, then the run journal's lines.
    const kept = await journalOf(id);
    assert.deepEqual(kept.map(([k, l]) => [k, l.type, l.call ?? l.turn]), [
      [`${id}.1.0`, 'journal-start', undefined],
      [`${id}.1.1`, 'model-turn', 1],
      [`${id}.1.2`, 'call-start', '1.1'],
      [`${id}.1.3`, 'call-end', '1.1'],
      [`${id}.1.4`, 'model-turn', 2],
      [`${id}.1.5`, 'call-start', '2.1'],
    ]);
    assert.equal(kept[0]![1].skill, 'tally');
    assert.equal(kept[3]![1].result, 1);
    assert.deepEqual(kept[5]![1].args, { text: 'two', gate: 'go' });

    fs.writeFileSync(path.join(ws, 'go'), '');
    const second = startWorker(ws, 'tally');
    try {
      // The journaled call was played back, the unverified one not run again.
      const result = await answered(ws, id, ['one']);
      assert.equal(result.ok, false);
      assert.equal(result.error!.code, 'E_RESUME');
      assert.match(result.error!.message, new RegExp(`^bump\\(\\{"text":"two","gate":"go"\\}\\) \\(call 2\\.1 of request ${id}\\) started and left no result: it may have run already, so it is not run again — a worker has nobody to ask; give 'bump' idempotent: true`));
      assert.match(second.stderr(), new RegExp(`request ${id} \\(tally\\) resumes from its journal \\(5 lines, 1 earlier delivery\\)`));
      // The worker goes on: the next request runs.
      const next = await submit('tally', 'tally-idem');
      const done = await answered(ws, next, ['one', 'one', 'two']);
      assert.deepEqual(done.result, { a: 2, b: 3 });
    } finally {
      await stop(second);
    }
  });

  test('an idempotent tool: the second worker runs the unverified call again and the request completes — the journaled call ran once, one result', { timeout: 120_000 }, async () => {
    const ws = workspace();
    const { id } = await killedAtGate(ws, 'idem', 'tally-idem');
    assert.deepEqual(counter(ws), ['one']);
    fs.writeFileSync(path.join(ws, 'go'), '');
    const second = startWorker(ws, 'idem');
    try {
      // 'one' was played back from the journal, not run again.
      const result = await answered(ws, id, ['one', 'two']);
      assert.equal(result.ok, true, JSON.stringify(result.error));
      assert.deepEqual(result.result, { a: 1, b: 2 });
      assert.match(result.worker ?? '', new RegExp(`-${second.child.pid}-`));
    } finally {
      await stop(second);
    }
  });

  test('killed again while resuming: the third worker resumes from both deliveries\' lines — the first call still played back, the re-run one re-run again (idempotent), one result', { timeout: 120_000 }, async () => {
    const ws = workspace();
    const { id } = await killedAtGate(ws, 'again', 'tally-idem');
    // The second worker plays back call 1.1, runs the unverified 2.1 again — and waits at the gate: killed there too.
    const second = startWorker(ws, 'again');
    await until(() => second.stderr().includes('waiting for go') || undefined, `the second worker to reach the gate (stderr: ${second.stderr()})`);
    second.child.kill('SIGKILL');
    await second.exited;
    const kept = await journalOf(id);
    assert.deepEqual(kept.slice(6).map(([k, l]) => [k, l.type, l.call ?? null, l.rerun ?? null]), [
      [`${id}.2.0`, 'journal-start', null, null],
      [`${id}.2.1`, 'call-start', '2.1', 'idempotent'],
    ], 'the second delivery kept only what it did itself');
    await idemResumes(ws, 'again', id, '6 lines, 2 earlier deliveries');
  });

  test('a request a drain hands back resumes on the next worker: the call the drain aborted is unverified there, not an abort played back', { timeout: 120_000 }, async () => {
    const ws = workspace();
    const first = startWorker(ws, 'drained', ['--drain-ms', '300']);
    const id = await submit('drained', 'tally-idem');
    await until(() => first.stderr().includes('waiting for go') || undefined, `the first worker to reach the gate (stderr: ${first.stderr()})`);
    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0);
    assert.match(first.stderr(), /1 request\(s\) still running after 300 ms of drain \(--drain-ms\): aborted and handed back to the queue/);
    // What the drain's abort did to the call is not journaled: it stays a call that started.
    const kept = await journalOf(id);
    assert.deepEqual(kept.at(-1)![1].type, 'call-start');
    assert.equal(kept.at(-1)![1].call, '2.1');
    await idemResumes(ws, 'drained', id, '5 lines, 1 earlier delivery');
  });

  test('a journal that is not a worker\'s fails the request with E_RESUME and the worker goes on; one that is another request\'s is dropped and the request runs from scratch', { timeout: 120_000 }, async () => {
    const ws = workspace();
    const { id } = await killedAtGate(ws, 'bad', 'tally-idem');
    // Someone with access to the bucket wrote a line that is no journal line.
    await journals.put(`${id}.1.3`, JSON.stringify({ type: 'call-end', agent: '1', turn: 1, call: '1.1', index: 1, tool: 'bump-idem', error: 'not an object' }));
    fs.writeFileSync(path.join(ws, 'go'), '');
    const second = startWorker(ws, 'bad');
    try {
      const result = await answered(ws, id, ['one']); // nothing ran again
      assert.equal(result.error?.code, 'E_RESUME');
      assert.match(result.error!.message, new RegExp(`request ${id} was delivered before and its journal in AGENT_APPS_WR_JOURNALS is not one a worker wrote \\(${id}\\.1\\.3: a call's error is not \\{ code, message \\}\\)`));
    } finally {
      await stop(second);
    }

    // Another request's journal under this id (its header names another skill): not this request's.
    fs.rmSync(path.join(ws, 'go'));
    const { id: other } = await killedAtGate(ws, 'bad', 'tally-idem');
    const [[key, header]] = await journalOf(other);
    await journals.put(key, JSON.stringify({ ...header, skill: 'tally' }));
    fs.writeFileSync(path.join(ws, 'go'), '');
    const third = startWorker(ws, 'bad');
    try {
      // From scratch: its first call ran a second time (the gate is open now).
      const result = await answered(ws, other, ['one', 'one', 'one', 'two']);
      assert.equal(result.ok, true, JSON.stringify(result.error));
      assert.match(third.stderr(), /the journal under its id in AGENT_APPS_WR_JOURNALS is not its own \(.*is a journal of 'tally', not 'tally-idem'\) — deleted; the request runs from scratch/);
    } finally {
      await stop(third);
    }
  });
});
