// SPEC §3 (skill files and references) and §4 (search paths): the loader through the public
// API, on the `greeter`, `vendor` and `broken` fixtures and throw-away workspaces.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigurationError, ToolNotFoundError, type Context } from '../src/index.ts';
import { bareRuntime, captureExpanded, fixture, runtimeAt, runtimeFor, settle, tempDir, workspace, writeFiles } from './helpers.ts';

const GREETER = fixture('greeter');
const BROKEN = fixture('broken');
const uri = (...p: string[]) => pathToFileURL(path.join(...p)).href;

// ——— the skill forms (§3) ———

test('a Markdown skill is named by its frontmatter and runs its body as the prompt', async (t) => {
  const rt = await runtimeFor(t, 'greeter');
  const d = await rt.describe('greet');
  assert.equal(d.tool.name, 'greet');
  assert.equal(d.tool.description, 'Greet someone by name.');
  assert.deepEqual(d.tool.params, { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] });
  assert.deepEqual(d.tool.returns, { type: 'string' });
  assert.deepEqual(d.tool.tags, ['demo']);
  assert.equal(d.origin.uri, uri(GREETER, 'skills/greet.md'));
  assert.equal(await rt.invoke('greet', { name: 'Ada' }, { context: { locals: { middleware: captureExpanded } } }), 'Say hello to Ada in a warm tone.\n');
});

test('the frontmatter name wins over the file stem', async (t) => {
  const rt = await runtimeFor(t, 'greeter');
  assert.equal((await rt.describe('welcome')).origin.uri, uri(GREETER, 'skills/renamed.md'));
  assert.equal((await settle(rt.invoke('renamed'))).error?.code, 'E_TOOL_NOT_FOUND');
});

test('a Markdown file without frontmatter is a skill named by its stem', async (t) => {
  const rt = await runtimeFor(t, 'greeter');
  const d = await rt.describe('farewell');
  assert.equal(d.tool.name, 'farewell');
  assert.equal(d.tool.description, undefined);
});

test('a Markdown document whose stem is not a skill name (README.md) is not a skill', async (t) => {
  const rt = await runtimeFor(t, 'greeter');
  const names = (await rt.list({ all: true })).map((s) => s.name);
  assert.ok(!names.includes('README') && !names.includes('readme'));
});

test('a code skill (.skill.ts) exports frontmatter and a default function, importing from agent-apps', async (t) => {
  const rt = await runtimeFor(t, 'greeter');
  assert.equal(await rt.invoke('shout', { text: 'hey' }), 'HEY');
  const d = await rt.describe('shout');
  assert.equal(d.tool.description, 'Upper-cases a text.');
  assert.equal(d.origin.uri, uri(GREETER, 'skills/shout.skill.ts'));
});

test('.skill.js and .skill.mjs code skills load too, including the defineSkill default export', async (t) => {
  const rt = await runtimeFor(t, 'greeter');
  assert.equal(await rt.invoke('word-count', { text: 'one two  three' }), 3);
  assert.equal(await rt.invoke('slugify', { title: 'Hello, World!' }), 'hello-world');
  assert.equal((await rt.describe('slugify')).tool.description, 'Turns a title into a URL slug (defineSkill form).');
});

test('an Agent Skills folder (NAME/SKILL.md) runs unchanged: top-level description and allowed-tools', async (t) => {
  const rt = await runtimeFor(t, 'greeter');
  const d = await rt.describe('research');
  assert.equal(d.tool.name, 'research');
  assert.equal(d.tool.description, 'Research a topic and write a short brief (an Anthropic Agent Skills folder).');
  assert.equal(d.tool.allowedTools, 'file-read skill-list');
  assert.equal(d.origin.uri, uri(GREETER, 'skills/research/SKILL.md'));
});

test('files inside an Agent Skills folder are resources, not skills', async (t) => {
  const rt = await runtimeFor(t, 'greeter');
  assert.ok(!(await rt.list({ all: true })).some((s) => s.name === 'checklist'));
});

