// Conformance of the kernel and loader to SPEC.md and seeds 000–002, rule by rule, as an outside
// suite would probe them: public API only, real kernel, temp workspaces, no mocks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRuntime, findTool, type Context } from '../src/index.ts';
import { bareRuntime, tempDir } from './helpers.ts';

// ——— seed 001: the context's properties and their mutability ———

test('seed 001: args is set-once and envelope immutable — neither can be replaced on the context', async (t) => {
  const rt = await bareRuntime(t);
  rt.register({
    name: 'replace',
    fn: (ctx: Context) => {
      const c = ctx as unknown as Record<string, unknown>;
      const tries: Record<string, string> = {};
      for (const key of ['args', 'envelope']) {
        try {
          c[key] = { forged: true };
          tries[key] = 'assigned';
        } catch {
          tries[key] = 'refused';
        }
      }
      return { tries, args: ctx.args, id: typeof ctx.envelope.id };
    },
  });
  const out = (await rt.invoke('replace', { a: 1 })) as { tries: Record<string, string>; args: unknown; id: string };
  assert.deepEqual(out.tries, { args: 'refused', envelope: 'refused' });
  assert.deepEqual(out.args, { a: 1 });
  assert.equal(out.id, 'string');
});

test('seed 001: the context keeps its own enumerable properties (manager excluded)', async (t) => {
  const rt = await bareRuntime(t);
  rt.register({ name: 'keys', fn: (ctx: Context) => Object.keys(ctx).sort() });
  assert.deepEqual(await rt.invoke('keys'), ['args', 'envelope', 'globals', 'locals', 'nonlocals', 'run']);
});

test('SPEC §5: createRuntime({ interactive: true }) makes the root context interactive; its invocations too, not their children', async (t) => {
  const cwd = tempDir(t);
  const rt = await createRuntime({ cwd, interactive: true });
  t.after(() => rt.close());
  assert.equal(rt.root.run.interactive, true);
  rt.register({ name: 'child', fn: (ctx: Context) => ctx.run.interactive });
  rt.register({ name: 'top', fn: async (ctx: Context) => [ctx.run.interactive, await ctx.manager.invoke('child')] });
  assert.deepEqual(await rt.invoke('top'), [true, false]);
  const plain = await bareRuntime(t);
  assert.equal(plain.root.run.interactive, false);
});

test('seed 000 step 5 / SPEC §5: history holds one frame per invocation, from the first invoked tool to the current one', async (t) => {
  const rt = await bareRuntime(t);
  rt.register({ name: 'inner', fn: (ctx: Context) => ctx.locals.history.map((f) => f.tool) });
  rt.register({ name: 'outer', fn: (ctx: Context) => ctx.manager.invoke('inner', { n: 1 }) });
  assert.deepEqual(await rt.invoke('outer'), ['outer', 'inner']);
  rt.register({ name: 'frame', fn: (ctx: Context) => ctx.locals.history });
  const [frame, ...rest] = (await rt.invoke('frame', { a: 1 })) as { tool: string; args: unknown; timestamp: number }[];
  assert.equal(rest.length, 0);
  assert.deepEqual(Object.keys(frame!).sort(), ['args', 'timestamp', 'tool']);
  assert.deepEqual(frame!.args, { a: 1 });
  assert.equal(typeof frame!.timestamp, 'number');
});

test('SPEC §5: args are frozen for every context, a chain entry’s included', async (t) => {
  const rt = await bareRuntime(t);
  let frozen: boolean | undefined;
  rt.register({
    name: 'mw',
    frontmatter: { name: 'mw', metadata: { role: 'middleware', visibility: 'hidden' } },
    fn: (ctx: Context) => ((frozen = Object.isFrozen(ctx.args)), ctx.envelope.target.manager.next()),
  });
  rt.register({ name: 'tool', fn: () => 'ok' });
  assert.equal(await rt.invoke('tool', {}, { context: { locals: { middleware: { mw: { args: { limit: 3 } } } } } }), 'ok');
  assert.equal(frozen, true);
});

