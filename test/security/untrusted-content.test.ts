// Untrusted content: a cloned repository or a downloaded skill folder cannot run anything by
// itself (docs/writing-skills.md: "Where folders are found", "Claude Code's extensions",
// "Directives"). Each attack is performed as a user or an attacker would — the real CLI as a child
// process, the official MCP client against `agent-apps mcp serve` — and no model is called: agent
// skills replay cassettes, and `prompts/get` never starts the agent.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { ToolSummary } from '../../src/core/types.ts';
import { REPO, cli, folder, tempDir } from '../cli-process.ts';
import { connectStdio, text } from '../mcp-server-helpers.ts';

const SUPERPOWERS = path.join(REPO, 'test', 'fixtures', 'superpowers');
/** A cassette whose agent answers with the prompt it was given: what the model would have seen. */
const ECHO = "turns:\n  - invoke: |\n      ctx.manager.finish(await ctx.manager.get('locals.prompt.expanded'));\n";

const fm = (lines: string, body: string) => `---\n${lines}\n---\n${body}`;

/** A code skill that, if it ever runs, leaves `marker` behind. */
const tripwire = (name: string, marker: string) =>
  `import fs from 'node:fs';\nexport const frontmatter = { name: '${name}', description: 'Leaves a marker if it runs.' };\nexport default async () => { fs.writeFileSync(${JSON.stringify(marker)}, '${name} ran'); return ''; };\n`;

describe('scanning: what a downloaded folder holds', () => {
  test('a symbolic link out of the search root (data -> /usr) is one broken entry naming its target, never followed', async () => {
    const outside = folder({ 'evil.md': fm('name: evil\ndescription: Outside the workspace.', 'Evil.\n'), 'share/doc/readme-like.md': fm('name: deep\ndescription: Deeper outside.', 'Deep.\n') }, 'agent-apps-outside-');
    const ws = folder({
      // A collection folder (no SKILL.md at its top), as downloaded: its links are the attack.
      'skills/downloaded/README.md': '# A downloaded collection\n',
      'skills/downloaded/good/SKILL.md': fm('name: good\ndescription: A real skill of the collection.', 'Good.\n'),
      // The installers' layout: one copy in .agents/skills, a link to it from .claude/skills.
      '.agents/skills/shared/SKILL.md': fm('name: shared\ndescription: Installed once, linked for Claude Code.', 'Shared.\n'),
    });
    fs.symlinkSync('/usr', path.join(ws, 'skills/downloaded/data'));
    fs.symlinkSync(outside, path.join(ws, 'skills/downloaded/more'));
    fs.symlinkSync(path.join(outside, 'evil.md'), path.join(ws, 'skills/downloaded/evil.md'));
    fs.mkdirSync(path.join(ws, '.claude/skills'), { recursive: true });
    fs.symlinkSync('../../.agents/skills/shared', path.join(ws, '.claude/skills/shared'));

    const list = await cli(['list', '--json'], ws);
    assert.equal(list.code, 2, list.stderr);
    const entries = JSON.parse(list.stdout) as ToolSummary[];
    const files = entries.map((e) => e.origin ?? '').filter((o) => o.startsWith('file://') && !o.startsWith(`file://${REPO}/skills/`));
    // Nothing outside the workspace is listed: not /usr's files, not the linked folder's.
    assert.deepEqual(files.filter((o) => !o.startsWith(`file://${ws}/`)), []);
    assert.ok(!entries.some((e) => e.name === 'deep'), 'the linked folder was not walked');
    const byName = new Map(entries.map((e) => [e.name, e]));
    assert.match(String(byName.get('data')?.error), /data is a symbolic link to \/usr, outside the search root .*skills: not followed/);
    assert.match(String(byName.get('more')?.error), new RegExp(`more is a symbolic link to ${outside}, outside the search root`));
    assert.match(String(byName.get('evil')?.error), new RegExp(`evil\\.md is a symbolic link to ${outside}/evil\\.md, outside the search root`));
    assert.equal(byName.get('good')?.error, undefined);
    assert.equal(byName.get('shared')?.error, undefined, 'a link into the workspace’s other skill folder is followed');
    assert.match(list.stderr, /error: data: .*data is a symbolic link to \/usr/);

    // Running one is a configuration error saying why — the file behind it is never read.
    const run = await cli(['run', 'evil'], ws);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /E_CONFIG.*evil\.md is a symbolic link to .*, outside the search root/);
    assert.doesNotMatch(run.stdout + run.stderr, /Evil\./);
    const validate = await cli(['validate'], ws);
    assert.equal(validate.code, 2);
    assert.match(validate.stdout, /skills\/downloaded\/data:1:1: error: data is a symbolic link to \/usr, .* \[link-outside\]/);
  });

  test('dot folders are scanned: a collection kept in .curated/ and .system/ (openai/skills) is found', async () => {
    const ws = folder({
      'skills/.curated/gh-fix-ci/SKILL.md': fm('name: gh-fix-ci\ndescription: Inspect failing PR checks.\nagent-apps:\n  model: { provider: replay, cassette: replay.yaml }', 'Look at the failing checks.\n'),
      'skills/.curated/gh-fix-ci/replay.yaml': "turns:\n  - invoke: |\n      ctx.manager.finish('checks inspected');\n",
      'skills/.system/skill-creator/SKILL.md': fm('name: skill-creator\ndescription: Guide for creating skills.', 'Create a skill.\n'),
      'skills/.experimental/create-plan/SKILL.md': fm('name: create-plan\ndescription: Create a concise plan.', 'Plan.\n'),
    });
    const list = await cli(['list', '--json'], ws);
    assert.equal(list.code, 0, list.stderr);
    const names = (JSON.parse(list.stdout) as ToolSummary[]).filter((e) => e.origin?.startsWith(`file://${ws}/`)).map((e) => e.name);
    assert.deepEqual(names.sort(), ['create-plan', 'gh-fix-ci', 'skill-creator']);
    const run = await cli(['run', 'gh-fix-ci'], ws);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'checks inspected\n');
  });

  test('a root that yields no skill while SKILL.md files lie below a folder the scan skips says so', async () => {
    const ws = folder({ 'skills/node_modules/some-pack/skills/helper/SKILL.md': fm('name: helper\ndescription: Shipped in a package.', 'Help.\n') });
    const list = await cli(['list'], ws);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stderr, /warn: .*skills yields no skill, but a SKILL\.md lies below node_modules, which the scan skips \(node_modules\/some-pack\/skills\/helper\/SKILL\.md\)/);
    assert.doesNotMatch(list.stdout, /helper/);
    // Once the root yields a skill, the note goes: it is there to explain an empty root.
    fs.mkdirSync(path.join(ws, 'skills/own'));
    fs.writeFileSync(path.join(ws, 'skills/own/SKILL.md'), fm('name: own\ndescription: The workspace’s own.', 'Own.\n'));
    const again = await cli(['list'], ws);
    assert.doesNotMatch(again.stderr, /yields no skill/);
  });
});