test('a SKILL.md folder without a frontmatter name takes the folder’s name', async (t) => {
  const dir = workspace(t, { 'skills/code-review/SKILL.md': '---\ndescription: Review a diff.\n---\nReview it.\n' });
  const rt = await runtimeAt(t, dir);
  const d = await rt.describe('code-review');
  assert.equal(d.tool.name, 'code-review');
  assert.equal((await rt.list()).find((s) => s.name === 'code-review')?.kind, 'skill-folder');
});

test('skills in sub-folders keep flat names', async (t) => {
  const rt = await runtimeFor(t, 'greeter');
  assert.equal((await rt.describe('standup')).origin.uri, uri(GREETER, 'skills/team/standup.md'));
  assert.equal(await rt.invoke('helper'), 'helped');
});

test('run.tool is built from the frontmatter: name, description, params, returns, visibility, allowedTools, role, tags', async (t) => {
  const dir = workspace(t, {
    'skills/tidy.md': [
      '---',
      'name: tidy',
      'description: Tidy the repo.',
      'metadata:',
      '  params: { type: object }',
      '  returns: { type: string }',
      '  allowed-tools: "file-read event-*"',
      '  visibility: hidden',
      '  role: middleware',
      '  tags: [chores]',
      '---',
      'Tidy.',
    ].join('\n'),
  });
  const rt = await runtimeAt(t, dir);
  assert.deepEqual((await rt.describe('tidy')).tool, {
    name: 'tidy',
    description: 'Tidy the repo.',
    params: { type: 'object' },
    returns: { type: 'string' },
    visibility: 'hidden',
    allowedTools: 'file-read event-*',
    role: 'middleware',
    tags: ['chores'],
  });
});

test('node_modules and .git inside a search root are not scanned; other dot-folders are, dot files are not', async (t) => {
  const dir = workspace(t, {
    'skills/node_modules/pkg/vendored.skill.ts': "export default () => 'vendored';\n",
    'skills/.git/hooks/hook.md': '---\nname: hook\n---\nGit.\n',
    'skills/.drafts/draft.md': '---\nname: draft\n---\nWIP\n',
    'skills/.hidden.md': '---\nname: hidden-file\n---\nDot file.\n',
    'skills/real.skill.ts': "export default () => 'real';\n",
  });
  const rt = await runtimeAt(t, dir);
  const names = (await rt.list({ all: true })).map((s) => s.name);
  assert.ok(names.includes('real') && names.includes('draft'), names.join(' '));
  assert.ok(!names.includes('vendored') && !names.includes('hook') && !names.includes('hidden-file'), names.join(' '));
});

test('a Markdown skill with CRLF line endings loads like any other', async (t) => {
  const dir = workspace(t, { 'skills/dos.md': '---\r\nname: windows-notes\r\ndescription: Written on Windows.\r\n---\r\nHello.\r\n' });
  const rt = await runtimeAt(t, dir);
  const d = await rt.describe('windows-notes');
  assert.equal(d.tool.description, 'Written on Windows.');
  assert.equal(await rt.invoke('windows-notes', {}, { context: { locals: { middleware: captureExpanded } } }), 'Hello.\n');
});

test('two main skills in one folder: the second is listed as broken', async (t) => {
  const dir = workspace(t, {
    'skills/main.md': '---\nname: main\n---\nRoot.\n',
    'skills/main.skill.ts': "export const frontmatter = { name: 'main' };\nexport default () => 'code main';\n",
  });
  const rt = await runtimeAt(t, dir);
  const broken = (await rt.list({ all: true })).filter((s) => s.name === 'main' && s.error);
  assert.equal(broken.length, 1);
  assert.match(String(broken[0]!.error), /duplicate 'main'/);
});

test('describe of an unknown skill rejects with ToolNotFoundError', async (t) => {
  const rt = await runtimeFor(t, 'greeter');
  await assert.rejects(rt.describe('gret'), (err: Error & { code?: string }) => err.code === 'E_TOOL_NOT_FOUND' && /greet/.test(err.message));
});

// ——— list ———

