// The first hour in a terminal (issue "The first hour"): the real binary on a pseudo-terminal,
// the screen read as a person sees it (test/pty-helpers.ts). What is left on the screen after
// Ctrl-C in an agent run, a Tab that arrives with the text before it, `debug` and `--profile` as
// docs/cli.md shows them, and where the tutor sends you at the end.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnPty, KEYS, SLOW_SKILL, WORDCOUNT_SKILL, type Term } from './pty-helpers.ts';
import { writeAgentSkills } from './agent-helpers.ts';
import { REPO, tempDir } from './helpers.ts';

let ws: string;
let home: string;

before(() => {
  ws = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'agent-apps-firsthour-'));
  home = path.join(ws, '.home');
  fs.mkdirSync(path.join(ws, 'skills'));
  fs.writeFileSync(path.join(ws, 'skills', 'slow.skill.mjs'), SLOW_SKILL);
  fs.writeFileSync(path.join(ws, 'skills', 'wordcount.skill.mjs'), WORDCOUNT_SKILL);
  writeAgentSkills(path.join(ws, 'skills'), {
    sleepy: {
      description: 'Waits (a replayed agent).',
      'allowed-tools': 'slow',
      turns: [{ text: 'I will wait a while.', invoke: `await ctx.manager.invoke('slow', {});\nctx.manager.finish('woke');` }],
    },
  });
  process.on('exit', () => fs.rmSync(ws, { recursive: true, force: true }));
});

function term(t: Parameters<typeof spawnPty>[0], args: string[], o: { cwd?: string; cols?: number; env?: Record<string, string | undefined>; separateStdout?: boolean } = {}): Term {
  return spawnPty(t, args, { cwd: o.cwd ?? ws, env: { AGENT_APPS_HOME: home, NO_COLOR: undefined, FORCE_COLOR: undefined, AGENT_APPS_PATH: undefined, ...o.env }, cols: o.cols, separateStdout: o.separateStdout, timeoutMs: 30_000 });
}

test('tutor, all steps done: the last line is the docs folder that came with agent-apps, and it exists', async (t) => {
  const tour = tempDir(t, 'agent-apps-tutor-');
  fs.mkdirSync(path.join(tour, '.agent-apps'));
  fs.writeFileSync(path.join(tour, '.agent-apps', 'tutor.json'), JSON.stringify({ version: 1, done: ['code-skill', 'middleware', 'agent-skill', 'debug'] }));
  const tm = term(t, ['tutor'], { cwd: tour });
  assert.equal((await tm.exited).exitCode, 0, tm.text());
  const lines = tm.lines();
  assert.match(tm.text(), /All done before \(--restart starts again\)\.\nAll 4 steps done\. Next:/);
  assert.match(tm.text(), /agent-apps --help +every command/);
  const last = lines[lines.length - 1]!.trim();
  assert.ok(path.isAbsolute(last), `the last line is a path: ${last}`);
  assert.ok(fs.existsSync(path.join(last, 'cli.md')) && fs.existsSync(path.join(last, 'concepts.md')), `${last} holds the docs`);
  assert.ok(!fs.existsSync(path.join(tour, 'docs')), 'the workspace has no docs/ of its own');
});

