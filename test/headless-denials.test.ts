// Denied tool calls in headless runs (SPEC §18): a call of agent code refused by allowed-tools or
// by an approval gate with nobody to ask is reported in every output format — a warning on stderr
// for text and json, `denied` lines and the result's `denials` for stream-json — and with
// --fail-on-denial the run fails: exit 1, E_DENIED. Also: json is the old --json, and which
// options after the skill name stay the CLI's.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cli } from './cli-process.ts';
import { headlessWorkspace, pick, streamLines } from './headless-helpers.ts';

const SHOUT_REFUSED = "shout (E_ALLOWED_TOOLS: 'sneaky' may not invoke 'shout': not allowed by allowed-tools 'wordcount')";

describe('denials in every output format', { concurrency: true }, () => {
  test('text: the result on stdout, exit 0, and one warning on stderr naming the call and why', async () => {
    const ws = headlessWorkspace();
    const r = await cli(['run', 'sneaky', '--text', 'a b'], ws);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '{\n  "count": 2,\n  "refused": "E_ALLOWED_TOOLS"\n}\n');
    assert.equal(r.stderr, `warn: 1 tool call was denied: ${SHOUT_REFUSED}\n`);
  });

  test('a run without a denial warns of nothing', async () => {
    const ws = headlessWorkspace();
    const r = await cli(['run', 'count', '--text', 'a b'], ws);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
  });

  test('json: stdout is the result alone, as with --json; the warning goes to stderr', async () => {
    const ws = headlessWorkspace();
    const [json, format] = await Promise.all([cli(['--json', 'run', 'sneaky', '--text', 'a b'], ws), cli(['--output-format', 'json', 'run', 'sneaky', '--text', 'a b'], ws)]);
    for (const r of [json, format]) {
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, '{"count":2,"refused":"E_ALLOWED_TOOLS"}\n');
      assert.equal(r.stderr, `warn: 1 tool call was denied: ${SHOUT_REFUSED}\n`);
    }
  });

  test('stream-json: a denied line where it happened, and the result lists it', async () => {
    const ws = headlessWorkspace();
    const r = await cli(['--output-format', 'stream-json', 'run', 'sneaky', '--text', 'a b'], ws);
    assert.equal(r.code, 0, r.stderr);
    const lines = streamLines(r.stdout);
    const denied = lines.filter((l) => l.type === 'denied');
    assert.equal(denied.length, 1);
    assert.deepEqual(pick(denied[0]!, ['skill', 'depth', 'tool', 'code']), { skill: 'sneaky', depth: 0, tool: 'shout', code: 'E_ALLOWED_TOOLS' });
    // Between the call of shout and the call of wordcount that came after it.
    const order = lines.filter((l) => l.type === 'skill-call' || l.type === 'denied').map((l) => `${l.type}:${l.tool}`);
    assert.deepEqual(order, ['skill-call:shout', 'denied:shout', 'skill-call:wordcount']);
    const result = lines.at(-1)!;
    assert.equal(result.ok, true);
    assert.deepEqual(result.denials, [{ tool: 'shout', reason: "'sneaky' may not invoke 'shout': not allowed by allowed-tools 'wordcount'", code: 'E_ALLOWED_TOOLS', agent: 'sneaky' }]);
  });

  test("a nested agent's denial and its caller's are each listed once, naming the agent", async () => {
    const ws = headlessWorkspace();
    const r = await cli(['--output-format', 'stream-json', 'run', 'outer', '--text', 'a b'], ws);
    assert.equal(r.code, 0, r.stderr);
    const lines = streamLines(r.stdout);
    assert.deepEqual(
      lines.filter((l) => l.type === 'denied').map((l) => [l.skill, l.depth, l.tool]),
      [
        ['sneaky', 1, 'shout'],
        ['outer', 0, 'wordcount'],
      ],
    );
    assert.deepEqual(
      lines.at(-1)!.denials.map((d: { agent: string; tool: string }) => [d.agent, d.tool]),
      [
        ['sneaky', 'shout'],
        ['outer', 'wordcount'],
      ],
    );
    assert.match(r.stderr, /^warn: 2 tool calls were denied: shout \(E_ALLOWED_TOOLS: 'sneaky' .*\); wordcount \(E_ALLOWED_TOOLS: 'outer' may not invoke 'wordcount'.*\)\n$/);
  });

  test('an approval gate with nobody to ask is a denial; --approve lets the call through, and there is none', async () => {
    const ws = headlessWorkspace();
    const [alone, approved] = await Promise.all([cli(['--output-format', 'stream-json', 'run', 'gated', '--text', 'hi'], ws), cli(['--output-format', 'stream-json', '--approve', 'shout', 'run', 'gated', '--text', 'hi'], ws)]);
    assert.equal(alone.code, 0, alone.stderr);
    const refused = streamLines(alone.stdout).at(-1)!;
    assert.deepEqual(refused.result, { shouted: null });
    assert.deepEqual(
      refused.denials.map((d: { tool: string; code: string }) => [d.tool, d.code]),
      [['shout', 'E_ALLOWED_TOOLS']],
    );
    assert.match(refused.denials[0].reason, /needs approval/);
    // The gate's refusal is a warn log event too: a log line.
    assert.ok(streamLines(alone.stdout).some((l) => l.type === 'log' && l.level === 'warn' && l.event === 'approval'));
    assert.equal(approved.code, 0, approved.stderr);
    const allowed = streamLines(approved.stdout).at(-1)!;
    assert.deepEqual([allowed.result, allowed.denials], [{ shouted: 'HI' }, []]);
  });
});

