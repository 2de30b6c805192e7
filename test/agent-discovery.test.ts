// Tool discovery (seed 004 "Tool Discovery", "Self-Recursion Prevention"; SPEC §11): the one
// shared filter `resolveVisibleTools`, constrained vs discovery mode, and the system prompt built
// from it — checked on the exported helpers and, through the full agent path, on the prompt a
// provider actually receives (the fixture provider `scripted-agent` logs it).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { logs } from './helpers.ts';
import { agentRuntime, promptFor } from './agent-helpers.ts';

const names = (v: { tools: { name: string }[] }) => v.tools.map((t) => t.name).sort();

describe('resolveVisibleTools and the system prompt', () => {
  test('constrained mode (an explicit list, no bare *): every match is inlined with its params; no skill-list', async (t) => {
    const rt = await agentRuntime(t);
    const { visible, system } = await promptFor(rt, { allowedTools: 'wordcount echo' });
    assert.equal(visible.mode, 'constrained');
    assert.deepEqual(names(visible), ['echo', 'wordcount']);
    assert.match(system, /## Tools you can call\n\n/);
    assert.match(system, /### wordcount\nCount the words in a text\.\nparams: \{"type":"object","properties":\{"text":\{"type":"string"\}\},"required":\["text"\],"additionalProperties":false\}\nreturns: \{"type":"integer"\}/);
    assert.doesNotMatch(system, /skill-list|More tools exist/);
    // Globs match too.
    const globbed = await promptFor(rt, { allowedTools: 'word* ec*' });
    assert.deepEqual(names(globbed.visible), ['echo', 'wordcount']);
  });

  test('discovery mode (no allowed-tools): only skill-list and skill-describe, and how to explore', async (t) => {
    const rt = await agentRuntime(t);
    const { visible, system } = await promptFor(rt, {});
    assert.equal(visible.mode, 'discovery');
    assert.deepEqual(names(visible), ['skill-describe', 'skill-list']);
    assert.match(system, /## Tools\n\nMore tools exist than are listed here\. Find them with `await ctx\.manager\.invoke\('skill-list', \{ query \}\)`/);
    assert.doesNotMatch(system, /### wordcount/);
  });

  test('discovery mode (a bare * in the spec): the explicitly named tools are inlined as well', async (t) => {
    const rt = await agentRuntime(t);
    const { visible } = await promptFor(rt, { allowedTools: '* wordcount' });
    assert.equal(visible.mode, 'discovery');
    assert.deepEqual(names(visible), ['skill-describe', 'skill-list', 'wordcount']);
  });

  test('hidden tools are excluded unless named: not by *, not by a glob', async (t) => {
    const rt = await agentRuntime(t);
    assert.ok(names((await promptFor(rt, { allowedTools: 'shell wordcount' })).visible).includes('shell'));
    assert.ok(!names((await promptFor(rt, { allowedTools: '* wordcount' })).visible).includes('shell'));
    assert.ok(!names((await promptFor(rt, { allowedTools: 'sh* wordcount' })).visible).includes('shell'));
    assert.ok(!names((await promptFor(rt, { allowedTools: 'file-* wordcount' })).visible).includes('file-write'));
    assert.ok(names((await promptFor(rt, { allowedTools: 'file-write' })).visible).includes('file-write'));
  });

  test('self-recursion: the skill itself is excluded unless named', async (t) => {
    const rt = await agentRuntime(t);
    assert.deepEqual(names((await promptFor(rt, { allowedTools: 'co* wordcount', self: 'count' })).visible), ['wordcount']);
    assert.deepEqual(names((await promptFor(rt, { allowedTools: 'count wordcount', self: 'count' })).visible), ['count', 'wordcount']);
  });

  test('the agent skill and the provider are excluded (globs never reach them)', async (t) => {
    const rt = await agentRuntime(t);
    const { visible } = await promptFor(rt, { allowedTools: 'agent* scripted* wordcount' });
    assert.deepEqual(names(visible), ['wordcount']);
    assert.ok(visible.excluded.includes('agent') && visible.excluded.includes('agent-strands'));
  });

  test('tools without params accept no arguments and are still discoverable', async (t) => {
    const rt = await agentRuntime(t);
    const { visible, system } = await promptFor(rt, { allowedTools: 'ping' });
    assert.deepEqual(names(visible), ['ping']);
    assert.match(system, /### ping\nAnswer pong\.\nparams: none/);
  });

  test('middleware with params are documented separately with how to activate them; middleware without params are not', async (t) => {
    const rt = await agentRuntime(t);
    const { visible, system } = await promptFor(rt, { allowedTools: 'echo shout audit' });
    assert.deepEqual(names(visible), ['echo']);
    assert.deepEqual(visible.middleware.map((m) => m.name), ['shout']);
    assert.match(system, /## Middleware\n\nThese are middleware, not tools to call directly\. Activate one for a call by passing it in the call's args: `ctx\.manager\.invoke\('tool', \{ \.\.\.args, \$context: \{ middleware: \{ NAME: ARGS \} \} \}\)`\.\n\n### shout\n/);
    assert.doesNotMatch(system, /### audit/);
  });

  test('in middleware mode the prompt offers target.manager.next()', async (t) => {
    const rt = await agentRuntime(t);
    assert.match((await promptFor(rt, { middlewareMode: true })).system, /`target\.manager\.next\(\)` — you are serving another skill's pipeline/);
    assert.doesNotMatch((await promptFor(rt, {})).system, /target\.manager\.next/);
  });
});

describe('what the provider is given (full agent path)', () => {
  const script = [{ text: 'ok' }];

  test('a skill without allowed-tools: discovery mode, itself not documented (self-recursion prevention)', async (t) => {
    const rt = await agentRuntime(t, { explorer: { description: 'An explorer.', model: { agent: 'scripted-agent', script } } });
    await rt.invoke('explorer', {});
    const [given] = logs(rt, { type: 'provider-args' }) as any[];
    assert.match(given.prompt, /^You are the test agent explorer\.\n\n## How you act/);
    assert.match(given.prompt, /### skill-list\n/);
    assert.match(given.prompt, /### skill-describe\n/);
    assert.doesNotMatch(given.prompt, /### (explorer|wordcount|agent|scripted-agent)\n/);
  });

  test('a skill with allowed-tools: constrained mode, every match inlined', async (t) => {
    const rt = await agentRuntime(t, { worker: { 'allowed-tools': 'wordcount echo ping shout', model: { agent: 'scripted-agent', script } } });
    await rt.invoke('worker', {});
    const [given] = logs(rt, { type: 'provider-args' }) as any[];
    const documented = [...given.prompt.matchAll(/^### (\S+)$/gm)].map((m: RegExpMatchArray) => m[1]).sort();
    assert.deepEqual(documented, ['echo', 'ping', 'shout', 'wordcount']);
    assert.match(given.prompt, /## Middleware[\s\S]*### shout/);
    assert.doesNotMatch(given.prompt, /skill-list/);
  });

  test('discovery in action: agent code finds a tool with skill-list, reads it with skill-describe, then calls it', async (t) => {
    const rt = await agentRuntime(t, {
      finder: {
        turns: [
          {
            invoke: `
const found = await ctx.manager.invoke('skill-list', { query: 'words in a text' });
const described = await ctx.manager.invoke('skill-describe', { name: found[0].name });
const n = await ctx.manager.invoke(found[0].name, { text: 'x y z' });
ctx.manager.finish({ name: found[0].name, required: described.tool.params.required, n });`,
          },
        ],
      },
    });
    assert.deepEqual(await rt.invoke('finder', {}), { name: 'wordcount', required: ['text'], n: 3 });
  });
});
