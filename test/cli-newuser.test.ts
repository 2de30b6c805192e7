// What a new user hit in a first trial of the CLI (issue 8), each as the rule it broke: real
// processes of bin/agent-apps.js (and of the npm scripts and scripts/node24.sh), in the fixture
// workspace test/fixtures/cli-ws or in throw-away folders.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(REPO, 'bin', 'agent-apps.js');
const WS = path.join(REPO, 'test', 'fixtures', 'cli-ws');

const temps: string[] = [];
after(() => {
  for (const dir of temps) fs.rmSync(dir, { recursive: true, force: true });
});
function tempDir(prefix = 'agent-apps-newuser-'): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  temps.push(dir);
  return dir;
}

// The runs must not see the developer's ~/.agent-apps/skills, AGENT_APPS_PATH, colour settings or
// model credentials.
const HOME = tempDir('agent-apps-newuser-home-');
function baseEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, AGENT_APPS_HOME: HOME };
  for (const key of Object.keys(env)) if (/^(AWS_|OPENAI_|ANTHROPIC_)/.test(key)) delete env[key];
  for (const key of ['AGENT_APPS_PATH', 'NO_COLOR', 'FORCE_COLOR', 'NODE_OPTIONS', 'NODE_TEST_CONTEXT']) delete env[key];
  env.AWS_EC2_METADATA_DISABLED = 'true';
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function spawnRun(command: string, args: string[], opts: { cwd?: string; input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd ?? WS, env: opts.env ?? baseEnv(), stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

function cli(args: string[], opts: { cwd?: string; input?: string } = {}): Promise<Run> {
  return spawnRun(process.execPath, [BIN, ...args], opts);
}

/** A throw-away folder: `files` maps paths under it to their text. */
function folder(files: Record<string, string>): string {
  const dir = tempDir();
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

/** One line on stderr, `error [CODE]: …`, nothing on stdout, the given exit code. */
function failsWith(r: Run, exit: number, code: string, pattern: RegExp): void {
  assert.equal(r.code, exit, r.stderr);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, new RegExp(`^error \\[${code}\\]: `));
  assert.match(r.stderr, pattern);
}

/** A Node older than 24 on this machine (the system's, here v20), for the version checks. */
function olderNode(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':').concat(['/usr/local/bin', '/usr/bin'])) {
    const node = path.join(dir, 'node');
    try {
      const major = Number(execFileSync(node, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).trim());
      if (major < 24) return node;
    } catch {
      // not there, or not a node
    }
  }
  return undefined;
}
const OLD_NODE = olderNode();

