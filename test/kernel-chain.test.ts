// Seed 000 "The Middleware Chain", "Execution Flow", "Return Values", "Error Handling", and
// SPEC §6.6 (leaf fallback, runtime cycle skip, next-called-twice, short-circuit, fail, finish).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type Context, servedTool } from '../src/index.ts';
import { bareRuntime, logs, middleware, runtimeFor, settle, skill } from './helpers.ts';

type Trace = string[];
const trace = (ctx: Context): Trace => ((ctx.locals.trace ??= []) as Trace);

/** A middleware that records its descent and unwind on the served context's trace. */
function onion(name: string) {
  return middleware(name, async (_ctx, _args, target) => {
    trace(target).push(`${name}>`);
    try {
      return await target.manager.next();
    } finally {
      trace(target).push(`<${name}`);
    }
  });
}

// ——— the chain ———

test('each chain entry runs through the orchestrator in its own context, serving the caller', async (t) => {
  const rt = await bareRuntime(t);
  let own: Context | undefined;
  let served: Context | undefined;
  rt.register(middleware('probe', (ctx, _a, target) => ((own = ctx), (served = target), target.manager.next())));
  rt.register(skill('tool', (ctx) => ctx.envelope.id, { probe: true }));
  const id = await rt.invoke('tool');
  assert.ok(own && served);
  assert.notEqual(own, served);
  assert.equal(own.run.tool.name, 'probe');
  assert.equal(own.envelope.parent, served);
  assert.equal(served.envelope.id, id);
  assert.deepEqual(own.locals.history.map((f) => f.tool), ['tool', 'probe']);
});

test('a middleware entry gets its own middleware chain from its own cascade', async (t) => {
  const rt = await bareRuntime(t);
  const served: string[] = [];
  rt.register(middleware('stamp', (_c, _a, target) => (served.push(target.run.tool.name), target.manager.next())));
  rt.register(middleware('audit', (_c, _a, target) => target.manager.next(), { stamp: true }));
  rt.register(skill('tool', () => 'ok', { audit: true }));
  assert.equal(await rt.invoke('tool'), 'ok');
  // stamp is in audit's own pipeline: it serves audit, not the tool
  assert.deepEqual(served, ['audit']);
});

test('the metadata value becomes the middleware’s args', async (t) => {
  const rt = await bareRuntime(t);
  let got: unknown;
  rt.register(middleware('retry', (_c, args, target) => ((got = args), target.manager.next())));
  rt.register(skill('tool', () => 'ok', { retry: { times: 3, backoff: 'exp' } }));
  await rt.invoke('tool');
  assert.deepEqual(got, { times: 3, backoff: 'exp' });
});

test('entries with an explicit fn are called directly with the served context and no context of their own', async (t) => {
  const rt = await bareRuntime(t);
  let seen: { isServed: boolean; args: unknown } | undefined;
  rt.register(skill('tool', (ctx) => ctx.envelope.id));
  const id = await rt.invoke('tool', {}, {
    context: { locals: { middleware: { direct: { args: { k: 1 }, fn: (ctx: Context, args: unknown) => ((seen = { isServed: ctx.run.tool.name === 'tool', args }), ctx.manager.next()) } } } },
  });
  assert.equal(typeof id, 'string');
  assert.deepEqual(seen, { isServed: true, args: { k: 1 } });
});

/** Outermost project middleware that returns the served trace once the chain has unwound to it. */
const recorder = () => middleware('recorder', async (_c, _a, target) => {
  await target.manager.next();
  return trace(target).slice();
});

test('descend, recurse, bottom, unwind: the call stack is the onion', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(recorder());
  rt.register(onion('outer'));
  rt.register(onion('inner'));
  rt.register(skill('tool', (ctx) => void trace(ctx).push('tool'), { recorder: true, outer: true, inner: true }));
  assert.deepEqual(await rt.invoke('tool'), ['outer>', 'inner>', 'tool', '<inner', '<outer']);
});

test('next() after the chain has finished returns locals.result immediately', async (t) => {
  const rt = await bareRuntime(t);
  let late: unknown = 'unset';
  rt.register(middleware('late', async (_c, _a, target) => {
    await target.manager.next();
    // the chain is done; calling next() on the served context again just returns the result
    late = await target.manager.next();
  }));
  rt.register(skill('tool', () => 42, { late: true }));
  assert.equal(await rt.invoke('tool'), 42);
  assert.equal(late, 42);
});

test('next() on an empty chain resolves immediately', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('bare', async (ctx) => {
    const r = await ctx.manager.next();
    return { r, result: ctx.locals.result };
  }, { $inherit: false }));
  const d = await rt.describe('bare');
  assert.deepEqual(d.chain, []);
  assert.deepEqual(await rt.invoke('bare'), { r: undefined, result: undefined });
});

