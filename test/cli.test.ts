// The `agent-apps` CLI end to end (SPEC §12): real processes of bin/agent-apps.js, run in the
// fixture workspace test/fixtures/cli-ws (see its README) or in throw-away workspaces. stdout and
// stderr are asserted separately: stdout carries only the result.
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
const VERSION = (JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }).version;

const temps: string[] = [];
after(() => {
  for (const dir of temps) fs.rmSync(dir, { recursive: true, force: true });
});
function tempDir(prefix = 'agent-apps-cli-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

// The runs must not see the developer's ~/.agent-apps/skills, AGENT_APPS_PATH or colour settings.
const HOME = tempDir('agent-apps-cli-home-');
function baseEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, AGENT_APPS_HOME: HOME };
  for (const key of ['AGENT_APPS_PATH', 'NO_COLOR', 'FORCE_COLOR', 'NODE_OPTIONS', 'NODE_TEST_CONTEXT']) delete env[key];
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

interface CliOptions {
  cwd?: string;
  input?: string;
  env?: Record<string, string | undefined>;
  /** Called with the child once it is spawned (to send it signals). */
  onSpawn?: (child: ReturnType<typeof spawn>) => void;
}

function cli(args: string[], opts: CliOptions = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: opts.cwd ?? WS, env: baseEnv(opts.env), stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
    opts.onSpawn?.(child);
  });
}

/** A throw-away workspace: `files` maps paths under it to their text. */
function workspace(files: Record<string, string>): string {
  const dir = tempDir();
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

const STACK = /^\s+at /m;
const ANSI = /\x1b\[/;

function assertNoStack(r: Run) {
  assert.doesNotMatch(r.stderr, STACK, `no stack trace expected:\n${r.stderr}`);
}

/** The one line of stderr (SPEC §12: a failure is a one-line message on stderr). */
function oneLine(r: Run): string {
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `one stderr line expected:\n${r.stderr}`);
  return lines[0]!;
}

describe('global options, help and version', { concurrency: true }, () => {
  test('--version and -V print the package version and nothing else', async () => {
    const [long, short] = await Promise.all([cli(['--version']), cli(['-V'])]);
    for (const r of [long, short]) {
      assert.equal(r.code, 0);
      assert.equal(r.stdout, `${VERSION}\n`);
      assert.equal(r.stderr, '');
    }
  });

  test('--help on the program and on every command shows a purpose, options and examples; the global options once, in the program’s', async () => {
    const top = await cli(['--help']);
    assert.equal(top.code, 0);
    assert.match(top.stdout, /^Usage: agent-apps \[options\] \[command\]/);
    assert.match(top.stdout, /Examples:\n {2}\$ agent-apps /);
    assert.match(top.stdout, /Exit codes: 0 ok, 1 the skill failed, 2 usage or configuration error, 3 refused/);
    for (const flag of ['--cwd', '--path', '--set', '--debug', '--profile', '--log-level', '--json', '--no-color']) assert.ok(top.stdout.includes(flag), flag);
    const commands = [...top.stdout.split('Commands:')[1]!.matchAll(/^ {2}([a-z]+)\b/gm)].map((m) => m[1]!).filter((c) => c !== 'help');
    for (const c of ['run', 'list', 'describe']) assert.ok(commands.includes(c), `${c} listed`);
    const runs = await Promise.all(commands.flatMap((c) => [cli([c, '--help']), cli(['help', c])]));
    runs.forEach((r, i) => {
      const c = commands[Math.floor(i / 2)]!;
      assert.equal(r.code, 0, c);
      assert.equal(r.stderr, '', c);
      assert.match(r.stdout, new RegExp(`^Usage: agent-apps ${c}\\b`), c);
      assert.match(r.stdout, /Examples:\n {2}\$ agent-apps /, `${c} --help shows examples`);
      assert.doesNotMatch(r.stdout, /--log-level|--no-color|--shutdown-grace/, `${c} --help does not repeat the global options`);
      assert.match(r.stdout, /\nGlobal options \(--cwd, --path, --set, --debug, --json …\): see agent-apps --help\n$/, `${c} --help points to them`);
    });
  });

  test('no arguments prints the help', async () => {
    const r = await cli([]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^Usage: agent-apps/);
  });

  test('an unknown command or option is a usage error (exit 2) on stderr', async () => {
    const [cmd, opt, level] = await Promise.all([cli(['bogus']), cli(['--bogus', 'list']), cli(['--log-level', 'loud', 'list'])]);
    for (const r of [cmd, opt, level]) {
      assert.equal(r.code, 2);
      assert.equal(r.stdout, '');
    }
    assert.match(cmd.stderr, /unknown command 'bogus'/);
    assert.match(opt.stderr, /unknown option '--bogus'/);
    assert.match(level.stderr, /Allowed choices are trace, debug, info, warn, error/);
  });

  test('bad --set, --cwd and --path values are usage errors naming the option', async () => {
    const [set, yaml, cwd, p] = await Promise.all([
      cli(['--set', 'debug', 'run', 'greet']),
      cli(['--set', 'x=[1', 'run', 'greet']),
      cli(['--cwd', path.join(WS, 'nope'), 'run', 'greet']),
      cli(['--path', 'nope', 'list']),
    ]);
    for (const r of [set, yaml, cwd, p]) {
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stdout, '');
      assertNoStack(r);
    }
    assert.match(oneLine(set), /--set expects KEY\.PATH=VALUE, got 'debug'/);
    assert.match(oneLine(yaml), /--set x: value is not valid YAML/);
    assert.match(oneLine(cwd), /--cwd: '.*nope' is not a directory/);
    assert.match(oneLine(p), /--path: 'nope' is not a directory/);
  });
});

