// The terminal UI in a real terminal (SPEC §17, issue 11): the real binary runs in a pseudo-terminal
// (@lydell/node-pty) and the screen is read the way a person sees it (@xterm/headless); keys are
// typed one at a time. Where it matters that stdout carries only the result, stdout is a second
// PTY read apart. No mocks of ink. Each terminal kills its child when its test ends or times out.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnPty, KEYS, SLOW_SKILL, WORDCOUNT_SKILL, type Term } from './pty-helpers.ts';
import { writeAgentSkills } from './agent-helpers.ts';
import { tempDir } from './helpers.ts';

let ws: string;
let home: string;

const STORY_CODE = `const n = await ctx.manager.invoke('wordcount', { text: 'one two three' });
console.log('counted', n);
const twice = n * 2;
// the last line
ctx.manager.finish({ words: n, twice });`;

const GATED_CODE = `try {
  const r = await ctx.manager.invoke('shell', { command: 'echo gated' });
  ctx.manager.finish('ran: ' + r.stdout.trim());
} catch (e) { memory.refusal = e.message; throw e; }`;

before(() => {
  ws = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'agent-apps-pty-'));
  home = path.join(ws, '.home');
  fs.mkdirSync(path.join(ws, 'skills'));
  fs.writeFileSync(path.join(ws, 'skills', 'slow.skill.mjs'), SLOW_SKILL);
  fs.writeFileSync(path.join(ws, 'skills', 'wordcount.skill.mjs'), WORDCOUNT_SKILL);
  writeAgentSkills(path.join(ws, 'skills'), {
    story: {
      description: 'Counts words (a replayed agent).',
      'allowed-tools': 'wordcount',
      turns: [{ text: 'Let me count the words.\nThen I will finish.', invoke: STORY_CODE }],
    },
    gated: {
      description: 'Runs echo with approval.',
      'allowed-tools': 'wordcount',
      metadata: { 'ask-tools': 'shell(command=echo *)' },
      // Denied, the first turn's code keeps the reason; the next turn finishes with it.
      turns: [{ text: 'I will run echo.', invoke: GATED_CODE }, { invoke: `ctx.manager.finish('refused: ' + memory.refusal);` }],
    },
  });
  process.on('exit', () => fs.rmSync(ws, { recursive: true, force: true }));
});

function term(t: Parameters<typeof spawnPty>[0], args: string[], o: { cols?: number; env?: Record<string, string | undefined>; separateStdout?: boolean } = {}): Term {
  return spawnPty(t, args, { cwd: ws, env: { AGENT_APPS_HOME: home, NO_COLOR: undefined, FORCE_COLOR: undefined, AGENT_APPS_PATH: undefined, ...o.env }, cols: o.cols, separateStdout: o.separateStdout, timeoutMs: 30_000 });
}

/** A moment for a prompt just drawn to read keys (where a spinner keeps the screen from going idle). */
const pause = () => new Promise((r) => setTimeout(r, 150));

/** Types a line at a prompt that is ready, then Enter. */
async function line(tm: Term, text: string): Promise<void> {
  await tm.idle();
  await tm.type(text);
  tm.write(KEYS.enter);
}

test('repl: a command, Tab completion, ↑ history; Ctrl-C cancels a slow skill (its finally runs) and the prompt comes back; Ctrl-D leaves, exit 0, nothing on stdout', async (t) => {
  const marker = path.join(ws, 'finally-ran');
  const started = Date.now();
  const tm = term(t, ['repl'], { separateStdout: true });
  await tm.waitFor('agent-apps›');
  t.diagnostic(`repl ready to type in ${Date.now() - started} ms (spawn to prompt, this machine, under test load)`);
  await line(tm, 'wordcount --text "one two"');
  await tm.waitFor(/^2$/m);
  // Tab: the one skill that starts with "wo", then its one param.
  await tm.idle();
  await tm.type('wo');
  tm.write(KEYS.tab);
  await tm.waitFor(/agent-apps› wordcount \s*$/m);
  await tm.type('--t');
  tm.write(KEYS.tab);
  await tm.waitFor(/agent-apps› wordcount --text \s*$/m);
  await tm.type('"a b c"');
  tm.write(KEYS.enter);
  await tm.waitFor(/^3$/m);
  // ↑ brings the last line back.
  await tm.idle();
  tm.write(KEYS.up);
  await tm.waitFor(/agent-apps› wordcount --text "a b c" ?$/m);
  tm.write('\x15');
  await tm.waitFor(/agent-apps› *$/m);
  await line(tm, `slow --marker ${marker}`);
  await tm.waitFor('Ctrl-C cancels');
  tm.write(KEYS.ctrlC);
  await tm.waitFor('✗ slow: cancelled');
  await tm.waitFor('slow: finally ran');
  assert.equal(fs.readFileSync(marker, 'utf8'), 'finally ran');
  await tm.waitFor(/agent-apps› *$/m);
  await tm.idle();
  tm.write(KEYS.ctrlD);
  const { exitCode } = await tm.exited;
  assert.equal(exitCode, 0, tm.text());
  assert.equal(tm.stdout(), '', 'nothing on stdout');
  assert.deepEqual(fs.readFileSync(path.join(home, 'history'), 'utf8').trim().split('\n').slice(-3), ['wordcount --text "one two"', 'wordcount --text "a b c"', `slow --marker ${marker}`], 'the history file');
});

