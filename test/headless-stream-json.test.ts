// `--output-format stream-json` (SPEC §18): real CLI processes on the headless workspace, agent
// runs replayed from cassettes. stdout is NDJSON — a start line, one line per agent event, warn+
// log lines, and exactly one result line, last — whatever happens, with SPEC §12's exit codes.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { BIN, cli, cliEnv } from './cli-process.ts';
import { headlessWorkspace, JQ, pick, streamLines, throughJq } from './headless-helpers.ts';

const SJ = ['--output-format', 'stream-json'];

describe('stream-json: a replayed agent run', { concurrency: true }, () => {
  test('piped through jq -c line by line: every line parses, the first is start, the last the only result', async (t) => {
    const ws = headlessWorkspace();
    const r = await cli([...SJ, 'run', 'count', '--text', 'a b c'], ws);
    assert.equal(r.code, 0, r.stderr);
    const lines = streamLines(r.stdout);
    if (!JQ) t.diagnostic('jq is not installed: the lines were parsed with JSON.parse only');
    else assert.deepEqual(throughJq(r.stdout), lines, 'jq reads the same values');
    const [start] = lines;
    const result = lines.at(-1)!;
    assert.deepEqual(start, { type: 'start', run: result.run, skill: 'count', args: { text: 'a b c' } });
    assert.match(String(start!.run), /^[0-9a-f-]{36}$/);
    assert.equal(result.ok, true);
    assert.deepEqual(result.result, { count: 3 });
    assert.equal(result.exitCode, 0);
    assert.equal(typeof result.durationMs, 'number');
    assert.deepEqual(result.denials, []);
    assert.equal('error' in result, false);
    // The replay model estimates tokens: the run's usage is what its usage events added up to.
    assert.ok(result.usage.inputTokens > 0 && result.usage.outputTokens > 0, JSON.stringify(result.usage));
    assert.deepEqual(Object.keys(result.usage).sort(), ['inputTokens', 'outputTokens']);
  });

  test('one line per agent event, in order: turn-start, message deltas and the whole message, tool-call, the skills its code called, tool-result, turn-end', async () => {
    const ws = headlessWorkspace();
    const r = await cli(['run', 'count', '--text', 'a b c', ...SJ], ws);
    assert.equal(r.code, 0, r.stderr);
    const events = streamLines(r.stdout).slice(1, -1);
    const kinds = events.map((e) => (e.type === 'message' ? `message${e.delta ? '+' : ''}` : e.type));
    assert.deepEqual(kinds, ['turn-start', 'message+', 'message', 'tool-call', 'skill-call', 'skill-result', 'tool-result', 'turn-end']);
    const agent = events[0]!.agent;
    for (const e of events) assert.deepEqual([e.skill, e.depth, e.agent], ['count', 0, agent], JSON.stringify(e));
    const deltas = events.filter((e) => e.type === 'message' && e.delta).map((e) => e.text).join('');
    assert.equal(deltas, 'Counting.');
    assert.equal(events.find((e) => e.type === 'message' && !e.delta)!.text, 'Counting.');
    const call = events.find((e) => e.type === 'tool-call')!;
    assert.equal(call.tool, 'invoke');
    assert.match(call.args.code, /ctx\.manager\.invoke\('wordcount'/);
    assert.deepEqual(events.find((e) => e.type === 'skill-result')!.result, 3);
    const result = events.find((e) => e.type === 'tool-result')!;
    assert.equal(result.toolUseId, call.toolUseId);
    assert.match(result.result, /^finished: \{"count":3\}/);
  });

  test("nested agents' events are included, marked by depth and agent id", async () => {
    const ws = headlessWorkspace();
    const r = await cli([...SJ, 'run', 'outer', '--text', 'a b c d'], ws);
    assert.equal(r.code, 0, r.stderr);
    const events = streamLines(r.stdout).slice(1, -1);
    const outer = events.filter((e) => e.skill === 'outer');
    const inner = events.filter((e) => e.skill === 'sneaky');
    assert.ok(outer.length && inner.length);
    assert.deepEqual([...new Set(outer.map((e) => e.depth))], [0]);
    assert.deepEqual([...new Set(inner.map((e) => e.depth))], [1]);
    assert.notEqual(outer[0]!.agent, inner[0]!.agent);
    // The inner agent's turn runs inside the outer agent's call of `sneaky`.
    const types = events.map((e) => `${e.depth}:${e.type}${e.type === 'skill-call' ? `:${e.tool}` : ''}`).filter((k) => !k.includes('message'));
    const callAt = types.indexOf('0:skill-call:sneaky');
    assert.ok(callAt >= 0 && types[callAt + 1] === '1:turn-start', types.join(' '));
  });

  test('--output-format stream-json is the same before the command, after it, and after the skill name', async () => {
    const ws = headlessWorkspace();
    const runs = await Promise.all([[...SJ, 'run', 'count', '--text', 'a'], ['run', ...SJ, 'count', '--text', 'a'], ['run', 'count', '--text', 'a', '--output-format=stream-json']].map((args) => cli(args, ws)));
    for (const r of runs) {
      assert.equal(r.code, 0, r.stderr);
      const lines = streamLines(r.stdout);
      assert.equal(lines[0]!.type, 'start');
      assert.deepEqual(lines[0]!.args, { text: 'a' });
      assert.deepEqual(lines.at(-1)!.result, { count: 1 });
    }
  });

  test('a result JSON cannot hold (BigInt, Map, Set, a cycle) is still one valid line', async () => {
    const ws = headlessWorkspace();
    const r = await cli([...SJ, 'run', 'odd'], ws);
    assert.equal(r.code, 0, r.stderr);
    const lines = streamLines(r.stdout);
    assert.deepEqual(lines.at(-1)!.result, { big: '1180591620717411303424', map: { a: 1 }, set: [1, 2], self: '[Circular]' });
  });
});

describe('stream-json: failures end with the result line and SPEC §12 exit codes', { concurrency: true }, () => {
  test('a skill that fails: start, its warn log line, result ok:false with the error code, exit 1', async () => {
    const ws = headlessWorkspace();
    const r = await cli([...SJ, 'run', 'boom'], ws);
    assert.equal(r.code, 1);
    const lines = streamLines(r.stdout);
    assert.deepEqual(lines.map((l) => l.type), ['start', 'log', 'result']);
    assert.deepEqual(pick(lines[1]!, ['level', 'event', 'tool', 'text']), { level: 'warn', event: 'careful', tool: 'boom', text: 'about to fail' });
    const result = lines[2]!;
    assert.deepEqual(pick(result, ['ok', 'error', 'exitCode', 'denials']), { ok: false, error: { code: 'E_BROKE', message: 'it broke' }, exitCode: 1, denials: [] });
    assert.equal('result' in result, false);
    // stderr still says it for a person reading the CI log.
    assert.match(r.stderr, /error \[E_BROKE\]: it broke/);
  });

  test('a refused run (abort): ok:false, E_ABORTED, exit 3', async () => {
    const ws = headlessWorkspace();
    const r = await cli([...SJ, 'run', 'nope'], ws);
    assert.equal(r.code, 3);
    const result = streamLines(r.stdout).at(-1)!;
    assert.deepEqual(pick(result, ['ok', 'error', 'exitCode']), { ok: false, error: { code: 'E_ABORTED', message: 'aborted: not today' }, exitCode: 3 });
  });

  test('an unknown skill never starts: the result line alone, exit 2', async () => {
    const ws = headlessWorkspace();
    const r = await cli([...SJ, 'run', 'cuont'], ws);
    assert.equal(r.code, 2);
    const lines = streamLines(r.stdout);
    assert.equal(lines.length, 1);
    assert.deepEqual(pick(lines[0]!, ['type', 'ok', 'exitCode']), { type: 'result', ok: false, exitCode: 2 });
    assert.equal(lines[0]!.error.code, 'E_TOOL_NOT_FOUND');
    assert.match(lines[0]!.error.message, /^unknown skill 'cuont'/);
  });

  test('invalid args: the run started, ok:false with E_VALIDATION, exit 2', async () => {
    const ws = headlessWorkspace();
    const r = await cli([...SJ, 'run', 'count'], ws);
    assert.equal(r.code, 2);
    const lines = streamLines(r.stdout);
    assert.deepEqual(lines.map((l) => l.type), ['start', 'result']);
    assert.equal(lines[1]!.error.code, 'E_VALIDATION');
    assert.match(lines[1]!.error.message, /missing required property 'text'/);
  });

  test('usage errors before any run — an unknown option, a bad --cwd — are one result line with exit 2', async () => {
    const ws = headlessWorkspace();
    for (const args of [[...SJ, '--no-such-option', 'run', 'count'], [...SJ, '--cwd', 'nowhere', 'run', 'count'], ['run', 'count', '--text', 'a', '--output-format', 'stream-json', '--json=1']]) {
      const r = await cli(args, ws);
      assert.equal(r.code, 2, args.join(' '));
      const lines = streamLines(r.stdout);
      assert.equal(lines.length, 1, args.join(' '));
      assert.deepEqual(pick(lines[0]!, ['type', 'ok', 'exitCode', 'run']), { type: 'result', ok: false, exitCode: 2, run: null });
      assert.equal(lines[0]!.error.code, 'E_USAGE');
    }
  });

  test('an unknown --output-format is a usage error, exit 2, before the command or after the skill name', async () => {
    const ws = headlessWorkspace();
    for (const args of [['--output-format', 'yaml', 'run', 'count', '--text', 'a'], ['run', 'count', '--text', 'a', '--output-format', 'yaml']]) {
      const r = await cli(args, ws);
      assert.equal(r.code, 2);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /^error \[E_USAGE\]: .*text, json, stream-json/);
      assert.match(r.stderr, /'yaml'/);
    }
  });
});