describe('run: args from --PARAM flags', { concurrency: true }, () => {
  test('flags are coerced by the params schema', async () => {
    const r = await cli(['run', 'echo', '--text', '007', '--count', '2.5', '--n', '3', '--loud', '--tags', 'a', '--tags', 'b', '--nums', '1', '--nums', '-2', '--opts.format', 'png', '--opts.size', '16', '--opts.deep.on', '--mode', 'fast', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { text: '007', count: 2.5, n: 3, loud: true, tags: ['a', 'b'], nums: [1, -2], opts: { format: 'png', size: 16, deep: { on: true } }, mode: 'fast' });
  });

  test('--no-flag is false; a flag alone is true', async () => {
    const [no, yes] = await Promise.all([cli(['run', 'echo', '--no-loud', '--json']), cli(['run', 'echo', '--loud', '--json'])]);
    assert.deepEqual(JSON.parse(no.stdout), { loud: false });
    assert.deepEqual(JSON.parse(yes.stdout), { loud: true });
  });

  test('--args-json supplies JSON args, inline or from stdin with -; flags win over it', async () => {
    const [inline, stdin] = await Promise.all([
      cli(['run', 'echo', '--args-json', '{"text":"json","n":1}', '--n', '2', '--json']),
      cli(['run', 'echo', '--args-json', '-', '--json'], { input: '{"text":"from stdin","tags":["x"]}' }),
    ]);
    assert.equal(inline.code, 0, inline.stderr);
    assert.deepEqual(JSON.parse(inline.stdout), { text: 'json', n: 2 });
    assert.equal(stdin.code, 0, stdin.stderr);
    assert.deepEqual(JSON.parse(stdin.stdout), { text: 'from stdin', tags: ['x'] });
  });

  test('bad --args-json is a usage error', async () => {
    const [bad, array] = await Promise.all([cli(['run', 'echo', '--args-json', '{nope']), cli(['run', 'echo', '--args-json', '-'], { input: '[1]' })]);
    assert.equal(bad.code, 2);
    assert.match(oneLine(bad), /--args-json: not valid JSON/);
    assert.equal(array.code, 2);
    assert.match(oneLine(array), /--args-json must be a JSON object/);
  });

  test('an unknown positional argument is a usage error (exit 2)', async () => {
    const r = await cli(['run', 'echo', '--text', 'a', 'stray']);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.match(oneLine(r), /unexpected argument 'stray' — pass args as --NAME VALUE/);
  });

  test('global options may follow the skill name, unless the skill declares a param of that name', async () => {
    const [json, debug, filePath] = await Promise.all([
      cli(['run', 'greet', '--name', 'Ada', '--json']),
      cli(['run', 'fail', '--debug']),
      cli(['run', 'file-read', '--path', 'README.md']),
    ]);
    assert.equal(json.stdout, '"Hello, Ada."\n');
    assert.match(debug.stderr, /\n\s+at .*fail\.skill\.ts/);
    assert.equal(filePath.code, 0, filePath.stderr);
    assert.equal(filePath.stdout, fs.readFileSync(path.join(WS, 'README.md'), 'utf8').replace(/\n?$/, '\n'));
  });

  test('run SKILL --help prints the skill’s params as flags', async () => {
    const r = await cli(['run', 'echo', '--help']);
    assert.equal(r.code, 0);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, /^Usage: agent-apps run echo \[--text <string>\]/);
    assert.match(r.stdout, /--opts\.size <integer>/);
    assert.match(r.stdout, /--loud +--no-loud for false/);
  });
});