test('list shows name, kind, description and origin; hidden skills only with all', async (t) => {
  const rt = await runtimeFor(t, 'greeter');
  const list = await rt.list();
  const byName = new Map(list.map((s) => [s.name, s]));
  assert.deepEqual(byName.get('greet'), { name: 'greet', kind: 'markdown', origin: uri(GREETER, 'skills/greet.md'), visibility: 'public', description: 'Greet someone by name.' });
  assert.equal(byName.get('shout')?.kind, 'code');
  assert.equal(byName.get('research')?.kind, 'skill-folder');
  assert.ok(!byName.has('helper'), 'hidden');
  assert.ok(!byName.has('validate-args'), 'hidden built-in middleware');
  assert.ok(byName.has('file-read'), 'public built-ins are listed');
  const all = await rt.list({ all: true });
  assert.equal(all.find((s) => s.name === 'helper')?.visibility, 'hidden');
  assert.ok(all.some((s) => s.name === 'validate-args'));
});

// ——— main skills (§4, §6.1) ———

test('the root-level main of a search root is listed and invocable as main', async (t) => {
  const rt = await runtimeFor(t, 'greeter');
  const mains = (await rt.list({ all: true })).filter((s) => s.name === 'main');
  assert.equal(mains.length, 1);
  assert.equal(mains[0]!.origin, uri(GREETER, 'skills/main.md'));
  assert.equal((await rt.describe('main')).tool.description, "The greeter workspace's entry point.");
});

test('a main in a sub-folder is that folder’s authority: not listed, not invocable as main', async (t) => {
  const rt = await runtimeFor(t, 'greeter');
  assert.ok(!(await rt.list({ all: true })).some((s) => s.origin === uri(GREETER, 'skills/team/main.md')));
  assert.equal((await rt.describe('main')).origin.uri, uri(GREETER, 'skills/main.md'));
  // but it is the authority of the tools beside it
  assert.equal((await rt.describe('standup')).metadata.tone, 'brisk');
  assert.equal((await rt.describe('greet')).metadata.tone, 'warm');
});

test('the library’s main is hidden: a workspace without main has no skill named main', async (t) => {
  const rt = await bareRuntime(t);
  const { error } = await settle(rt.invoke('main'));
  assert.ok(error instanceof ToolNotFoundError);
  assert.ok(!(await rt.list({ all: true })).some((s) => s.name === 'main'));
});

// ——— search paths and shadowing (§4) ———

test('the workspace is the nearest ancestor of the cwd holding skills/', async (t) => {
  const rt = await runtimeAt(t, path.join(GREETER, 'docs'));
  assert.equal(rt.root.locals.config.workspace, GREETER);
  assert.equal(rt.root.locals.config.cwd, path.join(GREETER, 'docs'));
  assert.equal(await rt.invoke('shout', { text: 'found' }), 'FOUND');
});

test('without a skills/ folder above it, the cwd is the workspace', async (t) => {
  const dir = tempDir(t);
  const rt = await runtimeAt(t, dir);
  assert.equal(rt.root.locals.config.workspace, dir);
});

test('the default search order: --path, AGENT_APPS_PATH, workspace skills/, .agents/skills/, .claude/skills/, ~/.agent-apps/skills, ~/.agents/skills, library', async (t) => {
  const extra = tempDir(t);
  const envDir = tempDir(t);
  process.env.AGENT_APPS_PATH = envDir;
  t.after(() => delete process.env.AGENT_APPS_PATH);
  const rt = await runtimeFor(t, 'greeter', { paths: [extra] });
  const paths = rt.root.locals.config.paths;
  assert.equal(paths[0], extra);
  assert.equal(paths[1], envDir);
  assert.equal(paths[2], path.join(GREETER, 'skills'));
  assert.equal(paths[3], path.join(GREETER, '.agents', 'skills'));
  assert.equal(paths[4], path.join(GREETER, '.claude', 'skills'));
  assert.equal(paths[5], path.join(process.env.AGENT_APPS_HOME!, 'skills'));
  assert.equal(paths[6], path.join(process.env.AGENT_APPS_AGENTS_HOME!, 'skills'));
  assert.equal(paths.length, 8);
  assert.match(paths.at(-1)!, /skills$/);
  assert.ok(fs.existsSync(path.join(paths.at(-1)!, 'main.md')), 'the library is last');
});