describe('SKILL.md bodies are plain Markdown: a reference to another skill is text', () => {
  /** The fixture, copied (runs write nothing into the repository), and each skill's body. */
  function superpowers(): { ws: string; bodies: Map<string, string>; echo: string } {
    const ws = tempDir('agent-apps-superpowers-');
    fs.cpSync(SUPERPOWERS, ws, { recursive: true });
    const echo = path.join(ws, 'echo.yaml');
    fs.writeFileSync(echo, ECHO);
    const bodies = new Map<string, string>();
    for (const name of fs.readdirSync(path.join(ws, 'skills'))) {
      const source = fs.readFileSync(path.join(ws, 'skills', name, 'SKILL.md'), 'utf8');
      bodies.set(name, source.slice(source.indexOf('\n---\n', 3) + 5));
    }
    return { ws, bodies, echo };
  }

  test('agent-apps run using-superpowers gives the model its own body, superpowers:brainstorming included — brainstorming never runs', async () => {
    const { ws, bodies, echo } = superpowers();
    assert.match(bodies.get('using-superpowers')!, /superpowers:brainstorming first/);
    const r = await cli(['--set', 'model.provider=replay', '--set', `model.cassette=${echo}`, 'run', 'using-superpowers'], ws);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), bodies.get('using-superpowers')!.trim());
    assert.doesNotMatch(r.stdout, /Brainstorming Ideas Into Designs/);
  });

  test('prompts/get of every superpowers-style skill returns its body as written, and no agent starts (no model is configured)', async (t) => {
    const { ws, bodies } = superpowers();
    const { client } = await connectStdio(t, { cwd: ws });
    const listed = (await client.listPrompts()).prompts.map((p) => p.name).sort();
    assert.deepEqual(listed, [...bodies.keys()].sort());
    for (const [name, body] of bodies) {
      const got = await client.getPrompt({ name });
      assert.equal(text({ content: got.messages.map((m) => m.content) }).trim(), body.trim(), name);
    }
  });

  test('our own NAME.md: a colon after a letter or digit is text, and a directive naming no tool stays as written — neither runs a skill', async () => {
    const marker = path.join(tempDir('agent-apps-marker-'), 'RAN');
    const body = [
      'Meet at 10:30 about :arg{name=topic}.',
      'First superpowers:brainstorming, then note:x and step:2.',
      'Unknown: :no-such-tool[a label]{a=1} and :Capital.',
      '::nothing-here{x=1}',
      '',
    ].join('\n');
    const ws = folder({
      'skills/meeting.md': fm('name: meeting\ndescription: Meeting notes.\nmetadata:\n  model: { provider: replay, cassette: meeting.yaml }\n  params: { type: object, properties: { topic: { type: string } } }', body),
      'skills/meeting.yaml': ECHO,
      'skills/brainstorming/SKILL.md': fm('name: brainstorming\ndescription: Would run an agent.', 'Brainstorm.\n'),
      'skills/x.skill.ts': tripwire('x', marker),
      'skills/step.skill.ts': tripwire('step', marker),
    });
    const r = await cli(['run', 'meeting', '--topic', 'rain'], ws);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, body.replace(':arg{name=topic}', 'rain'));
    assert.equal(fs.existsSync(marker), false, 'no skill ran as a directive');
  });
});