// ——— return values ———

test('a middleware returning a value sets the result and ends the chain: the tool does not run', async (t) => {
  const rt = await bareRuntime(t);
  let ran = false;
  rt.register(middleware('cache', () => 'cached answer'));
  rt.register(skill('expensive', () => ((ran = true), 'computed'), { cache: true }));
  assert.equal(await rt.invoke('expensive'), 'cached answer');
  assert.equal(ran, false);
  assert.equal(logs(rt, { level: 'warn' }).filter((e) => e.code === 'E_PIPELINE_SHORT_CIRCUITED').length, 0, 'a return value is a bottom, not a short circuit');
});

test('a middleware returning undefined does not clobber an earlier result', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(middleware('observer', async (_c, _a, target) => {
    await target.manager.next();
    return undefined;
  }));
  rt.register(skill('tool', () => 'kept', { observer: true }));
  assert.equal(await rt.invoke('tool'), 'kept');
});

test('next() resolves to locals.result, so a middleware can inspect the result on the way up', async (t) => {
  const rt = await bareRuntime(t);
  let seen: unknown;
  rt.register(middleware('inspect', async (_c, _a, target) => {
    seen = await target.manager.next();
    assert.equal(seen, target.locals.result);
  }));
  rt.register(skill('tool', () => ({ rows: 3 }), { inspect: true }));
  await rt.invoke('tool');
  assert.deepEqual(seen, { rows: 3 });
});

test('return transform(await target.manager.next()) transforms the served tool’s result', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(middleware('uppercase', async (_c, _a, target) => String(await target.manager.next()).toUpperCase()));
  rt.register(skill('greet', (_c, a: { name: string }) => `hello ${a.name}`, { uppercase: true }));
  assert.equal(await rt.invoke('greet', { name: 'ada' }), 'HELLO ADA');
});

test('nested transforms compose outermost last', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(middleware('wrap-a', async (_c, _a, target) => `a(${await target.manager.next()})`));
  rt.register(middleware('wrap-b', async (_c, _a, target) => `b(${await target.manager.next()})`));
  rt.register(skill('tool', () => 'x', { 'wrap-a': true, 'wrap-b': true }));
  assert.equal(await rt.invoke('tool'), 'a(b(x))');
});

test('finish(value) sets the result and stops the chain', async (t) => {
  const rt = await bareRuntime(t);
  let ran = false;
  rt.register(middleware('early', (_c, _a, target) => {
    target.manager.finish('early exit');
  }));
  rt.register(skill('tool', () => ((ran = true), 'late'), { early: true }));
  assert.equal(await rt.invoke('tool'), 'early exit');
  assert.equal(ran, false);
  assert.equal(logs(rt).filter((e) => e.code === 'E_PIPELINE_SHORT_CIRCUITED').length, 0, 'finish() is not a short circuit');
});

test('a tool can finish() its own invocation with a value', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('tool', (ctx) => {
    ctx.manager.finish({ via: 'finish' });
  }));
  assert.deepEqual(await rt.invoke('tool'), { via: 'finish' });
});

// ——— leaf fallback ———

test('leaf fallback: a chain without an executor still runs the tool’s function', async (t) => {
  const rt = await bareRuntime(t);
  let runs = 0;
  rt.register(skill('tool', () => (runs++, 'ran')));
  assert.equal(await rt.invoke('tool', {}, { context: { locals: { middleware: { execute: { remove: true } } } } }), 'ran');
  assert.equal(runs, 1);
});

test('a tool’s function runs at most once per invocation', async (t) => {
  const rt = await bareRuntime(t);
  let runs = 0;
  rt.register(middleware('double-exec', async (_c, _a, target) => {
    const a = await servedTool(target).run();
    const b = await servedTool(target).run();
    return [a, b];
  }, {}));
  rt.register(skill('tool', () => ++runs, { 'double-exec': true, $order: { 'double-exec': { after: ['$pre-execute'], before: ['execute'] } } }));
  const out = await rt.invoke('tool');
  assert.equal(runs, 1);
  assert.deepEqual(out, [1, undefined]);
  // with the default executor and the leaf fallback both present, still once
  rt.register(skill('plain', () => ++runs));
  await rt.invoke('plain');
  assert.equal(runs, 2);
});

test('built-in middleware run through the leaf fallback: their own pipelines never loop', async (t) => {
  const rt = await bareRuntime(t);
  const d = await rt.describe('execute');
  assert.ok(!d.chain.some((e) => e.name === 'execute'), 'self is never an entry');
  assert.ok(!d.chain.some((e) => ['validate-args', 'directives', 'agent-execute'].includes(e.name)), `demoted: ${d.chain.map((e) => e.name)}`);
});