test('the first search root that holds a name wins (shadowing)', async (t) => {
  const plain = await runtimeFor(t, 'greeter');
  assert.equal((await plain.describe('greet')).tool.description, 'Greet someone by name.');
  const shadowed = await runtimeFor(t, 'greeter', { paths: [fixture('vendor', 'skills')] });
  const d = await shadowed.describe('greet');
  assert.equal(d.origin.uri, uri(fixture('vendor'), 'skills/greet.md'));
  assert.equal((await shadowed.list()).filter((s) => s.name === 'greet').length, 1, 'a shadowed skill is listed once');
});

test('AGENT_APPS_PATH roots shadow the workspace', async (t) => {
  process.env.AGENT_APPS_PATH = fixture('vendor', 'skills');
  t.after(() => delete process.env.AGENT_APPS_PATH);
  const rt = await runtimeFor(t, 'greeter');
  assert.equal((await rt.describe('greet')).tool.description, "The vendor's greeting (shadows the workspace's when its root comes first).");
});

test('a workspace skill shadows a library skill of the same name', async (t) => {
  const dir = workspace(t, { 'skills/file-read.skill.ts': "export const frontmatter = { name: 'file-read', description: 'project override' };\nexport default () => 'project file-read';\n" });
  const rt = await runtimeAt(t, dir);
  assert.equal(await rt.invoke('file-read', { path: 'x' }), 'project file-read');
});

test('a programmatic tool wins over files of the same name', async (t) => {
  const rt = await runtimeFor(t, 'greeter');
  rt.register({ name: 'shout', fn: () => 'programmatic' });
  assert.equal(await rt.invoke('shout', { text: 'x' }), 'programmatic');
});

// ——— the agent-apps specifier ———

test('a skill outside the repository imports the bare specifier agent-apps and gets this runtime', async (t) => {
  const dir = workspace(t, {
    'skills/guard.skill.ts': [
      "import { ConfigurationError, ctxTarget, type Context } from 'agent-apps';",
      "export const frontmatter = { name: 'guard', metadata: { role: 'middleware' } };",
      'export default async function (ctx: Context) {',
      '  const target = ctxTarget(ctx);',
      "  if (target.args.bad) throw new ConfigurationError('guard says no');",
      '  return target.manager.next();',
      '}',
    ].join('\n'),
    'skills/guarded.skill.ts': "export const frontmatter = { name: 'guarded', metadata: { guard: true } };\nexport default () => 'passed';\n",
  });
  assert.ok(!dir.startsWith(path.resolve(GREETER, '..', '..', '..')), 'outside the repository');
  const rt = await runtimeAt(t, dir);
  assert.equal(await rt.invoke('guarded'), 'passed');
  const { error } = await settle(rt.invoke('guarded', { bad: true }));
  assert.ok(error instanceof ConfigurationError, 'the skill’s ConfigurationError is the one this test imported');
});

test('.skill.ts files load as ES modules even under a package.json that says commonjs', async (t) => {
  const dir = workspace(t, {
    'package.json': '{ "type": "commonjs" }',
    'skills/esm.skill.ts': "import type { Context } from 'agent-apps';\nexport default (ctx: Context) => `esm ${ctx.run.tool.name}`;\n",
  });
  const rt = await runtimeAt(t, dir);
  assert.equal(await rt.invoke('esm'), 'esm esm');
});

test('.ts helpers a skill imports (and their own imports) load as ES modules under a commonjs package.json', async (t) => {
  const dir = workspace(t, {
    'package.json': '{ "type": "commonjs" }',
    'skills/lib/words.ts': "import { upper } from './upper.ts';\nexport const shout = (s: string): string => upper(s) + '!';\n",
    'skills/lib/upper.ts': 'export const upper = (s: string): string => s.toUpperCase();\n',
    'skills/loud.skill.ts': "import { shout } from './lib/words.ts';\nexport default (_ctx: unknown, a: { text: string }) => shout(a.text);\n",
  });
  const rt = await runtimeAt(t, dir);
  assert.equal(await rt.invoke('loud', { text: 'hey' }), 'HEY!');
});

test('a .skill.ts that type stripping cannot run (an enum) still loads', async (t) => {
  const dir = workspace(t, { 'skills/colours.skill.ts': "enum Colour { Red = 'red', Blue = 'blue' }\nexport default () => Colour.Blue;\n" });
  const rt = await runtimeAt(t, dir);
  assert.equal(await rt.invoke('colours'), 'blue');
});