describe('setting up: Node 24, npm link, the npm scripts', () => {
  test('the npm scripts run on a Node ≥ 24: each starts with scripts/on-node24.js', () => {
    const scripts = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')).scripts as Record<string, string>;
    for (const name of ['test', 'build', 'bench', 'prepare']) assert.match(scripts[name]!, /^node scripts\/on-node24\.js /, name);
  });

  /** A package whose only script prints the Node it runs on, through scripts/on-node24.js; .node24/ linked when `node24`. */
  function versionPackage(node24: boolean): string {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, 'scripts'));
    fs.copyFileSync(path.join(REPO, 'scripts', 'on-node24.js'), path.join(dir, 'scripts', 'on-node24.js'));
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'v', type: 'module', scripts: { v: 'node scripts/on-node24.js -p "process.version + \' \' + process.env.PATH.split(\':\')[0]"' } }));
    if (node24) fs.symlinkSync(path.join(REPO, '.node24'), path.join(dir, '.node24'));
    return dir;
  }
  /** A fresh shell's environment: `env -i HOME=… PATH=/usr/local/bin:/usr/bin:/bin`, whose node is the old one. */
  const freshShell = () => ({ HOME, PATH: `${path.dirname(OLD_NODE!)}:/usr/local/bin:/usr/bin:/bin` });

  test('from a fresh shell whose Node is older, an npm script runs on the checkout’s .node24/ Node', { skip: OLD_NODE && fs.existsSync(path.join(REPO, '.node24', 'node_modules', 'node', 'bin', 'node')) ? false : 'needs a system Node older than 24 and .node24/ installed' }, async () => {
    const dir = versionPackage(true);
    const r = await spawnRun('npm', ['run', 'v', '--silent'], { cwd: dir, env: freshShell() });
    assert.equal(r.code, 0, r.stderr);
    const [version, firstOnPath] = r.stdout.trim().split(' ');
    assert.match(version!, /^v2[4-9]\./);
    // What it starts by name (node, npm's scripts) gets Node 24 too.
    assert.equal(firstOnPath, path.join(fs.realpathSync(dir), '.node24', 'node_modules', 'node', 'bin'));
  });

  test('without .node24/, an npm script on an older Node says in one line how to get Node 24 and fails', { skip: OLD_NODE ? false : 'no Node older than 24 on this machine' }, async () => {
    const dir = versionPackage(false);
    const version = execFileSync(OLD_NODE!, ['--version'], { encoding: 'utf8' }).trim();
    const r = await spawnRun('npm', ['run', 'v', '--silent'], { cwd: dir, env: freshShell() });
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, `agent-apps needs Node.js ≥ 24 (this is ${version}): run bash scripts/setup.sh, or source scripts/node24.sh, to install it into .node24/\n`);
  });

  test('on Node 24, scripts/on-node24.js runs node with the args given, passing on the exit code', async () => {
    const r = await spawnRun(process.execPath, [path.join(REPO, 'scripts', 'on-node24.js'), '-e', 'process.stdout.write(process.version); process.exit(3)'], { cwd: REPO });
    assert.deepEqual(r, { code: 3, stdout: process.version, stderr: '' });
  });

  const node24 = path.join(REPO, '.node24', 'node_modules', '.bin', 'node');
  test('after source scripts/node24.sh, npm’s global bin (where npm link puts agent-apps) is on PATH', { skip: OLD_NODE && fs.existsSync(node24) ? false : 'needs a system Node older than 24 and .node24/ installed' }, async () => {
    const env = baseEnv({ PATH: `${path.dirname(OLD_NODE!)}:/usr/bin:/bin` });
    const r = await spawnRun('bash', ['-c', 'source scripts/node24.sh && node --version && npm prefix -g --loglevel=error && echo "$PATH"'], { cwd: REPO, env });
    assert.equal(r.code, 0, r.stderr);
    const [version, prefix, PATH] = r.stdout.trim().split('\n');
    assert.match(version!, /^v2[4-9]\./);
    assert.ok(PATH!.split(':').includes(path.join(prefix!, 'bin')), `${prefix}/bin on ${PATH}`);
  });

  test('the launcher on a Node older than 24 runs on the checkout’s .node24/ Node, so a linked agent-apps works from any shell', { skip: OLD_NODE && fs.existsSync(node24) ? false : 'needs a system Node older than 24 and .node24/ installed' }, async () => {
    const r = await spawnRun(OLD_NODE!, [BIN, 'run', 'greet', '--name', 'Ada'], { input: '' });
    assert.deepEqual(r, { code: 0, stdout: 'Hello, Ada.\n', stderr: '' });
    const failed = await spawnRun(OLD_NODE!, [BIN, 'run', 'greet', '--name']);
    assert.equal(failed.code, 2);
    assert.match(failed.stderr, /^error \[E_USAGE\]: --name needs a value/);
  });

  test('scripts/setup.sh builds once: npm ci’s prepare script builds, setup only when that did not happen', () => {
    const setup = fs.readFileSync(path.join(REPO, 'scripts', 'setup.sh'), 'utf8');
    const builds = setup.split('\n').filter((l) => /npm run build|scripts\/build\.js/.test(l) && !l.trim().startsWith('#'));
    assert.equal(builds.length, 1, builds.join('\n'));
    assert.match(builds[0]!, /^\[ dist\/\.build-stamp -nt "\$before" \] \|\| npm run build/);
  });
});

