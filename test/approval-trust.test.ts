// `trust` (SPEC §17), `ctx.manager.ask` and the `ask` skill, and the CLI side of approval gates:
// `--approve`, the run file's approval events, `describe`'s effective trust and its source.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { lineAsker, type Answer, type Asker, type Question } from '../src/index.ts';
import { attackWorkspace, attempts, cli, runtimeIn } from './security/attack.ts';
import { invokeWithTrace } from './agent-helpers.ts';
import { logs, settle, skill } from './helpers.ts';

function recording(answer: (q: Question) => Answer) {
  const questions: Question[] = [];
  const asker: Asker = {
    async ask(q) {
      questions.push(q);
      return answer(q);
    },
  };
  return { asker, questions };
}

/** A code skill with `trust` in its metadata. */
function trusted(name: string, trust: string) {
  return `export const frontmatter = { name: '${name}', description: 'A tool with trust ${trust}.', metadata: { trust: '${trust}', params: { type: 'object', properties: { x: { type: 'string' } } } } };
export default (ctx, args) => '${name}:' + (args.x ?? '');
`;
}

const CALL = (tool: string) => `try { ctx.manager.finish(await ctx.manager.invoke('${tool}', { x: 'hi' })); } catch (e) { ctx.manager.finish(e.code + ': ' + e.message); }`;

