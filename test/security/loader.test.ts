// SPEC §3.1 and §15 ("Loading never hangs"; "a createRuntime()/close() cycle leaves nothing
// behind") — issue 7, items 8, 10 and 11: the loader against skill files that hang, are not
// regular files, are too big or are badly named, and module instances across runtimes. Real
// files, the public API and the CLI; each test names the rule it defends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { AgentAppsError, type ToolSummary } from '../../src/index.ts';
import { REPO, runtimeAt, settle, workspace } from '../helpers.ts';

// Read by the loader at each import: a skill that never settles costs the tests 300 ms, not 10 s.
const TIMEOUT_MS = 300;
process.env.AGENT_APPS_IMPORT_TIMEOUT_MS = String(TIMEOUT_MS);

const BIN = path.join(REPO, 'bin', 'agent-apps.js');
/** A code skill whose top-level await never settles (it records that it started evaluating). */
const hangs = (name: string) =>
  `(globalThis as any).__imported ??= [];\n(globalThis as any).__imported.push('${name}');\nexport const frontmatter = { name: '${name}', description: 'never finishes loading' };\nawait new Promise(() => {});\nexport default () => 'unreachable';\n`;
const HANGS = hangs('hangs');
const OK = "export const frontmatter = { name: 'ok', description: 'a good skill' };\nexport default () => 'ok';\n";
/** A code skill that records, process-wide, that its module was evaluated. */
const spy = (name: string) => `(globalThis as any).__imported ??= [];\n(globalThis as any).__imported.push('${name}');\nexport const frontmatter = { name: '${name}', description: 'spy' };\nexport default () => '${name}';\n`;
const imported = () => ((globalThis as { __imported?: string[] }).__imported ?? []).slice();

const byFile = (list: ToolSummary[]) => new Map(list.map((s) => [path.basename(String(s.origin)), s]));

function cli(args: string[], cwd: string, timeoutMs = 20_000): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, AGENT_APPS_IMPORT_TIMEOUT_MS: String(TIMEOUT_MS), NO_COLOR: '1' };
    for (const key of ['AGENT_APPS_PATH', 'FORCE_COLOR', 'NODE_OPTIONS', 'NODE_TEST_CONTEXT']) delete env[key];
    const started = Date.now();
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    // A CLI that does not exit is the failure under test: kill it and report.
    const killer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

// ——— loading never hangs (§15) ———

test('a code skill whose import never settles is broken with E_CONFIG naming the file; the other skills still load and run', { timeout: 15_000 }, async (t) => {
  const dir = workspace(t, { 'skills/hangs.skill.ts': HANGS, 'skills/ok.skill.ts': OK });
  const rt = await runtimeAt(t, dir);
  const list = byFile(await rt.list());
  const broken = list.get('hangs.skill.ts');
  assert.ok(broken?.error, 'the hanging skill is listed, with its error');
  assert.match(broken.error, new RegExp(`hangs\\.skill\\.ts: import did not settle within ${TIMEOUT_MS} ms \\(AGENT_APPS_IMPORT_TIMEOUT_MS\\)`));
  assert.equal(list.get('ok.skill.ts')?.error, undefined);
  const { error } = await settle(rt.invoke('hangs'));
  assert.ok(error instanceof AgentAppsError);
  assert.equal(error.code, 'E_CONFIG');
  assert.match(error.message, /hangs\.skill\.ts/);
  assert.equal(await rt.invoke('ok'), 'ok');
});

test('`list` shows a never-settling skill as broken, exits 2 and ends; running it is E_CONFIG (exit 2)', { timeout: 60_000 }, async (t) => {
  const dir = workspace(t, { 'skills/hangs.skill.ts': HANGS, 'skills/ok.skill.ts': OK });
  const [list, json, run] = await Promise.all([cli(['list'], dir), cli(['list', '--json'], dir), cli(['run', 'hangs'], dir)]);
  assert.equal(list.code, 2, list.stderr);
  assert.match(list.stderr, /hangs: .*hangs\.skill\.ts: import did not settle within 300 ms/);
  assert.match(list.stdout, /^ok\s+code\s+a good skill/m);
  assert.equal(json.code, 2, json.stderr);
  const entry = (JSON.parse(json.stdout) as ToolSummary[]).find((s) => s.name === 'hangs');
  assert.match(String(entry?.error), /hangs\.skill\.ts: import did not settle/);
  assert.equal(run.code, 2, run.stderr);
  assert.match(run.stderr, /hangs\.skill\.ts: import did not settle/);
  assert.doesNotMatch(run.stderr + list.stderr, /^\s+at /m, 'no stack trace');
});