describe('--set KEY=false and $remove: turning middleware off', () => {
  const files = {
    'skills/main.md': '---\nname: main\ndescription: The authority.\nmetadata:\n  shout: true\n  stamp: true\n---\n',
    // Follows the convention of every built-in: `false` as its args means "pass through".
    'skills/shout.skill.ts': `import { ctxTarget, type Context } from 'agent-apps';
export const frontmatter = { name: 'shout', description: 'Upper-cases the result.', metadata: { role: 'middleware', visibility: 'hidden' } };
export default async function (ctx: Context, on: unknown) {
  const target = ctxTarget(ctx);
  const r = await target.manager.next();
  return on === false ? r : String(r).toUpperCase();
}
`,
    // Ignores its args: only taking it out of the chain turns it off.
    'skills/stamp.skill.ts': `import { ctxTarget, type Context } from 'agent-apps';
export const frontmatter = { name: 'stamp', description: 'Appends a stamp.', metadata: { role: 'middleware', visibility: 'hidden' } };
export default async function (ctx: Context, args: unknown) {
  return \`\${await ctxTarget(ctx).manager.next()} [\${JSON.stringify(args)}]\`;
}
`,
    'skills/hi.skill.ts': "export const frontmatter = { name: 'hi', description: 'Says hi.' };\nexport default async function () { return 'hi'; }\n",
  };

  test('--set NAME=false hands false to the middleware as its args: validate-args and a conventional middleware pass through', async () => {
    const ws = folder(files);
    // shout wraps stamp (both have the default slot; main.md lists shout first).
    assert.equal((await cli(['run', 'hi'], { cwd: ws })).stdout, 'HI [TRUE]\n');
    assert.equal((await cli(['--set', 'shout=false', 'run', 'hi'], { cwd: ws })).stdout, 'hi [true]\n');
    assert.equal((await cli(['run', 'strict'], { cwd: WS })).code, 2);
    assert.equal((await cli(['--set', 'validate-args=false', 'run', 'strict'], { cwd: WS })).stdout, 'ok\n');
  });

  test('--set NAME=false turns off any middleware, user ones and every built-in included', async () => {
    const ws = folder(files);
    assert.equal((await cli(['--set', 'stamp=false', 'run', 'hi'], { cwd: ws })).stdout, 'HI\n');
    // null is not "off": `my-handler:` with no value is how a main turns a middleware on.
    assert.equal((await cli(['--set', 'stamp=null', 'run', 'hi'], { cwd: ws })).stdout, 'HI [NULL]\n');
    for (const key of ['delegate', 'paths', 'role']) {
      const r = await cli(['--set', `${key}=false`, 'run', 'hi'], { cwd: ws });
      assert.equal(r.code, 0, `${key}: ${r.stderr}`);
    }
  });

  test("--set '$remove=[NAME]' takes any middleware out of the chain, user ones included", async () => {
    const ws = folder(files);
    assert.equal((await cli(['--set', '$remove=[stamp, shout]', 'run', 'hi'], { cwd: ws })).stdout, 'hi\n');
    const chain = JSON.parse((await cli(['--set', '$remove=[stamp]', 'describe', 'hi', '--json'], { cwd: ws })).stdout).chain.map((e: { name: string }) => e.name);
    assert.ok(!chain.includes('stamp') && chain.includes('shout'), chain.join(' '));
  });
});

