// SPEC §6.5 and seed 000 "Extra middleware" / "Dynamic Injection": middleware from the context
// seed (locals.middleware, nonlocals.middleware, $context) and manager.inject().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Context } from '../src/index.ts';
import { bareRuntime, middleware, settle, skill } from './helpers.ts';

type Rt = Awaited<ReturnType<typeof bareRuntime>>;

/** Registers recording middleware; `ran` lists `name(args)` in run order. */
function recorders(rt: Rt, ...names: string[]): string[] {
  const ran: string[] = [];
  for (const n of names) {
    rt.register(middleware(n, (_c, args, target) => {
      ran.push(args === true || args === undefined ? n : `${n}(${JSON.stringify(args)})`);
      return target.manager.next();
    }));
  }
  return ran;
}

const withLocals = (middleware: Record<string, unknown>) => ({ context: { locals: { middleware } } });

// ——— locals.middleware ———

test('extra middleware with a cascade entry’s name overrides its args and keeps its place', async (t) => {
  const rt = await bareRuntime(t);
  const ran = recorders(rt, 'first', 'stamp', 'last');
  rt.register(skill('tool', () => 'ok', { first: true, stamp: 'cascade', last: true }));
  await rt.invoke('tool', {}, withLocals({ stamp: 'override' }));
  assert.deepEqual(ran, ['first', 'stamp("override")', 'last']);
});

test('an override with its own before/after moves the entry', async (t) => {
  const rt = await bareRuntime(t);
  const ran = recorders(rt, 'first', 'stamp', 'last');
  rt.register(skill('tool', () => 'ok', { first: true, stamp: 'cascade', last: true }));
  await rt.invoke('tool', {}, withLocals({ stamp: { args: 'moved', after: ['last'], before: ['$post-configure'] } }));
  assert.deepEqual(ran, ['first', 'last', 'stamp("moved")']);
});

test('remove: true suppresses a cascade entry', async (t) => {
  const rt = await bareRuntime(t);
  const ran = recorders(rt, 'first', 'stamp');
  rt.register(skill('tool', () => 'ok', { first: true, stamp: true }));
  assert.equal(await rt.invoke('tool', {}, withLocals({ stamp: { remove: true } })), 'ok');
  assert.deepEqual(ran, ['first']);
});

test('remove: true can switch off a built-in such as validate-args', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('typed', (_c, a) => a, { params: { type: 'object', properties: { n: { type: 'number' } } } }));
  assert.equal((await settle(rt.invoke('typed', { n: 'x' }))).error?.code, 'E_VALIDATION');
  assert.deepEqual(await rt.invoke('typed', { n: 'x' }, withLocals({ 'validate-args': { remove: true } })), { n: 'x' });
});

test('a new name is appended in the default slot: after the cascade’s entries, before validation', async (t) => {
  const rt = await bareRuntime(t);
  const ran = recorders(rt, 'first', 'extra');
  rt.register(skill('tool', () => 'ok', { first: true, params: { type: 'object', properties: { n: { type: 'number' } } } }));
  const { error } = await settle(rt.invoke('tool', { n: 'not a number' }, withLocals({ extra: { tag: 'x' } })));
  assert.equal(error?.code, 'E_VALIDATION');
  assert.deepEqual(ran, ['first', 'extra({"tag":"x"})'], 'extra ran before validate-args refused');
});

test('a new name with its own constraints lands where they say', async (t) => {
  const rt = await bareRuntime(t);
  const seen: string[] = [];
  rt.register(middleware('after-exec', (_c, _a, target) => {
    seen.push(`ran, result=${String(target.locals.result)}`);
    return target.manager.next();
  }));
  rt.register(skill('tool', () => 'done'));
  // only `after` given: no default slot is added, so this is not a cycle; execute finishes the chain first
  await rt.invoke('tool', {}, withLocals({ 'after-exec': { after: ['execute'] } }));
  assert.deepEqual(seen, []);
  await rt.invoke('tool', {}, withLocals({ 'after-exec': { after: ['validate-args'], before: ['execute'] } }));
  assert.deepEqual(seen, ['ran, result=undefined']);
});