test('trust: ask on a skill gates its calls from agent code — even where allowed-tools names it', async (t) => {
  const ws = attackWorkspace(t, { caller: { 'allowed-tools': 'careful', turns: [{ invoke: CALL('careful') }] } }, { 'skills/careful.skill.mjs': trusted('careful', 'ask') });
  const { asker, questions } = recording(() => ({ value: 'allow' }));
  const rt = await runtimeIn(t, ws, { asker });
  assert.equal(await rt.invoke('caller', {}), 'careful:hi');
  assert.equal(questions.length, 1);
  const q = questions[0]!;
  assert.equal(q.kind, 'approval');
  if (q.kind !== 'approval') return;
  assert.equal(q.tool, 'careful');
  assert.deepEqual(q.args, { x: 'hi' });
  assert.equal(q.because.kind, 'trust');
  assert.match((q.because as { source: string }).source, /careful\.skill\.mjs$/);
  assert.match(q.code ?? '', /invoke\('careful'/);
  // Called by a code skill (not agent code), the same tool runs without a gate.
  rt.register(skill('plain-caller', (ctx) => ctx.manager.invoke('careful', { x: 'code' })));
  assert.equal(await rt.invoke('plain-caller', {}), 'careful:code');
  assert.equal(questions.length, 1);
});

test('trust: ask without a person to ask is E_ALLOWED_TOOLS "needs approval"; --approve lets it through', async (t) => {
  const ws = attackWorkspace(t, { caller: { 'allowed-tools': 'careful', turns: [{ invoke: CALL('careful') }] } }, { 'skills/careful.skill.mjs': trusted('careful', 'ask') });
  const rt = await runtimeIn(t, ws);
  assert.match(String(await rt.invoke('caller', {})), /^E_ALLOWED_TOOLS: .*trust: ask.*needs approval; run in a terminal or pass --approve/);
  const approved = await runtimeIn(t, ws, { approve: 'careful' });
  assert.equal(await approved.invoke('caller', {}), 'careful:hi');
});

test('trust: deny refuses calls from agent code (E_ALLOWED_TOOLS naming trust), without asking; the refusal is a denial', async (t) => {
  const ws = attackWorkspace(t, { caller: { 'allowed-tools': 'locked', metadata: { 'ask-tools': 'locked' }, turns: [{ invoke: CALL('locked') }] } }, { 'skills/locked.skill.mjs': trusted('locked', 'deny') });
  const { asker, questions } = recording(() => ({ value: 'allow' }));
  const rt = await runtimeIn(t, ws, { asker, approve: 'all' });
  const { value, served } = await invokeWithTrace(rt, 'caller');
  assert.match(String(value), /^E_ALLOWED_TOOLS: 'caller' may not invoke 'locked': its trust is deny \(set in .*locked\.skill\.mjs\)/);
  assert.equal(questions.length, 0);
  const denials = (served!.locals.agent as { denials: { tool: string; code: string }[] }).denials;
  assert.deepEqual(denials.map((d) => [d.tool, d.code]), [['locked', 'E_ALLOWED_TOOLS']]);
  assert.deepEqual(logs(rt, { type: 'approval' }).map((e) => [e.tool, e.decision, e.by]), [['locked', 'refused', 'trust']]);
});

test("trust on a folder's main applies to every skill in it, and is the source describe names", async (t) => {
  const ws = attackWorkspace(
    t,
    { caller: { 'allowed-tools': 'vault-read vault-write wordcount', turns: [{ invoke: attempts({ read: "return await ctx.manager.invoke('vault-read', {})", write: "return await ctx.manager.invoke('vault-write', {})", count: "return await ctx.manager.invoke('wordcount', { text: 'a b' })" }) }] } },
    {
      'skills/vault/main.md': '---\nname: main\nmetadata:\n  trust: deny\n---\nThe vault.\n',
      'skills/vault/vault-read.skill.mjs': `export const frontmatter = { name: 'vault-read', description: 'Reads the vault.' };\nexport default () => 'secret';\n`,
      'skills/vault/vault-write.skill.mjs': `export const frontmatter = { name: 'vault-write', description: 'Writes the vault.', metadata: { trust: 'ask' } };\nexport default () => 'written';\n`,
    },
  );
  const rt = await runtimeIn(t, ws, { approve: 'all' });
  const out = (await rt.invoke('caller', {})) as Record<string, string>;
  assert.match(out.read!, /^E_ALLOWED_TOOLS: .*its trust is deny \(set in .*vault\/main\.md\)/);
  // The skill's own trust wins over its folder's.
  assert.equal(out.write, 'ok:"written"');
  assert.equal(out.count, 'ok:2');

  const json = cli(['describe', 'vault-read', '--json'], ws);
  assert.equal(json.status, 0, json.stderr);
  const d = JSON.parse(json.stdout);
  assert.equal(d.trust.value, 'deny');
  assert.match(d.trust.source, /skills\/vault\/main\.md$/);
  const text = cli(['describe', 'vault-write'], ws);
  assert.match(text.stdout, /^trust ask {2}from skills\/vault\/vault-write\.skill\.mjs$/m);
  const plain = cli(['describe', 'wordcount'], ws);
  assert.match(plain.stdout, /^trust allow {2}\(default\)$/m);
  const set = cli(['--set', 'trust=ask', 'describe', 'wordcount', '--json'], ws);
  assert.deepEqual(JSON.parse(set.stdout).trust, { value: 'ask', source: '--set', from: 'cli (--set)' });
});

test('agent code cannot switch trust off: $context.middleware.trust is refused; a bad trust value is E_CONFIG', async (t) => {
  const ws = attackWorkspace(
    t,
    {
      caller: {
        'allowed-tools': 'locked trust odd',
        turns: [{ invoke: attempts({ override: "return await ctx.manager.invoke('locked', { $context: { middleware: { trust: 'allow' } } })", remove: "return await ctx.manager.invoke('locked', { $context: { middleware: { trust: { remove: true } } } })", direct: "return await ctx.manager.invoke('trust', 'allow')", odd: "return await ctx.manager.invoke('odd', {})" }) }],
      },
    },
    { 'skills/locked.skill.mjs': trusted('locked', 'deny'), 'skills/odd.skill.mjs': trusted('odd', 'sometimes') },
  );
  const rt = await runtimeIn(t, ws, { approve: 'all' });
  const out = (await rt.invoke('caller', {})) as Record<string, string>;
  assert.match(out.override!, /^E_ALLOWED_TOOLS: /);
  assert.match(out.remove!, /^E_ALLOWED_TOOLS: /);
  assert.match(out.direct!, /^E_/);
  assert.notEqual(out.direct, 'ok:null');
  assert.match(out.odd!, /^E_CONFIG: .*odd\.skill\.mjs \(trust\): trust of 'odd' must be ask, deny or allow \(got "sometimes"\)$/);
});

test('naming a trust: deny tool as a handler ref is refused like calling it', async (t) => {
  const ws = attackWorkspace(t, { caller: { 'allowed-tools': 'event-subscribe locked', turns: [{ invoke: attempts({ sub: "return await ctx.manager.invoke('event-subscribe', { topic: 'x', ref: 'locked' })" }) }] } }, { 'skills/locked.skill.mjs': trusted('locked', 'deny') });
  const rt = await runtimeIn(t, ws);
  const out = (await rt.invoke('caller', {})) as Record<string, string>;
  assert.match(out.sub!, /^E_ALLOWED_TOOLS: .*trust is deny/);
});

// ── ctx.manager.ask and the ask skill ─────────────────────────────────────────────────────────

test('ctx.manager.ask without a person is E_NOT_INTERACTIVE; with one it returns the choice (or the text)', async (t) => {
  const ws = attackWorkspace(t, {});
  const asking = skill('asking', (ctx, a: { choices?: string[] }) => ctx.manager.ask('Which colour?', { choices: a.choices }));
  const rt = await runtimeIn(t, ws);
  rt.register(asking);
  const { error } = await settle(rt.invoke('asking', { choices: ['red', 'blue'] }));
  assert.equal(error?.code, 'E_NOT_INTERACTIVE');
  assert.match(error.message, /'asking' asked "Which colour\?", but there is no person to ask/);

  const input = new PassThrough();
  input.end('2\nteal\n');
  const rt2 = await runtimeIn(t, ws, { asker: lineAsker({ input }) });
  rt2.register(asking);
  assert.equal(await rt2.invoke('asking', { choices: ['red', 'blue'] }), 'blue');
  assert.equal(await rt2.invoke('asking', {}), 'teal');
  // The input ended: nobody is left to answer.
  const { error: ended } = await settle(rt2.invoke('asking', {}));
  assert.equal(ended?.code, 'E_NOT_INTERACTIVE');
});

test('ctx.manager.ask is withdrawn when its context aborts (E_ABORTED)', async (t) => {
  const ws = attackWorkspace(t, {});
  const controller = new AbortController();
  const rt = await runtimeIn(t, ws, { signal: controller.signal, asker: { ask: (_q, signal) => new Promise((_r, reject) => signal.addEventListener('abort', () => reject(signal.reason))) } });
  rt.register(skill('asking', (ctx) => ctx.manager.ask('Still there?')));
  const p = settle(rt.invoke('asking', {}));
  setTimeout(() => controller.abort('bye'), 20);
  assert.equal((await p).error?.code, 'E_ABORTED');
});

test('the ask skill: hidden (agent code needs it in allowed-tools), answered by the person', async (t) => {
  const code = attempts({ pick: "return await ctx.manager.invoke('ask', { question: 'Ship it?', choices: ['yes', 'no'] })" });
  const ws = attackWorkspace(t, { asks: { 'allowed-tools': 'ask', turns: [{ invoke: code }] }, nosy: { turns: [{ invoke: code }] } });
  const { asker, questions } = recording(() => ({ value: 'no' }));
  const rt = await runtimeIn(t, ws, { asker });
  assert.deepEqual(await rt.invoke('asks', {}), { pick: 'ok:"no"' });
  assert.deepEqual(questions, [{ kind: 'question', text: 'Ship it?', choices: [{ value: 'yes' }, { value: 'no' }], tool: 'ask' }]);
  assert.match(((await rt.invoke('nosy', {})) as Record<string, string>).pick!, /^E_ALLOWED_TOOLS: .*'ask' is hidden/);
  const bare = await runtimeIn(t, ws);
  assert.match(((await bare.invoke('asks', {})) as Record<string, string>).pick!, /^E_NOT_INTERACTIVE: /);
});

// ── the CLI ──────────────────────────────────────────────────────────────────────────────────

test('CLI: without a terminal the gate is refused (exit 1, "needs approval"); --approve all and --approve PATTERNS pre-approve; the run file has the approval events', async (t) => {
  const invoke = "const r = await ctx.manager.invoke('shell', { command: 'echo from-shell' }); ctx.manager.finish(r.stdout.trim());";
  const ws = attackWorkspace(t, { gated: { 'allowed-tools': 'wordcount', metadata: { 'ask-tools': 'shell(command=echo *)' }, turns: [{ invoke }] } }, { 'skills/.keep': '' });
  const refused = cli(['run', 'gated'], ws);
  assert.equal(refused.status, 1);
  assert.match(refused.stderr, /needs approval; run in a terminal or pass --approve/);
  assert.equal(refused.stdout, '');

  const all = cli(['--approve', 'all', 'run', 'gated'], ws);
  assert.equal(all.status, 0, all.stderr);
  assert.equal(all.stdout, 'from-shell\n');

  const pattern = cli(['run', 'gated', '--approve', 'shell(command=echo *)'], ws);
  assert.equal(pattern.status, 0, pattern.stderr);
  assert.equal(pattern.stdout, 'from-shell\n');

  const other = cli(['run', 'gated', '--approve', 'shell(command=ls *)'], ws);
  assert.equal(other.status, 1);

  const bad = cli(['--approve', 'shell(command)', 'run', 'gated'], ws);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--approve: allowed-tools: constraint 'command' in 'shell\(command\)' must look like key=glob/);

  const runs = path.join(ws, '.agent-apps', 'runs');
  const events = fs
    .readdirSync(runs)
    .filter((f) => f.endsWith('.jsonl'))
    .flatMap((f) => fs.readFileSync(path.join(runs, f), 'utf8').trim().split('\n').map((l) => JSON.parse(l)))
    .filter((e) => e.type === 'approval');
  const seen = events.map((e) => `${e.tool}:${e.decision}:${e.by}`).sort();
  assert.deepEqual(seen, ['shell:allow:approve', 'shell:allow:approve', 'shell:refused:no-person', 'shell:refused:no-person'].sort());
});

