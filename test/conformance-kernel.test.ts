// Conformance of the kernel and loader to SPEC.md and seeds 000–002, rule by rule, as an outside
// suite would probe them: public API only, real kernel, temp workspaces, no mocks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRuntime, type Context } from '../src/index.ts';
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