describe('run: what it prints', { concurrency: true }, () => {
  test('a string result prints raw; stdout holds only the result and stderr stays empty', async () => {
    const r = await cli(['run', 'greet', '--name', 'Ada']);
    assert.equal(r.code, 0);
    assert.equal(r.stdout, 'Hello, Ada.\n');
    assert.equal(r.stderr, '');
  });

  test('an object result prints as pretty JSON', async () => {
    const r = await cli(['run', 'echo', '--text', 'hi', '--n', '1']);
    assert.equal(r.code, 0);
    assert.equal(r.stdout, JSON.stringify({ text: 'hi', n: 1 }, null, 2) + '\n');
  });

  test('--json prints one JSON line that JSON.parse reads, before or after the command', async () => {
    const [before, afterSkill, str] = await Promise.all([
      cli(['--json', 'run', 'echo', '--tags', 'a']),
      cli(['run', 'echo', '--tags', 'a', '--json']),
      cli(['--json', 'run', 'greet']),
    ]);
    for (const r of [before, afterSkill]) {
      assert.equal(r.code, 0);
      assert.equal(r.stdout.split('\n').length, 2, 'one line and its newline');
      assert.deepEqual(JSON.parse(r.stdout), { tags: ['a'] });
      assert.equal(r.stderr, '');
    }
    assert.equal(JSON.parse(str.stdout), 'Hello, world.');
  });

  test('a reader that stops early (| head) ends the run quietly', async () => {
    const big = JSON.stringify({ tags: Array.from({ length: 20000 }, (_, i) => `tag-${i}-${'x'.repeat(40)}`) });
    const r = await cli(['run', 'echo', '--args-json', '-'], {
      input: big,
      onSpawn: (child) => child.stdout!.once('data', () => child.stdout!.destroy()),
    });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /EPIPE|Unhandled/);
  });
});

