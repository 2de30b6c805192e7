// `agent-apps test` (SPEC §18), run as a real CLI process on the eval files of
// test/fixtures/evals (see its README): passing, failing and malformed files and their exit codes
// (0 / 1 / 2, a place for every problem), the junit / tap / json reporters (the JUnit report read
// by a real XML parser), check: SKILL, error: E_CODE, --jobs, --filter, timeouts, --update against
// a fake OpenAI-compatible server on 127.0.0.1, and init's example passing offline.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import YAML from 'yaml';
import { spawn } from 'node:child_process';
import { BIN, cli, cliEnv, folder, tempDir } from './cli-process.ts';
import { fixture } from './helpers.ts';
import { fakeOpenAI, textReply, toolCallReply } from './fake-openai.ts';

const WS = fixture('evals');
const lastLine = (text: string) => text.trimEnd().split('\n').at(-1);

interface JsonReport {
  passed: number;
  failed: number;
  skipped: number;
  durationMs: number;
  cases: { file: string; line: number; skill: string; name: string; status: string; durationMs: number; reason?: string; result?: unknown; error?: { code: string; message: string } }[];
}

describe('agent-apps test: outcomes and exit codes', () => {
  test('a folder whose cases all pass: exit 0, a line per case in file order, the summary line last on stdout', async () => {
    const r = await cli(['test', 'passing'], WS);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r.stderr, '');
    const lines = r.stdout.trimEnd().split('\n');
    assert.equal(lastLine(r.stdout), '10 passed, 0 failed, 1 skipped');
    const cases = lines.filter((l) => /^[✓✗-] /.test(l)).map((l) => l.replace(/ \([^)]*\)$/, ''));
    assert.deepEqual(cases, [
      '✓ passing/code.test.yaml › counts words',
      '✓ passing/code.test.yaml › a missing arg is E_VALIDATION',
      '✓ passing/code.test.yaml › succeeds with no expect at all',
      '- passing/code.test.yaml › not yet',
      '✓ passing/errors.test.yaml › fails with its own code',
      '✓ passing/errors.test.yaml › a check sees the error',
      '✓ passing/stall.test.yaml › a case that outlives its timeout fails with E_TIMEOUT',
      '✓ passing/summarize.test.yaml › counts three words',
      '✓ passing/summarize.test.yaml › the summary starts the text',
      '✓ passing/summarize.test.yaml › returns its declared shape',
      '✓ passing/summarize.test.yaml › judged by a check skill',
    ]);
    assert.match(r.stdout, /- passing\/code\.test\.yaml › not yet \(skipped: waiting for a tokenizer\)/);
  });

  test('a folder with failing cases: exit 1, each failure with its reason, "1 passed, 8 failed"', async () => {
    const r = await cli(['test', 'failing'], WS);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.equal(lastLine(r.stdout), '1 passed, 8 failed');
    const reasons: Record<string, string> = {};
    const lines = r.stdout.split('\n');
    lines.forEach((line, i) => {
      const m = /^✗ (.*) \(\d[^)]*\)$/.exec(line);
      if (m) reasons[m[1]!] = lines[i + 1]!.trim();
    });
    assert.deepEqual(Object.keys(reasons).sort(), [
      'failing/boom.test.yaml › fails unexpectedly',
      'failing/boom.test.yaml › wrong error code',
      'failing/mixed.test.yaml › breaks the schema',
      'failing/mixed.test.yaml › expected an error',
      'failing/mixed.test.yaml › no cassette and no model',
      'failing/mixed.test.yaml › no match',
      'failing/mixed.test.yaml › the check says no',
      'failing/mixed.test.yaml › wrong count',
    ]);
    assert.equal(reasons['failing/mixed.test.yaml › wrong count'], 'expected {"words":4,"summary":"a b c"}, got {"words":3,"summary":"a b c"}');
    assert.equal(reasons['failing/mixed.test.yaml › no match'], 'expected a match for /^zebra/, got {"words":3,"summary":"a b c"}');
    assert.equal(reasons['failing/mixed.test.yaml › breaks the schema'], 'the result breaks expect.schema: /words must be <= 2 (got {"words":3,"summary":"a b c"})');
    assert.equal(reasons['failing/mixed.test.yaml › expected an error'], 'expected it to fail with E_VALIDATION, but it returned {"words":3,"summary":"a b c"}');
    // Without a cassette the agent skill has no model of its own: the case fails with what to configure.
    assert.match(reasons['failing/mixed.test.yaml › no cassette and no model']!, /^failed with E_MODEL: .*no model is configured/);
    // A message with a terminal escape reaches the terminal escaped (SPEC §15).
    assert.equal(reasons['failing/boom.test.yaml › fails unexpectedly'], 'failed with E_BOOM: \\x1b[31mboom\\x1b[0m <x < y> & "quotes" \\x07');
    assert.match(reasons['failing/boom.test.yaml › wrong error code']!, /^expected it to fail with E_OTHER, but it failed with E_BOOM: /);
    assert.ok(!r.stdout.includes('\u001b'), 'no raw escape on stdout');
    assert.match(reasons['failing/mixed.test.yaml › the check says no']!, /^check judge-summary-strict: \{"verdict":"too short","given":/);
  });

  test('malformed eval files: exit 2, every problem as FILE:LINE:COL, and no case runs', async () => {
    const r = await cli(['test', 'malformed'], WS);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.equal(r.stdout, '');
    assert.deepEqual(r.stderr.trimEnd().split('\n'), [
      "malformed/bad-shape.test.yaml:4:11: error: cases[0].args must be object",
      "malformed/bad-shape.test.yaml:7:15: error: cases[1].expect: unknown key 'equal' (allowed: equals, match, schema, error, check, grade)",
      "malformed/bad-shape.test.yaml:8:5: error: cases[2]: missing 'name'",
      "malformed/bad-shape.test.yaml:9:1: error: unknown key 'extra' (allowed: skill, description, trials, pass, cases)",
      'malformed/bad-values.test.yaml:4:22: error: cases[0] (a regex that does not compile): expect.match is not a valid regular expression: Invalid regular expression: /(unclosed/: Unterminated group',
      'malformed/bad-values.test.yaml:5:11: error: cases[1] (a regex that does not compile): another case has this name (cases[0]): names tell cases apart in reports, so each is used once',
      'malformed/bad-values.test.yaml:6:35: error: cases[1] (a regex that does not compile): expect.error cannot be combined with equals: a run that fails has no result (use check: to look at both)',
      'malformed/bad-values.test.yaml:8:23: error: cases[2] (a schema that is not one): expect.schema is not a valid JSON Schema: schema is invalid: data/type must be equal to one of the allowed values, data/type must be array, data/type must match a schema in anyOf',
      'malformed/bad-yaml.test.yaml:6:3: error: invalid YAML: Flow map in block collection must be sufficiently indented and end with a }',
      '9 problems in eval files: no case ran',
    ]);
  });

  test('an unknown skill or check skill and a missing cassette are problems of the file too (exit 2, with places)', async () => {
    const r = await cli(['test', 'malformed-refs'], WS);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.equal(r.stdout, '');
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines[0], "malformed-refs/refs.test.yaml:5:22: error: cases (a check skill that does not exist): expect.check: unknown skill 'no-such-judge'");
    assert.match(lines[1]!, /^malformed-refs\/refs\.test\.yaml:8:15: error: cases \(a cassette that does not exist\): no cassette at .*missing\.cassette\.yaml — record it against a live model with agent-apps test --update$/);
    assert.equal(lines[2], "malformed-refs/unknown-skill.test.yaml:1:8: error: skill: unknown skill 'wordcont' — did you mean 'wordcount'?");
    assert.equal(lines[3], '3 problems in eval files: no case ran');
  });

  test('one malformed file among good ones: exit 2 and nothing runs', async () => {
    const r = await cli(['test', 'passing', 'malformed/bad-yaml.test.yaml'], WS);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^malformed\/bad-yaml\.test\.yaml:6:3: error: invalid YAML/);
  });
});