// ── MCP servers ──────────────────────────────────────────────────────────────────────────────

test("an MCP server entry's trust is its tools' trust: deny refuses, ask gates; describe names the entry", async (t) => {
  const { MODERN, stdio } = await import('./mcp-client-helpers.ts');
  const ws = attackWorkspace(
    t,
    {
      caller: {
        'allowed-tools': 'locked-* careful-*',
        turns: [{ invoke: attempts({ locked: "return await ctx.manager.invoke('locked-add', { a: 1, b: 2 })", careful: "return await ctx.manager.invoke('careful-add', { a: 2, b: 3 })" }) }],
      },
    },
    { '.mcp.json': JSON.stringify({ mcpServers: { locked: { ...stdio(MODERN), trust: 'deny' }, careful: { ...stdio(MODERN), trust: 'ask' } } }) },
  );
  const { asker, questions } = recording(() => ({ value: 'allow' }));
  const rt = await runtimeIn(t, ws, { asker });
  const out = (await rt.invoke('caller', {})) as Record<string, string>;
  assert.match(out.locked!, /^E_ALLOWED_TOOLS: .*its trust is deny \(set in mcp\.servers\.locked\.trust\)/);
  assert.match(out.careful!, /^ok:.*"sum":5/);
  assert.deepEqual(questions.map((q) => q.kind === 'approval' && [q.tool, q.because]), [['careful-add', { kind: 'trust', source: 'mcp.servers.careful.trust' }]]);
  // A code skill calls them as it likes: trust is about agent code.
  rt.register(skill('plain', (ctx) => ctx.manager.invoke('locked-add', { a: 1, b: 1 })));
  assert.deepEqual(((await rt.invoke('plain', {})) as { sum: number }).sum, 2);
  const d = cli(['describe', 'locked-add', '--json'], ws);
  assert.equal(d.status, 0, d.stderr);
  assert.deepEqual(JSON.parse(d.stdout).trust, { value: 'deny', source: 'mcp.servers.locked.trust', from: 'mcp://locked/add' });
});

