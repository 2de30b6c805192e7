// Seed 000 "Invocation" steps 1–8 and SPEC §4 findTool, through the public API.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ToolNotFoundError, defineSkill, isPathRef, type Context } from '../src/index.ts';
import { bareRuntime, logs, middleware, runtimeAt, settle, skill, workspace } from './helpers.ts';

// ——— step 1: $NAME extraction ———

test('$-prefixed keys are extracted from args and never reach the tool', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('echo', (_ctx, args) => args));
  const seen = await rt.invoke('echo', { text: 'hi', $context: { nonlocals: { team: 'core' } } });
  assert.deepEqual(seen, { text: 'hi' });
});

test('$context seeds the child context like the explicit context option', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('who', (ctx) => ({ team: ctx.nonlocals.team, note: ctx.locals.note })));
  assert.deepEqual(await rt.invoke('who', { $context: { nonlocals: { team: 'core' }, locals: { note: 'n1' } } }), { team: 'core', note: 'n1' });
});

test('an explicit option wins over its $NAME alias, which only fills in missing fields', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('who', (ctx) => ({ team: ctx.nonlocals.team, region: ctx.nonlocals.region })));
  const result = await rt.invoke(
    'who',
    { $context: { nonlocals: { team: 'from-args', region: 'eu' } } },
    { context: { nonlocals: { team: 'explicit' } } },
  );
  assert.deepEqual(result, { team: 'explicit', region: 'eu' });
});

test('$detached maps to the detached option: invoke resolves at once and the tool still runs', async (t) => {
  const rt = await bareRuntime(t);
  let resolveRan!: () => void;
  const ran = new Promise<void>((r) => (resolveRan = r));
  rt.register(skill('slow', async () => {
    await new Promise((r) => setTimeout(r, 20));
    resolveRan();
    return 'done';
  }));
  assert.equal(await rt.invoke('slow', { $detached: true }), undefined);
  await ran;
});

test('a detached invocation that fails is swallowed and logged, never rejected', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('boom', () => {
    throw new Error('kaput');
  }));
  assert.equal(await rt.invoke('boom', {}, { detached: true }), undefined);
  await new Promise((r) => setTimeout(r, 20));
  assert.ok(logs(rt).some((e) => String(e.text).includes('kaput')), 'the failure is in the log');
});

// ——— step 2: findTool ———

test('findTool resolves a bare name on the search paths', async (t) => {
  const dir = workspace(t, { 'skills/ping.skill.ts': "export const frontmatter = { name: 'ping' };\nexport default () => 'pong';\n" });
  const rt = await runtimeAt(t, dir);
  assert.equal(await rt.invoke('ping'), 'pong');
});

test('findTool resolves a relative path against the cwd and an absolute path as is', async (t) => {
  const dir = workspace(t, { 'tools/ping.skill.ts': "export default () => 'pong';\n" });
  const rt = await runtimeAt(t, dir);
  assert.equal(await rt.invoke('./tools/ping.skill.ts'), 'pong');
  assert.equal(await rt.invoke(path.join(dir, 'tools/ping.skill.ts')), 'pong');
});

test('findTool resolves a file:// URI', async (t) => {
  const dir = workspace(t, { 'ping.skill.ts': "export default () => 'pong';\n" });
  const rt = await runtimeAt(t, dir);
  assert.equal(await rt.invoke(pathToFileURL(path.join(dir, 'ping.skill.ts')).href), 'pong');
});

test('findTool resolves a folder path to its SKILL.md', async (t) => {
  const dir = workspace(t, { 'review/SKILL.md': '---\nname: review\ndescription: Review code.\n---\nReview.\n' });
  const rt = await runtimeAt(t, dir);
  const d = await rt.describe('./review');
  assert.equal(d.tool.name, 'review');
  assert.equal(d.origin.uri, pathToFileURL(path.join(dir, 'review/SKILL.md')).href);
});

test('findTool resolves an inline://code, URI holding a url-encoded module', async (t) => {
  const rt = await bareRuntime(t);
  const source = "export const frontmatter = { name: 'adder' };\nexport default (ctx, args) => args.a + args.b;\n";
  assert.equal(await rt.invoke('inline://code,' + encodeURIComponent(source), { a: 2, b: 3 }), 5);
});

test('an inline:// module that fails to import is a configuration error', async (t) => {
  const rt = await bareRuntime(t);
  const { error } = await settle(rt.invoke('inline://code,' + encodeURIComponent('export default (')));
  assert.equal(error?.code, 'E_CONFIG');
});

test('findTool accepts a ToolDef object and runs its fn through the pipeline', async (t) => {
  const rt = await bareRuntime(t);
  const def = defineSkill({ name: 'square', metadata: { params: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } } }, (_ctx, a: { n: number }) => a.n * a.n);
  assert.equal(await rt.invoke(def, { n: 7 }), 49);
  // the pipeline ran: validate-args rejects bad args of an inline tool too
  assert.equal((await settle(rt.invoke(def, { n: 'seven' }))).error?.code, 'E_VALIDATION');
});

