// Runs that survive a crash (docs/runs.md): real CLI runs of test/fixtures/resume-ws — agent skills on
// the replay model whose code calls `bump`, a code skill that appends to counter.txt — killed with
// SIGKILL while their second call waits on a gate file (between that call's start and its end),
// then resumed: `agent-apps runs resume ID` and `agent-apps run SKILL --resume ID`. The first call is
// played back from the journal (the counter holds it once), the unverified one is refused
// headless (E_RESUME, exit 1), run again with --rerun-unverified or for an idempotent skill, asked
// in a terminal; a run that finished, or an unknown id, is a usage error (exit 2).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BIN, cli, cliEnv, tempDir } from './cli-process.ts';
import { REPO } from './helpers.ts';
import { spawnPty } from './pty-helpers.ts';

const FIXTURE = path.join(REPO, 'test', 'fixtures', 'resume-ws');

interface Listed {
  id: string;
  skill: string | null;
  status: string;
  exitCode: number | null;
  resumable?: true;
  resumedFrom?: string;
  error?: { code?: string; message: string };
}

function workspace(): string {
  const dir = tempDir('agent-apps-resume-');
  fs.cpSync(FIXTURE, dir, { recursive: true });
  return dir;
}

const counter = (ws: string) => fs.readFileSync(path.join(ws, 'counter.txt'), 'utf8').split('\n').filter(Boolean);

async function listed(ws: string): Promise<Listed[]> {
  const r = await cli(['runs', '--json'], ws);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Listed[];
}

/**
 * Runs `skill` in `ws` and kills it with SIGKILL once its call that waits on the gate has started
 * (`bump` says so on stderr): the run dies between that call's start and its result. Its id.
 */
async function crashed(ws: string, skill: string): Promise<string> {
  const child = spawn(process.execPath, [BIN, 'run', skill], { cwd: ws, env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  const guard = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  let stderr = '';
  await new Promise<void>((resolve) => {
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      if (stderr.includes('waiting for go')) resolve();
    });
    child.on('close', () => resolve());
  });
  child.stdout!.resume();
  child.kill('SIGKILL');
  await closed;
  clearTimeout(guard);
  assert.match(stderr, /waiting for go/, `the run reached the gate: ${stderr}`);
  const [run] = await listed(ws);
  assert.equal(run!.skill, skill);
  return run!.id;
}

const runFile = (ws: string, id: string) => fs.readFileSync(path.join(ws, '.agent-apps', 'runs', `${id}.jsonl`), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, any>);