test('extra middleware given as name → args are serializable and invoke the named tool', async (t) => {
  const rt = await bareRuntime(t);
  const ran = recorders(rt, 'stamp');
  rt.register(skill('tool', () => 'ok'));
  const seed = JSON.parse(JSON.stringify({ locals: { middleware: { stamp: { who: 'json' } } } }));
  await rt.invoke('tool', {}, { context: seed });
  assert.deepEqual(ran, ['stamp({"who":"json"})']);
});

test('extra middleware with fn is called directly with the served context and its args', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('tool', (ctx) => `tool saw ${String(ctx.locals.flag)}`));
  const out = await rt.invoke('tool', {}, withLocals({ flagger: { args: 'on', fn: (ctx: Context, args: unknown) => ((ctx.locals.flag = args), ctx.manager.next()) } }));
  assert.equal(out, 'tool saw on');
});

test('a bare function is accepted as an fn entry', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('tool', () => 'raw'));
  const out = await rt.invoke('tool', {}, withLocals({ shout: async (ctx: Context) => String(await ctx.manager.next()).toUpperCase() }));
  assert.equal(out, 'RAW');
});

test('locals.middleware applies to this invocation only, not to the tools it invokes', async (t) => {
  const rt = await bareRuntime(t);
  const ran: string[] = [];
  rt.register(middleware('stamp', (_c, _a, target) => (ran.push(target.run.tool.name), target.manager.next())));
  rt.register(skill('child', () => 'c'));
  rt.register(skill('parent', (ctx) => ctx.manager.invoke('child')));
  await rt.invoke('parent', {}, withLocals({ stamp: true }));
  assert.deepEqual(ran, ['parent']);
});

// ——— nonlocals.middleware ———

test('nonlocals.middleware cascades to the tools the invocation invokes, at every depth', async (t) => {
  const rt = await bareRuntime(t);
  const ran: string[] = [];
  rt.register(middleware('trace-all', (_c, args, target) => (ran.push(`${target.run.tool.name}:${String(args)}`), target.manager.next())));
  rt.register(skill('grandchild', () => 'g'));
  rt.register(skill('child', (ctx) => ctx.manager.invoke('grandchild')));
  rt.register(skill('parent', (ctx) => ctx.manager.invoke('child')));
  assert.equal(await rt.invoke('parent', {}, { context: { nonlocals: { middleware: { 'trace-all': 'on' } } } }), 'g');
  assert.deepEqual(ran, ['parent:on', 'child:on', 'grandchild:on']);
});

test('nonlocals.middleware can remove a cascade entry for a whole subtree', async (t) => {
  const rt = await bareRuntime(t);
  const ran = recorders(rt, 'stamp');
  rt.register(skill('child', () => 'c', { stamp: true }));
  rt.register(skill('parent', (ctx) => ctx.manager.invoke('child'), { stamp: true }));
  await rt.invoke('parent', {}, { context: { nonlocals: { middleware: { stamp: { remove: true } } } } });
  assert.deepEqual(ran, []);
});

test('locals.middleware wins over nonlocals.middleware for the same name', async (t) => {
  const rt = await bareRuntime(t);
  const ran = recorders(rt, 'stamp');
  rt.register(skill('tool', () => 'ok'));
  await rt.invoke('tool', {}, { context: { nonlocals: { middleware: { stamp: 'inherited' } }, locals: { middleware: { stamp: 'local' } } } });
  assert.deepEqual(ran, ['stamp("local")']);
});

// ——— $context ———

test('$context: { locals: { middleware } } in args adds extra middleware', async (t) => {
  const rt = await bareRuntime(t);
  const ran = recorders(rt, 'stamp');
  rt.register(skill('tool', (_c, a) => a));
  assert.deepEqual(await rt.invoke('tool', { q: 1, $context: { locals: { middleware: { stamp: 'via-args' } } } }), { q: 1 });
  assert.deepEqual(ran, ['stamp("via-args")']);
});

