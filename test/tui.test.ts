// The terminal UI's pieces (SPEC §17, issue 11): the pure parts (text, line editing, completion,
// history, the agent view's state) and the ink components rendered with ink-testing-library — the
// approval prompt and its keys, a plain question, the pause view, the line editor, the agent
// blocks cut to the width. The whole apps run in a real terminal in test/pty.test.ts.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { render, cleanup } from 'ink-testing-library';
import { Box } from 'ink';
import { APPROVAL_CHOICES, type Answer, type ApprovalQuestion, type Question } from '../src/index.ts';
import { cut, firstLines, jsonLines, oneLine, tokens, errorLine } from '../src/surfaces/tui/text.ts';
import { editLine, emptyLine, lineWith, type KeyInfo, type LineState } from '../src/surfaces/tui/line-edit.ts';
import { complete, commonPrefix, flagsOf, type CompletionSource } from '../src/surfaces/tui/complete.ts';
import { appendHistory, historyFile, readHistory, HISTORY_MAX } from '../src/surfaces/tui/history.ts';
import { AgentTracker, type Block } from '../src/surfaces/tui/agent-state.ts';
import { h, BlockView, CodeBlock, ErrorLine, Json, Result } from '../src/surfaces/tui/ui.ts';
import { QuestionView, codeWindow } from '../src/surfaces/tui/prompt.ts';
import { PauseView } from '../src/surfaces/tui/debug-view.ts';
import { LineEditor } from '../src/surfaces/tui/line-editor.ts';
import { splitWords } from '../src/surfaces/tui/repl.ts';
import { uiColor } from '../src/surfaces/tui/screen.ts';
import { colorLevel } from '../src/surfaces/shared/output.ts';
import type { LogEvent } from '../src/core/types.ts';
import { tempDir } from './helpers.ts';

afterEach(() => cleanup());

/** Lets React run its effects (useInput attaches its listener in one) and ink draw. */
const tick = (ms = 30) => new Promise((r) => setTimeout(r, ms));

// ── text ──────────────────────────────────────────────────────────────────────────────────────
test('oneLine: strings as they are, values as JSON, whitespace folded, control characters escaped, cut with …', () => {
  assert.equal(oneLine('a\n  b'), 'a b');
  assert.equal(oneLine({ a: 1 }), '{"a":1}');
  assert.equal(oneLine('\x1b[31mred'), '\\x1b[31mred');
  assert.equal(oneLine('x'.repeat(50), 10), 'xxxxxxxxx…');
  assert.equal(cut('héllo wörld', 5), 'héll…');
  assert.equal(tokens(1234), '1,234');
  assert.equal(tokens(1234, true), '1.2k');
  assert.deepEqual(errorLine(Object.assign(new Error('ENOENT: no such file'), { code: 'ENOENT' })), { code: 'ENOENT', message: 'no such file' });
});

test('firstLines: leading blank lines dropped, the rest counted', () => {
  assert.deepEqual(firstLines('\n\na\nb\nc\nd\n', 2), { lines: ['a', 'b'], more: 2 });
  assert.deepEqual(firstLines('one', 3), { lines: ['one'], more: 0 });
});

test('jsonLines: pretty JSON split into keys, strings, numbers, booleans, null and punctuation', () => {
  const lines = jsonLines({ a: 'x', b: 2, c: true, d: null });
  assert.equal(lines.map((l) => l.map((t) => t.text).join('')).join('\n'), JSON.stringify({ a: 'x', b: 2, c: true, d: null }, null, 2));
  const kinds = Object.fromEntries(lines.flat().filter((t) => t.kind !== 'punct').map((t) => [t.text, t.kind]));
  assert.deepEqual(kinds, { '"a"': 'key', '"x"': 'string', '"b"': 'key', '2': 'number', '"c"': 'key', true: 'boolean', '"d"': 'key', null: 'null' });
  // A cycle or a BigInt prints instead of throwing.
  const cyclic: Record<string, unknown> = { n: 1n };
  cyclic.self = cyclic;
  assert.match(jsonLines(cyclic).flat().map((t) => t.text).join(''), /"\[Circular\]"/);
});

