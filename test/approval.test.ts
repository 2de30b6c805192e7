// Approval gates (SPEC §17, issue 11): `ask-tools` lists tools an agent may call with a person's
// approval; the call waits on a gate, answered through the runtime's asker. Everything real: the
// agent skill, the Strands loop with the replay model, isolated-vm, the bridge — and a plain line
// asker fed from a stream in place of the person at the terminal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { lineAsker, type Answer, type Asker, type Question } from '../src/index.ts';
import { attackWorkspace, runtimeIn } from './security/attack.ts';
import { invokeWithTrace } from './agent-helpers.ts';
import { logs, settle } from './helpers.ts';

/** A line asker reading `answers` (one per line) and recording what it was shown. */
function scripted(answers: string[]) {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = '';
  output.on('data', (d) => (shown += String(d)));
  input.end(answers.map((a) => a + '\n').join(''));
  return { asker: lineAsker({ input, output }), shown: () => shown };
}

/** An asker that records the questions and answers from a function. */
function recording(answer: (q: Question, n: number) => Answer | Promise<Answer>) {
  const questions: Question[] = [];
  const asker: Asker = {
    async ask(q) {
      questions.push(q);
      return answer(q, questions.length);
    },
  };
  return { asker, questions };
}

const ECHO_CALL = `const r = await ctx.manager.invoke('shell', { command: 'echo gated' });
ctx.manager.finish(r.stdout.trim());`;

/** An agent whose only way to `shell` is its ask-tools. */
function gatedAgent(invoke = ECHO_CALL, extra: Record<string, unknown> = {}) {
  return { 'allowed-tools': 'wordcount', metadata: { 'ask-tools': 'shell(command=echo *)', ...extra }, turns: [{ invoke }] };
}