describe('--fail-on-denial', { concurrency: true }, () => {
  test('text: a run that had a denial fails — exit 1, nothing on stdout, one E_DENIED line listing it', async () => {
    const ws = headlessWorkspace();
    const r = await cli(['--fail-on-denial', 'run', 'sneaky', '--text', 'a b'], ws);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, `error [E_DENIED]: 1 tool call was denied: ${SHOUT_REFUSED} (--fail-on-denial)\n`);
  });

  test('stream-json: ok:false, error.code E_DENIED, exitCode 1, the denials listed', async () => {
    const ws = headlessWorkspace();
    const r = await cli(['run', 'sneaky', '--text', 'a b', '--output-format', 'stream-json', '--fail-on-denial'], ws);
    assert.equal(r.code, 1);
    const result = streamLines(r.stdout).at(-1)!;
    assert.deepEqual(pick(result, ['ok', 'exitCode']), { ok: false, exitCode: 1 });
    assert.equal(result.error.code, 'E_DENIED');
    assert.equal('result' in result, false);
    assert.deepEqual(
      result.denials.map((d: { tool: string }) => d.tool),
      ['shout'],
    );
  });

  test('json, given after the skill name: exit 1, stdout empty', async () => {
    const ws = headlessWorkspace();
    const r = await cli(['run', 'sneaky', '--text', 'a b', '--json', '--fail-on-denial'], ws);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^error \[E_DENIED\]: 1 tool call was denied: shout/);
  });

  test('a run without a denial is not changed by it', async () => {
    const ws = headlessWorkspace();
    const r = await cli(['--fail-on-denial', '--output-format', 'stream-json', 'run', 'count', '--text', 'a b'], ws);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(pick(streamLines(r.stdout).at(-1)!, ['ok', 'result', 'exitCode', 'denials']), { ok: true, result: { count: 2 }, exitCode: 0, denials: [] });
  });
});

describe('output options after the skill name', { concurrency: true }, () => {
  test('--output-format and --record are the CLI’s even when the skill declares params of those names; --json stays the skill’s', async () => {
    const ws = headlessWorkspace();
    const r = await cli(['run', 'echo-options', '--json', '--output-format', 'json', '--record', 'unused.yaml'], ws);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '{"json":true}\n');
  });

  test('--output-format json is --json for the other commands too (list)', async () => {
    const ws = headlessWorkspace();
    const [json, format] = await Promise.all([cli(['list', '--json'], ws), cli(['list', '--output-format', 'json'], ws)]);
    assert.equal(json.code, 0, json.stderr);
    assert.equal(format.stdout, json.stdout);
    assert.ok(Array.isArray(JSON.parse(json.stdout)));
  });

  test('the later of --json and --output-format wins', async () => {
    const ws = headlessWorkspace();
    const r = await cli(['--json', 'run', 'count', '--text', 'a', '--output-format', 'text'], ws);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '{\n  "count": 1\n}\n');
  });
});