// ——— configuration errors (§3) ———

test('malformed YAML frontmatter is a configuration error naming the file and line', async (t) => {
  const rt = await runtimeFor(t, 'broken');
  const { error } = await settle(rt.invoke('bad-yaml'));
  assert.ok(error instanceof ConfigurationError);
  assert.equal(error.code, 'E_CONFIG');
  const m = /bad-yaml\.md:(\d+)/.exec(error.message);
  assert.ok(m, error.message);
  assert.ok(Number(m[1]) >= 5 && Number(m[1]) <= 6, `line ${m[1]} is where the flow sequence breaks`);
  assert.equal(error.place?.file, path.join(BROKEN, 'skills/bad-yaml.md'));
  assert.ok(!/\n\s+at /.test(error.message), 'no stack trace in the message');
});

test('a duplicate name in one search root is a configuration error naming both files', async (t) => {
  const rt = await runtimeFor(t, 'broken');
  const { error } = await settle(rt.invoke('twin'));
  assert.equal(error?.code, 'E_CONFIG');
  assert.match(error.message, /twin\.md/);
  assert.match(error.message, /more\/twin\.skill\.ts/);
});

test('both duplicates are listed as broken with the error', async (t) => {
  const rt = await runtimeFor(t, 'broken');
  const twins = (await rt.list()).filter((s) => s.name === 'twin');
  assert.equal(twins.length, 2);
  assert.deepEqual(twins.map((s) => s.origin).sort(), [uri(BROKEN, 'skills/more/twin.skill.ts'), uri(BROKEN, 'skills/twin.md')]);
  for (const s of twins) assert.match(String(s.error), /duplicate skill name 'twin'/);
});

test('a code skill that fails to import is a configuration error naming the file', async (t) => {
  const rt = await runtimeFor(t, 'broken');
  const { error } = await settle(rt.invoke('explodes'));
  assert.ok(error instanceof ConfigurationError);
  assert.ok(error.message.includes(path.join(BROKEN, 'skills/explodes.skill.ts')), error.message);
  assert.match(error.message, /missing OPENWEATHER credentials/);
});

test('after a broken skill fails, the runtime keeps working', async (t) => {
  const rt = await runtimeFor(t, 'broken');
  await settle(rt.invoke('explodes'));
  await settle(rt.invoke('bad-yaml'));
  assert.equal((await rt.describe('fine')).tool.description, 'A perfectly good skill next to broken ones.');
  rt.register({ name: 'ok', fn: () => 'still working' });
  assert.equal(await rt.invoke('ok'), 'still working');
  // the same error again, not a crash
  assert.equal((await settle(rt.invoke('explodes'))).error?.code, 'E_CONFIG');
});

test('a code skill without a default function is a configuration error', async (t) => {
  const rt = await runtimeFor(t, 'broken');
  const { error } = await settle(rt.invoke('no-default'));
  assert.equal(error?.code, 'E_CONFIG');
  assert.match(error.message, /no-default\.skill\.ts/);
  assert.match(error.message, /export default/);
});

test('an invalid frontmatter value is a configuration error naming the file and key', async (t) => {
  const rt = await runtimeFor(t, 'broken');
  const { error } = await settle(rt.invoke('bad-visibility'));
  assert.equal(error?.code, 'E_CONFIG');
  assert.match(error.message, /bad-visibility\.md/);
  assert.match(error.message, /visibility/);
});

test('list shows every broken skill with its error, next to the good ones', async (t) => {
  const rt = await runtimeFor(t, 'broken');
  const list = await rt.list();
  const broken = new Map(list.filter((s) => s.error).map((s) => [path.basename(String(s.origin)), s.error!]));
  for (const f of ['bad-yaml.md', 'explodes.skill.ts', 'no-default.skill.ts', 'bad-visibility.md', 'Bad_Name.md', 'twin.md', 'twin.skill.ts']) assert.ok(broken.has(f), `${f} listed as broken`);
  assert.match(broken.get('Bad_Name.md')!, /invalid skill name/);
  assert.equal(list.find((s) => s.name === 'fine')?.error, undefined);
});

// ——— caching and refresh (§4) ———