test('allow once: y at the gate lets the call run; the person saw the tool, its args and the calling code', async (t) => {
  const ws = attackWorkspace(t, { gated: gatedAgent() });
  const { asker, shown } = scripted(['y']);
  const rt = await runtimeIn(t, ws, { asker });
  const { value, trace, served } = await invokeWithTrace(rt, 'gated');
  assert.equal(value, 'gated');
  assert.match(shown(), /wants to call shell/);
  assert.match(shown(), /"command":"echo gated"/);
  assert.match(shown(), /│ const r = await ctx\.manager\.invoke\('shell'/);
  assert.match(shown(), /ask-tools 'shell\(command=echo \*\)'/);
  const events = logs(rt, { type: 'approval' });
  assert.equal(events.length, 1);
  assert.equal(events[0]!.tool, 'shell');
  assert.equal(events[0]!.decision, 'allow');
  assert.deepEqual(trace.filter((e) => e.type === 'approval').map((e) => [e.tool, e.decision]), [['shell', 'allow']]);
  assert.deepEqual((served!.locals.agent as { denials: unknown[] }).denials, []);
});

test('allow for this run: a answers once, later calls by the same rule pass without asking', async (t) => {
  const code = `const a = await ctx.manager.invoke('shell', { command: 'echo one' });
const b = await ctx.manager.invoke('shell', { command: 'echo two' });
const c = await ctx.manager.invoke('shell', { command: 'echo three' });
ctx.manager.finish([a, b, c].map((r) => r.stdout.trim()).join(' '));`;
  const ws = attackWorkspace(t, { gated: gatedAgent(code) });
  const { asker, questions } = recording(() => ({ value: 'allow-run' }));
  const rt = await runtimeIn(t, ws, { asker });
  assert.equal(await rt.invoke('gated', {}), 'one two three');
  assert.equal(questions.length, 1);
  assert.deepEqual(logs(rt, { type: 'approval' }).map((e) => [e.decision, e.by]), [['allow-run', 'person'], ['allow-run', 'earlier'], ['allow-run', 'earlier']]);
});

test('deny with a reason: the call fails with E_DENIED, and the next turn’s code sees the reason', async (t) => {
  const ws = attackWorkspace(t, {
    gated: {
      ...gatedAgent(),
      turns: [
        // The model's first try: the gated call, uncaught — its error is the tool result.
        { invoke: `try { await ctx.manager.invoke('shell', { command: 'echo gated' }); } catch (e) { memory.refusal = { code: e.code, message: e.message }; throw e; }` },
        // Its next turn reacts to what it was told.
        { invoke: `ctx.manager.finish({ gaveUp: true, refusal: memory.refusal });` },
      ],
    },
  });
  const { asker } = scripted(['n', 'not on this machine']);
  const rt = await runtimeIn(t, ws, { asker });
  const { value, trace, served } = await invokeWithTrace(rt, 'gated');
  const out = value as { gaveUp: boolean; refusal: { code: string; message: string } };
  assert.equal(out.refusal.code, 'E_DENIED');
  assert.match(out.refusal.message, /denied the call of 'shell': not on this machine/);
  // The model saw it as the tool's error.
  const result = trace.find((e) => e.type === 'tool-result' && e.error);
  assert.match(JSON.stringify(result), /not on this machine/);
  const [event] = logs(rt, { type: 'approval' });
  assert.equal(event!.decision, 'deny');
  assert.equal(event!.reason, 'not on this machine');
  assert.deepEqual((served!.locals.agent as { denials: { tool: string; code: string }[] }).denials.map((d) => [d.tool, d.code]), [['shell', 'E_DENIED']]);
});

test('a run that ends on a deny reaches the caller as E_DENIED, with the reason', async (t) => {
  const ws = attackWorkspace(t, { gated: gatedAgent(`await ctx.manager.invoke('shell', { command: 'echo gated' });`) });
  const { asker } = scripted(['n', 'no shell today']);
  const rt = await runtimeIn(t, ws, { asker });
  const { error } = await settle(rt.invoke('gated', {}));
  assert.equal(error?.code, 'E_DENIED');
  assert.match(error.message, /denied the call of 'shell': no shell today/);
});

test('no person to ask: the gate is refused with E_ALLOWED_TOOLS, "needs approval; run in a terminal or pass --approve"', async (t) => {
  const code = `try { await ctx.manager.invoke('shell', { command: 'echo gated' }); ctx.manager.finish('ran'); } catch (e) { ctx.manager.finish(e.code + ': ' + e.message); }`;
  const ws = attackWorkspace(t, { gated: gatedAgent(code) });
  const rt = await runtimeIn(t, ws);
  const { value, served } = await invokeWithTrace(rt, 'gated');
  assert.match(String(value), /^E_ALLOWED_TOOLS: .*needs approval; run in a terminal or pass --approve/);
  const [event] = logs(rt, { type: 'approval' });
  assert.equal(event!.decision, 'refused');
  assert.equal((served!.locals.agent as { denials: unknown[] }).denials.length, 1);
});

test('ask-tools needs no allowed-tools entry, admits only what its rules match, and --approve pre-approves', async (t) => {
  const code = `const out = {};
for (const [k, cmd] of Object.entries({ echo: 'echo hi', ls: 'ls', chained: 'echo a; ls' })) {
  try { out[k] = (await ctx.manager.invoke('shell', { command: cmd })).code; } catch (e) { out[k] = e.code; }
}
ctx.manager.finish(out);`;
  const ws = attackWorkspace(t, { gated: gatedAgent(code) });
  const rt = await runtimeIn(t, ws, { approve: 'all' });
  assert.deepEqual(await rt.invoke('gated', {}), { echo: 0, ls: 'E_ALLOWED_TOOLS', chained: 'E_ALLOWED_TOOLS' });
  const [event] = logs(rt, { type: 'approval' });
  assert.equal(event!.decision, 'allow');
  assert.equal(event!.by, 'approve');
});

test('--approve PATTERNS pre-approves the calls they match; the rest still need a person', async (t) => {
  const code = `const out = {};
for (const cmd of ['echo yes', 'echo no']) {
  try { out[cmd] = (await ctx.manager.invoke('shell', { command: cmd })).stdout.trim(); } catch (e) { out[cmd] = e.code; }
}
ctx.manager.finish(out);`;
  const ws = attackWorkspace(t, { gated: gatedAgent(code) });
  const rt = await runtimeIn(t, ws, { approve: 'shell(command=echo yes)' });
  assert.deepEqual(await rt.invoke('gated', {}), { 'echo yes': 'yes', 'echo no': 'E_ALLOWED_TOOLS' });
});

test('only the gated call waits: a parallel call runs while the gate is open', async (t) => {
  const code = `const order = [];
const gated = ctx.manager.invoke('shell', { command: 'echo gated' }).then(() => order.push('gated'));
const free = ctx.manager.invoke('wordcount', { text: 'a b c' }).then((n) => order.push('free:' + n));
await Promise.all([gated, free]);
ctx.manager.finish(order);`;
  const ws = attackWorkspace(t, { gated: gatedAgent(code) });
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  const rt = await runtimeIn(t, ws, {
    asker: {
      async ask() {
        open();
        // Answer only after the parallel call had every chance to finish.
        await new Promise((r) => setTimeout(r, 300));
        return { value: 'allow' };
      },
    },
  });
  const p = rt.invoke('gated', {});
  await opened;
  assert.deepEqual(await p, ['free:3', 'gated']);
});

test('an abort rejects a waiting gate (E_ABORTED) and withdraws the question', async (t) => {
  const ws = attackWorkspace(t, { gated: gatedAgent() });
  let withdrawn = false;
  const controller = new AbortController();
  const rt = await runtimeIn(t, ws, {
    signal: controller.signal,
    asker: {
      ask(_q, signal) {
        setTimeout(() => controller.abort('Ctrl-C'), 50);
        return new Promise((_resolve, reject) => signal.addEventListener('abort', () => ((withdrawn = true), reject(signal.reason)), { once: true }));
      },
    },
  });
  const { error } = await settle(rt.invoke('gated', {}));
  assert.equal(error?.code, 'E_ABORTED');
  assert.equal(withdrawn, true);
  const events = logs(rt, { type: 'approval' });
  assert.deepEqual(events.map((e) => [e.decision, e.by]), [['refused', 'abort']]);
});

test('an asker that never answers a withdrawn question does not block the next one', async (t) => {
  const { AskDesk } = await import('../src/kernel/asking.ts');
  let asked!: () => void;
  const onScreen = new Promise<void>((r) => (asked = r));
  // It ignores the signal: the first question would stay on screen for ever.
  const desk = new AskDesk({ ask: (q) => (q.text === 'one?' ? (asked(), new Promise<Answer>(() => {})) : Promise.resolve({ value: 'second' })) });
  const first = new AbortController();
  const a = desk.ask({ kind: 'question', text: 'one?' }, first.signal);
  const b = desk.ask({ kind: 'question', text: 'two?' }, new AbortController().signal);
  await onScreen;
  first.abort('gone');
  await assert.rejects(a, { code: 'E_ABORTED' });
  assert.deepEqual(await b, { value: 'second' });
});

test('a broken asker’s answer is not an approval', async (t) => {
  const ws = attackWorkspace(t, { gated: gatedAgent(`try { await ctx.manager.invoke('shell', { command: 'echo gated' }); ctx.manager.finish('ran'); } catch (e) { ctx.manager.finish(e.code); }`) });
  const rt = await runtimeIn(t, ws, { asker: { ask: async () => ({ value: 'yes please' }) } });
  assert.equal(await rt.invoke('gated', {}), 'E_VALIDATION');
});
