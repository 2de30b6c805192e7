// `agent-apps test` telling flaky from broken (docs/ci.md: "Flaky or broken: trials and pass
// rates", "A baseline", "Graded by a skill", "Agent Skills evals: evals/evals.json"), through the
// real CLI in throw-away workspaces: a case that fails every other call (a code skill keeping a
// counter in a file) is 50% and flaky, passes at pass.rate 0.5 and fails at 0.6; a saved
// baseline, a regression (exit 1), an improvement (exit 0), a skill that fails to load counted as
// a regression, baselines that are not this project's (exit 2, before anything runs); a grader
// agent skill on a replay cassette; an Agent Skills evals/evals.json folder with --grader and
// --compare-without-skill; and every reporter's per-case figures — the JUnit report read by a
// real XML parser (fast-xml-parser).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import YAML from 'yaml';
import { cli, folder } from './cli-process.ts';

const lastLine = (text: string) => text.trimEnd().split('\n').at(-1);
/** The case lines (`✓ …`, `✗ …`) without their time. */
const caseLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => /^[✓✗-] /.test(l))
    .map((l) => l.replace(/ \([^)]*\)$/, ''));

/**
 * `flip` passes on odd calls and fails on even ones, counting its calls in the file `counter`
 * (relative to the workspace) — read, increased and written in one synchronous step, so that
 * trials running at once in the one process never lose a count. With `mode.txt` saying `steady`
 * it always passes.
 */
const FLIP = `import fs from 'node:fs';
import path from 'node:path';
export const frontmatter = {
  name: 'flip',
  description: 'Passes on odd calls and fails on even ones (steady: always passes).',
  metadata: { params: { type: 'object', properties: { counter: { type: 'string' } }, required: ['counter'] } },
};
export default async function flip(ctx, args) {
  const dir = ctx.locals.config.cwd;
  const file = path.join(dir, args.counter);
  const n = (fs.existsSync(file) ? Number(fs.readFileSync(file, 'utf8')) : 0) + 1;
  fs.writeFileSync(file, String(n));
  const steady = fs.existsSync(path.join(dir, 'mode.txt')) && fs.readFileSync(path.join(dir, 'mode.txt'), 'utf8').trim() === 'steady';
  if (!steady && n % 2 === 0) throw Object.assign(new Error('call ' + n + ' is even'), { code: 'E_EVEN' });
  return 'call ' + n;
}
`;

function flipWorkspace(evals: string, extra: Record<string, string> = {}): string {
  return folder({ 'package.json': '{ "name": "evals-demo", "private": true }\n', 'skills/flip.skill.ts': FLIP, 'skills/flip.test.yaml': evals, ...extra }, 'agent-apps-trials-');
}

const counter = (ws: string, name: string) => (fs.existsSync(path.join(ws, name)) ? Number(fs.readFileSync(path.join(ws, name), 'utf8')) : 0);

