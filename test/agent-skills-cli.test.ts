// SPEC §3.1 and §12 from the command line: `validate`, and what `list`, `describe`, `run --help`
// and `new --skill-folder` show of Agent Skills folders — real processes of bin/agent-apps.js in
// throw-away workspaces.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REPO, cli, folder, tempDir } from './cli-process.ts';

const ANTHROPIC = path.join(REPO, 'test', 'fixtures', 'anthropic-skills');

function workspace(files: Record<string, string>): string {
  return folder(files, 'agent-apps-skills-cli-');
}

const fm = (lines: string, body = 'Body\n') => `---\n${lines}\n---\n${body}`;

test('validate prints FILE:LINE:COL: severity: message [rule], a summary, and exits 2 on an error', async () => {
  const dir = workspace({
    'skills/good/SKILL.md': fm('name: good\ndescription: Fine.'),
    'skills/renamed/SKILL.md': fm('name: other\ndescription: Use when: asked'),
    'skills/Bad/SKILL.md': fm('name: Bad\ndescription: Upper case.'),
    '.claude/skills/nodesc/SKILL.md': fm('name: nodesc'),
  });
  const [text, json] = await Promise.all([cli(['validate'], dir), cli(['validate', '--json'], dir)]);
  assert.equal(text.code, 2);
  assert.equal(
    text.stdout,
    [
      '.claude/skills/nodesc/SKILL.md:1:1: error: description is missing: the format requires it (it is how agents decide to use the skill) [description-missing]',
      'skills/Bad/SKILL.md:2:7: error: name "Bad" must be lower-case ("bad") [name-case]',
      'skills/renamed/SKILL.md:2:7: warning: name "other" is not the folder\'s name "renamed": other clients expect them equal [name-folder]',
      'skills/renamed/SKILL.md:3:1: warning: description: the value holds an unquoted \': \', which YAML reads as a nested mapping; it was read as if quoted — quote it ("…") so that every client reads it [yaml-colon]',
      '2 errors, 2 warnings (4 skill files checked)',
      '',
    ].join('\n'),
  );
  assert.equal(json.code, 2);
  const problems = JSON.parse(json.stdout) as Record<string, unknown>[];
  assert.equal(problems.length, 4);
  assert.deepEqual(Object.keys(problems[0]!), ['file', 'line', 'column', 'severity', 'message', 'rule']);
  assert.deepEqual(problems[1], { file: path.join(dir, 'skills/Bad/SKILL.md'), line: 2, column: 7, severity: 'error', message: 'name "Bad" must be lower-case ("bad")', rule: 'name-case' });
});

test('validate: warnings alone exit 0; a path may be a skill folder, a SKILL.md or a folder of skills', async () => {
  const dir = workspace({ 'skills/renamed/SKILL.md': fm('name: other\ndescription: x'), 'elsewhere/ok/SKILL.md': fm('name: ok\ndescription: Fine.'), 'elsewhere/ours.md': fm('name: ours\ndescription: Ours.') });
  const [all, folder, file, tree, missing] = await Promise.all([
    cli(['validate'], dir),
    cli(['validate', 'elsewhere/ok'], dir),
    cli(['validate', 'skills/renamed/SKILL.md'], dir),
    cli(['validate', 'elsewhere'], dir),
    cli(['validate', 'nowhere'], dir),
  ]);
  assert.equal(all.code, 0);
  assert.match(all.stdout, /^0 errors, 1 warning \(1 skill file checked\)$/m);
  assert.deepEqual([folder.code, folder.stdout], [0, '0 errors, 0 warnings (1 skill file checked)\n']);
  assert.equal(file.code, 0);
  assert.match(file.stdout, /\[name-folder\]/);
  assert.deepEqual([tree.code, tree.stdout], [0, '0 errors, 0 warnings (2 skill files checked)\n']);
  assert.equal(missing.code, 2);
  assert.match(missing.stdout, /nowhere:1:1: error: cannot read .*nowhere \(ENOENT\) \[file\]/);
});

test('validate on the vendored anthropics/skills folders: no error, no warning', async () => {
  const r = await cli(['validate', 'skills'], ANTHROPIC);
  assert.deepEqual([r.code, r.stdout], [0, '0 errors, 0 warnings (3 skill files checked)\n']);
});