// ——— cycles at run time ———

test('runtime cycle skip: an entry already in its pipeline’s ancestry is skipped with a warn', async (t) => {
  const rt = await bareRuntime(t);
  const runs: string[] = [];
  // $dynamic keys escape the static SCC demotion, so this pair really reaches the runtime guard
  rt.register(middleware('ping', (_c, _a, target) => (runs.push(`ping→${target.run.tool.name}`), target.manager.next()), { $dynamic: ['pong'], pong: true }));
  rt.register(middleware('pong', (_c, _a, target) => (runs.push(`pong→${target.run.tool.name}`), target.manager.next()), { $dynamic: ['ping'], ping: true }));
  rt.register(skill('tool', () => 'done', { ping: true }));
  assert.equal(await rt.invoke('tool'), 'done');
  assert.deepEqual(runs, ['pong→ping', 'ping→tool']);
  const skips = logs(rt, { level: 'warn' }).filter((e) => e.type === 'cycle-skip');
  assert.equal(skips.length, 1);
  assert.equal(skips[0]!.entry, 'ping');
});

test('independent invoke calls never trip cycle detection', async (t) => {
  const rt = await bareRuntime(t);
  const served: string[] = [];
  rt.register(middleware('audit', async (ctx, _a, target) => {
    served.push(target.run.tool.name);
    // an independent pipeline that has `audit` in it too
    if (target.run.tool.name !== 'helper') await ctx.manager.invoke('helper');
    return target.manager.next();
  }));
  rt.register(skill('helper', () => 'h', { audit: true }));
  rt.register(skill('tool', () => 't', { audit: true }));
  assert.equal(await rt.invoke('tool'), 't');
  assert.deepEqual(served, ['tool', 'helper']);
  assert.equal(logs(rt).filter((e) => e.type === 'cycle-skip').length, 0);
});

test('the same middleware serves many independent pipelines at once', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('leaf', (_c, a: { n: number }) => a.n * 2));
  rt.register(skill('fan', (ctx) => Promise.all([1, 2, 3].map((n) => ctx.manager.invoke('leaf', { n })))));
  assert.deepEqual(await rt.invoke('fan'), [2, 4, 6]);
  assert.equal(logs(rt).filter((e) => e.type === 'cycle-skip').length, 0);
});

// ——— the one-next() contract (seed 002) ———

test('a second next() from the same middleware is a no-op that returns the current result and warns', async (t) => {
  const rt = await bareRuntime(t);
  let runs = 0;
  let second: unknown;
  rt.register(middleware('eager', async (_c, _a, target) => {
    await target.manager.next();
    second = await target.manager.next();
  }));
  rt.register(skill('tool', () => ++runs, { eager: true }));
  assert.equal(await rt.invoke('tool'), 1);
  assert.equal(runs, 1);
  assert.equal(second, 1);
  const warns = logs(rt, { type: 'next-called-twice' });
  assert.equal(warns.length, 1);
  assert.equal(warns[0]!.level, 'warn');
  assert.equal(warns[0]!.entry, 'eager');
});

test('returning undefined without next() while entries remain logs E_PIPELINE_SHORT_CIRCUITED naming the entry', async (t) => {
  const rt = await bareRuntime(t);
  let ran = false;
  rt.register(middleware('forgetful', () => undefined));
  rt.register(skill('tool', () => ((ran = true), 'x'), { forgetful: true }));
  assert.equal(await rt.invoke('tool'), undefined);
  assert.equal(ran, false, 'downstream never runs');
  const events = logs(rt).filter((e) => e.code === 'E_PIPELINE_SHORT_CIRCUITED');
  assert.equal(events.length, 1);
  assert.equal(events[0]!.level, 'warn');
  assert.equal(events[0]!.entry, 'forgetful');
  assert.match(String(events[0]!.text), /forgetful/);
});

test('upstream middleware unwind normally after a short circuit', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(recorder());
  rt.register(onion('outer'));
  rt.register(middleware('forgetful', () => undefined));
  rt.register(skill('tool', () => 'x', { recorder: true, outer: true, forgetful: true }));
  assert.deepEqual(await rt.invoke('tool'), ['outer>', '<outer']);
});