describe('run: exit codes', { concurrency: true }, () => {
  test('0: run with no skill runs the workspace’s main', async () => {
    const r = await cli(['run']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'main ran\n');
    const withArgs = await cli(['run', '--whatever', '1']);
    assert.equal(withArgs.stdout, 'main ran\n', 'flags without a skill name are main’s args');
  });

  test('2: run with no skill in a workspace without main says how to create it', async () => {
    const dir = workspace({ 'skills/other.skill.ts': "export default () => 'x';\n" });
    const r = await cli(['run'], { cwd: dir });
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.match(oneLine(r), /no main skill — create skills\/main\.md, or name a skill: agent-apps run <skill>/);
  });

  test('1: a skill that throws gets a one-line message on stderr and no stack', async () => {
    const r = await cli(['run', 'fail']);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(oneLine(r), /^error \[E_SKILL\]: the disk is on fire {2}\(run with --debug for the stack\)$/);
    assertNoStack(r);
  });

  test('1 with --debug: the stack appears', async () => {
    const r = await cli(['--debug', 'run', 'fail']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /error \[E_SKILL\]: the disk is on fire\n\s+at .*fail\.skill\.ts/);
  });

  test('2: an unknown skill, with a suggestion', async () => {
    const r = await cli(['run', 'gret']);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.match(oneLine(r), /unknown skill 'gret'.*did you mean 'greet'/);
  });

  test('2: invalid args list every schema violation', async () => {
    const [bad, missing] = await Promise.all([cli(['run', 'strict', '--name', 'x', '--age', 'old', '--bogus', '1']), cli(['run', 'strict'])]);
    assert.equal(bad.code, 2);
    const line = oneLine(bad);
    assert.match(line, /\[E_VALIDATION\]/);
    assert.match(line, /unknown property 'bogus'/);
    assert.match(line, /\/name must NOT have fewer than 2 characters/);
    assert.match(line, /\/age must be integer/);
    assert.equal(missing.code, 2);
    assert.match(oneLine(missing), /missing required property 'name'.*missing required property 'age'/);
  });

  test('2: malformed frontmatter names the file and line', async () => {
    const dir = workspace({ 'skills/bad.md': '---\nname: bad\ndescription: oops: no\n---\nHello.\n' });
    const r = await cli(['run', 'bad'], { cwd: dir });
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.match(oneLine(r), /\[E_CONFIG\].*skills\/bad\.md:3\b.*malformed frontmatter/);
    assertNoStack(r);
  });

  test('2: a skill file that fails to import names the file, without a stack', async () => {
    const dir = workspace({ 'skills/boom.skill.ts': "throw new Error('import-time boom');\n" });
    const r = await cli(['run', 'boom'], { cwd: dir });
    assert.equal(r.code, 2);
    assert.match(oneLine(r), /\[E_CONFIG\].*skills\/boom\.skill\.ts: cannot load skill: import-time boom/);
    assertNoStack(r);
  });

  test('2: an $order cycle prints the cycle', async () => {
    const mw = (name: string) => `import { ctxTarget } from 'agent-apps';\nexport const frontmatter = { name: '${name}', metadata: { role: 'middleware' } };\nexport default async (ctx) => ctxTarget(ctx).manager.next();\n`;
    const dir = workspace({
      'skills/mw-a.skill.ts': mw('mw-a'),
      'skills/mw-b.skill.ts': mw('mw-b'),
      'skills/loop.skill.ts': "export const frontmatter = { name: 'loop', metadata: { 'mw-a': true, 'mw-b': true, $order: { 'mw-a': { before: ['mw-b'] }, 'mw-b': { before: ['mw-a'] } } } };\nexport default () => 'never';\n",
    });
    const r = await cli(['run', 'loop'], { cwd: dir });
    assert.equal(r.code, 2);
    assert.match(oneLine(r), /\[E_CONFIG\].*cycle: (mw-a → mw-b → mw-a|mw-b → mw-a → mw-b)/);
    assertNoStack(r);
  });

  test('2: an unknown interpolation variable names the file and key', async () => {
    const dir = workspace({ 'skills/interp.skill.ts': "export const frontmatter = { name: 'interp', metadata: { note: 'in ${nowhere}' } };\nexport default () => 'never';\n" });
    const r = await cli(['run', 'interp'], { cwd: dir });
    assert.equal(r.code, 2);
    assert.match(oneLine(r), /\[E_CONFIG\].*interp\.skill\.ts.*note.*unknown interpolation variable '\$\{nowhere\}'/);
  });

  test('3: a middleware that aborts is a refusal', async () => {
    const [refused, open] = await Promise.all([cli(['run', 'guarded']), cli(['--set', 'gate=open', 'run', 'guarded'])]);
    assert.equal(refused.code, 3);
    assert.equal(refused.stdout, '');
    assert.match(oneLine(refused), /\[E_ABORTED\].*the gate is closed/);
    assert.equal(open.code, 0, open.stderr);
    assert.equal(open.stdout, 'got through\n');
  });
});