// ── line editing ──────────────────────────────────────────────────────────────────────────────
function keys(state: LineState, seq: (string | KeyInfo & { input?: string })[], history: string[] = []) {
  let s = state;
  let action;
  for (const k of seq) {
    const r = typeof k === 'string' ? editLine(s, k, {}, history) : editLine(s, k.input ?? '', k, history);
    s = r.state;
    action = r.action;
  }
  return { s, action };
}

test('line editing: type, move, delete, kill, word delete, a paste on one line', () => {
  let { s } = keys(emptyLine(), ['h', 'e', 'l', 'o']);
  ({ s } = keys(s, [{ leftArrow: true }, 'l']));
  assert.equal(s.text, 'hello');
  ({ s } = keys(s, [{ ctrl: true, input: 'a' }, { delete: true }]));
  assert.deepEqual([s.text, s.cursor], ['ello', 0]);
  ({ s } = keys(lineWith('greet --name Ada'), [{ ctrl: true, input: 'w' }]));
  assert.equal(s.text, 'greet --name ');
  ({ s } = keys(s, [{ ctrl: true, input: 'u' }]));
  assert.equal(s.text, '');
  ({ s } = keys(emptyLine(), ['a\nb\x07c']));
  assert.equal(s.text, 'a bc', 'newlines become spaces, control characters go');
  ({ s } = keys(lineWith('abc'), [{ home: true }, { ctrl: true, input: 'k' }]));
  assert.equal(s.text, '');
});

test('line editing: Enter submits, Tab completes, Ctrl-C cancels, Ctrl-D on an empty line is the end', () => {
  assert.equal(keys(lineWith('x'), [{ return: true }]).action, 'submit');
  assert.equal(keys(lineWith('x'), [{ tab: true }]).action, 'complete');
  assert.equal(keys(lineWith('x'), [{ ctrl: true, input: 'c' }]).action, 'cancel');
  assert.equal(keys(emptyLine(), [{ ctrl: true, input: 'd' }]).action, 'eof');
  const { s, action } = keys({ ...lineWith('ab'), cursor: 0 }, [{ ctrl: true, input: 'd' }]);
  assert.deepEqual([s.text, action], ['b', undefined], 'Ctrl-D on a line deletes forward');
});

test('line editing: ↑ ↓ walk the history and come back to the line being typed', () => {
  const history = ['one', 'two'];
  let { s } = keys(emptyLine(), ['d', 'r', 'a', 'f', 't', { upArrow: true }], history);
  assert.equal(s.text, 'two');
  ({ s } = keys(s, [{ upArrow: true }, { upArrow: true }], history));
  assert.equal(s.text, 'one');
  ({ s } = keys(s, [{ downArrow: true }, { downArrow: true }], history));
  assert.equal(s.text, 'draft');
});

// ── completion ────────────────────────────────────────────────────────────────────────────────
const source: CompletionSource = {
  commands: [':help', ':describe', ':set', ':list', ':quit'],
  skills: async () => ['greet', 'grep-logs', 'summarize'],
  params: async (skill) => (skill === 'greet' ? ['--name', '--excited'] : []),
};

test('completion: skill names first, a :command, the skill after :describe, --params after the skill', async () => {
  const one = await complete('su', 2, source);
  assert.deepEqual([one?.replacement, one?.candidates], ['summarize ', ['summarize']]);
  const many = await complete('gr', 2, source);
  assert.deepEqual([many?.replacement, many?.candidates], ['gre', ['greet', 'grep-logs']]);
  assert.equal((await complete(':de', 3, source))?.replacement, ':describe ');
  assert.equal((await complete(':describe sum', 13, source))?.replacement, 'summarize ');
  assert.deepEqual((await complete('greet --', 8, source))?.candidates, ['--excited', '--name']);
  assert.deepEqual((await complete('greet --name Ada --', 19, source))?.candidates, ['--excited'], 'a flag given is not offered again');
  assert.equal(await complete('greet Ada', 9, source), undefined, 'a value is not completed');
  assert.equal(commonPrefix(['abc', 'abd']), 'ab');
  assert.deepEqual(flagsOf({ type: 'object', properties: { a: {}, b: {} } }), ['--a', '--b']);
  assert.deepEqual(splitWords(`greet --name "Ada Lovelace" --tag 'x y'`), ['greet', '--name', 'Ada Lovelace', '--tag', 'x y']);
});