describe('agent-apps test: reporters', () => {
  test('--reporter junit --out FILE: the report parses as XML and says what the run said; stdout has the case lines', async () => {
    const dir = tempDir();
    const out = path.join(dir, 'reports', 'junit.xml');
    const r = await cli(['test', 'failing', 'passing/errors.test.yaml', '--reporter', 'junit', '--out', out], WS);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.equal(lastLine(r.stdout), '3 passed, 8 failed');
    assert.match(r.stdout, /^✗ failing\/mixed\.test\.yaml › wrong count/m);
    const xml = fs.readFileSync(out, 'utf8');
    assert.equal(XMLValidator.validate(xml), true);
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => ['testsuite', 'testcase'].includes(name) }).parse(xml);
    const root = doc.testsuites;
    assert.equal(root.tests, '11');
    assert.equal(root.failures, '8');
    assert.deepEqual(root.testsuite.map((s: { name: string }) => s.name), ['failing/boom.test.yaml', 'failing/mixed.test.yaml', 'passing/errors.test.yaml']);
    const cases = root.testsuite.flatMap((s: { testcase: unknown[] }) => s.testcase) as { name: string; classname: string; line: string; file: string; failure?: { message: string; type: string; '#text': string } }[];
    assert.equal(cases.length, 11);
    assert.equal(cases.filter((c) => c.failure).length, 8);
    const boom = cases.find((c) => c.name === 'fails unexpectedly')!;
    assert.equal(boom.classname, 'boom');
    assert.equal(boom.file, 'failing/boom.test.yaml');
    assert.equal(boom.line, '3');
    assert.equal(boom.failure!.type, 'E_BOOM');
    // XML specials come back as written; the control characters XML cannot hold are escaped.
    assert.equal(boom.failure!.message, 'failed with E_BOOM: \\x1b[31mboom\\x1b[0m <x < y> & "quotes" \\x07');
    const count = cases.find((c) => c.name === 'wrong count')!;
    assert.equal(count.failure!.type, 'expect');
    assert.match(count.failure!['#text'], /expected \{"words":4,"summary":"a b c"\}, got \{"words":3,"summary":"a b c"\}\s+at failing\/mixed\.test\.yaml:8/);
    assert.ok(!cases.find((c) => c.name === 'still passes')!.failure);
  });

  test('--reporter junit without --out: the XML on stdout, the case lines and summary on stderr', async () => {
    const r = await cli(['test', 'passing/code.test.yaml', '--reporter', 'junit'], WS);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(XMLValidator.validate(r.stdout), true);
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(r.stdout);
    assert.equal(doc.testsuites.skipped, '1');
    const skipped = doc.testsuites.testsuite.testcase.find((c: { name: string }) => c.name === 'not yet');
    assert.equal(skipped.skipped.message, 'waiting for a tokenizer');
    assert.equal(lastLine(r.stderr), '3 passed, 0 failed, 1 skipped');
    assert.match(r.stderr, /^✓ passing\/code\.test\.yaml › counts words/m);
  });

  test('--reporter tap: TAP 13 with a plan, ok / not ok per case, # SKIP, and a YAML block for each failure', async () => {
    const r = await cli(['test', 'failing/boom.test.yaml', 'passing/code.test.yaml', '--reporter', 'tap'], WS);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.equal(lastLine(r.stderr), '3 passed, 2 failed, 1 skipped');
    const lines = r.stdout.trimEnd().split('\n');
    assert.equal(lines[0], 'TAP version 13');
    assert.equal(lines[1], '1..6');
    const points = lines.filter((l) => /^(not )?ok \d+ /.test(l));
    assert.deepEqual(points.map((l) => l.replace(/ - .*?( # SKIP.*)?$/, '$1')), ['not ok 1', 'not ok 2', 'ok 3', 'ok 4', 'ok 5', 'ok 6 # SKIP waiting for a tokenizer']);
    assert.equal(points[0], 'not ok 1 - failing/boom.test.yaml › fails unexpectedly');
    // Each point's YAML block (between '  ---' and '  ...') is YAML.
    const start = lines.indexOf('  ---');
    const end = lines.indexOf('  ...', start);
    const block = YAML.parse(lines.slice(start + 1, end).map((l) => l.slice(2)).join('\n'));
    assert.equal(block.severity, 'fail');
    assert.equal(block.file, 'failing/boom.test.yaml');
    assert.equal(block.line, 3);
    assert.equal(block.error.code, 'E_BOOM');
    assert.match(block.message, /^failed with E_BOOM: /);
  });

  test('--reporter json (and --json): one JSON object with the counts and every case, its result or error', async () => {
    for (const flag of [['--reporter', 'json'], ['--json']]) {
      const r = await cli(['test', 'failing', ...flag], WS);
      assert.equal(r.code, 1, r.stderr);
      const report = JSON.parse(r.stdout) as JsonReport;
      assert.equal(report.passed, 1);
      assert.equal(report.failed, 8);
      assert.equal(report.skipped, 0);
      assert.equal(report.cases.length, 9);
      const pass = report.cases.find((c) => c.name === 'still passes')! as JsonReport['cases'][number] & { tokens: number; usage: { inputTokens: number; outputTokens: number } };
      // The replayed agent's tokens are its own estimate: present and consistent, their value the cassette's.
      assert.ok(pass.tokens > 0 && pass.tokens === pass.usage.inputTokens + pass.usage.outputTokens, JSON.stringify(pass));
      assert.deepEqual(
        { ...pass, durationMs: 0, tokens: 0, usage: null },
        { file: 'failing/mixed.test.yaml', skill: 'summarize', name: 'still passes', line: 4, status: 'passed', durationMs: 0, result: { words: 3, summary: 'a b c' }, trials: 1, passedTrials: 1, rate: 1, passRate: 1, flaky: false, loaded: true, tokens: 0, usage: null },
      );
      const boom = report.cases.find((c) => c.name === 'fails unexpectedly')!;
      assert.equal(boom.status, 'failed');
      assert.equal(boom.error!.code, 'E_BOOM');
      assert.equal(lastLine(r.stderr), '1 passed, 8 failed');
    }
  });

  test('--out FILE with the text reporter: the listing in the file (no colour), the summary on stdout', async () => {
    const out = path.join(tempDir(), 'report.txt');
    const r = await cli(['test', 'passing/errors.test.yaml', '--out', out], WS, { env: { FORCE_COLOR: '1' } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.replace(/\u001b\[[0-9;]*m/g, ''), '2 passed, 0 failed\n');
    const text = fs.readFileSync(out, 'utf8');
    assert.ok(!text.includes('\u001b'));
    assert.match(text, /^✓ passing\/errors\.test\.yaml › fails with its own code \(\d+ ms\)$/m);
    assert.equal(lastLine(text), '2 passed, 0 failed');
  });
});

describe('agent-apps test: expectations, parallelism, selection', () => {
  test('check: SKILL is invoked with { result, error, args, case }; a value other than true is the reason', async () => {
    const r = await cli(['test', 'failing/mixed.test.yaml', '--filter', 'check says no', '--json'], WS);
    assert.equal(r.code, 1, r.stderr);
    const [c] = (JSON.parse(r.stdout) as JsonReport).cases;
    const given = JSON.parse(c!.reason!.replace(/^check judge-summary-strict: /, '')).given;
    assert.deepEqual(given.result, { words: 3, summary: 'a b c' });
    assert.equal(given.error, null);
    assert.deepEqual(given.args, { text: 'a b c' });
    assert.deepEqual(given.case, { name: 'the check says no', args: { text: 'a b c' }, cassette: '../passing/cassettes/summarize.cassette.yaml', expect: { check: 'judge-summary-strict' } });
  });

  test('--jobs runs cases at once: two cases that must meet pass with --jobs 2 and fail alone with --jobs 1', async () => {
    const together = await cli(['test', 'jobs', '--jobs', '2'], WS);
    assert.equal(together.code, 0, together.stdout + together.stderr);
    assert.equal(lastLine(together.stdout), '2 passed, 0 failed');
    const alone = await cli(['test', 'jobs', '--jobs', '1'], WS);
    assert.equal(alone.code, 1, alone.stdout + alone.stderr);
    assert.equal(lastLine(alone.stdout), '0 passed, 2 failed');
    assert.match(alone.stdout, /failed with E_ALONE: no other case ran alongside this one/);
  });

  test('--filter picks cases by title (case-insensitive); one that matches nothing is a usage error', async () => {
    const r = await cli(['test', 'passing', '--filter', 'SUMMARIZE.*words'], WS);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(lastLine(r.stdout), '1 passed, 0 failed');
    assert.match(r.stdout, /^✓ passing\/summarize\.test\.yaml › counts three words/m);
    const none = await cli(['test', 'passing', '--filter', 'zebra'], WS);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /^error \[E_USAGE\]: test: no case matches --filter zebra \(in 4 eval files\)$/m);
  });

  test('usage errors exit 2: --jobs 0, a path that does not exist, a folder with no eval file, an unknown reporter', async () => {
    const jobs = await cli(['test', 'passing', '--jobs', '0'], WS);
    assert.equal(jobs.code, 2);
    assert.match(jobs.stderr, /--jobs must be a whole number ≥ 1 \(got '0'\)/);
    const missing = await cli(['test', 'nowhere'], WS);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /test: 'nowhere' does not exist/);
    const empty = await cli(['test', 'skills'], WS);
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /no eval files \(\*\.test\.yaml\) in skills/);
    const reporter = await cli(['test', 'passing', '--reporter', 'xml'], WS);
    assert.equal(reporter.code, 2);
    assert.match(reporter.stderr, /xml/);
  });

  test('SIGINT while cases run: exit 130, saying how many cases had ended', { timeout: 30_000 }, async () => {
    const child = spawn(process.execPath, [BIN, 'test', 'interrupt', '--reporter', 'json'], { cwd: WS, env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let sent = false;
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    const code = await new Promise<number | null>((resolve) => {
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
        // The quick case's line: the stalled one is running now.
        if (!sent && /✓ interrupt\/a-quick\.test\.yaml › quick/.test(stderr)) sent = child.kill('SIGINT');
      });
      child.on('close', resolve);
    });
    assert.equal(code, 130, stderr);
    assert.match(stderr, /interrupted \(SIGINT\): 1 of 2 cases had ended\n$/);
    assert.equal(stdout, '');
  });

  test('--help explains the file format and shows examples', async () => {
    const r = await cli(['test', '--help'], WS);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /skill: summarize/);
    assert.match(r.stdout, /\$ agent-apps test --reporter junit --out report\.xml/);
    assert.match(r.stdout, /--jobs <n>/);
  });
});