describe('search paths, --cwd and --set', { concurrency: true }, () => {
  test('--set KEY.PATH=VALUE lands in the cascade as YAML (describe --json metadata)', async () => {
    const [before, afterCmd] = await Promise.all([
      cli(['--set', 'team.size=5', '--set', 'extra.list=[1, two]', 'describe', 'echo', '--json']),
      cli(['describe', 'echo', '--set', 'flag=true', '--json']),
    ]);
    assert.equal(before.code, 0, before.stderr);
    const meta = JSON.parse(before.stdout).metadata;
    assert.deepEqual(meta.team, { name: 'cli', size: 5 }, 'merged deeply over main’s team');
    assert.deepEqual(meta.extra, { list: [1, 'two'] });
    assert.equal(JSON.parse(afterCmd.stdout).metadata.flag, true);
  });

  test('--path DIR is searched first and shadows the workspace', async () => {
    const [run, desc, list, plain] = await Promise.all([
      cli(['--path', 'extra', 'run', 'greet']),
      cli(['--path', 'extra', 'describe', 'greet', '--json']),
      cli(['--path', 'extra', 'list', '--json']),
      cli(['run', 'greet']),
    ]);
    assert.equal(run.stdout, 'Howdy, world!\n');
    assert.equal(plain.stdout, 'Hello, world.\n');
    assert.match(JSON.parse(desc.stdout).origin.uri, /\/extra\/greet\.skill\.ts$/);
    const greets = (JSON.parse(list.stdout) as { name: string; origin: string }[]).filter((s) => s.name === 'greet');
    assert.equal(greets.length, 1);
    assert.match(greets[0]!.origin, /\/extra\/greet\.skill\.ts$/);
  });

  test('AGENT_APPS_PATH shadows the workspace; AGENT_APPS_HOME holds the user’s skills', async () => {
    const home = workspace({ 'skills/home-only.skill.ts': "export const frontmatter = { name: 'home-only' };\nexport default () => 'from home';\n" });
    const [envPath, envHome] = await Promise.all([
      cli(['run', 'greet'], { env: { AGENT_APPS_PATH: path.join(WS, 'extra') } }),
      cli(['run', 'home-only'], { env: { AGENT_APPS_HOME: home } }),
    ]);
    assert.equal(envPath.stdout, 'Howdy, world!\n');
    assert.equal(envHome.stdout, 'from home\n');
  });

  test('--cwd runs as if started there; a sub-folder finds its workspace', async () => {
    const [cwd, nested] = await Promise.all([cli(['--cwd', WS, 'run', 'greet', '--name', 'Cy'], { cwd: os.tmpdir() }), cli(['run'], { cwd: path.join(WS, 'extra') })]);
    assert.equal(cwd.code, 0, cwd.stderr);
    assert.equal(cwd.stdout, 'Hello, Cy.\n');
    assert.equal(nested.stdout, 'main ran\n');
  });
});

describe('list', { concurrency: true }, () => {
  test('a table of name, kind, description and origin; hidden skills only with --all', async () => {
    const [plain, all] = await Promise.all([cli(['list']), cli(['list', '--all'])]);
    assert.equal(plain.code, 0);
    assert.equal(plain.stderr, '');
    const lines = plain.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^NAME +KIND +DESCRIPTION +ORIGIN$/);
    assert.ok(lines.some((l) => /^echo +code +Returns its args\. +skills\/echo\.skill\.ts$/.test(l)), plain.stdout);
    assert.ok(lines.some((l) => /^file-read +code .*\(library\) file-read\.skill\.ts$/.test(l)), 'public built-ins are listed');
    for (const hidden of ['gate', 'validate-args', 'execute']) assert.ok(!lines.some((l) => l.startsWith(hidden + ' ')), `${hidden} is hidden`);
    for (const hidden of ['gate', 'validate-args', 'execute']) assert.match(all.stdout, new RegExp(`^${hidden} `, 'm'), `--all shows ${hidden}`);
  });

  test('--json is one parseable array of summaries', async () => {
    const r = await cli(['list', '--json']);
    assert.equal(r.stdout.split('\n').length, 2);
    const list = JSON.parse(r.stdout) as { name: string; kind: string; origin: string; visibility: string; description?: string }[];
    const echo = list.find((s) => s.name === 'echo')!;
    assert.deepEqual(echo, { name: 'echo', kind: 'code', origin: `file://${path.join(WS, 'skills', 'echo.skill.ts')}`, visibility: 'public', description: 'Returns its args.' });
    assert.ok(!list.some((s) => s.name === 'gate'));
  });

  test('broken skills are listed with their error, the rest still listed, exit 2', async () => {
    const dir = workspace({ 'skills/bad.md': '---\nname: bad\ndescription: oops: no\n---\n', 'skills/fine.skill.ts': "export const frontmatter = { name: 'fine', description: 'Works.' };\nexport default () => 1;\n" });
    const [table, json] = await Promise.all([cli(['list'], { cwd: dir }), cli(['list', '--json'], { cwd: dir })]);
    assert.equal(table.code, 2);
    assert.match(table.stdout, /^bad +markdown +ERROR /m);
    assert.match(table.stdout, /^fine +code +Works\./m);
    assert.match(oneLine(table), /^error: bad: .*skills\/bad\.md:3:\d+: malformed frontmatter/);
    assert.equal(json.code, 2);
    const bad = (JSON.parse(json.stdout) as { name: string; error?: string }[]).find((s) => s.name === 'bad')!;
    assert.match(bad.error!, /bad\.md:3/);
  });
});