/** The output lines of each console block in a docs page whose command matches, comments cut. */
function docsOutput(page: string, command: RegExp): string[][] {
  const text = fs.readFileSync(path.join(REPO, 'docs', page), 'utf8');
  const blocks: string[][] = [];
  for (const [, body] of text.matchAll(/```console\n([\s\S]*?)```/g)) {
    let out: string[] | undefined;
    for (const line of body!.split('\n')) {
      if (line.startsWith('$ ')) {
        out = command.test(line.slice(2)) ? [] : undefined;
        if (out) blocks.push(out);
      } else if (out) out.push(line.replace(/\s+#.*$/, ''));
    }
  }
  for (const b of blocks) while (b.length && !b[b.length - 1]) b.pop();
  return blocks;
}

test('debug and --profile in a terminal: the tree or the table first (stderr), the result last (stdout) — and docs/cli.md, events.md and concepts.md show that order', async (t) => {
  const hello = tempDir(t, 'agent-apps-debug-order-');
  fs.mkdirSync(path.join(hello, 'skills'));
  fs.copyFileSync(path.join(REPO, 'examples', 'hello', 'skills', 'greet.skill.ts'), path.join(hello, 'skills', 'greet.skill.ts'));
  const debug = term(t, ['debug', 'greet', '--name', 'Ada'], { cwd: hello });
  assert.equal((await debug.exited).exitCode, 0, debug.text());
  const shown = debug.lines();
  assert.equal(shown[shown.length - 1], 'Hello, Ada.', debug.text());
  assert.match(shown[0]!, /^▸ greet \d+\.\d{3} ms$/);
  assert.ok(shown.slice(1, -1).every((l) => /^ {2}[·⏸] /.test(l)), debug.text());

  const profile = term(t, ['--profile', 'run', 'greet', '--name', 'Ada'], { cwd: hello });
  assert.equal((await profile.exited).exitCode, 0, profile.text());
  const table = profile.lines().filter(Boolean);
  assert.equal(table[table.length - 1], 'Hello, Ada.', profile.text());
  assert.match(table[0]!, /^KIND +NAME +COUNT/);
  assert.equal(table[table.length - 2], 'entry times are inclusive: each contains everything downstream of it');

  for (const page of ['cli.md', 'events.md', 'concepts.md']) {
    const blocks = [...docsOutput(page, /^agent-apps debug greet [^>]*$/), ...docsOutput(page, /^agent-apps --profile run greet /)];
    assert.ok(blocks.length >= 1, `${page}: the debug and --profile examples`);
    for (const b of blocks) {
      assert.equal(b[b.length - 1], 'Hello, Ada.', `${page}: the result is the last line:\n${b.join('\n')}`);
      assert.match(b.find(Boolean)!, /^(▸ greet |KIND )/, `${page}: the tree or the table comes first:\n${b.join('\n')}`);
    }
  }
});

test('repl: a Tab that comes in one read with the text before it completes, as when typed apart; a Tab in the middle of a read too', async (t) => {
  const tm = term(t, ['repl'], { separateStdout: true });
  await tm.waitFor('agent-apps›');
  await tm.idle();
  // One write is one read on the other side of the PTY: the text and the Tab arrive together.
  tm.write('wo\t');
  await tm.waitFor(/agent-apps› wordcount \s*$/m);
  await tm.idle();
  tm.write('--t\t"a b c"');
  await tm.waitFor(/agent-apps› wordcount --text "a b c"\s*$/m);
  await tm.idle();
  tm.write(KEYS.enter);
  await tm.waitFor(/^3$/m);
  await tm.idle();
  tm.write(KEYS.ctrlD);
  assert.equal((await tm.exited).exitCode, 0, tm.text());
  assert.equal(tm.stdout(), '');
});

test('Ctrl-C during an agent run: the screen ends with the agent’s text, then its code (interrupted), the notice, the shutdown’s warnings and the summary — no spinner line left; exit 130, nothing on stdout', async (t) => {
  const tm = term(t, ['run', 'sleepy'], { separateStdout: true });
  await tm.waitFor(/→ slow \{\} …/);
  tm.write(KEYS.ctrlC);
  assert.equal((await tm.exited).exitCode, 130, tm.text());
  assert.equal(tm.stdout(), '');
  const lines = tm.lines();
  const at = (re: RegExp) => {
    const i = lines.findIndex((l) => re.test(l));
    assert.ok(i >= 0, `${re} on the screen:\n${tm.text()}`);
    return i;
  };
  const order = [
    at(/^── sleepy · turn 1$/),
    at(/^I will wait a while\.$/),
    at(/^⚙ invoke$/),
    at(/^ {2}│ await ctx\.manager\.invoke\('slow', \{\}\);$/),
    at(/^ {2}→ slow \{\} …$/),
    at(/^ {2}✗ interrupted$/),
    at(/^interrupted — shutting down \(Ctrl-C again to exit at once\)$/),
    at(/slow: finally ran$/),
    at(/^── sleepy · 1 turn · [\d,]+ tokens · interrupted$/),
  ];
  assert.deepEqual(order, [...order].sort((a, b) => a - b), `in this order:\n${tm.text()}`);
  assert.equal(order[order.length - 1], lines.length - 1, `the summary is the last line:\n${tm.text()}`);
  assert.deepEqual(lines.filter((l) => /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]|· thinking|· stopping/.test(l)), [], 'no spinner line left');
  assert.equal(lines.filter((l) => l.includes('⚙ invoke')).length, 1, 'the code block once');
  assert.equal(lines.filter((l) => /^── sleepy · \d+ turns? /.test(l)).length, 1, 'one summary');
});

test('repl, an agent skill: its prompt stays a spinner while the agent runs (an agent starting does not bring the prompt back); Ctrl-C cancels it, the agent’s output in order, the warnings, the summary, then the prompt', async (t) => {
  const tm = term(t, ['repl'], { separateStdout: true });
  await tm.waitFor('agent-apps›');
  await tm.idle();
  await tm.type('sleepy');
  tm.write(KEYS.enter);
  await tm.waitFor(/→ slow \{\} …/);
  await tm.waitFor(/sleepy — Ctrl-C cancels/);
  assert.doesNotMatch(tm.text(), /agent-apps› *$/m, `no prompt while the agent runs:\n${tm.text()}`);
  tm.write(KEYS.ctrlC);
  await tm.waitFor(/✗ sleepy: cancelled\nagent-apps› *$/m);
  const text = tm.text();
  assert.match(text, /^ {2}→ slow \{\} …\n {2}✗ interrupted\nslow: finally ran\n── sleepy · 1 turn · [\d,]+ tokens · interrupted\n✗ sleepy: cancelled$/m, text);
  assert.doesNotMatch(text, /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/, 'no spinner line left');
  await tm.idle();
  tm.write(KEYS.ctrlD);
  assert.equal((await tm.exited).exitCode, 0, tm.text());
  assert.equal(tm.stdout(), '');
});