// ——— discovery imports only what the agent may call (§15) ———

const ASKER = (allowed: string | null, cassette: string) =>
  `---\nname: asker\ndescription: an agent skill\nmetadata:\n${allowed === null ? '' : `  allowed-tools: ${allowed}\n`}  model:\n    provider: replay\n    cassette: ${cassette}\n---\nDo it.\n`;
const CASSETTE = (code: string) => `turns:\n  - text: go\n    invoke: |\n${code
  .split('\n')
  .map((l) => '      ' + l)
  .join('\n')}\n`;

test("an agent's discovery does not import skills its allowed-tools exclude (a never-settling one included)", { timeout: 30_000 }, async (t) => {
  const dir = workspace(t, {
    'skills/hangs-a.skill.ts': hangs('hangs-a'),
    'skills/spied-a.skill.ts': spy('spied-a'),
    'skills/wanted-a.skill.ts': spy('wanted-a'),
    'skills/asker.md': ASKER('wanted-a', 'asker.cassette.yaml'),
    'skills/asker.cassette.yaml': CASSETTE("ctx.manager.finish(await ctx.manager.invoke('wanted-a', {}));"),
  });
  const rt = await runtimeAt(t, dir);
  assert.equal(await rt.invoke('asker', {}), 'wanted-a');
  assert.ok(imported().includes('wanted-a'));
  for (const name of ['spied-a', 'hangs-a']) assert.ok(!imported().includes(name), `${name}, outside allowed-tools, was imported by discovery`);
});

test('discovery mode (no allowed-tools) imports no workspace skill up front, and skill-list from agent code imports only callable ones', { timeout: 30_000 }, async (t) => {
  const dir = workspace(t, {
    'skills/hangs-b.skill.ts': hangs('hangs-b'),
    'skills/spied-b.skill.ts': spy('spied-b'),
    'skills/free-b.skill.ts': spy('free-b'),
    'skills/asker.md': ASKER(null, 'asker.cassette.yaml'),
    'skills/asker.cassette.yaml': CASSETTE("ctx.manager.finish('done');"),
    'skills/lister.md': ASKER('skill-list free-b', 'lister.cassette.yaml').replace('name: asker', 'name: lister'),
    'skills/lister.cassette.yaml': CASSETTE("const l = await ctx.manager.invoke('skill-list', {});\nctx.manager.finish(l.map((s) => s.name + (s.error ? '!' : '')).sort());"),
  });
  const rt = await runtimeAt(t, dir);
  assert.equal(await rt.invoke('asker', {}), 'done');
  for (const name of ['spied-b', 'free-b', 'hangs-b']) assert.ok(!imported().includes(name), `discovery imported ${name}`);
  assert.deepEqual(await rt.invoke('lister', {}), ['free-b', 'skill-list']);
  assert.ok(imported().includes('free-b'));
  for (const name of ['spied-b', 'hangs-b']) assert.ok(!imported().includes(name), `skill-list imported ${name}, which the agent may not call`);
});

// ——— skill files that are not regular files (§15) ———

