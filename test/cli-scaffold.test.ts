// `agent-apps init` and `agent-apps new` (SPEC §12): real processes of bin/agent-apps.js in
// throw-away folders. What they scaffold must run as it is — offline, through the real pipeline.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(REPO, 'bin', 'agent-apps.js');

const temps: string[] = [];
after(() => {
  for (const dir of temps) fs.rmSync(dir, { recursive: true, force: true });
});
function tempDir(prefix = 'agent-apps-scaffold-'): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  temps.push(dir);
  return dir;
}

// The runs must not see the developer's ~/.agent-apps/skills or AGENT_APPS_PATH.
const HOME = tempDir('agent-apps-scaffold-home-');
function env(): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, AGENT_APPS_HOME: HOME };
  for (const key of ['AGENT_APPS_PATH', 'NO_COLOR', 'FORCE_COLOR', 'NODE_OPTIONS', 'NODE_TEST_CONTEXT']) delete e[key];
  return e;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], cwd: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: env(), stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end();
  });
}

function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const ent of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const child = path.join(rel, ent.name);
      if (ent.isDirectory()) walk(child);
      else out[child] = fs.readFileSync(path.join(dir, child), 'utf8');
    }
  };
  walk('');
  return out;
}

describe('agent-apps init', () => {
  test('scaffolds main, a hello skill with its cassette and eval file, and a .gitignore; run hello then works offline', async () => {
    const cwd = tempDir();
    const init = await cli(['init', 'proj'], cwd);
    assert.equal(init.code, 0, init.stderr);
    const ws = path.join(cwd, 'proj');
    assert.deepEqual(Object.keys(snapshot(ws)).sort(), ['.gitignore', 'skills/hello.cassette.yaml', 'skills/hello.md', 'skills/hello.test.yaml', 'skills/main.md']);
    assert.match(fs.readFileSync(path.join(ws, '.gitignore'), 'utf8'), /^\.agent-apps\/$/m);
    assert.match(init.stdout, /run hello/);

    const hello = await cli(['run', 'hello', '--name', 'Ada'], ws);
    assert.equal(hello.code, 0, hello.stderr);
    assert.equal(hello.stdout, 'Hello, Ada!\n');
    const fallback = await cli(['run', 'hello'], ws);
    assert.equal(fallback.stdout, 'Hello, world!\n', fallback.stderr);
  });

  test('`run` with no skill name runs the scaffolded main, which hands its args to hello', async () => {
    const cwd = tempDir();
    assert.equal((await cli(['init'], cwd)).code, 0);
    const r = await cli(['run', '--name', 'Bo'], cwd);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'Hello, Bo!\n');
  });

  test('main.md keeps `delegate` to itself: hello’s chain has no delegate entry', async () => {
    const cwd = tempDir();
    await cli(['init'], cwd);
    const r = await cli(['describe', 'hello', '--json'], cwd);
    assert.equal(r.code, 0, r.stderr);
    const names = (JSON.parse(r.stdout) as { chain: { name: string }[] }).chain.map((e) => e.name);
    assert.ok(!names.includes('delegate'), names.join(' '));
    assert.ok(names.includes('model'));
  });

  test('refuses (exit 2) when a scaffolded file exists, names it, and writes nothing', async () => {
    const cwd = tempDir();
    fs.mkdirSync(path.join(cwd, 'skills'));
    fs.writeFileSync(path.join(cwd, 'skills', 'hello.md'), 'mine\n');
    const r = await cli(['init'], cwd);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /refusing to overwrite an existing file: skills\/hello\.md/);
    assert.equal(r.stdout, '');
    assert.deepEqual(snapshot(cwd), { 'skills/hello.md': 'mine\n' });
  });

  test('an existing .gitignore is kept, with the run-records line added', async () => {
    const cwd = tempDir();
    fs.writeFileSync(path.join(cwd, '.gitignore'), 'node_modules/');
    const r = await cli(['init', '--json'], cwd);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout).updated, [path.join(cwd, '.gitignore')]);
    assert.equal(fs.readFileSync(path.join(cwd, '.gitignore'), 'utf8'), 'node_modules/\n.agent-apps/\n');
  });

  test('a dir that is a file is a usage error', async () => {
    const cwd = tempDir();
    fs.writeFileSync(path.join(cwd, 'taken'), '');
    const r = await cli(['init', 'taken'], cwd);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /'taken' exists and is not a directory/);
  });

  test('--help shows examples', async () => {
    const r = await cli(['init', '--help'], tempDir());
    assert.equal(r.code, 0);
    assert.match(r.stdout, /Examples:\n {2}\$ agent-apps init/);
  });
});