describe('trials: flaky or broken', () => {
  test('a case that fails every other call is 1/2 (50%) and flaky: it passes at pass.rate 0.5 and fails at 0.6', async () => {
    const ws = flipWorkspace(
      'skill: flip\ntrials: 2\ncases:\n' +
        '  - name: half is enough\n    args: { counter: a.count }\n    pass: { rate: 0.5 }\n' +
        '  - name: more than half is not\n    args: { counter: b.count }\n    pass: { rate: 0.6 }\n' +
        '  - name: four trials\n    args: { counter: c.count }\n    trials: 4\n    pass: { rate: 0.5 }\n',
    );
    const r = await cli(['test'], ws);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.deepEqual(caseLines(r.stdout), [
      '✓ skills/flip.test.yaml › half is enough 1/2 (50%) flaky',
      '✗ skills/flip.test.yaml › more than half is not 1/2 (50%) flaky',
      '✓ skills/flip.test.yaml › four trials 2/4 (50%) flaky',
    ]);
    // The failing trials' reasons under each case; the one that failed says what it needed.
    assert.match(r.stdout, /› more than half is not .*\n {4}1 of 2 trials passed, a rate of 0\.6 needed\n {4}trial [12] of 2: failed with E_EVEN: call 2 is even\n/);
    assert.match(r.stdout, /› half is enough .*\n {4}trial [12] of 2: failed with E_EVEN: call 2 is even\n/);
    // The summary: the flaky cases with their rates, and the count line last.
    assert.match(r.stdout, /^flaky skills\/flip\.test\.yaml › half is enough 1\/2 \(50%\), passed \(pass\.rate 0\.5\)$/m);
    assert.match(r.stdout, /^flaky skills\/flip\.test\.yaml › more than half is not 1\/2 \(50%\), failed \(pass\.rate 0\.6\)$/m);
    assert.match(r.stdout, /^3 cases \(8 trials\) from 1 eval file in /m);
    assert.equal(lastLine(r.stdout), '2 passed, 1 failed, 3 flaky');
    // Every trial ran: the counters say so.
    assert.deepEqual([counter(ws, 'a.count'), counter(ws, 'b.count'), counter(ws, 'c.count')], [2, 2, 4]);
  });

  test('the most specific trials: wins — a case’s over its file’s over --trials; --trials alone for files without one', async () => {
    const ws = flipWorkspace('skill: flip\ntrials: 2\ncases:\n  - name: own\n    args: { counter: own.count }\n    trials: 3\n    pass: { rate: 0 }\n  - name: file\n    args: { counter: file.count }\n    pass: { rate: 0 }\n', {
      'tests/plain.test.yaml': 'skill: flip\ncases:\n  - name: flag\n    args: { counter: flag.count }\n    pass: { rate: 0 }\n',
    });
    const r = await cli(['test', '--trials', '5', '--json'], ws);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const report = JSON.parse(r.stdout) as { cases: { name: string; trials: number }[] };
    assert.deepEqual(
      report.cases.map((c) => [c.name, c.trials]),
      [
        ['own', 3],
        ['file', 2],
        ['flag', 5],
      ],
    );
    assert.deepEqual([counter(ws, 'own.count'), counter(ws, 'file.count'), counter(ws, 'flag.count')], [3, 2, 5]);
  });

  test('trials: 0 and a rate outside [0, 1] are problems with their places (exit 2) and nothing runs', async () => {
    const ws = flipWorkspace('skill: flip\ntrials: 0\ncases:\n  - name: a\n    args: { counter: a.count }\n    pass: { rate: 1.5 }\n  - name: b\n    args: { counter: b.count }\n    trials: 2.5\n    pass: { rate: -0.1 }\n');
    const r = await cli(['test'], ws);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.equal(r.stdout, '');
    assert.deepEqual(r.stderr.trimEnd().split('\n'), [
      'skills/flip.test.yaml:2:9: error: trials: must be a whole number of runs, at least 1 (got 0)',
      'skills/flip.test.yaml:6:19: error: cases[0].pass.rate: must be a share of the trials from 0 to 1, e.g. 0.8 (got 1.5)',
      'skills/flip.test.yaml:9:13: error: cases[1].trials: must be a whole number of runs, at least 1 (got 2.5)',
      'skills/flip.test.yaml:10:19: error: cases[1].pass.rate: must be a share of the trials from 0 to 1, e.g. 0.8 (got -0.1)',
      '4 problems in eval files: no case ran',
    ]);
    // --json: the same problems on stdout, under their code.
    const json = await cli(['test', '--json'], ws);
    assert.equal(json.code, 2);
    const report = JSON.parse(json.stdout) as { error: { code: string; problems: { file: string; line: number; column: number }[] } };
    assert.equal(report.error.code, 'E_VALIDATION');
    assert.deepEqual(report.error.problems.map((p) => `${p.file}:${p.line}:${p.column}`), ['skills/flip.test.yaml:2:9', 'skills/flip.test.yaml:6:19', 'skills/flip.test.yaml:9:13', 'skills/flip.test.yaml:10:19']);
    assert.equal(counter(ws, 'a.count') + counter(ws, 'b.count'), 0, 'no case ran');
    // And on the command line.
    const flag = await cli(['test', '--trials', '0'], ws);
    assert.equal(flag.code, 2);
    assert.match(flag.stderr, /--trials must be a whole number ≥ 1 \(got '0'\)/);
  });
});