// ── the edges ────────────────────────────────────────────────────────────────────────────────

test('a SKILL.md skill takes ask-tools under agent-apps:', async (t) => {
  const ws = attackWorkspace(t, {}, {
    'skills/lister/SKILL.md': `---
name: lister
description: Lists a folder, with approval.
agent-apps:
  ask-tools: shell(command=echo *)
  model: { provider: replay, cassette: lister.cassette.yaml }
---
List it.
`,
    'skills/lister/lister.cassette.yaml': `turns:\n  - invoke: "ctx.manager.finish((await ctx.manager.invoke('shell', { command: 'echo listed' })).stdout.trim())"\n`,
  });
  const { asker, questions } = recording(() => ({ value: 'allow' }));
  const rt = await runtimeIn(t, ws, { asker });
  assert.equal(await rt.invoke('lister', {}), 'listed');
  assert.equal(questions.length, 1);
  const d = cli(['describe', 'lister', '--json'], ws);
  assert.equal(JSON.parse(d.stdout).tool.askTools, 'shell(command=echo *)');
});

test('agent code cannot give a sub-agent ask-tools', async (t) => {
  const ws = attackWorkspace(t, { caller: { 'allowed-tools': 'agent', turns: [{ invoke: attempts({ sub: "return await ctx.manager.invoke('agent', { prompt: 'x', allowedTools: 'wordcount', askTools: 'shell' })" }) }] } });
  const rt = await runtimeIn(t, ws, { approve: 'all' });
  const out = (await rt.invoke('caller', {})) as Record<string, string>;
  assert.match(out.sub!, /^E_ALLOWED_TOOLS: agent code may not give a sub-agent ask-tools/);
});