describe('agent-apps runs resume', { concurrency: 2 }, () => {
  test('a run killed mid-call: resumable with its call unverified; headless, the resume is E_RESUME naming it; with --rerun-unverified the run completes and the first call is not run again', { timeout: 120_000 }, async () => {
    const ws = workspace();
    const id = await crashed(ws, 'tally');
    assert.deepEqual(counter(ws), ['one'], 'the first call ran, the second waits on the gate');

    // The journal, in the run file as it happened: the model's responses, the calls with their keys.
    const journal = runFile(ws, id).filter((e) => e.tag === 'journal').map((e) => [e.type, e.turn, e.call ?? null, e.type === 'model-turn' ? e.skill : e.tool]);
    assert.deepEqual(journal, [
      ['model-turn', 1, null, 'tally'],
      ['call-start', 1, '1.1', 'bump'],
      ['call-end', 1, '1.1', 'bump'],
      ['model-turn', 2, null, 'tally'],
      ['call-start', 2, '2.1', 'bump'],
    ]);
    const turn2 = runFile(ws, id).find((e) => e.type === 'model-turn' && e.turn === 2)!;
    assert.equal(turn2.text, 'Second bump, through the gate.');
    assert.match(turn2.invoke, /invoke\('bump', \{ text: 'two', gate: 'go' \}\)/);

    const [before] = await listed(ws);
    assert.equal(before!.status, 'interrupted');
    assert.equal(before!.resumable, true);
    const table = await cli(['runs'], ws);
    assert.match(table.stdout, new RegExp(`${id.slice(0, 8)} +tally +interrupted \\(resumable\\)`));
    const shown = await cli(['runs', 'show', id], ws);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /call 1\.1 bump\(\{"text":"one"\}\) → 1\n/);
    assert.match(shown.stdout, /call 2\.1 bump\(\{"text":"two","gate":"go"\}\) +unverified: it started and left no result/);
    assert.match(shown.stdout, new RegExp(`resumable: agent-apps runs resume ${id.slice(0, 8)}`));

    // Headless, nobody can say whether `bump` may run twice.
    const refused = await cli(['runs', 'resume', id.slice(0, 8)], ws);
    assert.equal(refused.code, 1, refused.stderr);
    assert.equal(refused.stdout, '');
    assert.match(refused.stderr, /^error \[E_RESUME\]: bump\(\{"text":"two","gate":"go"\}\) \(call 2\.1 of run [0-9a-f]{8}\) started and left no result: it may have run already, so it is not run again — pass --rerun-unverified/m);
    assert.deepEqual(counter(ws), ['one'], 'nothing ran again');
    // That resume did nothing of its own: the run can still be resumed.
    assert.equal((await listed(ws)).find((r) => r.id === id)!.resumable, true);

    fs.writeFileSync(path.join(ws, 'go'), '');
    const resumed = await cli(['runs', 'resume', id, '--rerun-unverified', '--json'], ws);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(JSON.parse(resumed.stdout), { a: 1, b: 2 });
    assert.deepEqual(counter(ws), ['one', 'two'], 'the first call was played back, not run again');

    const runs = await listed(ws);
    const latest = runs[0]!;
    assert.equal(latest.status, 'ok');
    assert.equal(latest.resumedFrom, id);
    assert.equal(runs.find((r) => r.id === id)!.resumable, undefined, 'resumed once, it is not resumable again');
    const again = await cli(['runs', 'resume', id], ws);
    assert.equal(again.code, 2);
    assert.match(again.stderr, new RegExp(`error \\[E_USAGE\\]: run ${id.slice(0, 8)} was resumed already, by run ${latest.id.slice(0, 8)}`));

    // The resumed run's journal: everything again, marked where it came from.
    const lines = runFile(ws, latest.id).filter((e) => e.tag === 'journal').map((e) => [e.type, e.call ?? e.turn, e.replayed ?? false, e.rerun ?? null]);
    assert.deepEqual(lines, [
      ['model-turn', 1, true, null],
      ['call-start', '1.1', true, null],
      ['call-end', '1.1', true, null],
      ['model-turn', 2, true, null],
      ['call-start', '2.1', false, '--rerun-unverified'],
      ['call-end', '2.1', false, null],
    ]);
    const show = await cli(['runs', 'show', latest.id], ws);
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /\nagent tally — 2 turns/);
    assert.match(show.stdout, new RegExp(`\\njournal — resumed from run ${id.slice(0, 8)}\\n`));
    assert.match(show.stdout, /turn 1 code: First bump\. \(replayed\)\n +call 1\.1 bump\(\{"text":"one"\}\) → 1 +replayed\n/);
    assert.match(show.stdout, /call 2\.1 bump\(\{"text":"two","gate":"go"\}\) → 2 +re-run \(it was unverified; --rerun-unverified\)/);
  });

  test('an idempotent skill’s unverified call runs again without asking; run SKILL --resume ID does what runs resume does', { timeout: 120_000 }, async () => {
    const ws = workspace();
    const id = await crashed(ws, 'tally-idem');
    fs.writeFileSync(path.join(ws, 'go'), '');
    const wrong = await cli(['run', 'tally', '--resume', id], ws);
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /error \[E_USAGE\]: run [0-9a-f]{8} was a run of 'tally-idem', not 'tally'/);
    const resumed = await cli(['run', 'tally-idem', '--resume', id.slice(0, 8), '--output-format', 'stream-json'], ws);
    assert.equal(resumed.code, 0, resumed.stderr);
    const out = resumed.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
    assert.equal(out[0]!.type, 'start');
    assert.equal(out[0]!.resumedFrom, id, 'the start line names the run it continues');
    assert.deepEqual(out.at(-1)!.result, { a: 1, b: 2 });
    assert.deepEqual(counter(ws), ['one', 'two']);
    const [latest] = await listed(ws);
    const rerun = runFile(ws, latest!.id).find((e) => e.type === 'call-start' && e.call === '2.1')!;
    assert.equal(rerun.rerun, 'idempotent');
  });

  test('in a terminal the unverified call is asked about: re-run it, and the run completes', { timeout: 120_000 }, async (t) => {
    const ws = workspace();
    const id = await crashed(ws, 'tally');
    fs.writeFileSync(path.join(ws, 'go'), '');
    const term = spawnPty(t, ['runs', 'resume', id], { cwd: ws, env: { ...cliEnv(), NO_COLOR: undefined, FORCE_COLOR: undefined }, separateStdout: true, timeoutMs: 60_000 });
    await term.waitFor(/re-run bump\(\{"text":"two","gate":"go"\}\)\? it may have run already/, 30_000);
    assert.match(term.text(), /\[y\/⏎\] re-run it +\[n\] stop the run/);
    await term.idle();
    term.write('y');
    assert.equal((await term.exited).exitCode, 0, term.text());
    assert.deepEqual(JSON.parse(term.stdout()), { a: 1, b: 2 });
    assert.deepEqual(counter(ws), ['one', 'two']);
    const [latest] = await listed(ws);
    assert.equal(runFile(ws, latest!.id).find((e) => e.type === 'call-start' && e.call === '2.1')!.rerun, 'asked');
    // Answered no, the run stops with E_RESUME.
    fs.rmSync(path.join(ws, 'go'));
    const id2 = await crashed(ws, 'tally');
    const no = spawnPty(t, ['runs', 'resume', id2], { cwd: ws, env: { ...cliEnv(), NO_COLOR: undefined, FORCE_COLOR: undefined }, timeoutMs: 60_000 });
    await no.waitFor('it may have run already', 30_000);
    await no.idle();
    no.write('n');
    assert.equal((await no.exited).exitCode, 1, no.text());
    assert.match(no.text(), /E_RESUME/);
    assert.match(no.text(), /was not run again \(the answer was no\)/);
    assert.deepEqual(counter(ws), ['one', 'two', 'one'], 'the second run’s first call, and nothing more');
  });

  test('a nested agent killed inside: the outer call (an agent skill) runs again, the inner agent resumes from its own journal, its unverified call is E_RESUME', { timeout: 120_000 }, async () => {
    const ws = workspace();
    const id = await crashed(ws, 'nest');
    const journal = runFile(ws, id).filter((e) => e.tag === 'journal').map((e) => `${e.type} ${e.agent} ${e.call ?? e.turn}`);
    assert.deepEqual(journal, ['model-turn 1 1', 'call-start 1 1.1', 'model-turn 1/1.1/1 1', 'call-start 1/1.1/1 1.1', 'call-end 1/1.1/1 1.1', 'model-turn 1/1.1/1 2', 'call-start 1/1.1/1 2.1']);
    const show = await cli(['runs', 'show', id], ws);
    assert.match(show.stdout, /agent nest \(1\)\n +turn 1 code: Tallying\.\n +call 1\.1 tally\(\{\}\) +unverified/);
    assert.match(show.stdout, /agent tally \(1\/1\.1\/1\)\n/);

    const refused = await cli(['runs', 'resume', id], ws);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /^error \[E_RESUME\]: bump\(\{"text":"two","gate":"go"\}\) \(call 2\.1 of run [0-9a-f]{8}\) started and left no result/m);
    fs.writeFileSync(path.join(ws, 'go'), '');
    const resumed = await cli(['runs', 'resume', id, '--rerun-unverified', '--json'], ws);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(JSON.parse(resumed.stdout), { counts: { a: 1, b: 2 } });
    assert.deepEqual(counter(ws), ['one', 'two']);
    const [latest] = await listed(ws);
    const starts = runFile(ws, latest!.id).filter((e) => e.type === 'call-start').map((e) => `${e.agent} ${e.call} ${e.replayed ? 'replayed' : (e.rerun ?? 'live')}`);
    assert.deepEqual(starts, ['1 1.1 agent', '1/1.1/1 1.1 replayed', '1/1.1/1 2.1 --rerun-unverified']);
  });

  test('a journal the run no longer matches (another call at a key) is E_RESUME naming both calls', { timeout: 60_000 }, async () => {
    const ws = workspace();
    const id = await crashed(ws, 'tally');
    const file = path.join(ws, '.agent-apps', 'runs', `${id}.jsonl`);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replaceAll('"args":{"text":"one"}', '"args":{"text":"uno"}'));
    const r = await cli(['runs', 'resume', id, '--rerun-unverified'], ws);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^error \[E_RESUME\]: the journal of run [0-9a-f]{8} does not match this run: call 1\.1 of agent 1 \(tally\) was bump\(\{"text":"uno"\}\), the code now calls bump\(\{"text":"one"\}\)/m);
    assert.deepEqual(counter(ws), ['one'], 'nothing ran');
  });

  test('a run that finished, or an unknown id, is a usage error (exit 2)', { timeout: 60_000 }, async () => {
    const ws = workspace();
    fs.writeFileSync(path.join(ws, 'go'), '');
    const done = await cli(['run', 'tally', '--json'], ws);
    assert.equal(done.code, 0, done.stderr);
    const [run] = await listed(ws);
    const finished = await cli(['runs', 'resume', run!.id], ws);
    assert.equal(finished.code, 2);
    assert.match(finished.stderr, /^error \[E_USAGE\]: run [0-9a-f]{8} finished \(ok, exit 0\): there is nothing to resume/m);
    const unknown = await cli(['runs', 'resume', 'ffffffff'], ws);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /error \[E_USAGE\]: no run 'ffffffff'/);
    const flag = await cli(['run', 'tally', '--rerun-unverified'], ws);
    assert.equal(flag.code, 2);
    assert.match(flag.stderr, /--rerun-unverified goes with --resume/);
  });
});