describe('describe', { concurrency: true }, () => {
  test('shows the declaration, resolved metadata and the chain in order with where each key came from', async () => {
    const r = await cli(['describe', 'guarded']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, /^guarded {2}skills\/guarded\.skill\.ts\n {2}Behind a gate\.\n/);
    assert.match(r.stdout, /\nmetadata \(resolved cascade\)\n[\s\S]* {2}team:\n {4}name: cli\n/);
    const chain = r.stdout.split('chain (in order)\n')[1]!.trimEnd().split('\n');
    const names = chain.map((l) => /^\s+\d+\. (\S+)/.exec(l)?.[1]);
    assert.ok(names.indexOf('gate') < names.indexOf('validate-args') && names.indexOf('validate-args') < names.indexOf('execute'), chain.join('\n'));
    assert.match(chain.find((l) => l.includes(' gate '))!, /from skills\/guarded\.skill\.ts "closed"$/);
    assert.match(chain.find((l) => l.includes(' execute '))!, /from \(library\) main\.md$/);
  });

  test('--json parses: tool, origin, metadata and the ordered chain with from', async () => {
    const r = await cli(['describe', 'echo', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const d = JSON.parse(r.stdout) as { tool: { name: string }; origin: { uri: string }; metadata: Record<string, unknown>; chain: { name: string; args: unknown; from?: string }[] };
    assert.equal(d.tool.name, 'echo');
    assert.equal(d.origin.uri, `file://${path.join(WS, 'skills', 'echo.skill.ts')}`);
    assert.deepEqual(d.metadata.team, { name: 'cli', size: 3 }, 'cascaded from the workspace’s main');
    const names = d.chain.map((e) => e.name);
    for (const [a, b] of [['params', 'validate-args'], ['validate-returns', 'validate-args'], ['validate-args', 'execute'], ['directives', 'execute'], ['execute', 'agent-execute']] as const) {
      assert.ok(names.indexOf(a) >= 0 && names.indexOf(a) < names.indexOf(b), `${a} before ${b}: ${names.join(', ')}`);
    }
    assert.equal(d.chain.find((e) => e.name === 'params')!.from, d.origin.uri);
    assert.match(d.chain.find((e) => e.name === 'execute')!.from!, /\/skills\/main\.md$/);
  });

  test('an unknown skill is exit 2 with a suggestion', async () => {
    const r = await cli(['describe', 'ecko']);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.match(oneLine(r), /unknown skill 'ecko'.*did you mean 'echo'/);
  });
});

describe('signals', { concurrency: true }, () => {
  /** Starts `run wait`, sends `signal` once the skill is waiting, and times the exit. */
  async function interrupt(signal: NodeJS.Signals): Promise<Run & { ms: number }> {
    let sentAt = 0;
    const r = await cli(['run', 'wait'], {
      onSpawn: (child) => {
        child.stderr!.on('data', (d: Buffer | string) => {
          if (!sentAt && String(d).includes('waiting')) {
            sentAt = Date.now();
            child.kill(signal);
          }
        });
      },
    });
    return { ...r, ms: Date.now() - sentAt };
  }

  // "Quickly" without a clock: the skill waits 30 s and these tests time out at 20 s, so only a CLI
  // that ended the run on the signal, not one that waited it out, passes; the time is a diagnostic.
  test('SIGINT during a long-running skill exits 130 quickly, without a stack', { timeout: 20_000 }, async (t) => {
    const r = await interrupt('SIGINT');
    t.diagnostic(`exited ${r.ms} ms after the signal`);
    assert.equal(r.code, 130, r.stderr);
    assert.equal(r.stdout, '');
    assertNoStack(r);
  });

  test('SIGTERM exits 143', { timeout: 20_000 }, async (t) => {
    const r = await interrupt('SIGTERM');
    t.diagnostic(`exited ${r.ms} ms after the signal`);
    assert.equal(r.code, 143, r.stderr);
    assertNoStack(r);
  });
});

describe('colour', { concurrency: true }, () => {
  test('output to a pipe has no ANSI escapes', async () => {
    const runs = await Promise.all([cli(['list']), cli(['describe', 'echo']), cli(['run', 'fail']), cli(['run', 'gret']), cli(['run', 'echo', '--n', '1'])]);
    for (const r of runs) {
      assert.doesNotMatch(r.stdout, ANSI);
      assert.doesNotMatch(r.stderr, ANSI);
    }
  });

  // A terminal needs a pseudo-terminal: util-linux `script` provides one.
  const hasScript = (() => {
    try {
      return /util-linux/.test(execFileSync('script', ['--version'], { encoding: 'utf8' }));
    } catch {
      return false;
    }
  })();
  const inTerminal = (args: string[], env: Record<string, string | undefined> = {}) => {
    const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    return new Promise<string>((resolve, reject) => {
      const child = spawn('script', ['-qec', [process.execPath, BIN, ...args].map(quote).join(' '), '/dev/null'], { cwd: WS, env: baseEnv(env) });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.on('error', reject);
      child.on('close', () => resolve(out));
    });
  };

  test('a terminal gets colour unless NO_COLOR or --no-color', { skip: !hasScript && 'needs util-linux script' }, async () => {
    const [tty, noColorEnv, noColorFlag, emptyNoColor] = await Promise.all([
      inTerminal(['list']),
      inTerminal(['list'], { NO_COLOR: '1' }),
      inTerminal(['--no-color', 'list']),
      inTerminal(['list'], { NO_COLOR: '' }),
    ]);
    assert.match(tty, ANSI);
    assert.doesNotMatch(noColorEnv, ANSI);
    assert.doesNotMatch(noColorFlag, ANSI);
    assert.match(emptyNoColor, ANSI, 'an empty NO_COLOR does not count (no-color.org)');
    assert.match(noColorEnv, /echo +code +Returns its args\./);
  });
});

describe('the launcher, bin/agent-apps.js', { concurrency: true }, () => {
  test('runs in this checkout, whether or not dist/ is built', async () => {
    const r = await cli(['run', 'greet', '--name', 'Dee']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'Hello, Dee.\n');
  });

  /** A package root whose bin/ is a copy and whose src/, skills/, node_modules/ are the checkout's. */
  function packageCopy(dist?: { stampTime: Date }): string {
    const root = tempDir('agent-apps-launcher-');
    fs.mkdirSync(path.join(root, 'bin'));
    fs.copyFileSync(BIN, path.join(root, 'bin', 'agent-apps.js'));
    fs.copyFileSync(path.join(REPO, 'package.json'), path.join(root, 'package.json'));
    for (const d of ['src', 'skills', 'node_modules']) fs.symlinkSync(path.join(REPO, d), path.join(root, d));
    if (dist) {
      fs.mkdirSync(path.join(root, 'dist', 'surfaces', 'cli'), { recursive: true });
      fs.writeFileSync(path.join(root, 'dist', 'surfaces', 'cli', 'bin-entry.js'), "export async function run() { process.stdout.write('the built CLI\\n'); }\n");
      const stamp = path.join(root, 'dist', '.build-stamp');
      fs.writeFileSync(stamp, dist.stampTime.toISOString());
      fs.utimesSync(stamp, dist.stampTime, dist.stampTime);
    }
    return root;
  }

  function launch(root: string, args: string[]): Promise<Run> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(root, 'bin', 'agent-apps.js'), ...args], { cwd: WS, env: baseEnv() });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    });
  }

  test('runs the TypeScript sources when dist/ is missing or older than src/, the build when it is newer', async () => {
    const [missing, stale, fresh] = await Promise.all([
      launch(packageCopy(), ['run', 'greet']),
      launch(packageCopy({ stampTime: new Date('2000-01-01T00:00:00Z') }), ['run', 'greet']),
      launch(packageCopy({ stampTime: new Date(Date.now() + 86_400_000) }), ['run', 'greet']),
    ]);
    assert.equal(missing.stdout, 'Hello, world.\n', missing.stderr);
    assert.equal(stale.stdout, 'Hello, world.\n', stale.stderr);
    assert.equal(fresh.stdout, 'the built CLI\n', fresh.stderr);
  });

  test('answers --version (or -V) alone itself, from package.json, without loading the CLI', async () => {
    const root = packageCopy({ stampTime: new Date(Date.now() + 86_400_000) });
    const { version } = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string };
    const [long, short, more] = await Promise.all([launch(root, ['--version']), launch(root, ['-V']), launch(root, ['--version', '--no-color'])]);
    assert.equal(long.stdout, `${version}\n`, long.stderr);
    assert.equal(short.stdout, `${version}\n`, short.stderr);
    assert.equal(more.stdout, 'the built CLI\n', 'with other arguments the CLI answers');
  });
});