// ── history ───────────────────────────────────────────────────────────────────────────────────
test('history: in $AGENT_APPS_HOME/history (default ~/.agent-apps), appended, blank lines skipped, trimmed when long', (t) => {
  const home = tempDir(t, 'agent-apps-history-');
  const file = historyFile({ AGENT_APPS_HOME: home });
  assert.equal(file, path.join(home, 'history'));
  assert.match(historyFile({ HOME: '/home/x' }), /\.agent-apps[/\\]history$/);
  assert.deepEqual(readHistory(file), []);
  appendHistory(file, 'greet --name Ada');
  appendHistory(file, '   ');
  appendHistory(file, 'a\nb');
  assert.deepEqual(readHistory(file), ['greet --name Ada', 'a b']);
  fs.writeFileSync(file, Array.from({ length: 2 * HISTORY_MAX + 5 }, (_, i) => `cmd ${i}`).join('\n') + '\n');
  const kept = readHistory(file);
  assert.equal(kept.length, HISTORY_MAX);
  assert.equal(kept[kept.length - 1], `cmd ${2 * HISTORY_MAX + 4}`);
  assert.equal(fs.readFileSync(file, 'utf8').trim().split('\n').length, HISTORY_MAX, 'the file was trimmed');
});

// ── the agent view's state ────────────────────────────────────────────────────────────────────
test('agent view state: streamed text goes above line by line, a code block with the skills it called and its result, usage totals', () => {
  const blocks: Block[] = [];
  const tracker = new AgentTracker((b) => blocks.push(b), () => undefined);
  const e = (type: string, more: Record<string, unknown> = {}) => tracker.event({ type, skill: 'story', ...more });
  e('turn-start', { turnNumber: 1 });
  e('message', { text: 'Let me ', delta: true });
  e('message', { text: 'count.\nThen ', delta: true });
  assert.equal(tracker.live()[0]!.text, 'Then ', 'the line still streaming stays live');
  e('message', { text: 'Let me count.\nThen finish.' });
  e('usage', { inputTokens: 10, outputTokens: 5, totalTokens: 15, total: { inputTokens: 10, outputTokens: 5, totalTokens: 15 } });
  e('tool-call', { tool: 'invoke', args: { code: "await ctx.manager.invoke('wordcount', {})" } });
  e('skill-call', { tool: 'wordcount', args: { text: 'a b' } });
  assert.equal(tracker.live()[0]!.code?.calls[0]?.done, false);
  e('skill-result', { tool: 'wordcount', result: 2 });
  e('tool-result', { tool: 'invoke', result: 'finished: 2\nconsole:\nhi' });
  e('turn-end');
  tracker.finish();
  assert.deepEqual(
    blocks.map((b) => b.kind),
    ['turn', 'text', 'text', 'code', 'done'],
  );
  assert.deepEqual(blocks.filter((b) => b.kind === 'text').map((b) => (b as { text: string }).text), ['Let me count.', 'Then']);
  const code = blocks[3] as Extract<Block, { kind: 'code' }>;
  assert.deepEqual(code.calls, [{ tool: 'wordcount', args: '{"text":"a b"}', done: true, result: '2' }]);
  assert.equal(code.result, 'finished: 2');
  assert.deepEqual((blocks[4] as Extract<Block, { kind: 'done' }>).usage, { inputTokens: 10, outputTokens: 5, totalTokens: 15 });
  assert.equal(tracker.running, false);
});

test('agent view state: a whole message without deltas, a failed call, a model error; an unfinished call is marked interrupted', () => {
  const blocks: Block[] = [];
  const tracker = new AgentTracker((b) => blocks.push(b), () => undefined);
  tracker.event({ type: 'turn-start', skill: 'a', turnNumber: 1 });
  tracker.event({ type: 'message', skill: 'a', text: 'Whole text.' });
  tracker.event({ type: 'tool-call', skill: 'a', tool: 'invoke', args: { code: 'x()' } });
  tracker.event({ type: 'tool-result', skill: 'a', tool: 'invoke', error: { code: 'E_DENIED', message: 'denied: no' } });
  tracker.event({ type: 'error', skill: 'a', error: 'model down' });
  tracker.event({ type: 'tool-call', skill: 'a', tool: 'invoke', args: { code: 'y()' } });
  tracker.finish();
  assert.equal((blocks[1] as { text: string }).text, 'Whole text.');
  assert.equal((blocks[2] as { error?: string }).error, '[E_DENIED] denied: no');
  assert.match((blocks[3] as { text: string }).text, /model error: model down/);
  assert.equal((blocks[4] as { interrupted?: boolean }).interrupted, true);
});