test('$context: { middleware } is shorthand for { locals: { middleware } }', async (t) => {
  const rt = await bareRuntime(t);
  const ran = recorders(rt, 'stamp', 'first');
  rt.register(skill('child', () => 'c'));
  rt.register(skill('tool', (ctx) => ctx.manager.invoke('child'), { first: true }));
  await rt.invoke('tool', { $context: { middleware: { stamp: 'short', first: { remove: true } } } });
  assert.deepEqual(ran, ['stamp("short")'], 'this invocation only, like locals.middleware');
});

test('a skill can pass $context middleware when it invokes another tool', async (t) => {
  const rt = await bareRuntime(t);
  const ran = recorders(rt, 'stamp');
  rt.register(skill('child', () => 'c'));
  rt.register(skill('parent', (ctx) => ctx.manager.invoke('child', { $context: { nonlocals: { middleware: { stamp: 'from-parent' } } } })));
  await rt.invoke('parent');
  assert.deepEqual(ran, ['stamp("from-parent")']);
});

// ——— inject() ———

test('inject() inserts entries right after the current position, in the order given', async (t) => {
  const rt = await bareRuntime(t);
  const ran = recorders(rt, 'x', 'y', 'neighbour');
  rt.register(middleware('injector', (_c, _a, target) => {
    target.manager.inject([{ name: 'x', args: 1 }, { name: 'y', args: 2 }]);
    return target.manager.next();
  }));
  rt.register(skill('tool', () => 'ok', { injector: true, neighbour: true }));
  assert.equal(await rt.invoke('tool'), 'ok');
  assert.deepEqual(ran, ['x(1)', 'y(2)', 'neighbour']);
});

test('inject() takes a single entry and fn entries', async (t) => {
  const rt = await bareRuntime(t);
  const ran: string[] = [];
  rt.register(middleware('injector', (_c, _a, target) => {
    target.manager.inject({ name: 'inline-step', args: 'a', fn: (ctx: Context, args: unknown) => (ran.push(`inline:${String(args)}:${ctx.run.tool.name}`), ctx.manager.next()) });
    return target.manager.next();
  }));
  rt.register(skill('tool', () => 'ok', { injector: true }));
  await rt.invoke('tool');
  assert.deepEqual(ran, ['inline:a:tool']);
});

test('injected entries with constraints re-sort the rest of the chain', async (t) => {
  const rt = await bareRuntime(t);
  const ran = recorders(rt, 'x', 'neighbour', 'other');
  rt.register(middleware('injector', (_c, _a, target) => {
    target.manager.inject({ name: 'x', after: ['neighbour'], before: ['other'] });
    return target.manager.next();
  }));
  rt.register(skill('tool', () => 'ok', { injector: true, neighbour: true, other: true }));
  await rt.invoke('tool');
  assert.deepEqual(ran, ['neighbour', 'x', 'other']);
});

test('injected middleware only runs downstream: a constraint naming an executed entry is dropped', async (t) => {
  const rt = await bareRuntime(t);
  const ran = recorders(rt, 'early', 'x', 'neighbour');
  rt.register(middleware('injector', (_c, _a, target) => {
    target.manager.inject({ name: 'x', before: ['early'] });
    return target.manager.next();
  }));
  rt.register(skill('tool', () => 'ok', { early: true, injector: true, neighbour: true }));
  assert.equal(await rt.invoke('tool'), 'ok');
  assert.deepEqual(ran, ['early', 'x', 'neighbour']);
});

test('inject() rejects entries without a name', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(middleware('injector', (_c, _a, target) => {
    target.manager.inject({ args: 1 } as never);
    return target.manager.next();
  }));
  rt.register(skill('tool', () => 'ok', { injector: true }));
  assert.equal((await settle(rt.invoke('tool'))).error?.code, 'E_CONFIG');
});

test('injected entries are per invocation: the next invocation starts from the plan', async (t) => {
  const rt = await bareRuntime(t);
  const ran = recorders(rt, 'x');
  let once = true;
  rt.register(middleware('injector', (_c, _a, target) => {
    if (once) target.manager.inject({ name: 'x' });
    once = false;
    return target.manager.next();
  }));
  rt.register(skill('tool', () => 'ok', { injector: true }));
  await rt.invoke('tool');
  await rt.invoke('tool');
  assert.deepEqual(ran, ['x']);
});
