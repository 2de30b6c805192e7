// The agent's security routes (seed 004 "Sandbox Ref Restriction", "Tool Discovery",
// "Self-Recursion Prevention"; SPEC §15): agent code reaches the host only through the RPC bridge,
// cannot load code by ref (untrustedRef), cannot call tools outside allowed-tools (arg
// constraints included), cannot raise its own limits. Each attempt is real agent code replayed
// from a cassette; its error code is what the code itself caught.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { agentRuntime, invokeWithTrace, type AgentSkillSpec } from './agent-helpers.ts';
import { tempDir } from './helpers.ts';

/** Agent code that runs each attempt, catching its error: the result maps name → 'ok:<json>' or '<code>: <message>'. */
function attempts(list: Record<string, string>, prelude = ''): string {
  const lines = Object.entries(list).map(
    ([name, code]) =>
      `try { out[${JSON.stringify(name)}] = 'ok:' + JSON.stringify(await (async () => { ${code} })()); } catch (e) { out[${JSON.stringify(name)}] = (e.code ?? 'no code') + ': ' + e.message; }`,
  );
  return [prelude, 'const out = {};', ...lines, 'ctx.manager.finish(out);'].join('\n');
}

async function tryAll(t: Parameters<typeof agentRuntime>[0], list: Record<string, string>, spec: Omit<AgentSkillSpec, 'turns'> = {}, name = 'attacker', prelude = '') {
  const rt = await agentRuntime(t, { [name]: { ...spec, turns: [{ invoke: attempts(list, prelude) }] } });
  const run = await invokeWithTrace(rt, name);
  if (run.error) throw run.error;
  return { out: run.value as Record<string, string>, rt };
}

const code = (s: string) => s.split(':')[0];

const TRY_BOTH = attempts({ echo: "return ctx.manager.invoke('echo', { text: 'hi' })", wordcount: "return ctx.manager.invoke('wordcount', { text: 'a' })" });