test('seed 001: the seed signal composes into run.signal, given as { signal } or by its path { run: { signal } }', async (t) => {
  const rt = await bareRuntime(t);
  rt.register({
    name: 'wait',
    fn: (ctx: Context) =>
      new Promise((resolve) => {
        const timer = setTimeout(() => resolve('not aborted'), 500);
        ctx.run.signal.addEventListener('abort', () => (clearTimeout(timer), resolve(ctx.run.signal.reason)));
      }),
  });
  for (const seed of [(s: AbortSignal) => ({ signal: s }), (s: AbortSignal) => ({ run: { signal: s } })]) {
    const ac = new AbortController();
    const p = rt.invoke('wait', {}, { context: seed(ac.signal) });
    setTimeout(() => ac.abort('stop'), 5);
    await assert.rejects(p, (err: { code?: string; reason?: unknown }) => err.code === 'E_ABORTED' && err.reason === 'stop');
  }
});

test('SPEC §6.6: an aborted detached invocation is logged as abort, never as an error', async (t) => {
  const rt = await bareRuntime(t);
  rt.register({ name: 'refuse', fn: (ctx: Context) => ctx.manager.abort('not today') });
  assert.equal(await rt.invoke('refuse', {}, { detached: true }), undefined);
  await new Promise((r) => setTimeout(r, 30));
  const events = rt.root.manager.tail();
  assert.ok(events.some((e) => e.type === 'abort' && e.tool === 'refuse' && e.reason === 'not today'), 'the abort event carries the reason');
  assert.deepEqual(events.filter((e) => e.type === 'error' || e.level === 'error'), []);
});

test('SPEC §6.2: $merge append appends to a scalar too, lower level first', async (t) => {
  const cwd = tempDir(t);
  fs.mkdirSync(path.join(cwd, 'skills'));
  fs.writeFileSync(path.join(cwd, 'skills/main.md'), '---\nname: main\nmetadata:\n  audience: staff\n  labels: [a]\n---\n');
  fs.writeFileSync(path.join(cwd, 'skills/show.skill.ts'), "export const frontmatter = { name: 'show', metadata: { audience: ['guests'], labels: 'b', $merge: { audience: 'append', labels: 'append' } } };\nexport default (ctx) => ({ audience: ctx.run.middleware.audience, labels: ctx.run.middleware.labels });\n");
  const rt = await createRuntime({ cwd });
  t.after(() => rt.close());
  assert.deepEqual(await rt.invoke('show'), { audience: ['staff', 'guests'], labels: ['a', 'b'] });
});

test('SPEC §13: every error the runtime throws has a code — configure with an unknown level or reporter, set on a prototype path', async (t) => {
  const rt = await bareRuntime(t);
  assert.throws(() => rt.root.manager.configure({ level: 'loud' as never }), { code: 'E_CONFIG' });
  assert.throws(() => rt.root.manager.configure({ level: 'toString' as never }), { code: 'E_CONFIG' });
  assert.throws(() => rt.root.manager.configure({ reporter: 'nowhere' }), { code: 'E_CONFIG' });
  rt.register({ name: 'poke', fn: (ctx: Context) => ctx.manager.set('locals.__proto__.polluted', true) });
  await assert.rejects(rt.invoke('poke'), (err: { code?: string }) => typeof err.code === 'string');
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test('SPEC §4 / seed 001: findTool(ref, paths) with a relative search root resolves it against the cwd; uri is file:///path', async (t) => {
  const dir = tempDir(t);
  fs.mkdirSync(path.join(dir, 'skills'));
  fs.writeFileSync(path.join(dir, 'skills/hi.md'), '---\nname: hi\ndescription: Says hi.\n---\nSay hi.\n');
  const rel = path.relative(process.cwd(), path.join(dir, 'skills'));
  const tool = await findTool('hi', [rel]);
  assert.equal(tool.name, 'hi');
  assert.match(String(tool.uri), /^file:\/\/\//);
  assert.equal(fileURLToPath(String(tool.uri)), path.join(dir, 'skills/hi.md'));
});