test('repl: :set, :describe, an error as one line with its code, Ctrl-C twice on an empty line leaves with exit 0', async (t) => {
  const tm = term(t, ['run', 'repl']);
  await tm.waitFor('agent-apps›');
  await line(tm, 'wordcont --text x');
  await tm.waitFor(/✗ error \[E_TOOL_NOT_FOUND\]: unknown skill 'wordcont' — did you mean 'wordcount'\?/);
  await line(tm, ':describe wordcount');
  await tm.waitFor(/chain .*validate-args/);
  await line(tm, ':set wordcount.x=1');
  await tm.waitFor('set wordcount.x=1 for this session');
  await line(tm, ':set');
  await tm.waitFor('"x": 1');
  await line(tm, ':nope');
  await tm.waitFor('✗ error [E_USAGE]: unknown command :nope — :help lists them');
  await tm.idle();
  tm.write(KEYS.ctrlC);
  await tm.waitFor('Ctrl-C again (or Ctrl-D) leaves the repl');
  tm.write(KEYS.ctrlC);
  assert.equal((await tm.exited).exitCode, 0);
});

test('an agent run in a terminal: its text, its code (first lines), the skill its code called with the result, turn and tokens on stderr; the result alone on stdout', async (t) => {
  const tm = term(t, ['run', 'story'], { separateStdout: true });
  assert.equal((await tm.exited).exitCode, 0, tm.text());
  await tm.waitFor('── story · 1 turn');
  const screen = tm.text();
  assert.match(screen, /── story · turn 1/);
  assert.match(screen, /^Let me count the words\.$/m);
  assert.match(screen, /^Then I will finish\.$/m);
  assert.match(screen, /⚙ invoke\n {2}│ const n = await ctx\.manager\.invoke\('wordcount'.*\n {2}│ console\.log\('counted', n\);\n {2}│ const twice = n \* 2;\n {2}│ … 2 more lines/);
  assert.match(screen, /→ wordcount \{"text":"one two three"\} ✓ 3/);
  assert.match(screen, /✓ finished: \{"words":3,"twice":6\}/);
  assert.match(screen, /── story · 1 turn · \d[\d,]* tokens/);
  assert.doesNotMatch(screen, /"words": 3/, 'the result is not on the terminal of stderr');
  assert.equal(tm.stdout().replace(/\r\n/g, '\n'), '{\n  "words": 3,\n  "twice": 6\n}\n');
  assert.match(tm.raw(), /\x1b\[3[0-9]m/, 'colour on a terminal');
});

test('a 40-column terminal: no line is wider than the terminal; NO_COLOR: no colour at all', async (t) => {
  const tm = term(t, ['run', 'story'], { cols: 40, env: { NO_COLOR: '1' } });
  assert.equal((await tm.exited).exitCode, 0, tm.text());
  await tm.waitFor('── story · 1 turn');
  assert.deepEqual(tm.wrapped(), [], 'lines the terminal had to wrap');
  assert.match(tm.text(), /→ wordcount \{"text":.*✓ 3$/m, 'the args are cut before the outcome');
  assert.match(tm.text(), /│ const n = await ctx\.manager\.invoke\(…/);
  assert.doesNotMatch(tm.raw(), /\x1b\[(3[0-79]|9[0-7]|4[0-79]|38;|48;)[0-9;]*m/, 'no colour codes');
});

test('approval gate answered allow (y): the call runs; the prompt showed the tool, its args, the calling code and why', async (t) => {
  const tm = term(t, ['run', 'gated'], { separateStdout: true });
  await tm.waitFor('[n] deny');
  await pause();
  const prompt = tm.text();
  assert.match(prompt, /\? gated's code calls shell/);
  assert.match(prompt, /args {2}\{"command":"echo gated"\}/);
  assert.match(prompt, /2 › {3}const r = await ctx\.manager\.invoke\('shell'/);
  assert.match(prompt, /why {3}ask-tools: shell\(command=echo \*\)/);
  tm.write('y');
  assert.equal((await tm.exited).exitCode, 0, tm.text());
  assert.equal(tm.stdout().trim(), 'ran: gated');
  assert.match(tm.text(), /→ shell \{"command":"echo gated"\} ✓/);
  assert.doesNotMatch(tm.text(), /\[n\] deny/, 'the prompt is gone');
});

test('approval gate answered deny with a reason: the model’s next turn sees the reason', async (t) => {
  const tm = term(t, ['run', 'gated'], { separateStdout: true });
  await tm.waitFor('[n] deny');
  await pause();
  tm.write('n');
  await tm.waitFor('deny, reason ›');
  await tm.type('not on Fridays');
  tm.write(KEYS.enter);
  assert.equal((await tm.exited).exitCode, 0, tm.text());
  assert.match(tm.stdout(), /^refused: .*denied the call of 'shell': not on Fridays/);
  assert.match(tm.text(), /→ shell \{"command":"echo gated"\} ✗ \[E_DENIED\]/);
  assert.match(tm.text(), /── gated · turn 2/);
  // The last frame: the live part became the summary line.
  assert.match(tm.text(), /── gated · 2 turns · [\d,]+ tokens/);
  assert.doesNotMatch(tm.text(), / · thinking$/m);
});

test('Ctrl-C at a gate aborts the run: exit 130', async (t) => {
  const tm = term(t, ['run', 'gated'], { separateStdout: true });
  await tm.waitFor('[n] deny');
  await pause();
  tm.write(KEYS.ctrlC);
  assert.equal((await tm.exited).exitCode, 130, tm.text());
  assert.match(tm.text(), /interrupted — shutting down/);
  assert.equal(tm.stdout(), '');
});

test('debug --break in a terminal: the tree with the paused entry; s steps to the next entry, i shows the context, c continues', async (t) => {
  const tm = term(t, ['debug', 'wordcount', '--text', 'a b', '--break', 'validate-args'], { separateStdout: true });
  await tm.waitFor('⏸ paused at wordcount › validate-args');
  assert.match(tm.text(), /▸ wordcount …\n {2}· params …\n/);
  assert.match(tm.text(), /▶ wordcount › validate-args/);
  await tm.idle();
  tm.write('s');
  await tm.waitFor('⏸ paused at wordcount › validate-allowed-tools');
  assert.match(tm.text(), /⏸ wordcount › validate-args\n {2}· validate-args …\n {2}▶ wordcount › validate-allowed-tools/);
  await tm.idle();
  tm.write('i');
  await tm.waitFor('context at wordcount › validate-allowed-tools (serialized)');
  await tm.waitFor(/"text": "a b"/);
  await tm.idle();
  tm.write('c');
  assert.equal((await tm.exited).exitCode, 0, tm.text());
  assert.equal(tm.stdout().trim(), '2');
  assert.match(tm.text(), /▸ wordcount \d+\.\d{3} ms/, 'the tree after the run');
});

test('tutor: each step is checked; leaving keeps the progress, and the next run resumes at the first unfinished step', async (t) => {
  const tour = tempDir(t, 'agent-apps-tutor-');
  const run = (args: string[]) => spawnPty(t, args, { cwd: tour, env: { AGENT_APPS_HOME: home, NO_COLOR: undefined, AGENT_APPS_PATH: undefined }, timeoutMs: 30_000 });
  const first = run(['tutor']);
  await first.waitFor('1/4  A code skill');
  await first.idle();
  first.write(KEYS.enter);
  await first.waitFor('✓ agent-apps run tutor-hello --name Ada  →  Hello, Ada!');
  await first.waitFor('2/4  A middleware in main.md');
  await first.idle();
  first.write('q');
  assert.equal((await first.exited).exitCode, 0);
  assert.deepEqual(JSON.parse(fs.readFileSync(path.join(tour, '.agent-apps', 'tutor.json'), 'utf8')).done, ['code-skill']);
  assert.ok(fs.existsSync(path.join(tour, 'skills', 'tutor', 'tutor-hello.skill.ts')));

  const second = run(['tutor']);
  await second.waitFor('1 done before; going on at “A middleware in main.md”');
  await second.idle();
  second.write(KEYS.enter);
  await second.waitFor('→  Hello, Ada! [via main.md]');
  await second.waitFor('3/4');
  await second.idle();
  second.write(KEYS.enter);
  await second.waitFor('→ tutor-hello {"name":"Ada"} ✓ Hello, Ada! [via main.md]');
  await second.waitFor('4/4');
  await second.idle();
  second.write(KEYS.enter);
  await second.waitFor('⏸ paused at tutor-hello');
  await second.idle();
  second.write('c');
  await second.waitFor('All 4 steps done');
  assert.equal((await second.exited).exitCode, 0);
  assert.deepEqual(JSON.parse(fs.readFileSync(path.join(tour, '.agent-apps', 'tutor.json'), 'utf8')).done, ['code-skill', 'middleware', 'agent-skill', 'debug']);
});

test('a question from ctx.manager.ask (the ask skill): a choice by its number or ↓ and Enter, free text typed; the answer is the result on stdout', async (t) => {
  const choice = term(t, ['run', 'ask', '--question', 'Deploy to production?', '--choices', 'yes', '--choices', 'no'], { separateStdout: true });
  await choice.waitFor('? Deploy to production?');
  assert.match(choice.text(), /\[1\] yes {3}\[2\] no/);
  await pause();
  choice.write('2');
  assert.equal((await choice.exited).exitCode, 0, choice.text());
  assert.equal(choice.stdout().trim(), 'no');
  const text = term(t, ['run', 'ask', '--question', 'Your name?'], { separateStdout: true });
  await text.waitFor('? Your name?');
  await pause();
  await text.type('Ada');
  text.write(KEYS.enter);
  assert.equal((await text.exited).exitCode, 0, text.text());
  assert.equal(text.stdout().trim(), 'Ada');
});