describe('Sandbox Ref Restriction (untrustedRef)', () => {
  test('agent code may invoke only bare tool names: paths, file:// and inline:// URIs, and definitions are E_UNTRUSTED_REF', async (t) => {
    const { out } = await tryAll(t, {
      relative: "return ctx.manager.invoke('./x.md', {})",
      skillFile: "return ctx.manager.invoke('wordcount.skill.ts', { text: 'a' })",
      absolute: "return ctx.manager.invoke('/etc/passwd', {})",
      file: "return ctx.manager.invoke('file:///etc/passwd', {})",
      inline: "return ctx.manager.invoke('inline://code,export default () => process.pid', {})",
      mcp: "return ctx.manager.invoke('mcp://server/tool', {})",
      upper: "return ctx.manager.invoke('WordCount', {})",
      definition: "return ctx.manager.invoke({ name: 'x', fn: 'return 1' }, {})",
      bare: "return ctx.manager.invoke('wordcount', { text: 'a b' })",
    });
    for (const name of ['relative', 'skillFile', 'absolute', 'file', 'inline', 'mcp', 'upper', 'definition']) {
      assert.equal(code(out[name]!), 'E_UNTRUSTED_REF', `${name}: ${out[name]}`);
    }
    assert.match(out.inline!, /may only invoke tools by name; "inline:\/\/code,/);
    assert.equal(out.bare, 'ok:2');
  });

  test('the flag is per invocation: a tool the agent calls by name may itself load code by URI', async (t) => {
    const { out } = await tryAll(t, { indirect: "return ctx.manager.invoke('indirect', { text: 'through a file:// ref' })" });
    assert.equal(out.indirect, 'ok:"through a file:// ref"');
  });

  test('agent code cannot clear the flag: locals.internals, config, middleware and globals are out of reach of get/set', async (t) => {
    const { out } = await tryAll(t, {
      clear: "return ctx.manager.set('locals.internals.untrustedRef', false)",
      clearAll: "return ctx.manager.set('locals.internals', {})",
      afterClear: "return ctx.manager.invoke('./x.md', {})",
      raiseSteps: "return ctx.manager.set('locals.config.model.maxSteps', 1000000)",
      raiseTimeout: "return ctx.manager.set('locals.config.model.sandbox', { timeoutMs: 1e9 })",
      addMiddleware: "return ctx.manager.set('locals.middleware', { shell: true })",
      inherited: "return ctx.manager.set('nonlocals.middleware', { shell: true })",
      globals: "return ctx.manager.get('globals.internals')",
      readConfig: "return ctx.manager.get('locals.config')",
      proto: "return ctx.manager.set('locals.__proto__.polluted', 1)",
      args: "return ctx.manager.set('args.text', 'changed')",
      parent: "return ctx.manager.get('envelope.parent')",
      ownLocals: "await ctx.manager.set('locals.note', 'mine'); return ctx.manager.get('locals.note')",
    });
    for (const name of ['clear', 'clearAll', 'raiseSteps', 'raiseTimeout', 'addMiddleware', 'inherited', 'globals', 'readConfig', 'proto', 'parent']) {
      assert.equal(code(out[name]!), 'E_UNTRUSTED_REF', `${name}: ${out[name]}`);
    }
    assert.equal(code(out.afterClear!), 'E_UNTRUSTED_REF');
    assert.equal(code(out.args!), 'E_IMMUTABLE');
    assert.equal(out.ownLocals, 'ok:"mine"');
  });

  test('options on invoke from agent code are ignored, and $-keys other than $context are refused', async (t) => {
    const { out } = await tryAll(t, {
      options: "return ctx.manager.invoke('./x.md', {}, { context: { locals: { internals: { untrustedRef: false } } } })",
      detached: "return ctx.manager.invoke('echo', { text: 'x', $detached: true })",
      contextLocals: "return ctx.manager.invoke('echo', { text: 'x', $context: { nonlocals: { debug: true } } })",
      contextSignal: "return ctx.manager.invoke('echo', { text: 'x', $context: { signal: null } })",
    });
    assert.equal(code(out.options!), 'E_UNTRUSTED_REF');
    assert.match(out.detached!, /^E_UNTRUSTED_REF: agent code may not pass '\$detached' to invoke$/);
    assert.match(out.contextLocals!, /^E_UNTRUSTED_REF: agent code may only pass \$context\.middleware, not \$context\.nonlocals$/);
    assert.equal(code(out.contextSignal!), 'E_UNTRUSTED_REF');
  });

  test('refs inside args (event-subscribe) are governed by allowed-tools arg constraints, and name only tools the agent may invoke itself', async (t) => {
    const list = {
      allowedRef: "return (await ctx.manager.invoke('event-subscribe', { topic: 't', ref: 'echo' })) !== null",
      otherRef: "return ctx.manager.invoke('event-subscribe', { topic: 't', ref: 'shell' })",
      noRef: "return ctx.manager.invoke('event-subscribe', { topic: 't' })",
    };
    const { out } = await tryAll(t, list, { 'allowed-tools': 'event-subscribe(ref=echo) echo' });
    assert.equal(out.allowedRef, 'ok:true');
    assert.equal(code(out.otherRef!), 'E_ALLOWED_TOOLS');
    assert.equal(code(out.noRef!), 'E_ALLOWED_TOOLS');
    // SPEC §15: the handler must be a tool the agent could invoke itself — echo is not in this spec.
    const { out: narrow } = await tryAll(t, list, { 'allowed-tools': 'event-subscribe(ref=echo)' }, 'narrow');
    assert.match(narrow.allowedRef!, /^E_ALLOWED_TOOLS: 'narrow' may not name 'echo' as event-subscribe's ref/);
  });
});

describe('allowed-tools (E_ALLOWED_TOOLS)', () => {
  test('a call outside allowed-tools is refused; arg constraints (wordcount(text=a*)) are checked on every call', async (t) => {
    const { out } = await tryAll(
      t,
      {
        matching: "return ctx.manager.invoke('wordcount', { text: 'a b c' })",
        notMatching: "return ctx.manager.invoke('wordcount', { text: 'b c' })",
        missingArg: "return ctx.manager.invoke('wordcount', {})",
        echo: "return ctx.manager.invoke('echo', { text: 'hi' })",
        ping: "return ctx.manager.invoke('ping')",
        listing: "return ctx.manager.invoke('skill-list', {})",
      },
      { 'allowed-tools': 'wordcount(text=a*) ping' },
    );
    assert.equal(out.matching, 'ok:3');
    assert.match(out.notMatching!, /^E_ALLOWED_TOOLS: 'attacker' may not invoke 'wordcount': not allowed by allowed-tools 'wordcount\(text=a\*\) ping'$/);
    assert.equal(code(out.missingArg!), 'E_ALLOWED_TOOLS');
    assert.equal(code(out.echo!), 'E_ALLOWED_TOOLS');
    assert.equal(out.ping, 'ok:"pong"');
    // Constrained mode: no skill-list either.
    assert.equal(code(out.listing!), 'E_ALLOWED_TOOLS');
  });

  test('the sub-agent arg constraint of the seed: agent(allowedTools=wordcount) lets agent code start a sub-agent only with that access', async (t) => {
    // The sub-agent runs on its caller's model config (SPEC §15), so it replays the caller's
    // cassette: its code (the same turn) recognises it by its prompt and counts.
    const sub = "if (ctx.args.prompt === 'Count.') { ctx.manager.finish(await ctx.manager.invoke('wordcount', { text: 'one two' })); return; }";
    const { out } = await tryAll(
      t,
      {
        narrow: "return ctx.manager.invoke('agent', { prompt: 'Count.', allowedTools: 'wordcount' })",
        broad: "return ctx.manager.invoke('agent', { prompt: 'Count.', allowedTools: 'shell wordcount' })",
        unset: "return ctx.manager.invoke('agent', { prompt: 'Count.' })",
        config: "return ctx.manager.invoke('agent', { prompt: 'Count.', allowedTools: 'wordcount', config: { provider: 'replay', cassette: 'x.yaml' } })",
        provider: "return ctx.manager.invoke('agent-strands', { prompt: 'x', invokeRef: 'x' })",
      },
      { 'allowed-tools': 'agent(allowedTools=wordcount)' },
      'attacker',
      sub,
    );
    assert.equal(out.narrow, 'ok:2');
    assert.equal(code(out.broad!), 'E_ALLOWED_TOOLS');
    assert.equal(code(out.unset!), 'E_ALLOWED_TOOLS');
    assert.match(out.config!, /^E_ALLOWED_TOOLS: agent code may not set model\.provider of a sub-agent/);
    assert.equal(code(out.provider!), 'E_ALLOWED_TOOLS');
  });

  test('hidden tools (shell, file-write) are blocked unless named; named, with arg constraints, they work', async (t) => {
    const dir = tempDir(t);
    const hidden = {
      shell: "return (await ctx.manager.invoke('shell', { command: 'echo hi' })).stdout",
      shellOther: "return ctx.manager.invoke('shell', { command: 'id' })",
      fileWrite: `return ctx.manager.invoke('file-write', { path: ${JSON.stringify(path.join(dir, 'x.txt'))}, content: 'x' })`,
    };
    const discovery = await tryAll(t, hidden, {}, 'in-discovery');
    const wildcard = await tryAll(t, hidden, { 'allowed-tools': '*' }, 'in-wildcard');
    const glob = await tryAll(t, hidden, { 'allowed-tools': 'sh* file-*' }, 'in-glob');
    for (const { out } of [discovery, wildcard, glob]) {
      assert.match(out.shell!, /^E_ALLOWED_TOOLS: .*'shell' is hidden: name it in allowed-tools to use it$/);
      assert.equal(code(out.fileWrite!), 'E_ALLOWED_TOOLS');
    }
    assert.equal(fs.existsSync(path.join(dir, 'x.txt')), false);
    const named = await tryAll(t, hidden, { 'allowed-tools': 'shell(command=echo *)' }, 'named');
    assert.equal(named.out.shell, 'ok:"hi\\n"');
    assert.equal(code(named.out.shellOther!), 'E_ALLOWED_TOOLS');
    assert.equal(code(named.out.fileWrite!), 'E_ALLOWED_TOOLS');
  });

  test('self-recursion is blocked unless allowed-tools names the skill; the agent and its provider are blocked unless named', async (t) => {
    const list = {
      self: "return ctx.manager.invoke('attacker', {})",
      agent: "return ctx.manager.invoke('agent', { prompt: 'again' })",
      provider: "return ctx.manager.invoke('agent-strands', { prompt: 'x', invokeRef: 'x' })",
    };
    const discovery = await tryAll(t, list);
    assert.match(discovery.out.self!, /^E_ALLOWED_TOOLS: .*a skill's agent cannot invoke the skill itself \('attacker'\) unless allowed-tools names it$/);
    assert.match(discovery.out.agent!, /^E_ALLOWED_TOOLS: .*the agent and its provider cannot be invoked from agent code unless named in allowed-tools$/);
    assert.equal(code(discovery.out.provider!), 'E_ALLOWED_TOOLS');
    const glob = await tryAll(t, list, { 'allowed-tools': 'att* agent*' });
    for (const name of ['self', 'agent', 'provider']) assert.equal(code(glob.out[name]!), 'E_ALLOWED_TOOLS', name);
  });
  test("allowed-tools set higher in the cascade (a main's metadata) binds the agent too, as validate-allowed-tools does for code", async (t) => {
    const rt = await agentRuntime(
      t,
      { governed: { turns: [{ invoke: TRY_BOTH }] } },
      { files: { 'main.md': '---\nname: main\ndescription: authority of the temp skills\nmetadata:\n  allowed-tools: echo\n---\n' } },
    );
    const run = await invokeWithTrace(rt, 'governed');
    assert.equal(run.error, undefined, run.error?.message);
    const out = run.value as Record<string, string>;
    assert.equal(out.echo, 'ok:"hi"');
    assert.equal(code(out.wordcount!), 'E_ALLOWED_TOOLS');
  });
});

describe('$context middleware from agent code', () => {
  test('allowed for middleware the agent may call: shout (listed) changes the result', async (t) => {
    const { out } = await tryAll(
      t,
      {
        shout: "return ctx.manager.invoke('echo', { text: 'hi', $context: { middleware: { shout: { suffix: '!' } } } })",
        viaLocals: "return ctx.manager.invoke('echo', { text: 'hi', $context: { locals: { middleware: { shout: { args: { suffix: '?' } } } } } })",
      },
      { 'allowed-tools': 'echo shout' },
    );
    assert.equal(out.shout, 'ok:"HI!"');
    assert.equal(out.viaLocals, 'ok:"HI?"');
  });

  test('refused for the delegate → shell escalation, in discovery mode and under an arg constraint', async (t) => {
    const escalate = {
      delegate: "return ctx.manager.invoke('echo', { text: 'x', $context: { middleware: { delegate: { ref: 'shell', args: { command: 'echo PWNED' } } } } })",
      smuggled: "return ctx.manager.invoke('echo', { text: 'x', $context: { middleware: { delegate: { args: { ref: 'echo' }, ref: 'shell' } } } })",
      asSpec: "return ctx.manager.invoke('echo', { text: 'a b', $context: { middleware: { delegate: { args: { ref: 'wordcount' } } } } })",
    };
    const discovery = await tryAll(t, escalate, {}, 'in-discovery');
    for (const name of Object.keys(escalate)) {
      assert.match(discovery.out[name]!, /^E_ALLOWED_TOOLS: agent code may not add middleware 'delegate': 'delegate' is hidden/, name);
    }
    const constrained = await tryAll(t, escalate, { 'allowed-tools': 'echo delegate(ref=wordcount) wordcount' }, 'constrained');
    assert.equal(code(constrained.out.delegate!), 'E_ALLOWED_TOOLS');
    assert.equal(code(constrained.out.smuggled!), 'E_ALLOWED_TOOLS');
    // The one use the constraint permits.
    assert.equal(constrained.out.asSpec, 'ok:2');
  });

  test('refused: middleware with fn or remove (dropping validate-args), unknown middleware, middleware outside allowed-tools', async (t) => {
    const { out } = await tryAll(
      t,
      {
        remove: "return ctx.manager.invoke('echo', { text: 5, $context: { middleware: { 'validate-args': { remove: true } } } })",
        removeAllowed: "return ctx.manager.invoke('echo', { text: 5, $context: { middleware: { 'validate-allowed-tools': { remove: true } } } })",
        fn: "return ctx.manager.invoke('echo', { text: 'x', $context: { middleware: { shout: { fn: 'x' } } } })",
        unknown: "return ctx.manager.invoke('echo', { text: 'x', $context: { middleware: { 'no-such-middleware': true } } })",
        outside: "return ctx.manager.invoke('echo', { text: 'x', $context: { middleware: { log: { level: 'trace' } } } })",
      },
      { 'allowed-tools': 'echo shout validate-args' },
    );
    assert.match(out.remove!, /^E_ALLOWED_TOOLS: agent code may not add middleware 'validate-args' with fn or remove$/);
    assert.equal(code(out.removeAllowed!), 'E_ALLOWED_TOOLS');
    assert.equal(code(out.fn!), 'E_ALLOWED_TOOLS');
    assert.match(out.unknown!, /no such skill/);
    assert.equal(code(out.outside!), 'E_ALLOWED_TOOLS');
  });
});

describe('refusal', () => {
  test('ctx.manager.abort(reason) from agent code refuses the served skill: E_ABORTED, and the agent stops', async (t) => {
    const rt = await agentRuntime(t, { refuser: { turns: [{ invoke: "await ctx.manager.abort('not today');" }, { text: 'never' }] } });
    const run = await invokeWithTrace(rt, 'refuser');
    assert.equal(run.error.code, 'E_ABORTED');
    assert.match(run.error.message, /not today/);
  });
});