test('loaded tools are cached: a code skill is imported once, not per invocation', async (t) => {
  const dir = workspace(t, { 'skills/counted.skill.ts': "(globalThis as any).__countedImports = ((globalThis as any).__countedImports ?? 0) + 1;\nexport default () => (globalThis as any).__countedImports;\n" });
  const rt = await runtimeAt(t, dir);
  const first = (await rt.invoke('counted')) as number;
  assert.equal(await rt.invoke('counted'), first);
  assert.equal(await rt.invoke('counted'), first);
});

test('refresh() re-resolves: a changed file is reloaded, an unchanged one is not', async (t) => {
  const dir = workspace(t, { 'skills/version.skill.ts': "(globalThis as any).__versionImports = ((globalThis as any).__versionImports ?? 0) + 1;\nexport const frontmatter = { description: 'v1' };\nexport default () => 'v1';\n" });
  const file = path.join(dir, 'skills/version.skill.ts');
  const rt = await runtimeAt(t, dir);
  assert.equal(await rt.invoke('version'), 'v1');
  const imports = (globalThis as { __versionImports?: number }).__versionImports;
  await rt.root.manager.refresh();
  assert.equal(await rt.invoke('version'), 'v1');
  assert.equal((globalThis as { __versionImports?: number }).__versionImports, imports, 'same mtime: no re-import');
  fs.writeFileSync(file, "export const frontmatter = { description: 'v2' };\nexport default () => 'v2';\n");
  const later = new Date(Date.now() + 5000);
  fs.utimesSync(file, later, later);
  await rt.root.manager.refresh();
  assert.equal(await rt.invoke('version'), 'v2');
  assert.equal((await rt.describe('version')).tool.description, 'v2');
});

test('refresh() finds skills added to a search root after start', async (t) => {
  const dir = workspace(t, { 'skills/first.skill.ts': "export default () => 'first';\n" });
  const rt = await runtimeAt(t, dir);
  assert.equal(await rt.invoke('first'), 'first');
  writeFiles(dir, { 'skills/second.skill.ts': "export default () => 'second';\n" });
  await rt.root.manager.refresh();
  assert.equal(await rt.invoke('second'), 'second');
});

test('ctx.manager.refresh() inside a skill updates its run.tool from the file', async (t) => {
  const dir = workspace(t, {
    'skills/self-update.skill.ts': [
      "import fs from 'node:fs';",
      "import type { Context } from 'agent-apps';",
      "export const frontmatter = { description: 'before' };",
      'export default async function (ctx: Context, args: { file: string }) {',
      '  const text = fs.readFileSync(args.file, "utf8").replace("\'before\'", "\'after\'");',
      '  fs.writeFileSync(args.file, text);',
      '  const later = new Date(Date.now() + 5000);',
      '  fs.utimesSync(args.file, later, later);',
      '  await ctx.manager.refresh();',
      '  return ctx.run.tool.description;',
      '}',
    ].join('\n'),
  });
  const rt = await runtimeAt(t, dir);
  assert.equal(await rt.invoke('self-update', { file: path.join(dir, 'skills/self-update.skill.ts') }), 'after');
});

// ——— refs that are not names ———

test('an mcp:// ref without MCP support is a clear ToolNotFoundError, not a crash', async (t) => {
  const rt = await bareRuntime(t);
  const { error } = await settle(rt.invoke('mcp://github/create-issue'));
  assert.equal(error?.code, 'E_TOOL_NOT_FOUND');
  assert.match(error.message, /mcp/i);
});

test('a ref that is neither a name nor a path suggests near names', async (t) => {
  const rt = await runtimeFor(t, 'greeter');
  const { error } = await settle(rt.invoke('Greet'));
  assert.ok(error instanceof ToolNotFoundError);
  assert.ok(error.suggestions.includes('greet'), String(error.suggestions));
});

test('a path ref to a Markdown skill runs through its authority chain like a name would', async (t) => {
  const rt = await runtimeFor(t, 'greeter');
  let tone: unknown;
  await rt.invoke('./skills/team/standup.md', {}, { context: { locals: { middleware: { peek: { after: ['directives'], before: ['execute'], fn: (c: Context) => ((tone = c.run.middleware.tone), 'stop') } } } } });
  assert.equal(tone, 'brisk');
});