describe('a baseline: regressions fail, improvements and new cases are reported', () => {
  const EVALS = 'skill: flip\ntrials: 2\ncases:\n  - name: answers\n    args: { counter: answers.count }\n    pass: { rate: 0.5 }\n';

  test('a saved baseline, then a regression (exit 1, though the case passes its own rate) and within a tolerance (exit 0)', async () => {
    const ws = flipWorkspace(EVALS, { 'mode.txt': 'steady\n' });
    const save = await cli(['test', '--save-baseline', 'ci/baseline.json'], ws);
    assert.equal(save.code, 0, save.stdout + save.stderr);
    assert.match(save.stdout, /^baseline written to ci\/baseline\.json \(1 cases\)$/m);
    const saved = JSON.parse(fs.readFileSync(path.join(ws, 'ci', 'baseline.json'), 'utf8'));
    assert.deepEqual(saved, {
      version: 1,
      project: { name: 'evals-demo', evals: ['skills/flip.test.yaml'] },
      cases: { 'skills/flip.test.yaml › answers': { rate: 1, trials: 2, tokens: 0, loaded: true } },
    });

    fs.writeFileSync(path.join(ws, 'mode.txt'), 'flip\n');
    const r = await cli(['test', '--baseline', 'ci/baseline.json'], ws);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.deepEqual(caseLines(r.stdout), ['✓ skills/flip.test.yaml › answers 1/2 (50%) flaky']);
    assert.match(r.stdout, /^against the baseline ci\/baseline\.json:\n {2}regression {2}skills\/flip\.test\.yaml › answers: pass rate 100% → 50%\n {2}1 regression, 0 improved, 0 new\n/m);
    assert.equal(lastLine(r.stdout), '1 passed, 0 failed, 1 flaky');

    const tolerant = await cli(['test', '--baseline', 'ci/baseline.json', '--tolerance', '0.5', '--json'], ws);
    assert.equal(tolerant.code, 0, tolerant.stdout + tolerant.stderr);
    const report = JSON.parse(tolerant.stdout) as { baseline: { tolerance: number; regressions: unknown[] } };
    assert.equal(report.baseline.tolerance, 0.5);
    assert.deepEqual(report.baseline.regressions, []);
  });

  test('an improvement and a new case are reported, not failed (exit 0) — even a new case that fails', async () => {
    const ws = flipWorkspace(EVALS);
    const save = await cli(['test', '--save-baseline', 'baseline.json'], ws);
    assert.equal(save.code, 0, save.stdout + save.stderr);
    fs.writeFileSync(path.join(ws, 'mode.txt'), 'steady\n');
    fs.appendFileSync(path.join(ws, 'skills', 'flip.test.yaml'), '  - name: brand new\n    args: { counter: new.count }\n    expect: { equals: "never" }\n');
    const r = await cli(['test', '--baseline', 'baseline.json', '--json'], ws);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stderr, /^ {2}improved {4}skills\/flip\.test\.yaml › answers: pass rate 50% → 100%$/m);
    assert.match(r.stderr, /^ {2}new {9}skills\/flip\.test\.yaml › brand new: pass rate 0%$/m);
    assert.match(r.stderr, /^ {2}0 regressions, 1 improved, 1 new$/m);
    assert.equal(lastLine(r.stderr), '1 passed, 1 failed');
    const report = JSON.parse(r.stdout) as { baseline: { improvements: { id: string; before: { rate: number }; after: { rate: number } }[]; added: { id: string }[] } };
    assert.deepEqual(report.baseline.improvements.map((c) => [c.id, c.before.rate, c.after.rate]), [['skills/flip.test.yaml › answers', 0.5, 1]]);
    assert.deepEqual(report.baseline.added.map((c) => c.id), ['skills/flip.test.yaml › brand new']);
  });

  test('a skill that fails to load is a regression, even where the case’s own expect holds', async () => {
    const ws = flipWorkspace(EVALS + '  - name: expects the load error\n    args: { counter: e.count }\n    expect: { error: E_CONFIG }\n', { 'mode.txt': 'steady\n' });
    const save = await cli(['test', '--save-baseline', 'baseline.json'], ws);
    // The second case fails while the skill loads (it expects an error): the baseline has its 0%.
    assert.equal(save.code, 1, save.stdout + save.stderr);
    fs.writeFileSync(path.join(ws, 'skills', 'flip.skill.ts'), "export const frontmatter = { name: 'flip', description: 'Broken.' };\nexport default async function ( { broken\n");
    const r = await cli(['test', '--baseline', 'baseline.json'], ws);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.deepEqual(caseLines(r.stdout), ['✗ skills/flip.test.yaml › answers 0/2 (0%)', '✗ skills/flip.test.yaml › expects the load error 0/2 (0%)']);
    assert.match(r.stdout, /› answers .*\n {4}0 of 2 trials passed, a rate of 0\.5 needed\n {4}trials 1, 2 of 2: the skill did not load: E_CONFIG: .*flip\.skill\.ts:2: cannot load skill/);
    assert.match(r.stdout, /› expects the load error .*\n {4}0 of 2 trials passed, all needed\n {4}trials 1, 2 of 2: the skill did not load: E_CONFIG: /);
    assert.match(r.stdout, /^ {2}regression {2}skills\/flip\.test\.yaml › answers: the skill did not load$/m);
    assert.match(r.stdout, /^ {2}regression {2}skills\/flip\.test\.yaml › expects the load error: the skill did not load$/m);
    assert.equal(lastLine(r.stdout), '0 passed, 2 failed');
    // Without a baseline the cases fail too (exit 1): the skill is broken, the eval file is not.
    const plain = await cli(['test', '--json'], ws);
    assert.equal(plain.code, 1, plain.stderr);
    const report = JSON.parse(plain.stdout) as { cases: { loaded: boolean; error: { code: string } }[] };
    assert.deepEqual(report.cases.map((c) => [c.loaded, c.error.code]), [
      [false, 'E_CONFIG'],
      [false, 'E_CONFIG'],
    ]);
  });

  test('a baseline of another project, a broken one, or none: E_VALIDATION naming the file (exit 2), before any case runs', async () => {
    const ws = flipWorkspace(EVALS, { 'mode.txt': 'steady\n' });
    const save = await cli(['test', '--save-baseline', 'baseline.json'], ws);
    assert.equal(save.code, 0, save.stdout + save.stderr);
    const ran = counter(ws, 'answers.count');
    const saved = JSON.parse(fs.readFileSync(path.join(ws, 'baseline.json'), 'utf8'));
    fs.writeFileSync(path.join(ws, 'other.json'), JSON.stringify({ ...saved, project: { ...saved.project, name: 'someone-else' } }));
    fs.writeFileSync(path.join(ws, 'other-evals.json'), JSON.stringify({ ...saved, project: { ...saved.project, evals: ['skills/other.test.yaml'] } }));
    fs.writeFileSync(path.join(ws, 'broken.json'), '{ "version": 1, ');
    fs.writeFileSync(path.join(ws, 'old.json'), JSON.stringify({ ...saved, version: 0 }));
    const cases: [string, RegExp][] = [
      ['other.json', /^error \[E_VALIDATION\]: --baseline other\.json: it is the baseline of another project \('someone-else'; this is 'evals-demo'\)$/m],
      ['other-evals.json', /^error \[E_VALIDATION\]: --baseline other-evals\.json: it is the baseline of other eval files \(skills\/other\.test\.yaml\) than this run's \(skills\/flip\.test\.yaml\)$/m],
      ['broken.json', /^error \[E_VALIDATION\]: --baseline broken\.json: not JSON \(/m],
      ['old.json', /^error \[E_VALIDATION\]: --baseline old\.json: not a baseline of agent-apps test \(version 1\): \/version must be equal to constant/m],
      ['missing.json', /^error \[E_VALIDATION\]: --baseline missing\.json: cannot read it \(ENOENT\)/m],
    ];
    for (const [file, message] of cases) {
      const r = await cli(['test', '--baseline', file], ws);
      assert.equal(r.code, 2, `${file}: ${r.stdout}${r.stderr}`);
      assert.equal(r.stdout, '', file);
      assert.match(r.stderr, message);
    }
    assert.equal(counter(ws, 'answers.count'), ran, 'no case ran');
    const tolerance = await cli(['test', '--tolerance', '0.1'], ws);
    assert.equal(tolerance.code, 2);
    assert.match(tolerance.stderr, /--tolerance goes with --baseline FILE/);
  });
});

/** An agent skill `count` (priced: modelId gpt-4o-mini) and an agent grader, both on replay cassettes. */
const AGENTS = {
  'skills/wordcount.skill.ts': "export const frontmatter = { name: 'wordcount', description: 'Count words.', metadata: { params: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } } };\nexport default async function (_ctx, args) { return args.text.split(/\\s+/).filter(Boolean).length; }\n",
  'skills/count.md': '---\nname: count\ndescription: Counts the words of a text (an agent skill).\nmetadata:\n  params: { type: object, properties: { text: { type: string } }, required: [text] }\n  allowed-tools: wordcount\n  model: { provider: replay, cassette: count.cassette.yaml, modelId: gpt-4o-mini }\n---\nCount the words of :arg{name=text} with wordcount; answer "N words".\n',
  'skills/count.cassette.yaml': "turns:\n  - text: Counting.\n    invoke: |\n      const n = await ctx.manager.invoke('wordcount', { text: ctx.args.text });\n      ctx.manager.finish(n + ' words');\n",
  // The grader: an agent skill whose replayed model passes an output that states a count.
  'skills/grade-words.md':
    '---\nname: grade-words\ndescription: Grades an output against a rubric (an agent skill on a replay cassette).\nmetadata:\n  params: { type: object, properties: { output: {}, rubric: {}, input: {} }, required: [output, rubric] }\n  returns: { type: object, properties: { pass: { type: boolean }, score: { type: number }, reason: { type: string } }, required: [pass, reason] }\n  model: { provider: replay, cassette: grade-words.cassette.yaml }\n---\nGrade the output against the rubric.\n',
  'skills/grade-words.cassette.yaml':
    "turns:\n  - text: Grading.\n    invoke: |\n      const out = String(ctx.args.output);\n      const ok = /^\\d+ words$/.test(out) && !/five/.test(String(ctx.args.rubric)) || out === '5 words';\n      ctx.manager.finish({ pass: ok, score: ok ? 1 : 0.25, reason: ok ? 'states the count' : 'the rubric asks for five words; the output says ' + out + ' (input ' + JSON.stringify(ctx.args.input) + ')' });\n",
};

describe('graded by a skill', () => {
  test('expect.grade: an agent grader on a replay cassette gets { output, rubric, input }; its reason and score show in failures; its tokens are not the case’s', async () => {
    const ws = folder({
      ...AGENTS,
      'skills/count.test.yaml':
        'skill: count\ncases:\n  - name: states a count\n    args: { text: "a b c" }\n    expect: { grade: { by: grade-words, rubric: "States how many words there are." } }\n' +
        '  - name: five words\n    args: { text: "a b c" }\n    expect: { grade: { by: grade-words, rubric: "Says five words." } }\n',
    });
    const r = await cli(['test', '--json'], ws);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const report = JSON.parse(r.stdout) as { cases: { name: string; status: string; reason?: string; result: unknown; tokens: number }[] };
    const [ok, five] = report.cases;
    assert.equal(ok!.status, 'passed');
    assert.equal(five!.status, 'failed');
    assert.equal(five!.reason, 'grade by grade-words (score 0.25): the rubric asks for five words; the output says 3 words (input {"text":"a b c"})');
    assert.match(r.stderr, /^✗ skills\/count\.test\.yaml › five words \(.*\)\n {4}grade by grade-words \(score 0\.25\): the rubric asks for five words/m);
    // The case's tokens are its own agent's: one run, the same as a case without a grader.
    const alone = await cli(['test', '--json', '--filter', 'states a count'], ws);
    assert.ok(ok!.tokens > 0);
    assert.equal(ok!.tokens, (JSON.parse(alone.stdout) as { cases: { tokens: number }[] }).cases[0]!.tokens);
    assert.equal(five!.tokens, ok!.tokens);
  });

  test('a grade without by needs --grader, and an unknown grader is a problem of the file (exit 2)', async () => {
    const ws = folder({ ...AGENTS, 'skills/count.test.yaml': 'skill: count\ncases:\n  - name: graded\n    args: { text: "a" }\n    expect: { grade: { rubric: "A count." } }\n  - name: by nobody\n    args: { text: "a" }\n    expect: { grade: { by: grade-wrods, rubric: "A count." } }\n' });
    const r = await cli(['test'], ws);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.deepEqual(r.stderr.trimEnd().split('\n'), [
      'skills/count.test.yaml:5:22: error: cases (graded): expect.grade has no by: SKILL, and no --grader SKILL was given',
      "skills/count.test.yaml:8:28: error: cases (by nobody): expect.grade.by: unknown skill 'grade-wrods' — did you mean 'grade-words'?",
      '2 problems in eval files: no case ran',
    ]);
    const graded = await cli(['test', '--grader', 'grade-words', '--filter', 'graded'], ws);
    assert.equal(graded.code, 0, graded.stdout + graded.stderr);
    assert.equal(lastLine(graded.stdout), '1 passed, 0 failed');
  });
});

/** An Agent Skills folder with evals/evals.json; `where` (a code skill it may call) reports the working directory it sees. */
const NOTES = {
  'skills/notes/SKILL.md': '---\nname: notes\ndescription: Makes notes of the files it is given. Use when asked for notes.\nallowed-tools: where\nagent-apps:\n  model: { provider: replay, cassette: replay.yaml }\n---\n# notes\n\nLook at the working directory with `where`; answer with NOTES: and what the input file says.\n',
  // The model's side: with the skill it answers from the files; without the skill's body (the bare model's run) it does not know what to do.
  'skills/notes/replay.yaml':
    "turns:\n  - text: Looking.\n    invoke: |\n      const seen = await ctx.manager.invoke('where', {});\n      if (!ctx.args.arguments) ctx.manager.finish('Which notes?');\n      else ctx.manager.finish({ notes: 'NOTES: ' + seen.text, seen });\n",
  'skills/notes/evals/files/input.txt': 'the quarterly numbers\n',
  'skills/notes/evals/evals.json': JSON.stringify(
    {
      skill_name: 'notes',
      evals: [
        { id: 1, prompt: 'Make notes of evals/files/input.txt', expected_output: 'Notes of the input file: the quarterly numbers', files: ['evals/files/input.txt'] },
        { id: 2, prompt: 'Make notes', expected_output: 'Notes', expectations: ['It starts with NOTES:'] },
      ],
    },
    null,
    2,
  ),
  'skills/where.skill.ts':
    "import fs from 'node:fs';\nimport path from 'node:path';\nexport const frontmatter = { name: 'where', description: 'The files of the working directory.' };\nexport default async function where(ctx) {\n  const cwd = ctx.locals.config.cwd;\n  const files = fs.readdirSync(cwd, { recursive: true, withFileTypes: true }).filter((d) => d.isFile()).map((d) => path.relative(cwd, path.join(d.parentPath, d.name)).split(path.sep).join('/')).sort();\n  const input = path.join(cwd, 'evals', 'files', 'input.txt');\n  return { cwd, files, text: fs.existsSync(input) ? fs.readFileSync(input, 'utf8').trim() : 'nothing', workspace: ctx.locals.config.workspace };\n}\n",
  // A code grader: passes notes that start with NOTES: and, when the rubric names the quarterly numbers, hold them.
  'skills/grade-notes.skill.ts':
    "export const frontmatter = { name: 'grade-notes', description: 'Grades notes.' };\nexport default async function (_ctx, { output, rubric, input }) {\n  const notes = typeof output === 'string' ? output : String(output?.notes ?? '');\n  const pass = notes.startsWith('NOTES:') && (!/quarterly/.test(rubric) || notes.includes('quarterly'));\n  return { pass, reason: pass ? 'good notes' : 'not notes of ' + JSON.stringify(input) + ': ' + JSON.stringify(output) };\n}\n",
};

describe('Agent Skills evals: evals/evals.json', () => {
  test('each eval runs the SKILL.md with its prompt as arguments, in a temporary workspace holding its files, graded by --grader', async () => {
    const ws = folder(NOTES);
    const none = await cli(['test'], ws);
    assert.equal(none.code, 2, none.stdout + none.stderr);
    assert.match(none.stderr, /^skills\/notes\/evals\/evals\.json:1:1: error: an Agent Skills eval file is graded by a skill: give one with --grader SKILL/m);

    const r = await cli(['test', '--grader', 'grade-notes', '--json'], ws);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const report = JSON.parse(r.stdout) as { cases: { name: string; skill: string; line: number; status: string; result: { notes: string; seen: { cwd: string; files: string[]; workspace: string } } }[] };
    assert.deepEqual(report.cases.map((c) => [c.name, c.skill, c.line, c.status]), [
      ['eval 1', 'notes', 4, 'passed'],
      ['eval 2', 'notes', 12, 'passed'],
    ]);
    const [one, two] = report.cases.map((c) => c.result);
    assert.equal(one!.notes, 'NOTES: the quarterly numbers');
    // Its own temporary folder, holding its files at their paths in the skill folder — the working
    // directory and the workspace of everything the case ran — and removed after it.
    assert.deepEqual(one!.seen.files, ['evals/files/input.txt']);
    assert.equal(one!.seen.workspace, one!.seen.cwd);
    assert.ok(!one!.seen.cwd.startsWith(ws) && path.basename(one!.seen.cwd).startsWith('agent-apps-eval-'), one!.seen.cwd);
    assert.ok(!fs.existsSync(one!.seen.cwd), 'the temporary workspace is removed');
    assert.deepEqual(two!.seen.files, []);
    assert.notEqual(two!.seen.cwd, one!.seen.cwd);
  });

  test('--compare-without-skill runs the bare model too and prints both pass rates side by side', async () => {
    const ws = folder(NOTES);
    const r = await cli(['test', '--grader', 'grade-notes', '--compare-without-skill', '--trials', '2'], ws);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(caseLines(r.stdout), ['✓ skills/notes/evals/evals.json › eval 1 2/2 (100%) · without the skill 0/2 (0%)', '✓ skills/notes/evals/evals.json › eval 2 2/2 (100%) · without the skill 0/2 (0%)']);
    assert.match(r.stdout, /^with the skill 4\/4 \(100%\), without it 0\/4 \(0%\) \(2 cases\)$/m);
    assert.equal(lastLine(r.stdout), '2 passed, 0 failed');
    const json = await cli(['test', '--grader', 'grade-notes', '--compare-without-skill', '--json', '--filter', 'eval 1'], ws);
    const [c] = (JSON.parse(json.stdout) as { cases: { withoutSkill: { trials: number; passed: number; rate: number; tokens: number } }[] }).cases;
    assert.deepEqual({ ...c!.withoutSkill, tokens: 0 }, { trials: 1, passed: 0, rate: 0, tokens: 0 });
    assert.ok(c!.withoutSkill.tokens > 0);
  });

  test('an evals.json whose files leave the skill folder or do not exist, whose ids repeat, or whose skill_name is another skill’s: problems with places (exit 2)', async () => {
    const ws = folder({
      ...NOTES,
      'secret.txt': 'not the folder’s\n',
      'skills/notes/evals/evals.json': '{\n  "skill_name": "other",\n  "evals": [\n    { "id": 1, "prompt": "p", "files": ["../../secret.txt", "evals/files/missing.txt"] },\n    { "id": 1, "prompt": "q" }\n  ]\n}\n',
    });
    const r = await cli(['test', '--grader', 'grade-notes'], ws);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    const folderPath = path.join(ws, 'skills', 'notes');
    assert.deepEqual(r.stderr.trimEnd().split('\n'), [
      "skills/notes/evals/evals.json:4:41: error: evals[0] (eval 1): ../../secret.txt is outside the skill folder: an eval's files are the folder's own",
      `skills/notes/evals/evals.json:4:61: error: evals[0] (eval 1): no file at evals/files/missing.txt (relative to the skill folder ${folderPath})`,
      'skills/notes/evals/evals.json:5:13: error: evals[1] (eval 1): another eval has this id (evals[0]): ids tell evals apart in reports, so each is used once',
      '3 problems in eval files: no case ran',
    ]);
    fs.writeFileSync(path.join(ws, 'skills', 'notes', 'evals', 'evals.json'), '{ "skill_name": "other", "evals": [{ "id": 1, "prompt": "p" }] }\n');
    const name = await cli(['test', '--grader', 'grade-notes'], ws);
    assert.equal(name.code, 2, name.stdout + name.stderr);
    assert.equal(name.stderr, `skills/notes/evals/evals.json:1:17: error: skill_name 'other' is not the name of the skill in ${folderPath} ('notes')\n1 problem in eval files: no case ran\n`);
  });
});

describe('every reporter gives each case its trials, tokens, cost and time', () => {
  test('JUnit <properties> (read by a real XML parser), JSON fields and TAP comments', async () => {
    const ws = folder({ ...AGENTS, 'skills/flip.skill.ts': FLIP, 'skills/count.test.yaml': 'skill: count\ntrials: 3\ncases:\n  - name: three words\n    args: { text: "a b c" }\n    expect: { equals: "3 words" }\n', 'skills/flip.test.yaml': 'skill: flip\ncases:\n  - name: flaky\n    args: { counter: f.count }\n    trials: 2\n' });
    const out = path.join(ws, 'report.xml');
    const r = await cli(['test', '--reporter', 'junit', '--out', out], ws);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    // The text listing shows tokens and cost beside the time.
    assert.match(r.stdout, /^✓ skills\/count\.test\.yaml › three words 3\/3 \(100%\) \(\d[\d.]* m?s, \d+ tokens, \$0\.\d+\)$/m);
    const xml = fs.readFileSync(out, 'utf8');
    assert.equal(XMLValidator.validate(xml), true);
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => ['testsuite', 'testcase', 'property'].includes(name) }).parse(xml);
    const cases = doc.testsuites.testsuite.flatMap((s: { testcase: unknown[] }) => s.testcase) as { name: string; time: string; properties: { property: { name: string; value: string }[] }; failure?: { type: string } }[];
    const props = (name: string) => Object.fromEntries(cases.find((c) => c.name === name)!.properties.property.map((p) => [p.name, p.value]));
    const words = props('three words');
    assert.equal(words.trials, '3');
    assert.equal(words.passedTrials, '3');
    assert.equal(words.rate, '1');
    assert.equal(words.flaky, 'false');
    assert.equal(words.loaded, 'true');
    assert.ok(Number(words.tokens) > 0 && Number(words.tokens) === Number(words.inputTokens) + Number(words.outputTokens), JSON.stringify(words));
    assert.ok(Number(words.costUsd) > 0, JSON.stringify(words));
    assert.ok(Number(words.durationMs) > 0);
    const flaky = props('flaky');
    assert.deepEqual([flaky.trials, flaky.passedTrials, flaky.rate, flaky.flaky, flaky.tokens], ['2', '1', '0.5', 'true', '0']);
    assert.equal(flaky.costUsd, undefined, 'a code skill has no cost');
    assert.equal(cases.find((c) => c.name === 'flaky')!.failure!.type, 'E_EVEN');

    const json = await cli(['test', 'skills/count.test.yaml', '--json'], ws);
    assert.equal(json.code, 0, json.stderr);
    const [c] = (JSON.parse(json.stdout) as { cases: Record<string, unknown>[] }).cases;
    assert.deepEqual(Object.keys(c!).filter((k) => ['trials', 'passedTrials', 'rate', 'passRate', 'flaky', 'loaded', 'tokens', 'usage', 'costUsd', 'durationMs', 'runs'].includes(k)).sort(), ['costUsd', 'durationMs', 'flaky', 'loaded', 'passRate', 'passedTrials', 'rate', 'runs', 'tokens', 'trials', 'usage']);
    assert.equal((c!.runs as unknown[]).length, 3);
    assert.equal(c!.tokens, words.tokens === undefined ? -1 : Number(words.tokens));

    const tap = await cli(['test', 'skills/count.test.yaml', '--reporter', 'tap'], ws);
    assert.equal(tap.code, 0, tap.stderr);
    const lines = tap.stdout.trimEnd().split('\n');
    assert.equal(lines[2], 'ok 1 - skills/count.test.yaml › three words');
    const end = lines.indexOf('  ...');
    const block = YAML.parse(lines.slice(lines.indexOf('  ---') + 1, end).map((l) => l.slice(2)).join('\n'));
    assert.deepEqual({ ...block, duration_ms: 0 }, { duration_ms: 0, trials: 3, passed_trials: 3, rate: 1, pass_rate: 1, flaky: false });
    assert.match(lines[end + 1]!, /^# tokens (\d+) \(in \d+, out \d+\), cost \$0\.\d+, \d[\d.]* m?s, 3\/3 trials passed \(100%\)$/);
  });
});