describe('errors name their place and their kind', () => {
  test('a syntax error in a code skill names file:line:col', async () => {
    const ws = folder({ 'skills/broken.skill.ts': "export const frontmatter = { name: 'broken', description: 'x' };\nexport default async function () {\n  return 1 +;\n}\n" });
    const r = await cli(['run', 'broken'], { cwd: ws });
    failsWith(r, 2, 'E_CONFIG', /skills\/broken\.skill\.ts:3:13: /);
    const js = folder({ 'skills/broken.skill.js': 'export default function () {\n  const x = ;\n}\n' });
    failsWith(await cli(['run', 'broken'], { cwd: js }), 2, 'E_CONFIG', /skills\/broken\.skill\.js:2:13: /);
  });

  test('an unknown agent provider or a bad model config is a configuration error (exit 2), not a skill failure', async () => {
    const md = (model: string) => `---\nname: ask\ndescription: Ask.\nmetadata:\n  model: ${model}\n---\nSay hi.\n`;
    for (const model of ['{ agent: nope }', '{ provider: nope }', '{ provider: replay, maxTurns: abc }']) {
      const ws = folder({ 'skills/ask.md': md(model) });
      const r = await cli(['run', 'ask'], { cwd: ws });
      assert.equal(r.code, 2, `${model}: ${r.stderr}`);
      assert.equal(r.stdout, '');
    }
  });

  test('a Markdown skill with no model configured fails in one line that says where to set model: and mentions replay', async () => {
    const ws = folder({ 'skills/ask.md': '---\nname: ask\ndescription: Ask.\n---\nSay hi.\n' });
    const r = await cli(['run', 'ask'], { cwd: ws });
    assert.notEqual(r.code, 0);
    assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /model:/);
    assert.match(r.stderr, /replay/);
  });

  test('a message that starts with its own code prints the code once', async () => {
    const ws = folder({ 'skills/read.skill.ts': "import fs from 'node:fs';\nexport const frontmatter = { name: 'read', description: 'Reads a missing file.' };\nexport default async function () { return fs.readFileSync('/nonexistent/agent-apps-test'); }\n" });
    const r = await cli(['run', 'read'], { cwd: ws });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error \[ENOENT\]: no such file or directory, open '\/nonexistent\/agent-apps-test'\n$/);
  });
});

describe('skill flags: what --PARAM VALUE accepts, and what it says when it does not', () => {
  test('a declared param given as a bare flag says it needs a value', async () => {
    failsWith(await cli(['run', 'greet', '--name']), 2, 'E_USAGE', /: --name needs a value \(a string\)$/m);
    failsWith(await cli(['run', 'echo', '--loud', '--mode']), 2, 'E_USAGE', /: --mode needs a value \(one of fast, slow\)$/m);
  });

  test('a repeated flag for a one-value param is a usage error naming it (an array param collects)', async () => {
    failsWith(await cli(['run', 'greet', '--name', 'Ada', '--name', 'Bob']), 2, 'E_USAGE', /--name was given 2 times, but it takes one value \(a string\)/);
    assert.equal((await cli(['run', 'echo', '--tags', 'a', '--tags', 'b', '--json'])).stdout, '{"tags":["a","b"]}\n');
  });

  test('a mis-cased or mistyped flag gets a "did you mean"', async () => {
    failsWith(await cli(['run', 'greet', '--Name', 'Ada']), 2, 'E_USAGE', /unknown flag --Name — did you mean --name\?/);
    // A near miss only where the schema allows no other properties (else it could be an arg).
    failsWith(await cli(['run', 'strict', '--nmae', 'Ada', '--age', '3']), 2, 'E_USAGE', /unknown flag --nmae — did you mean --name\?/);
    failsWith(await cli(['run', 'greet', '--name', 'Ada', '--JSON']), 2, 'E_USAGE', /unknown flag --JSON — did you mean --json\?/);
  });

  test('an enum violation lists the allowed values', async () => {
    failsWith(await cli(['run', 'echo', '--mode', 'medium']), 2, 'E_VALIDATION', /\/mode must be one of: fast, slow/);
    failsWith(await cli(['run', 'echo', '--args-json', '{"mode":"x"}']), 2, 'E_VALIDATION', /\/mode must be one of: fast, slow/);
  });

  test('a number param takes decimal numbers only: 0x10 is not 16', async () => {
    failsWith(await cli(['run', 'echo', '--count', '0x10']), 2, 'E_VALIDATION', /\/count must be number/);
    assert.equal((await cli(['run', 'echo', '--count', '1e3', '--n', '-7', '--json'])).stdout, '{"count":1000,"n":-7}\n');
  });

  test('--args-json - with nothing on stdin is a clear usage error', async () => {
    failsWith(await cli(['run', 'greet', '--args-json', '-'], { input: '' }), 2, 'E_USAGE', /--args-json -: stdin was empty/);
  });
});