test("a sub-agent's calls pass its caller's ask-tools gates (isCallable with the caller as a ceiling)", async () => {
  const { isCallable } = await import('../src/agent/visible-tools.ts');
  const caller = { allowedTools: 'wordcount agent', askTools: 'shell(command=echo *)' };
  const sub = { allowedTools: 'shell', within: [caller] };
  const env = { cwd: process.cwd() };
  assert.deepEqual(isCallable('shell', true, sub, { command: 'echo hi' }, env), { ok: true, gate: 'shell(command=echo *)' });
  assert.equal(isCallable('shell', true, sub, { command: 'rm -rf x' }, env).ok, false);
  assert.deepEqual(isCallable('wordcount', false, { allowedTools: 'wordcount', within: [caller] }, { text: 'a' }, env), { ok: true });
  // ask wins over allow: allowed-tools admitting the call does not skip the gate.
  assert.deepEqual(isCallable('shell', true, { allowedTools: 'shell', askTools: 'shell(command=rm *)' }, { command: 'rm x' }, env), { ok: true, gate: 'shell(command=rm *)' });
  assert.deepEqual(isCallable('shell', true, { allowedTools: 'shell', askTools: 'shell(command=rm *)' }, { command: 'ls' }, env), { ok: true });
});

test('the trust middleware refuses a call from agent code that did not come through the bridge', async (t) => {
  const ws = attackWorkspace(t, {}, { 'skills/careful.skill.mjs': trusted('careful', 'ask') });
  const rt = await runtimeIn(t, ws, { approve: 'all' });
  // A context that looks like agent code (untrustedRef) calling the tool directly, not through the bridge.
  rt.register(
    skill('forged', (ctx) => {
      ctx.locals.internals = { untrustedRef: true };
      return ctx.manager.invoke('careful', { x: 'y' });
    }),
  );
  const { error } = await settle(rt.invoke('forged', {}));
  assert.equal(error?.code, 'E_ALLOWED_TOOLS');
  assert.match(error.message, /has trust: ask; agent code reaches it only through the bridge's approval gate/);
});