describe('`!` spans: an argument is one quoted word, never an option', () => {
  const git = (cwd: string, ...args: string[]) => {
    const r = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  };
  /** A git workspace with a SKILL.md that shows the last commit, as Claude Code's docs write it; and a file outside it the attack aims at. */
  function gitWorkspace(extra: Record<string, string> = {}): { ws: string; target: string; evil: string } {
    const ws = folder({
      'skills/git-last/SKILL.md': fm('name: git-last\ndescription: Show the last commit of a revision.\nargument-hint: "[revision]"\nallowed-tools: Bash(git log:*)\nagent-apps:\n  model: { provider: replay, cassette: replay.yaml }', 'The last commit: !`git log -n 1 $ARGUMENTS`\n'),
      'skills/git-last/replay.yaml': ECHO,
      ...extra,
    });
    git(ws, 'init', '-q');
    git(ws, 'commit', '-q', '--allow-empty', '-m', 'first');
    const target = path.join(tempDir('agent-apps-outside-'), 'written-by-git');
    return { ws, target, evil: `'--format=tformat:PWNED' --output=${target}` };
  }

  test('agent code allowed nothing but the skill cannot make its !`git log` write a file outside the workspace', async () => {
    const probe = (args: unknown) => `const out = await ctx.manager.invoke('git-last', { arguments: ${JSON.stringify(args)} });`;
    const setup = gitWorkspace();
    const { ws, target, evil } = setup;
    const attacks = [evil, ['--output=' + target], [`x' --output=${target} '`]];
    const invoke = attacks.map((a, i) => `${probe(a).replace('const out', `const out${i}`)}`).join('\n');
    fs.writeFileSync(path.join(ws, 'skills/reviewer.md'), fm('name: reviewer\ndescription: Reviews the last commit.\nmetadata:\n  allowed-tools: git-last\n  model: { provider: replay, cassette: reviewer.yaml }', 'Review the last commit.\n'));
    fs.writeFileSync(path.join(ws, 'skills/reviewer.yaml'), `turns:\n  - invoke: |\n${[...invoke.split('\n'), 'ctx.manager.finish([out0, out1, out2]);'].map((l) => '      ' + l).join('\n')}\n`);
    const r = await cli(['run', 'reviewer'], ws);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(fs.existsSync(target), false, `git wrote ${target}`);
    const [first, second, third] = JSON.parse(r.stdout) as string[];
    // Refused: the span stays as written, and a warn event names it and the argument.
    assert.equal(first, 'The last commit: !`git log -n 1 $ARGUMENTS`\n');
    assert.equal(second, 'The last commit: !`git log -n 1 $ARGUMENTS`\n');
    assert.match(r.stderr, /warn git-last: !`git log -n 1 \$ARGUMENTS` was not run: the argument "--output=.*written-by-git" starts with '-'/);
    // One quoted word: git reads `x' --output=… '` as one (unknown) revision, and writes nothing.
    assert.equal(third, 'The last commit: \n');
    assert.match(r.stderr, /warn git-last: !`git log -n 1 \$ARGUMENTS` exited with 128/);
  });

  test('a person running the skill with a revision still gets the command’s output', async () => {
    const { ws } = gitWorkspace();
    const r = await cli(['run', 'git-last', '--arguments', 'HEAD'], ws);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^The last commit: commit [0-9a-f]{40}\n[^]*first/);
    assert.equal(r.stderr, '');
  });

  test('prompts/get over MCP returns the span as written — never runs it — whatever the arguments', async (t) => {
    const { ws, target, evil } = gitWorkspace();
    const { client } = await connectStdio(t, { cwd: ws });
    for (const args of [{ arguments: evil }, { arguments: 'HEAD' }, {}] as Record<string, string>[]) {
      const got = await client.getPrompt({ name: 'git-last', arguments: args });
      assert.equal(text({ content: got.messages.map((m) => m.content) }), 'The last commit: !`git log -n 1 $ARGUMENTS`\n', JSON.stringify(args));
    }
    assert.equal(fs.existsSync(target), false, `git wrote ${target}`);
  });
});