describe('commander’s own errors and help', () => {
  test('an unknown option, command or a missing argument is `error [E_USAGE]: …` on one line, exit 2, naming the help to read', async () => {
    failsWith(await cli(['--bogus', 'list']), 2, 'E_USAGE', /unknown option '--bogus' — see 'agent-apps --help'/);
    failsWith(await cli(['lst']), 2, 'E_USAGE', /unknown command 'lst' \(Did you mean list\?\)/);
    failsWith(await cli(['describe']), 2, 'E_USAGE', /missing required argument 'skill' — see 'agent-apps describe --help'/);
    failsWith(await cli(['--log-level', 'loud', 'list']), 2, 'E_USAGE', /Allowed choices are trace, debug, info, warn, error — see/);
    // Global options are hidden on subcommands, but still suggested.
    failsWith(await cli(['list', '--jsn']), 2, 'E_USAGE', /unknown option '--jsn' \(Did you mean --json\?\) — see 'agent-apps list --help'/);
    failsWith(await cli(['--JSON', 'list']), 2, 'E_USAGE', /\(Did you mean --json\?\)/);
  });
});

describe('where a run leaves files', () => {
  test('a run outside a workspace creates no .agent-apps/ folder, failed or not; tail says why there is nothing', async () => {
    const dir = folder({ 'notes.txt': 'not a workspace\n' });
    assert.equal((await cli(['run', 'nope'], { cwd: dir })).code, 2);
    const ok = await cli(['run', 'skill-list', '--json'], { cwd: dir });
    assert.equal(ok.code, 0, ok.stderr);
    assert.deepEqual(fs.readdirSync(dir), ['notes.txt']);
    failsWith(await cli(['tail'], { cwd: dir }), 2, 'E_USAGE', /no workspace at or above .* runs are recorded inside a workspace — agent-apps init makes one/);
  });

  test('a run inside a workspace is recorded, a failed one too', async () => {
    const ws = folder({ 'skills/hi.skill.ts': "export const frontmatter = { name: 'hi', description: 'Says hi.' };\nexport default async function () { return 'hi'; }\n" });
    assert.equal((await cli(['run', 'nope'], { cwd: ws })).code, 2);
    assert.equal(fs.readdirSync(path.join(ws, '.agent-apps', 'runs')).filter((f) => f.endsWith('.jsonl')).length, 1);
    const tail = await cli(['tail', '--json'], { cwd: ws });
    assert.match(tail.stdout, /"type":"run-end"[^\n]*"code":"E_TOOL_NOT_FOUND"/);
  });

  test('new outside a workspace does not point at a skills/main.md that is not there', async () => {
    const dir = tempDir();
    const r = await cli(['new', 'thing'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /skills\/main\.md \(/);
    assert.match(r.stdout, /replace provider: replay and cassette: in thing\.md with yours/);
    assert.match(r.stdout, /agent-apps init here, set model: in its skills\/main\.md/);
    const ws = tempDir();
    assert.equal((await cli(['init'], { cwd: ws })).code, 0);
    assert.match((await cli(['new', 'other'], { cwd: ws })).stdout, /set a model for every skill in skills\/main\.md \(model:\) and delete the model: block in other\.md/);
  });
});