test('an anonymous inline ToolDef is named anonymous', async (t) => {
  const rt = await bareRuntime(t);
  assert.equal(await rt.invoke({ fn: (ctx: Context) => ctx.run.tool.name }), 'anonymous');
});

test('an unknown name throws ToolNotFoundError (E_TOOL_NOT_FOUND) that suggests near names', async (t) => {
  const dir = workspace(t, { 'skills/greet.md': '---\nname: greet\n---\nHello.\n' });
  const rt = await runtimeAt(t, dir);
  const { error } = await settle(rt.invoke('gret'));
  assert.ok(error instanceof ToolNotFoundError);
  assert.equal(error.code, 'E_TOOL_NOT_FOUND');
  assert.ok(error.suggestions.includes('greet'), `suggestions: ${error.suggestions}`);
  assert.match(error.message, /did you mean 'greet'/);
});

test('a path that does not exist throws ToolNotFoundError naming the file', async (t) => {
  const rt = await bareRuntime(t);
  const { error } = await settle(rt.invoke('./nowhere/x.skill.ts'));
  assert.equal(error?.code, 'E_TOOL_NOT_FOUND');
  assert.match(error.message, /nowhere/);
});

test('isPathRef tells bare names from paths, URIs and ToolDefs', () => {
  assert.equal(isPathRef('greet'), false);
  assert.equal(isPathRef('file-read'), false);
  for (const ref of ['./greet.md', '/abs/x.skill.ts', 'file:///x.md', 'inline://code,x', 'mcp://srv/tool', 'Greet', 'a/b']) assert.equal(isPathRef(ref), true, ref);
  assert.equal(isPathRef({ fn: () => 1 }), true);
});

test('a caller marked untrustedRef (agent code) may invoke tools by name only: E_UNTRUSTED_REF for paths and URIs', async (t) => {
  const dir = workspace(t, { 'skills/ping.skill.ts': "export default () => 'pong';\n" });
  const rt = await runtimeAt(t, dir);
  rt.register(skill('agent-code', async (ctx, a: { ref: string }) => ctx.manager.invoke(a.ref)));
  const seed = { context: { locals: { internals: { untrustedRef: true } } } };
  assert.equal(await rt.invoke('agent-code', { ref: 'ping' }, seed), 'pong');
  for (const ref of ['./skills/ping.skill.ts', pathToFileURL(path.join(dir, 'skills/ping.skill.ts')).href, 'inline://code,' + encodeURIComponent('export default () => 1')]) {
    const { error } = await settle(rt.invoke('agent-code', { ref }, seed));
    assert.equal(error?.code, 'E_UNTRUSTED_REF', ref);
  }
});

// ——— step 3: the child context and its seed ———

test('the context seed overlays locals and nonlocals but cannot replace the envelope', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('peek', (ctx) => ({ mark: ctx.locals.mark, id: ctx.envelope.id, parent: ctx.envelope.parent === rt.root })));
  const out = (await rt.invoke('peek', {}, { context: { locals: { mark: 1 }, envelope: { id: 'forged' } } as never })) as { mark: number; id: string; parent: boolean };
  assert.equal(out.mark, 1);
  assert.notEqual(out.id, 'forged');
  assert.equal(out.parent, true);
});

test('a seeded target makes the invoked tool serve that context', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(middleware('tag-target', (_ctx, _a, target) => {
    target.locals.tagged = true;
    return 'ok';
  }));
  rt.register(skill('host', async (ctx) => {
    await ctx.manager.invoke('tag-target', {}, { context: { target: ctx } });
    return ctx.locals.tagged;
  }));
  assert.equal(await rt.invoke('host'), true);
});

// ——— step 4: origin, prompt, tool ———

test('run.origin, locals.prompt and run.tool come from the tool definition', async (t) => {
  const dir = workspace(t, {
    'skills/greet.md': '---\nname: greet\ndescription: Greet someone.\nmetadata:\n  tags: [demo]\n  params: { type: object, properties: { name: { type: string } } }\n---\nSay hello to the user.\n',
  });
  const rt = await runtimeAt(t, dir);
  let seen: Context | undefined;
  await rt.invoke('greet', { name: 'Ada' }, { context: { locals: { middleware: { probe: { after: ['directives'], before: ['execute'], fn: (c: Context) => ((seen = c), 'stop') } } } } });
  assert.ok(seen);
  assert.equal(seen.run.origin.uri, pathToFileURL(path.join(dir, 'skills/greet.md')).href);
  assert.equal(seen.run.origin.frontmatter.description, 'Greet someone.');
  assert.equal(seen.locals.prompt?.raw, 'Say hello to the user.\n');
  assert.deepEqual(Object.keys(seen.run.tool).sort(), ['allowedTools', 'description', 'name', 'params', 'returns', 'role', 'tags', 'visibility']);
  assert.equal(seen.run.tool.name, 'greet');
  assert.deepEqual(seen.run.tool.tags, ['demo']);
  assert.equal(seen.run.tool.visibility, 'public');
  assert.equal(seen.run.tool.role, 'skill');
});

