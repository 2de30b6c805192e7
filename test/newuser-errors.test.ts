// The first hour (issue 'The first hour: install, test and fail exactly as the README and docs
// say'): what a new user meets when a skill fails, when a skill names only its cassette, when
// replayed agent code throws, when a project made by `npm init -y` tests a skill from code, and
// when set() writes into a tool's shared declaration — each through real processes of
// bin/agent-apps.js (and of npm and `node --test` for the docs' test file), in throw-away folders.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BIN, REPO, cli, cliEnv, folder, tempDir, type Run } from './cli-process.ts';
import { streamLines } from './headless-helpers.ts';
import { fakeOpenAI, textReply } from './fake-openai.ts';
import { natsSkip, startNats } from './nats-helpers.ts';

const BOOM = "export const frontmatter = { name: 'boom', description: 'Fails the way most code fails.' };\nexport default function () {\n  throw new Error('the disk is full');\n}\n";

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = cliEnv()): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('a plain throw in a skill is E_SKILL everywhere', () => {
  const ws = folder({
    'skills/boom.skill.ts': BOOM,
    // An eval written from docs/ci.md: `error: E_CODE` with the code the run says.
    'skills/boom.test.yaml': 'skill: boom\ncases:\n  - name: fails as the run says\n    expect: { error: E_SKILL }\n',
  });

  test('text, --json and stream-json say E_SKILL; the text line still offers the stack', async () => {
    const text = await cli(['run', 'boom'], ws);
    assert.equal(text.code, 1);
    assert.equal(text.stderr, 'error [E_SKILL]: the disk is full  (run with --debug for the stack)\n');
    const json = await cli(['run', 'boom', '--json'], ws);
    assert.equal(json.code, 1);
    assert.equal(json.stderr, 'error [E_SKILL]: the disk is full  (run with --debug for the stack)\n');
    const stream = await cli(['run', 'boom', '--output-format', 'stream-json'], ws);
    assert.equal(stream.code, 1);
    assert.deepEqual(streamLines(stream.stdout).at(-1)!.error, { code: 'E_SKILL', message: 'the disk is full' });
    const debug = await cli(['run', 'boom', '--debug'], ws);
    assert.match(debug.stderr, /^error \[E_SKILL\]: the disk is full\n\s+at /);
  });

  test("agent-apps test: expect: { error: E_SKILL } passes, and a failing expectation names E_SKILL", async () => {
    const pass = await cli(['test'], ws);
    assert.equal(pass.code, 0, pass.stdout + pass.stderr);
    assert.match(pass.stdout, /1 passed, 0 failed\n$/);
    const other = folder({ 'skills/boom.skill.ts': BOOM, 'skills/boom.test.yaml': 'skill: boom\ncases:\n  - name: expects another code\n    expect: { error: E_OTHER }\n' });
    const fail = await cli(['test'], other);
    assert.equal(fail.code, 1);
    assert.match(fail.stdout, /but it failed with E_SKILL: the disk is full/);
  });

  test('mcp serve: the tool result is E_SKILL: message, as on the command line', async (t) => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', 'serve'], cwd: ws, env: cliEnv() as Record<string, string>, stderr: 'pipe' });
    const client = new Client({ name: 'agent-apps-test', version: '1.0.0' });
    await client.connect(transport);
    t.after(() => client.close());
    const result = await client.callTool({ name: 'boom', arguments: {} });
    assert.equal(result.isError, true);
    assert.deepEqual(result.content, [{ type: 'text', text: 'E_SKILL: the disk is full' }]);
  });

  test('run --remote: a worker reports it as E_SKILL too', { skip: natsSkip }, async (t) => {
    const server = await startNats();
    t.after(() => server.stop());
    const remote = folder({
      'skills/boom.skill.ts': BOOM,
      'skills/main.md': `---\nname: main\ndescription: Work runs on NATS.\nmetadata:\n  events:\n    backend: nats\n    url: ${server.url}\n    namespace: firsthour\n---\n`,
    });
    const worker = spawn(process.execPath, [BIN, 'worker'], { cwd: remote, env: cliEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => worker.once('exit', resolve));
    t.after(async () => {
      if (worker.exitCode === null) worker.kill('SIGTERM');
      await exited;
    });
    let log = '';
    worker.stderr!.setEncoding('utf8').on('data', (d: string) => (log += d));
    while (!/queue '.*' on nats/.test(log)) {
      assert.equal(worker.exitCode, null, `the worker exited: ${log}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const r = await cli(['run', 'boom', '--remote', '--remote-timeout', '20000'], remote);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^error \[E_SKILL\]: the disk is full/);
  });
});

describe('a model that names only a cassette replays it', () => {
  test("writing-skills.md's haiku (model: { cassette }) runs in an init workspace, whose main.md sets no model", async () => {
    const ws = tempDir();
    assert.equal((await cli(['init'], ws)).code, 0);
    fs.writeFileSync(path.join(ws, 'skills', 'haiku.md'), '---\nname: haiku\ndescription: Write a haiku about a topic.\nmetadata:\n  params:\n    type: object\n    properties:\n      topic: { type: string }\n    required: [topic]\n  returns: { type: string }\n  model: { cassette: haiku.cassette.yaml }\n---\nWrite one haiku about :arg{name=topic}.\n');
    fs.writeFileSync(path.join(ws, 'skills', 'haiku.cassette.yaml'), "turns:\n  - text: Here is what I was asked.\n    invoke: |\n      ctx.manager.finish(await ctx.manager.get('locals.prompt.expanded'));\n");
    const r = await cli(['run', 'haiku', '--topic', 'the sea'], ws, { env: { AWS_EC2_METADATA_DISABLED: 'true' } });
    assert.equal(r.stderr, '');
    assert.equal(r.code, 0);
    assert.equal(r.stdout, 'Write one haiku about the sea.\n');
  });

  test("new in a loose folder: its next steps work as written — init, set model: in the skills/main.md it writes, delete the skill's model: block", async (t) => {
    const dir = tempDir();
    const made = await cli(['new', 'digest'], dir);
    assert.equal(made.code, 0, made.stderr);
    assert.match(made.stdout, /run agent-apps init here, set model: in its skills\/main\.md\n {2}\(one model for every skill\) and delete the model: block in digest\.md\n/);
    assert.doesNotMatch(made.stdout, /main\.md that sets one/);
    assert.equal((await cli(['init'], dir)).code, 0);
    const srv = await fakeOpenAI([textReply('three words, digested'), textReply('from main.md')]);
    t.after(() => srv.close());
    // Set model: in main.md as its comment shows (uncommented, with this server's address).
    const mainFile = path.join(dir, 'skills', 'main.md');
    const main = fs.readFileSync(mainFile, 'utf8');
    const block = /^ {2}# model:\n(?: {2}# {3}.*\n)+/m.exec(main);
    assert.ok(block, `main.md shows a model: to uncomment:\n${main}`);
    const model = block[0].replace(/^ {2}# ?/gm, '  ').replace(/baseURL: \S+.*$/m, `baseURL: ${srv.baseURL}`);
    fs.writeFileSync(mainFile, main.replace(block[0], model));
    // Delete the whole model: block of digest.md.
    const digestFile = path.join(dir, 'skills', 'digest.md');
    fs.writeFileSync(digestFile, fs.readFileSync(digestFile, 'utf8').replace(/^ {2}model:\n(?: {4}.*\n)+/m, ''));
    const live = await cli(['run', 'digest', '--input', 'a b c'], dir);
    assert.equal(live.code, 0, live.stderr);
    assert.equal(live.stdout, 'three words, digested\n');
    assert.equal(srv.requests.length, 1);
    // A skill that names only its cassette under that main.md: main's provider wins (the cascade merges model key by key).
    fs.writeFileSync(path.join(dir, 'skills', 'named.md'), '---\nname: named\ndescription: Names its cassette only.\nmetadata:\n  model: { cassette: named.cassette.yaml }\n---\nAnswer.\n');
    fs.writeFileSync(path.join(dir, 'skills', 'named.cassette.yaml'), 'turns:\n  - text: from the cassette\n');
    const named = await cli(['run', 'named'], dir);
    assert.equal(named.code, 0, named.stderr);
    assert.equal(named.stdout, 'from main.md\n');
  });

  test('agent-apps test --update knows such a skill replays: it refuses to record it (exit 2), and the case replays without --update', async () => {
    const ws = folder({
      'skills/named.md': '---\nname: named\ndescription: Names its cassette only.\nmetadata:\n  model: { cassette: named.cassette.yaml }\n---\nAnswer.\n',
      'skills/named.cassette.yaml': 'turns:\n  - text: from the cassette\n',
      'skills/named.test.yaml': 'skill: named\ncases:\n  - name: answers\n    cassette: named.cassette.yaml\n    expect: { equals: from the cassette }\n',
    });
    const update = await cli(['test', '--update'], ws);
    assert.equal(update.code, 2);
    assert.match(update.stderr, /--update records against a live model, but 'named' replays a cassette \(model\.cassette and no model\.provider\)/);
    const replay = await cli(['test'], ws);
    assert.equal(replay.code, 0, replay.stdout + replay.stderr);
  });
});

test("a replay that ends after agent code threw reports the code's error, and the cassette's end as why the run stopped", async () => {
  const ws = folder({
    'data.csv': 'name,count\nada,3\n',
    'skills/columns.md': '---\nname: columns\ndescription: Sums a column of data.csv.\nmetadata:\n  allowed-tools: file-read\n  model: { provider: replay, cassette: columns.cassette.yaml }\n---\nSum the nope column of data.csv.\n',
    'skills/columns.cassette.yaml': "turns:\n  - text: Reading the file.\n    invoke: |\n      const csv = await ctx.manager.invoke('file-read', { path: 'data.csv' });\n      const header = csv.split('\\n')[0].split(',');\n      if (!header.includes('nope')) throw new Error(\"no column 'nope' in data.csv\");\n",
  });
  const r = await cli(['run', 'columns'], ws);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^error \[E_SKILL\]: no column 'nope' in data\.csv \(line 3\) — and then: replay cassette \S+columns\.cassette\.yaml has 1 turn; the agent asked for turn 2\n$/);
  const stream = await cli(['run', 'columns', '--output-format', 'stream-json'], ws);
  const result = streamLines(stream.stdout).at(-1)!;
  assert.equal(result.error.code, 'E_SKILL');
  assert.match(result.error.message, /^no column 'nope' in data\.csv/);
});

test("'Testing a skill from code' works as written in a project made by npm init -y", async () => {
  const doc = fs.readFileSync(path.join(REPO, 'docs', 'writing-skills.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Testing a skill from code'));
  // Fenced blocks, also those indented in a list item (their indent removed).
  const blocks = (text: string) => [...text.matchAll(/^( *)```(\w*)\n([\s\S]*?)^\1```$/gm)].map((m) => ({ lang: m[2]!, body: m[3]!.replace(new RegExp(`^${m[1]}`, 'gm'), '') }));
  const byFirstLine = (prefix: string) => blocks(doc).find((b) => b.body.startsWith(prefix))?.body;
  const project = tempDir('agent-apps-npm-project-');
  const npm = fs.existsSync(path.join(path.dirname(process.execPath), 'npm')) ? path.join(path.dirname(process.execPath), 'npm') : 'npm';
  const npmEnv = cliEnv({ npm_config_cache: path.join(project, '.npm-cache'), npm_config_update_notifier: 'false' });
  const init = await run(npm, ['init', '-y'], project, npmEnv);
  assert.equal(init.code, 0, init.stderr);
  // The section's setup, command by command; the install of the checkout is what npm does with it: a link.
  const setup = blocks(section).find((b) => b.lang === 'sh');
  assert.ok(setup, 'the section starts with its shell commands');
  for (const line of setup.body.split('\n').map((l) => l.replace(/\s+#.*$/, '').trim()).filter(Boolean)) {
    if (line.startsWith('npm install --save-dev /path/to/agent-apps')) {
      fs.mkdirSync(path.join(project, 'node_modules'), { recursive: true });
      fs.symlinkSync(REPO, path.join(project, 'node_modules', 'agent-apps'), 'dir');
      continue;
    }
    const [command, ...args] = line.split(/\s+/);
    assert.equal(command, 'npm', `a setup step this test knows how to run: ${line}`);
    const step = await run(npm, args, project, npmEnv);
    assert.equal(step.code, 0, `${line}: ${step.stderr}`);
  }
  // The skills the test file uses, as the page writes them.
  const testFile = blocks(section).find((b) => b.lang === 'ts')!.body;
  const testName = /^\/\/ (\S+)/.exec(testFile)![1]!;
  const files: Record<string, string> = {
    'skills/slugify.skill.ts': byFirstLine('// skills/slugify.skill.ts')!,
    'skills/haiku.md': blocks(doc).find((b) => b.lang === 'markdown' && b.body.includes('name: haiku'))!.body,
    'skills/haiku.cassette.yaml': byFirstLine('# skills/haiku.cassette.yaml')!,
    'skills/haiku-rules.txt': 'Rules: three lines of 5, 7 and 5 syllables; no rhyme; finish with the haiku as a string.\n',
    'skills/main.md': blocks(doc).find((b) => b.lang === 'markdown' && b.body.includes('name: main'))!.body,
    [testName]: testFile,
  };
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(project, rel)), { recursive: true });
    fs.writeFileSync(path.join(project, rel), text);
  }
  const tested = await run(process.execPath, ['--test'], project);
  assert.equal(tested.code, 0, tested.stdout + tested.stderr);
  assert.match(tested.stdout, /ℹ pass 4\n/);
  assert.match(tested.stdout, /ℹ fail 0\n/);
});

test("set() writes by dotted path into a Mutable property's nested array: a copy on write, for this run", async () => {
  const ws = folder({
    'skills/retag.skill.ts': `export const frontmatter = { name: 'retag', description: 'Rewrites its own tags and first search path.', metadata: { tags: ['draft'] } };
export default function (ctx: any) {
  ctx.manager.set('run.tool.tags.0', 'final');
  ctx.manager.set('locals.config.paths.0', '/elsewhere');
  return { tags: ctx.run.tool.tags, path: ctx.locals.config.paths[0] };
}
`,
  });
  const r = await cli(['run', 'retag', '--json'], ws);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { tags: ['final'], path: '/elsewhere' });
});