describe('agent-apps test: workspaces, init and --update', () => {
  test("init's example passes offline; with no path, test finds eval files beside the skills and under tests/", async () => {
    const cwd = tempDir();
    const init = await cli(['init', 'proj'], cwd);
    assert.equal(init.code, 0, init.stderr);
    assert.match(init.stdout, /agent-apps test/);
    const ws = path.join(cwd, 'proj');
    const r = await cli(['test'], ws);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(lastLine(r.stdout), '3 passed, 0 failed');

    fs.mkdirSync(path.join(ws, 'tests'));
    fs.writeFileSync(path.join(ws, 'tests', 'more.test.yaml'), 'skill: hello\ncases:\n  - name: Bo\n    args: { name: Bo }\n    cassette: ../skills/hello.cassette.yaml\n    expect: { equals: "Hello, Bo!" }\n');
    const more = await cli(['test'], path.join(ws, 'skills'));
    assert.equal(more.code, 0, more.stdout + more.stderr);
    assert.equal(lastLine(more.stdout), '4 passed, 0 failed');
    assert.match(more.stdout, /^✓ \.\.\/tests\/more\.test\.yaml › Bo/m);
    assert.match(more.stdout, /^✓ hello\.test\.yaml › greets by name/m);
  });

  test('a workspace with no eval file: exit 2, saying where it looked and how to write one', async () => {
    const ws = folder({ 'skills/x.md': '---\nname: x\ndescription: x\n---\nx\n' });
    const r = await cli(['test'], ws);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /no eval files \(\*\.test\.yaml\) in skills, .*tests — write one beside a skill/);
  });

  test('--update re-records a case’s cassette against the live model; the next run replays what was recorded', { timeout: 60_000 }, async () => {
    const ws = tempDir();
    fs.cpSync(path.join(WS, 'skills'), path.join(ws, 'skills'), { recursive: true });
    fs.writeFileSync(
      path.join(ws, 'skills', 'summarize.test.yaml'),
      'skill: summarize\ncases:\n' +
        '  - name: recorded\n    args: { text: "a b c" }\n    cassette: recorded/summarize.cassette.yaml\n    expect: { equals: { words: 3, summary: recorded } }\n' +
        // A second case of the same cassette replays what the first records.
        '  - name: replays the recording\n    args: { text: "a b c" }\n    cassette: recorded/summarize.cassette.yaml\n    expect: { equals: { words: 3, summary: recorded } }\n',
    );
    const cassette = path.join(ws, 'skills', 'recorded', 'summarize.cassette.yaml');
    // Without the cassette the case cannot replay: a problem of the file until it is recorded.
    const before = await cli(['test'], ws);
    assert.equal(before.code, 2);
    assert.match(before.stderr, /no cassette at .*summarize\.cassette\.yaml — record it against a live model with agent-apps test --update/);

    const code = "ctx.manager.finish({ words: await ctx.manager.invoke('wordcount', { text: ctx.args.text }), summary: 'recorded' });";
    const server = await fakeOpenAI([toolCallReply(code, 'Counting.'), textReply('Done.')]);
    try {
      const live = ['--set', 'model.provider=openai', '--set', `model.baseURL=${server.baseURL}`, '--set', 'model.modelId=fake-model'];
      const update = await cli(['test', '--update', ...live], ws);
      assert.equal(update.code, 0, update.stdout + update.stderr);
      assert.equal(lastLine(update.stdout), '2 passed, 0 failed');
      // One agent run asked the model: the first case's. The second replayed its recording.
      const requests = server.requests.length;
      assert.ok(requests >= 1 && requests <= 2, `${requests} requests`);
      const recorded = YAML.parse(fs.readFileSync(cassette, 'utf8'));
      assert.equal(recorded.turns[0].invoke.trim(), code);

      const replay = await cli(['test'], ws);
      assert.equal(replay.code, 0, replay.stdout + replay.stderr);
      assert.equal(lastLine(replay.stdout), '2 passed, 0 failed');
      assert.equal(server.requests.length, requests, 'the replay asked the model nothing');
    } finally {
      await server.close();
    }
  });

  test('--update on a skill that replays (model.provider: replay) is a usage error naming the skill', async () => {
    const cwd = tempDir();
    await cli(['init'], cwd);
    const r = await cli(['test', '--update'], cwd);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /^skills\/hello\.test\.yaml:5:8: error: --update records against a live model, but 'hello' replays a cassette \(model\.provider: replay\): choose a live one, e\.g\. --set model\.provider=openai/m);
  });
});