test('run.tool is a closed type: frontmatter keys outside it do not appear', async (t) => {
  const rt = await bareRuntime(t);
  rt.register({ name: 'closed', frontmatter: { name: 'closed', license: 'MIT', metadata: { custom: 1 } } as never, fn: (ctx: Context) => Object.keys(ctx.run.tool) });
  const keys = (await rt.invoke('closed')) as string[];
  assert.ok(!keys.includes('license') && !keys.includes('custom'), String(keys));
});

// ——— step 5: history ———

test('each invocation pushes a { tool, args, timestamp } history frame', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('frame', (ctx) => ctx.locals.history.at(-1)));
  const before = Date.now();
  const frame = (await rt.invoke('frame', { a: 1 })) as { tool: string; args: unknown; timestamp: number };
  assert.equal(frame.tool, 'frame');
  assert.deepEqual(frame.args, { a: 1 });
  assert.ok(frame.timestamp >= before && frame.timestamp <= Date.now());
});

// ——— steps 6–8: cascade and chain, every time ———

test('run.middleware holds the resolved cascade metadata of the invocation', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('meta', (ctx) => ctx.run.middleware, { tone: 'dry' }));
  const md = (await rt.invoke('meta')) as Record<string, unknown>;
  assert.equal(md.tone, 'dry');
  assert.equal(md.execute, true, 'the library main contributes the default pipeline');
});

test('the full pipeline runs for every invocation: no shortcuts on repeated calls', async (t) => {
  const rt = await bareRuntime(t);
  let runs = 0;
  rt.register(middleware('count', (_c, _a, target) => (runs++, target.manager.next())));
  rt.register(skill('counted', () => 'x', { count: true }));
  for (let i = 0; i < 3; i++) await rt.invoke('counted');
  assert.equal(runs, 3);
});

test('an invoke returns before its tool runs, even when the tool is loaded already', async (t) => {
  const rt = await bareRuntime(t);
  let ran = false;
  rt.register(skill('mark', () => ((ran = true), 'ok')));
  assert.equal(await rt.invoke('mark'), 'ok');
  ran = false;
  const pending = rt.invoke('mark');
  assert.equal(ran, false);
  assert.equal(await pending, 'ok');
});

test('a skill that invokes itself 1000 deep does not exhaust the stack', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('down', async (ctx, a: { n: number }) => (a.n <= 0 ? 0 : 1 + ((await ctx.manager.invoke('down', { n: a.n - 1 })) as number))));
  assert.equal(await rt.invoke('down', { n: 1000 }), 1000);
});

test('the same tool invoked concurrently gets one context per invocation', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('id', async (ctx, a: { n: number }) => {
    await new Promise((r) => setTimeout(r, 5 - a.n));
    return `${a.n}:${ctx.envelope.id}`;
  }));
  const out = (await Promise.all([0, 1, 2, 3].map((n) => rt.invoke('id', { n })))) as string[];
  assert.deepEqual(out.map((s) => s.split(':')[0]), ['0', '1', '2', '3']);
  assert.equal(new Set(out.map((s) => s.split(':')[1])).size, 4);
});

// ——— the programmatic API (SPEC §13) ———

test('register makes a programmatic tool listable, describable and invocable', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(defineSkill({ name: 'triple', description: 'Triples n.' }, (_c, a: { n: number }) => a.n * 3));
  const listed = (await rt.list()).find((s) => s.name === 'triple');
  assert.deepEqual(listed, { name: 'triple', kind: 'programmatic', origin: null, visibility: 'public', description: 'Triples n.' });
  const d = await rt.describe('triple');
  assert.equal(d.tool.description, 'Triples n.');
  assert.equal(d.origin.uri, null);
  assert.ok(d.chain.some((e) => e.name === 'execute'));
  assert.equal(await rt.invoke('triple', { n: 2 }), 6);
});

test('describe lists the ordered chain with where each key came from', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(middleware('stamp', (_c, _a, target) => target.manager.next()));
  rt.register(skill('stamped', () => 1, { stamp: 'v1' }));
  const d = await rt.describe('stamped');
  const stamp = d.chain.find((e) => e.name === 'stamp');
  assert.deepEqual(stamp, { name: 'stamp', args: 'v1', from: 'programmatic:stamped' });
  assert.match(String(d.chain.find((e) => e.name === 'execute')?.from), /skills\/main\.md$/);
  assert.equal(d.metadata.stamp, 'v1');
});

test('every error the runtime throws carries a stable code', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('typed', () => 1, { params: { type: 'object', properties: { n: { type: 'number' } } } }));
  rt.register(skill('refuse', (ctx) => ctx.manager.abort('no')));
  rt.register(skill('throws-string', () => {
    throw 'plain string';
  }));
  assert.equal((await settle(rt.invoke('nope-nope'))).error?.code, 'E_TOOL_NOT_FOUND');
  assert.equal((await settle(rt.invoke('typed', { n: 'x' }))).error?.code, 'E_VALIDATION');
  assert.equal((await settle(rt.invoke('refuse'))).error?.code, 'E_ABORTED');
  const { error } = await settle(rt.invoke('throws-string'));
  assert.ok(error instanceof Error);
  assert.equal(typeof (error as { code?: unknown }).code, 'string');
  assert.match(error.message, /plain string/);
});