describe('stream-json: SIGINT', { concurrency: true }, () => {
  /** Runs `long` with stream-json and sends SIGINT once it waits (a second one `again` ms after the first is handled). */
  function interrupted(extra: string[], env: Record<string, string>, again?: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const ws = headlessWorkspace();
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, ...SJ, ...extra, 'run', 'long'], { cwd: ws, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      const guard = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        const before = stderr;
        stderr += d;
        if (!before.includes('waiting') && stderr.includes('waiting')) child.kill('SIGINT');
        if (again !== undefined && !before.includes('shutting down') && stderr.includes('shutting down')) setTimeout(() => child.kill('SIGINT'), again);
      });
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(guard);
        resolve({ code, stdout, stderr });
      });
    });
  }

  test('SIGINT: exit 130, and the last line is the one result, E_INTERRUPTED', { timeout: 25_000 }, async () => {
    const r = await interrupted([], {});
    assert.equal(r.code, 130, r.stderr);
    const lines = streamLines(r.stdout);
    assert.deepEqual(lines.map((l) => l.type), ['start', 'result']);
    assert.deepEqual(pick(lines[1]!, ['ok', 'exitCode']), { ok: false, exitCode: 130 });
    assert.equal(lines[1]!.error.code, 'E_INTERRUPTED');
  });

  test('a second SIGINT exits at once: still exactly one result line, exit 130', { timeout: 25_000 }, async () => {
    const r = await interrupted(['--shutdown-grace', '20000'], { HANG_MS: '20000' }, 100);
    assert.equal(r.code, 130, r.stderr);
    const lines = streamLines(r.stdout);
    assert.deepEqual(lines.map((l) => l.type), ['start', 'result']);
    assert.equal(lines[1]!.error.code, 'E_INTERRUPTED');
    assert.match(lines[1]!.error.message, /again: exited at once/);
  });
});