describe('agent-apps new', () => {
  test('a Markdown skill (with its replay cassette) runs at once', async () => {
    const cwd = tempDir();
    await cli(['init'], cwd);
    const r = await cli(['new', 'summarize'], cwd);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Created skills\/summarize\.md, skills\/summarize\.cassette\.yaml/);
    const md = fs.readFileSync(path.join(cwd, 'skills', 'summarize.md'), 'utf8');
    assert.match(md, /^name: summarize$/m);
    assert.ok(!md.includes('{{'), 'every placeholder is filled');
    const run = await cli(['run', 'summarize', '--input', 'the text'], cwd);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'summarize worked on the text\n');
  });

  test('--code writes a TypeScript skill that runs at once', async () => {
    const cwd = tempDir();
    await cli(['init'], cwd);
    const r = await cli(['new', 'word-count', '--code'], cwd);
    assert.equal(r.code, 0, r.stderr);
    const file = path.join(cwd, 'skills', 'word-count.skill.ts');
    assert.match(fs.readFileSync(file, 'utf8'), /name: 'word-count'/);
    const run = await cli(['run', 'word-count', '--input', 'a b c'], cwd);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'word-count worked on a b c\n');
    const listed = await cli(['list', '--json'], cwd);
    assert.ok((JSON.parse(listed.stdout) as { name: string }[]).some((s) => s.name === 'word-count'));
  });

  test('writes into the nearest workspace above the cwd, else ./skills', async () => {
    const ws = tempDir();
    await cli(['init'], ws);
    const deep = path.join(ws, 'src', 'deep');
    fs.mkdirSync(deep, { recursive: true });
    assert.equal((await cli(['new', 'inner', '--code'], deep)).code, 0);
    assert.ok(fs.existsSync(path.join(ws, 'skills', 'inner.skill.ts')));
    const run = await cli(['run', 'inner'], deep);
    assert.equal(run.stdout, 'inner worked on something\n', run.stderr);

    const bare = tempDir();
    assert.equal((await cli(['new', 'solo', '--code'], bare)).code, 0);
    assert.ok(fs.existsSync(path.join(bare, 'skills', 'solo.skill.ts')));
  });

  test('refuses (exit 2) a name that is already a skill in the workspace, whatever its form', async () => {
    const cwd = tempDir();
    await cli(['init'], cwd);
    const before = snapshot(cwd);
    const md = await cli(['new', 'hello', '--code'], cwd);
    assert.equal(md.code, 2);
    assert.match(md.stderr, /a skill named 'hello' already exists: skills\/hello\.md/);
    assert.deepEqual(snapshot(cwd), before);
    assert.equal((await cli(['new', 'dup', '--code'], cwd)).code, 0);
    const again = await cli(['new', 'dup'], cwd);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /already exists: skills\/dup\.skill\.ts/);
  });

  test('refuses (exit 2) a file in the way that is not a skill of that name', async () => {
    const cwd = tempDir();
    fs.mkdirSync(path.join(cwd, 'skills'));
    fs.writeFileSync(path.join(cwd, 'skills', 'notes.cassette.yaml'), 'turns: []\n');
    const r = await cli(['new', 'notes'], cwd);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /refusing to overwrite an existing file: skills\/notes\.cassette\.yaml/);
    assert.ok(!fs.existsSync(path.join(cwd, 'skills', 'notes.md')), 'nothing is written');
  });

  test('refuses (exit 2) invalid names and main', async () => {
    const cwd = tempDir();
    for (const name of ['Bad', 'under_score', 'dot.name', 'main']) {
      const r = await cli(['new', name], cwd);
      assert.equal(r.code, 2, name);
      assert.match(r.stderr, name === 'main' ? /root authority/ : /invalid skill name/, name);
    }
    assert.ok(!fs.existsSync(path.join(cwd, 'skills')));
  });

  test('warns when the name shadows a built-in', async () => {
    const cwd = tempDir();
    const r = await cli(['new', 'file-read', '--code'], cwd);
    assert.equal(r.code, 0);
    assert.match(r.stderr, /'file-read' is also a built-in skill/);
  });

  test('--help shows examples', async () => {
    const r = await cli(['new', '--help'], tempDir());
    assert.equal(r.code, 0);
    assert.match(r.stdout, /Examples:\n {2}\$ agent-apps new/);
  });
});