// In a child process (the CLI) with a kill timer: code that opens a FIFO blocks its whole thread,
// and one that reads /dev/zero eats memory without end — a regression must fail, not hang.
test('`list` shows a FIFO and /dev/zero symlinks named like skills as broken, naming them, and ends; running one is E_CONFIG (exit 2)', { timeout: 60_000, skip: process.platform === 'win32' }, async (t) => {
  const dir = workspace(t, { 'skills/ok.skill.ts': OK });
  const skills = path.join(dir, 'skills');
  execFileSync('mkfifo', [path.join(skills, 'pipe.md')]);
  fs.symlinkSync(path.join(skills, 'pipe.md'), path.join(skills, 'pipe-link.skill.ts'));
  fs.symlinkSync('/dev/zero', path.join(skills, 'zero.md'));
  const [list, runZero, runPath, runOk] = await Promise.all([cli(['list', '--all', '--json'], dir), cli(['run', 'zero'], dir), cli(['run', './skills/pipe-link.skill.ts'], dir), cli(['run', 'ok'], dir)]);
  assert.equal(list.code, 2, `list exit ${list.code} after ${list.ms} ms: ${list.stderr}`);
  const byName = byFile(JSON.parse(list.stdout) as ToolSummary[]);
  assert.match(String(byName.get('pipe.md')?.error), /pipe\.md is not a regular file \(a FIFO\)/);
  assert.match(String(byName.get('pipe-link.skill.ts')?.error), /pipe-link\.skill\.ts is not a regular file \(a FIFO\)/);
  // A link out of the search root is never followed: broken for that, whatever it points to.
  assert.match(String(byName.get('zero.md')?.error), /zero\.md is a symbolic link to \/dev\/zero, outside the search root/);
  assert.equal(runZero.code, 2, runZero.stderr);
  assert.match(runZero.stderr, /zero\.md is a symbolic link to \/dev\/zero/);
  assert.equal(runPath.code, 2, runPath.stderr);
  assert.match(runPath.stderr, /pipe-link\.skill\.ts is not a regular file/);
  assert.equal(runOk.code, 0, runOk.stderr);
  assert.equal(runOk.stdout.trim(), 'ok');
});

test('directories named like skill files (x.md, y.skill.ts, a symlink to a directory) are broken with E_CONFIG naming them, never a raw EISDIR', { skip: process.platform === 'win32' }, async (t) => {
  // The link's target is inside the search root: a link out of it is broken for that reason alone.
  const dir = workspace(t, { 'skills/ok.skill.ts': OK, 'skills/dir.md/notes.txt': 'x', 'skills/tree.skill.ts/notes.txt': 'x', 'skills/elsewhere/notes.txt': 'x' });
  fs.symlinkSync(path.join(dir, 'skills', 'elsewhere'), path.join(dir, 'skills', 'link.md'));
  const rt = await runtimeAt(t, dir);
  const list = byFile(await rt.list({ all: true }));
  assert.match(String(list.get('dir.md')?.error), /dir\.md is not a regular file \(a directory\)/);
  assert.match(String(list.get('tree.skill.ts')?.error), /tree\.skill\.ts is not a regular file \(a directory\)/);
  assert.match(String(list.get('link.md')?.error), /link\.md is not a regular file \(a directory\)/);
  for (const name of ['dir', 'tree', 'link']) {
    const { error } = await settle(rt.invoke(name));
    assert.equal((error as AgentAppsError | undefined)?.code, 'E_CONFIG', `${name}: ${String(error)}`);
    assert.match(String(error), new RegExp(`${name}\\.(md|skill\\.ts) is not a regular file`));
    assert.doesNotMatch(String(error), /EISDIR/);
  }
  assert.equal(await rt.invoke('ok'), 'ok');
});

// ——— size caps (§3.1) ———

test('a skill file over 5 MiB is broken (E_CONFIG naming the file and the limit), and a big code skill is not imported', { timeout: 15_000 }, async (t) => {
  const pad = (n: number) => '\n<!-- ' + 'x'.repeat(n) + ' -->\n';
  const dir = workspace(t, {
    'skills/huge.md': '---\nname: huge\ndescription: too big\n---\nHello.' + pad(5 * 1024 * 1024),
    'skills/huge-code.skill.ts': spy('huge-code') + '// ' + 'x'.repeat(5 * 1024 * 1024) + '\n',
    'skills/ok.skill.ts': OK,
  });
  const rt = await runtimeAt(t, dir);
  const list = byFile(await rt.list());
  assert.match(String(list.get('huge.md')?.error), /huge\.md is 5 MiB, over the 5 MiB limit for a skill file/);
  assert.match(String(list.get('huge-code.skill.ts')?.error), /huge-code\.skill\.ts is 5 MiB, over the 5 MiB limit/);
  assert.equal((await settle(rt.invoke('huge'))).error?.code, 'E_CONFIG');
  assert.ok(!imported().includes('huge-code'), 'an over-size code skill was imported');
});