// ── components ────────────────────────────────────────────────────────────────────────────────
function approval(over: Partial<ApprovalQuestion> = {}): ApprovalQuestion {
  return {
    kind: 'approval',
    text: 'Allow shell?',
    tool: 'shell',
    args: { command: 'echo hi' },
    code: "const a = 1;\nconst r = await ctx.manager.invoke('shell', { command: 'echo hi' });\nctx.manager.finish(r);\n// 4\n// 5\n// 6",
    agent: 'gated',
    because: { kind: 'ask-tools', pattern: 'shell(command=echo *)' },
    choices: [...APPROVAL_CHOICES],
    ...over,
  };
}

function questionView(question: Question, columns = 100) {
  const answers: Answer[] = [];
  let interrupted = 0;
  const view = render(
    h(QuestionView, {
      pending: { id: 1, question, answer: (a: Answer) => answers.push(a) },
      more: 0,
      active: true,
      onInterrupt: () => interrupted++,
      columns,
    }),
  );
  return { view, answers, interrupted: () => interrupted };
}

test('approval prompt: the tool, its args, the calling code around the call, why; y allows once', async () => {
  const { view, answers } = questionView(approval());
  const frame = view.lastFrame()!;
  assert.match(frame, /gated's code calls shell/);
  assert.match(frame, /args\s+\{"command":"echo hi"\}/);
  assert.match(frame, /2 › const r = await ctx\.manager\.invoke\('shell'/, 'the calling line is marked');
  assert.match(frame, /1 │ const a = 1;/);
  assert.match(frame, /… 2 more lines/);
  assert.match(frame, /why\s+ask-tools: shell\(command=echo \*\)/);
  assert.match(frame, /\[y\/⏎\] allow once\s+\[a\] allow for this run\s+\[n\] deny/);
  await tick();
  view.stdin.write('y');
  await tick();
  assert.deepEqual(answers, [{ value: 'allow' }]);
});

test('approval prompt: Enter allows once, a allows for the run, Ctrl-C interrupts', async () => {
  for (const [key, value] of [['\r', 'allow'], ['a', 'allow-run'], ['A', 'allow-run']] as const) {
    const { view, answers } = questionView(approval());
    await tick();
    view.stdin.write(key);
    await tick();
    assert.deepEqual(answers, [{ value }], `key ${JSON.stringify(key)}`);
    view.unmount();
  }
  const { view, answers, interrupted } = questionView(approval());
  await tick();
  view.stdin.write('\x03');
  await tick();
  assert.deepEqual([answers, interrupted()], [[], 1]);
});

test('approval prompt: n asks for a reason line (Enter sends it; an empty one is no reason; Esc goes back)', async () => {
  const { view, answers } = questionView(approval());
  await tick();
  view.stdin.write('n');
  await tick();
  assert.match(view.lastFrame()!, /deny, reason › /);
  assert.match(view.lastFrame()!, /optional: the model sees it · Enter sends · Esc goes back/);
  for (const ch of 'not now') view.stdin.write(ch);
  await tick();
  assert.match(view.lastFrame()!, /not now/);
  view.stdin.write('\r');
  await tick();
  assert.deepEqual(answers, [{ value: 'deny', reason: 'not now' }]);

  const second = questionView(approval());
  await tick();
  second.view.stdin.write('n');
  await tick();
  second.view.stdin.write('\x1b');
  await tick(80);
  assert.match(second.view.lastFrame()!, /\[y\/⏎\] allow once/, 'Esc is back at the choices');
  second.view.stdin.write('n');
  await tick();
  second.view.stdin.write('\r');
  await tick();
  assert.deepEqual(second.answers, [{ value: 'deny' }]);
});

test('approval prompt: model text cannot reach the terminal as control sequences; a narrow terminal drops the border', async () => {
  const { view } = questionView(approval({ tool: 'sh\x1b[2Jell', args: { command: '\x1b]0;pwned\x07' }, agent: 'a\x1b[31m' }), 50);
  const frame = view.lastFrame()!;
  assert.doesNotMatch(frame, /\x1b\[2J|\x1b\]0;/);
  assert.match(frame, /sh\\x1b\[2Jell/);
  const narrow = questionView(approval(), 36);
  assert.doesNotMatch(narrow.view.lastFrame()!, /╭/);
});

test('a plain question: a choice by its key or by ↓ and Enter; free text when it has no choices', async () => {
  const q: Question = { kind: 'question', text: 'Deploy?', choices: [{ value: 'yes', key: 'y' }, { value: 'no', key: 'n' }, { value: 'later' }] };
  const a = questionView(q);
  assert.match(a.view.lastFrame()!, /\? Deploy\?/);
  await tick();
  a.view.stdin.write('n');
  await tick();
  assert.deepEqual(a.answers, [{ value: 'no' }]);
  const b = questionView(q);
  await tick();
  b.view.stdin.write('\x1b[B');
  await tick(80);
  b.view.stdin.write('\x1b[B');
  await tick(80);
  b.view.stdin.write('\r');
  await tick();
  assert.deepEqual(b.answers, [{ value: 'later' }]);
  const c = questionView({ kind: 'question', text: 'Your name?' });
  await tick();
  for (const ch of 'Ada') c.view.stdin.write(ch);
  await tick();
  c.view.stdin.write('\r');
  await tick();
  assert.deepEqual(c.answers, [{ value: 'Ada' }]);
});

test('codeWindow: a line before the call and the call itself, numbered; the first lines when no line names the tool', () => {
  assert.deepEqual(codeWindow("a\nb\nctx.manager.invoke('x')\nd", 'x').map((l) => [l.n, l.call]), [[2, false], [3, true], [4, false]]);
  assert.equal(codeWindow('a\nb', 'zzz')[0]!.n, 1);
  assert.deepEqual(codeWindow(undefined, 'x'), []);
});

function debugEvents(): LogEvent[] {
  const base = { tag: 'debug', level: 'info' as const, timestamp: 0, rootContextId: 'r' };
  return [
    { ...base, type: 'pipeline-enter', tool: 'greet', contextId: 'c1' },
    { ...base, type: 'next-enter', tool: 'greet', contextId: 'c1', entry: 'params' },
    { ...base, type: 'next-exit', tool: 'greet', contextId: 'c1', entry: 'params', duration: 1.5 },
    { ...base, type: 'breakpoint-hit', tool: 'greet', contextId: 'c1', entry: 'execute', text: 'breakpoint at greet › execute' },
  ];
}

test('pause view: the tree so far, the paused entry marked, entries still running with …; s steps, c and Enter continue, i prints the context', async () => {
  const resumed: string[] = [];
  const printed: unknown[] = [];
  const view = render(
    h(PauseView, {
      pending: { id: 1, request: { where: 'greet › execute', events: debugEvents(), inspect: () => ({ args: { name: 'Ada' } }) }, resume: (how: 'continue' | 'step') => resumed.push(how) },
      active: true,
      print: (el: unknown) => printed.push(el),
      onInterrupt: () => resumed.push('interrupt'),
      columns: 100,
      rows: 30,
    }),
  );
  const frame = view.lastFrame()!;
  assert.match(frame, /⏸ paused at greet › execute/);
  assert.match(frame, /▸ greet …/);
  assert.match(frame, /· params 1\.500 ms/);
  assert.match(frame, /▶ greet › execute/);
  assert.match(frame, /s step to the next entry\s+c continue\s+i inspect the context/);
  await tick();
  view.stdin.write('i');
  await tick();
  assert.equal(printed.length, 1);
  const shown = render(printed[0] as never).lastFrame()!;
  assert.match(shown, /context at greet › execute \(serialized\)/);
  assert.match(shown, /"name": "Ada"/);
  view.stdin.write('s');
  view.stdin.write('c');
  view.stdin.write('\r');
  view.stdin.write('\x03');
  await tick();
  assert.deepEqual(resumed, ['step', 'continue', 'continue', 'interrupt']);
});

test('line editor: typed text with a cursor, Tab completes the one candidate and lists several, Enter submits', async () => {
  const submitted: string[] = [];
  const view = render(h(LineEditor, { prompt: '› ', active: true, history: [], complete: (line: string, cursor: number) => complete(line, cursor, source), onSubmit: (l: string) => submitted.push(l) }));
  await tick();
  for (const ch of 'gr') view.stdin.write(ch);
  await tick();
  view.stdin.write('\t');
  await tick(60);
  assert.match(view.lastFrame()!, /› gre/);
  assert.match(view.lastFrame()!, /greet {2}grep-logs/, 'the candidates under the line');
  view.stdin.write('e');
  await tick();
  view.stdin.write('\t');
  await tick(60);
  view.stdin.write('-');
  await tick();
  assert.match(view.lastFrame()!, /› greet -/, 'the one candidate, and a space after it');
  view.stdin.write('\r');
  await tick();
  assert.deepEqual(submitted, ['greet -']);
});

test('agent blocks and results: every value line cut to the width with …; JSON pretty; an error as one line with its code', () => {
  // ink-testing-library's terminal is 100 columns wide (the 40-column case runs in test/pty.test.ts).
  const width = 100;
  const long = 'x'.repeat(300);
  const frame = render(
    h(
      Box,
      { width, flexDirection: 'column' },
      h(CodeBlock, { tool: 'invoke', code: `const a = '${long}';\nb();\nc();\nd();`, calls: [{ tool: 'wordcount', args: `{"text":"${long}"}`, done: true, result: '200' }], result: `finished: "${long}"` }),
      h(BlockView, { block: { kind: 'done', skill: 'story', turns: 2, usage: { inputTokens: 1, outputTokens: 1, totalTokens: 12345 } }, narrow: true }),
      h(ErrorLine, { error: Object.assign(new Error(`bad ${long}`), { code: 'E_X' }) }),
      h(Result, { value: { words: 3 } }),
      h(Json, { value: { a: [1, 2] }, maxLines: 2 }),
    ),
  ).lastFrame()!;
  for (const line of frame.split('\n')) assert.ok(line.length <= width, `wider than ${width}: ${JSON.stringify(line)}`);
  assert.match(frame, /│ const a = 'xxx.*…/);
  assert.match(frame, /│ … 1 more line/);
  assert.match(frame, /→ wordcount \{"text":"xx.*… ✓ 200$/m, 'the args are cut, the outcome stays');
  assert.match(frame, /── story · 2 turns · 12k tokens/);
  assert.match(frame, /✗ error \[E_X\]: bad xx.*…/);
  assert.match(frame, /"words": 3/);
  assert.match(frame, /… 4 more lines/);
});

test('colour: NO_COLOR and --no-color turn it off; FORCE_COLOR turns it on without a TTY (0 or false: off)', () => {
  assert.equal(colorLevel({ isTTY: true }, true, {}), 1);
  assert.equal(colorLevel({ isTTY: false }, true, {}), 0);
  assert.equal(colorLevel({ isTTY: true }, true, { NO_COLOR: '1' }), 0);
  assert.equal(colorLevel({ isTTY: true }, true, { NO_COLOR: '' }), 1, 'an empty NO_COLOR does not count');
  assert.equal(colorLevel({ isTTY: true }, false, {}), 0);
  assert.equal(colorLevel({ isTTY: false }, true, { FORCE_COLOR: '1' }), 1);
  assert.equal(colorLevel({ isTTY: false }, true, { FORCE_COLOR: '3' }), 3);
  assert.equal(colorLevel({ isTTY: false }, true, { FORCE_COLOR: '' }), 1);
  assert.equal(colorLevel({ isTTY: true }, true, { FORCE_COLOR: '0' }), 0);
  assert.equal(colorLevel({ isTTY: false }, true, { FORCE_COLOR: '1', NO_COLOR: '1' }), 0, 'NO_COLOR wins');
  assert.equal(uiColor(true, {}), true);
  assert.equal(uiColor(true, { NO_COLOR: 'x' }), false);
  assert.equal(uiColor(false, {}), false);
  assert.equal(uiColor(true, { FORCE_COLOR: 'false' }), false);
});
