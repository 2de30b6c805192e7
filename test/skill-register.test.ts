// skill-register: a skill for the lifetime of the runtime — a Markdown body (an agent prompt) or an
// alias of another skill — listed with kind `registered`; its `ref` is an x-ref, so agent code may
// alias only a tool it could call by name (src/policy/untrusted.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { runtimeAt, tempDir, writeFiles } from './helpers.ts';
import { writeAgentSkills } from './agent-helpers.ts';
import { kernelOf } from '../src/index.ts';

const SHOUT = `export const frontmatter = { name: 'shout', description: 'upper-cases text', metadata: { params: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } } };
export default (ctx, args) => args.text.toUpperCase() + '!';
`;

describe('skill-register', () => {
  test('a body skill and an alias: list marks them registered; the alias runs its target with the target params', async (t) => {
    const ws = tempDir(t, 'agent-apps-register-');
    writeFiles(ws, { 'skills/shout.skill.ts': SHOUT });
    const rt = await runtimeAt(t, ws);
    assert.deepEqual(await rt.invoke('skill-register', { name: 'haiku', description: 'writes a haiku', body: 'Write a haiku about {{args.topic}}.' }), { registered: 'haiku', kind: 'registered', body: true });
    assert.deepEqual(await rt.invoke('skill-register', { name: 'yell', description: 'shout, by another name', ref: 'shout' }), { registered: 'yell', kind: 'registered', ref: 'shout' });
    const list = await rt.list();
    const kinds = Object.fromEntries(list.filter((s) => ['haiku', 'yell', 'shout'].includes(s.name)).map((s) => [s.name, s.kind]));
    assert.deepEqual(kinds, { haiku: 'registered', yell: 'registered', shout: 'code' });
    const viaSkill = (await rt.invoke('skill-list', { query: 'haiku' })) as { name: string; kind: string }[];
    assert.deepEqual(viaSkill.map((s) => [s.name, s.kind]), [['haiku', 'registered']]);
    // The body is the registered skill's prompt, as a Markdown skill's would be.
    const cfg = rt.root.locals.config;
    assert.equal((await kernelOf(rt.root).resolve('haiku', cfg.paths, cfg.cwd)).prompt, 'Write a haiku about {{args.topic}}.');
    assert.equal(await rt.invoke('yell', { text: 'hi' }), 'HI!');
    // The alias carries its target's params: validate-args checks them.
    await assert.rejects(rt.invoke('yell', {}), { code: 'E_VALIDATION' });
  });

  test('body or ref, one of them; a ref that does not resolve fails at once', async (t) => {
    const rt = await runtimeAt(t, tempDir(t));
    await assert.rejects(rt.invoke('skill-register', { name: 'x', description: 'd' }), { code: 'E_USAGE' });
    await assert.rejects(rt.invoke('skill-register', { name: 'x', description: 'd', body: 'b', ref: 'log' }), { code: 'E_USAGE' });
    await assert.rejects(rt.invoke('skill-register', { name: 'x', description: 'd', ref: 'no-such-skill' }), { code: 'E_TOOL_NOT_FOUND' });
    // A name that already names a skill (a built-in middleware included), or a metadata key, would hijack pipelines.
    await assert.rejects(rt.invoke('skill-register', { name: 'trust', description: 'd', body: 'b' }), { code: 'E_USAGE', message: /already names a skill/ });
    await assert.rejects(rt.invoke('skill-register', { name: 'tags', description: 'd', body: 'b' }), { code: 'E_USAGE', message: /metadata key/ });
    // A registered one may be registered again (replaced).
    await rt.invoke('skill-register', { name: 'again', description: 'd', body: 'one' });
    await rt.invoke('skill-register', { name: 'again', description: 'd', body: 'two' });
  });

  test('from agent code: an inline ref is E_UNTRUSTED_REF; without skill-register in allowed-tools it is E_ALLOWED_TOOLS', async (t) => {
    const ws = tempDir(t, 'agent-apps-register-agent-');
    writeFiles(ws, { 'skills/shout.skill.ts': SHOUT });
    const code = [
      'const out = {};',
      "try { await ctx.manager.invoke('skill-register', { name: 'evil', description: 'd', ref: 'inline://code,export%20default%20()%20%3D%3E%201' }); out.inline = 'ok'; } catch (e) { out.inline = e.code; }",
      "try { await ctx.manager.invoke('skill-register', { name: 'loud', description: 'd', ref: 'shout' }); out.bare = 'ok'; } catch (e) { out.bare = e.code; }",
      'ctx.manager.finish(out);',
    ].join('\n');
    writeAgentSkills(path.join(ws, 'skills'), {
      registrar: { 'allowed-tools': 'skill-register shout', turns: [{ invoke: code }] },
      outsider: { 'allowed-tools': 'shout', turns: [{ invoke: code }] },
    });
    const rt = await runtimeAt(t, ws);
    assert.deepEqual(await rt.invoke('registrar', {}), { inline: 'E_UNTRUSTED_REF', bare: 'ok' });
    // The ref is checked before the allow-list: refused either way.
    assert.deepEqual(await rt.invoke('outsider', {}), { inline: 'E_UNTRUSTED_REF', bare: 'E_ALLOWED_TOOLS' });
    const names = (await rt.list()).map((s) => s.name);
    assert.ok(names.includes('loud'));
    assert.ok(!names.includes('evil'));
  });
});