test('frontmatter over 1 MiB is broken (E_CONFIG naming the file and the limit)', async (t) => {
  const long = 'y'.repeat(1024 * 1024 + 10);
  const dir = workspace(t, {
    'skills/fat.md': `---\nname: fat\ndescription: ${long}\n---\nHello.\n`,
    'skills/fat-code.skill.ts': `export const frontmatter = { name: 'fat-code', description: '${long}' };\nexport default () => 1;\n`,
  });
  const rt = await runtimeAt(t, dir);
  const list = byFile(await rt.list());
  assert.match(String(list.get('fat.md')?.error), /fat\.md: frontmatter is 1 MiB, over the 1 MiB limit/);
  assert.match(String(list.get('fat-code.skill.ts')?.error), /fat-code\.skill\.ts: frontmatter is 1 MiB, over the 1 MiB limit/);
  const { error } = await settle(rt.invoke('fat'));
  assert.equal(error?.code, 'E_CONFIG');
});

// ——— names (§3.1) ———

test('names are ASCII [a-z0-9-] without a leading or trailing "-": a Unicode stem or name, or an edge dash, is listed as broken saying so', async (t) => {
  const dir = workspace(t, {
    'skills/héllo.md': '---\ndescription: a Unicode stem and no name\n---\nHi.\n',
    'skills/unicode.md': '---\nname: héllo-wörld\ndescription: a Unicode name\n---\nHi.\n',
    'skills/uni-code.skill.ts': "export const frontmatter = { name: 'ünï' };\nexport default () => 1;\n",
    'skills/lead.md': '---\nname: -lead\n---\nHi.\n',
    'skills/trail.md': '---\nname: trail-\n---\nHi.\n',
    'skills/edge-.md': 'No frontmatter, a stem ending in a dash.\n',
    'skills/Notes.md': 'A document: no frontmatter and a stem that is no name — not a skill.\n',
    'skills/fine.md': '---\nname: fine\n---\nHi.\n',
  });
  const rt = await runtimeAt(t, dir);
  const list = byFile(await rt.list({ all: true }));
  const ascii = /must be ASCII \[a-z0-9-\].*callable as a bare ref/;
  assert.match(String(list.get('héllo.md')?.error), ascii, 'héllo.md is listed as broken, not silently absent');
  assert.match(String(list.get('unicode.md')?.error), ascii);
  assert.match(String(list.get('uni-code.skill.ts')?.error), ascii);
  for (const f of ['lead.md', 'trail.md', 'edge-.md']) assert.match(String(list.get(f)?.error), /cannot start or end with '-'/, f);
  assert.equal(list.get('Notes.md'), undefined);
  assert.equal(list.get('fine.md')?.error, undefined);
  assert.throws(() => rt.register({ name: 'bad-', fn: () => 1 }), /cannot start or end with '-'/);
});

// ——— module instances across runtimes (§15) ———

test('a code skill is imported once per file and mtime across runtimes; an edited file is imported again', async (t) => {
  const dir = workspace(t, { 'skills/counted.skill.ts': spy('counted') });
  const count = () => imported().filter((n) => n === 'counted').length;
  for (let i = 0; i < 3; i++) {
    const rt = await runtimeAt(t, dir);
    assert.equal(await rt.invoke('counted'), 'counted');
    await rt.close();
  }
  assert.equal(count(), 1, 'one module instance for three runtimes');
  const file = path.join(dir, 'skills/counted.skill.ts');
  fs.writeFileSync(file, spy('counted').replace("default () => 'counted'", "default () => 'edited'"));
  const later = new Date(Date.now() + 5000);
  fs.utimesSync(file, later, later);
  const rt = await runtimeAt(t, dir);
  assert.equal(await rt.invoke('counted'), 'edited');
  assert.equal(count(), 2);
});

test('500 createRuntime() / invoke / close() cycles grow the heap by less than 5 MiB', { timeout: 60_000 }, async (t) => {
  const dir = workspace(t, { 'skills/hello.skill.ts': "export const frontmatter = { name: 'hello' };\nexport default async () => 'hi';\n" });
  const script = path.join(REPO, 'test', 'security', 'loader-heap-cycles.ts');
  const out = await new Promise<string>((resolve, reject) => {
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    const child = spawn(process.execPath, ['--expose-gc', script, dir, '500', 'hello'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`exit ${code}: ${stderr}`))));
  });
  const { growth, cycles } = JSON.parse(out.trim().split('\n').pop()!) as { growth: number; cycles: number };
  t.diagnostic(`heap growth over ${cycles} cycles: ${(growth / 1024).toFixed(0)} KiB`);
  assert.ok(growth < 5 * 1024 * 1024, `heap grew by ${(growth / 1048576).toFixed(1)} MiB over ${cycles} cycles`);
});