test('the last entry returning without next() is not a short circuit: no entries remain', async (t) => {
  const rt = await bareRuntime(t);
  let gateRan = false;
  rt.register(middleware('gate', () => {
    gateRan = true;
  }));
  rt.register(skill('tool', () => 'x', { $inherit: false, gate: true }));
  assert.deepEqual((await rt.describe('tool')).chain.map((e) => e.name), ['gate']);
  await rt.invoke('tool');
  assert.equal(gateRan, true);
  assert.equal(logs(rt).filter((e) => e.code === 'E_PIPELINE_SHORT_CIRCUITED').length, 0);
});

// ——— errors ———

test('a thrown error unwinds through the try/catch/finally of every middleware, innermost first', async (t) => {
  const rt = await bareRuntime(t);
  const seen: string[] = [];
  const layer = (name: string) =>
    middleware(name, async (_c, _a, target) => {
      try {
        await target.manager.next();
      } catch (err) {
        seen.push(`${name} caught ${(err as Error).message}`);
        throw err;
      } finally {
        seen.push(`${name} finally`);
      }
    });
  rt.register(layer('outer'));
  rt.register(layer('inner'));
  rt.register(skill('tool', () => {
    throw new Error('boom');
  }, { outer: true, inner: true }));
  const { error } = await settle(rt.invoke('tool'));
  assert.equal(error?.message, 'boom');
  assert.deepEqual(seen, ['inner caught boom', 'inner finally', 'outer caught boom', 'outer finally']);
});

test('the error a tool throws reaches the caller unchanged', async (t) => {
  const rt = await bareRuntime(t);
  class QuotaError extends Error {
    code = 'E_QUOTA';
  }
  rt.register(skill('tool', () => {
    throw new QuotaError('over quota');
  }));
  rt.register(skill('caller', async (ctx) => {
    try {
      await ctx.manager.invoke('tool');
    } catch (err) {
      return { same: err instanceof QuotaError, code: (err as QuotaError).code };
    }
  }));
  assert.deepEqual(await rt.invoke('caller'), { same: true, code: 'E_QUOTA' });
});

test('fail(err) sets locals.error and throws it', async (t) => {
  const rt = await bareRuntime(t);
  let recorded: unknown;
  rt.register(middleware('watch', async (_c, _a, target) => {
    try {
      await target.manager.next();
    } finally {
      recorded = target.locals.error;
    }
  }));
  const err = Object.assign(new Error('not allowed today'), { code: 'E_POLICY' });
  rt.register(skill('tool', (ctx) => ctx.manager.fail(err), { watch: true }));
  const { error } = await settle(rt.invoke('tool'));
  assert.equal(error, err);
  assert.equal(recorded, err);
});

test('fail() with a non-Error wraps it in an Error with a code', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('tool', (ctx) => ctx.manager.fail('plain reason')));
  const { error } = await settle(rt.invoke('tool'));
  assert.ok(error instanceof Error);
  assert.equal(error.message, 'plain reason');
  assert.equal(typeof (error as { code?: unknown }).code, 'string');
});

test('an error handler placed before execute via $order recovers the failure (seed 000)', async (t) => {
  const rt = await runtimeFor(t, 'resilient');
  assert.equal(await rt.invoke('flaky'), 'recovered');
  assert.equal(await rt.invoke('healthy'), 'fine');
});

test('error handlers compose: the inner one catches first, a rethrow reaches the outer one', async (t) => {
  const rt = await runtimeFor(t, 'resilient');
  const d = await rt.describe('disk-check');
  const names = d.chain.map((e) => e.name);
  assert.ok(names.indexOf('last-resort') < names.indexOf('my-error-handler') && names.indexOf('my-error-handler') < names.indexOf('execute'), names.join(' '));
  assert.deepEqual(await rt.invoke('disk-check'), { failed: 'disk on fire', handledBy: ['my-error-handler', 'last-resort'] });
});

test('error handlers that reference each other through the project main do not wrap each other', async (t) => {
  const rt = await runtimeFor(t, 'resilient');
  const d = await rt.describe('my-error-handler');
  assert.ok(!d.chain.some((e) => e.name === 'last-resort' || e.name === 'my-error-handler'), d.chain.map((e) => e.name).join(' '));
  assert.ok('last-resort' in d.metadata, 'demoted keys stay as data');
});

test('a clean run through the default pipeline logs no warnings or errors', async (t) => {
  for (const [project, tool, args] of [['greeter', 'shout', { text: 'a' }], ['resilient', 'flaky', {}], ['newsroom', 'headline', { story: 'x' }], ['acme', 'api', {}]] as const) {
    const rt = await runtimeFor(t, project);
    rt.root.manager.configure({ level: 'trace' });
    await rt.invoke(tool, args);
    assert.deepEqual(logs(rt, { level: 'warn' }).map((e) => `${e.type}: ${e.text}`), [], `${project}/${tool}`);
  }
});