test('list marks warnings and shadowing; --json carries warnings and shadows; user-invocable: false only with --all', async () => {
  const dir = workspace({
    'skills/renamed/SKILL.md': fm('name: other\ndescription: Loads with a warning.'),
    'skills/twin/SKILL.md': fm('name: twin\ndescription: The workspace’s.'),
    '.agents/skills/twin/SKILL.md': fm('name: twin\ndescription: The cross-client one.'),
    'skills/quiet/SKILL.md': fm('name: quiet\ndescription: For agents only.\nuser-invocable: false'),
    'skills/manual/SKILL.md': fm('name: manual\ndescription: For people only.\ndisable-model-invocation: true'),
  });
  const [table, json, all] = await Promise.all([cli(['list'], dir), cli(['list', '--json'], dir), cli(['list', '--all', '--json'], dir)]);
  assert.equal(table.code, 0);
  assert.match(table.stdout, /^other +skill-folder +WARN Loads with a warning\./m);
  assert.match(table.stdout, /^twin +skill-folder +\(shadows \.agents\/skills\/twin\/SKILL\.md\) The workspa/m);
  assert.match(table.stdout, /^manual +skill-folder +For people only\./m);
  assert.doesNotMatch(table.stdout, /^quiet /m);
  assert.match(table.stderr, /warn: other loaded with warnings: agent-apps validate \(or describe NAME\) explains them/);
  const list = JSON.parse(json.stdout) as { name: string; warnings?: string[]; shadows?: string }[];
  const byName = new Map(list.map((s) => [s.name, s]));
  assert.deepEqual(byName.get('other')?.warnings, ['name "other" is not the folder\'s name "renamed": other clients expect them equal [name-folder]']);
  assert.equal(byName.get('twin')?.shadows, 'file://' + path.join(dir, '.agents/skills/twin/SKILL.md'));
  assert.ok(!byName.has('quiet'));
  assert.ok((JSON.parse(all.stdout) as { name: string }[]).some((s) => s.name === 'quiet'));
});

test('describe shows warnings, what it shadows and argument-hint; run SKILL --help shows argument-hint', async () => {
  const dir = workspace({
    'skills/hinted/SKILL.md': fm('name: hinted\ndescription: Takes arguments.\nargument-hint: "[issue] [branch]"\nextra-field: 1'),
    '.claude/skills/hinted/SKILL.md': fm('name: hinted\ndescription: Shadowed.'),
  });
  const [text, json, help] = await Promise.all([cli(['describe', 'hinted'], dir), cli(['describe', 'hinted', '--json'], dir), cli(['run', 'hinted', '--help'], dir)]);
  assert.equal(text.code, 0);
  assert.match(text.stdout, /arguments: \[issue\] \[branch\]/);
  assert.match(text.stdout, /shadows \.claude\/skills\/hinted\/SKILL\.md/);
  assert.match(text.stdout, /warnings\n  unknown field 'extra-field'/);
  const d = JSON.parse(json.stdout) as { warnings: string[]; shadows: string; argumentHint: string };
  assert.equal(d.argumentHint, '[issue] [branch]');
  assert.equal(d.shadows, 'file://' + path.join(dir, '.claude/skills/hinted/SKILL.md'));
  assert.match(d.warnings[0]!, /\[unknown-field\]$/);
  assert.match(help.stdout, /^Usage: agent-apps run hinted --arguments "\[issue\] \[branch\]"$/m);
});

test('new NAME --skill-folder scaffolds a folder that validates clean and runs offline, reading its own references', async () => {
  const dir = tempDir();
  const made = await cli(['new', 'pdf-notes', '--skill-folder'], dir);
  assert.equal(made.code, 0, made.stderr);
  assert.match(made.stdout, /^Created skills\/pdf-notes\/SKILL\.md, skills\/pdf-notes\/replay\.yaml, skills\/pdf-notes\/references\/REFERENCE\.md$/m);
  const [check, run, again, bad] = await Promise.all([
    cli(['validate'], dir),
    cli(['run', 'pdf-notes', '--arguments', 'report.pdf'], dir),
    cli(['new', 'pdf-notes', '--skill-folder'], dir),
    cli(['new', 'two--hyphens', '--skill-folder'], dir),
  ]);
  assert.deepEqual([check.code, check.stdout], [0, '0 errors, 0 warnings (1 skill file checked)\n']);
  assert.deepEqual([run.code, run.stdout.trim()], [0, 'pdf-notes worked on report.pdf (its reference: # pdf-notes reference)'], run.stderr);
  assert.equal(again.code, 2);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /at most 64 characters, no '--'/);
  const text = fs.readFileSync(path.join(dir, 'skills/pdf-notes/SKILL.md'), 'utf8');
  assert.match(text, /^agent-apps:$/m);
});

test('a !`command` the skill may not run stays as written, with a warning on stderr', async () => {
  const dir = workspace({
    'skills/status/SKILL.md': fm('name: status\ndescription: Shows a command.\nallowed-tools: Bash(echo:*)\nagent-apps:\n  model: { provider: replay, cassette: replay.yaml }', 'Echo: !`echo ok`\nRemove: !`rm -rf nothing`\n'),
    'skills/status/replay.yaml': "turns:\n  - invoke: |\n      ctx.manager.finish(await ctx.manager.get('locals.prompt.expanded'));\n",
  });
  const r = await cli(['run', 'status'], dir);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'Echo: ok\nRemove: !`rm -rf nothing`\n');
  assert.match(r.stderr, /!`rm -rf nothing` was not run: allowed-tools 'Bash\(echo:\*\)' does not permit it/);
});
