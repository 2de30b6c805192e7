// Seed 001 (the context object) and SPEC §5: every property, its mutability, the manager's
// methods, the target context, logging and serialization.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { ctxTarget, serializeContext, type Context, type LogEvent, type Reporter } from '../src/index.ts';
import { UUID, bareRuntime, logs, middleware, settle, skill } from './helpers.ts';

/** Runs `fn` inside a freshly invoked tool and returns what it returned. */
async function inside<T>(t: Parameters<typeof bareRuntime>[0], fn: (ctx: Context) => T | Promise<T>, metadata: Record<string, unknown> = {}, args: Record<string, unknown> = {}): Promise<T> {
  const rt = await bareRuntime(t);
  rt.register(skill('probe', (ctx) => fn(ctx), metadata));
  return (await rt.invoke('probe', args)) as T;
}

// ——— envelope ———

test('envelope.id is a UUID, unique per context', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('id', (ctx) => ctx.envelope.id));
  const a = (await rt.invoke('id')) as string;
  const b = (await rt.invoke('id')) as string;
  assert.match(a, UUID);
  assert.match(rt.root.envelope.id, UUID);
  assert.notEqual(a, b);
});

test('envelope is immutable: id, parent, target and hasOtherTarget cannot be reassigned', async (t) => {
  const out = await inside(t, (ctx) => {
    const before = { id: ctx.envelope.id, parent: ctx.envelope.parent, target: ctx.envelope.target, other: ctx.envelope.hasOtherTarget };
    const attempts = ['id', 'parent', 'target', 'hasOtherTarget'].map((k) => {
      try {
        (ctx.envelope as unknown as Record<string, unknown>)[k] = null;
        return 'assigned';
      } catch {
        return 'threw';
      }
    });
    const after = { id: ctx.envelope.id, parent: ctx.envelope.parent, target: ctx.envelope.target, other: ctx.envelope.hasOtherTarget };
    return { unchanged: before.id === after.id && before.parent === after.parent && before.target === after.target && before.other === after.other, attempts };
  });
  assert.deepEqual(out.attempts, ['threw', 'threw', 'threw', 'threw']);
  assert.equal(out.unchanged, true);
});

test('envelope.parent is the caller’s context, and null for the root', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('child', (ctx) => ctx.envelope.parent));
  rt.register(skill('parent', async (ctx) => (await ctx.manager.invoke('child')) === ctx));
  assert.equal(rt.root.envelope.parent, null);
  assert.equal(await rt.invoke('parent'), true);
});

test('envelope.target is self for a normal skill and hasOtherTarget is false', async (t) => {
  const out = await inside(t, (ctx) => ({ self: ctx.envelope.target === ctx, other: ctx.envelope.hasOtherTarget }));
  assert.deepEqual(out, { self: true, other: false });
});

test('a middleware’s envelope.target is the served context and hasOtherTarget is true', async (t) => {
  const rt = await bareRuntime(t);
  let seen: { other: boolean; targetTool: string; own: string } | undefined;
  rt.register(middleware('spy', (ctx, _a, target) => {
    seen = { other: ctx.envelope.hasOtherTarget, targetTool: target.run.tool.name, own: ctx.run.tool.name };
    return target.manager.next();
  }));
  rt.register(skill('served', () => 'ok', { spy: true }));
  await rt.invoke('served');
  assert.deepEqual(seen, { other: true, targetTool: 'served', own: 'spy' });
});

test('ctxTarget returns the served context inside middleware', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(middleware('guard', (ctx) => {
    const target = ctxTarget(ctx);
    target.locals.guarded = target.run.tool.name;
    return target.manager.next();
  }));
  rt.register(skill('served', (ctx) => ctx.locals.guarded, { guard: true }));
  assert.equal(await rt.invoke('served'), 'served');
});

test('ctxTarget throws when the tool was not invoked as middleware', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('direct', (ctx) => ctxTarget(ctx)));
  const { error } = await settle(rt.invoke('direct'));
  assert.equal(error?.code, 'E_NOT_MIDDLEWARE');
  assert.match(error.message, /'direct' was not invoked as middleware/);
});

// ——— args ———

test('args are frozen: a tool cannot change them', async (t) => {
  const out = await inside(t, (ctx) => {
    let threw = false;
    try {
      ctx.args.n = 2;
    } catch {
      threw = true;
    }
    return { frozen: Object.isFrozen(ctx.args), threw, n: ctx.args.n };
  }, {}, { n: 1 });
  assert.deepEqual(out, { frozen: true, threw: true, n: 1 });
});

test('args given by the caller are not frozen or changed in the caller’s hands', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('noop', () => null));
  const mine = { n: 1 };
  await rt.invoke('noop', mine);
  assert.equal(Object.isFrozen(mine), false);
  mine.n = 2;
  assert.equal(mine.n, 2);
});

test('params defaults are applied when the context is created and the tool sees them', async (t) => {
  const params = { type: 'object', properties: { who: { type: 'string', default: 'world' }, opts: { type: 'object', properties: { loud: { type: 'boolean', default: false } }, default: {} } } };
  const out = await inside(t, (ctx) => ({ args: ctx.args, frame: ctx.locals.history.at(-1)!.args }), { params });
  assert.deepEqual(out.args, { who: 'world', opts: { loud: false } });
  assert.deepEqual(out.frame, out.args, 'the history frame records the effective args');
});

test('an explicit arg wins over the params default', async (t) => {
  const out = await inside(t, (ctx) => ctx.args.who, { params: { type: 'object', properties: { who: { type: 'string', default: 'world' } } } }, { who: 'Ada' });
  assert.equal(out, 'Ada');
});

test('middleware sees the args with defaults applied, and nothing later changes them', async (t) => {
  const rt = await bareRuntime(t);
  const seen: unknown[] = [];
  rt.register(middleware('try-rewrite', (_ctx, _a, target) => {
    seen.push(target.args.who);
    try {
      target.args.who = 'mallory';
    } catch {}
    return target.manager.next();
  }));
  rt.register(skill('hello', (ctx) => `hello ${ctx.args.who}`, { params: { type: 'object', properties: { who: { type: 'string', default: 'world' } } }, 'try-rewrite': true }));
  assert.equal(await rt.invoke('hello'), 'hello world');
  assert.deepEqual(seen, ['world']);
});

// ——— locals ———

test('locals start with result and error undefined and config { cwd, library, runtime, workspace, paths }', async (t) => {
  const out = await inside(t, (ctx) => ({ result: ctx.locals.result, error: ctx.locals.error, config: Object.keys(ctx.locals.config) }), { $inherit: false });
  assert.equal(out.result, undefined);
  assert.equal(out.error, undefined);
  for (const k of ['cwd', 'library', 'runtime', 'workspace', 'paths']) assert.ok(out.config.includes(k), k);
});

test('locals.history reads from the root to the current tool', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('leaf', (ctx) => ctx.locals.history.map((f) => f.tool)));
  rt.register(skill('mid', (ctx) => ctx.manager.invoke('leaf')));
  rt.register(skill('top', (ctx) => ctx.manager.invoke('mid')));
  assert.deepEqual(await rt.invoke('top'), ['top', 'mid', 'leaf']);
});

test('a child’s history does not change its parent’s history', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('leaf', () => null));
  rt.register(skill('top', async (ctx) => {
    const before = ctx.locals.history.length;
    await ctx.manager.invoke('leaf');
    return [before, ctx.locals.history.length];
  }));
  assert.deepEqual(await rt.invoke('top'), [1, 1]);
});

test('locals are per invocation: a child does not see its parent’s locals', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('leaf', (ctx) => ctx.locals.scratch ?? 'none'));
  rt.register(skill('top', (ctx) => {
    ctx.locals.scratch = 'parent';
    return ctx.manager.invoke('leaf');
  }));
  assert.equal(await rt.invoke('top'), 'none');
});

// ——— nonlocals ———

test('nonlocals.rootContextId is the first context’s id in every descendant', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('leaf', (ctx) => ctx.nonlocals.rootContextId));
  rt.register(skill('top', (ctx) => ctx.manager.invoke('leaf')));
  assert.equal(await rt.invoke('top'), rt.root.envelope.id);
});

test('nonlocals are shallow-copied parent → child: the child sees them, its own writes stay its own', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('leaf', (ctx) => {
    const saw = ctx.nonlocals.gateway;
    ctx.nonlocals.gateway = 'child';
    (ctx.nonlocals.shared as { hits: number }).hits++;
    return saw;
  }));
  rt.register(skill('top', async (ctx) => {
    ctx.nonlocals.gateway = 'parent';
    ctx.nonlocals.shared = { hits: 0 };
    const saw = await ctx.manager.invoke('leaf');
    return { saw, mine: ctx.nonlocals.gateway, hits: (ctx.nonlocals.shared as { hits: number }).hits };
  }));
  // shallow: the nested object is shared, the top-level key is not
  assert.deepEqual(await rt.invoke('top'), { saw: 'parent', mine: 'parent', hits: 1 });
});

// ——— run ———

test('run.interactive is false unless the runtime says so', async (t) => {
  assert.equal(await inside(t, (ctx) => ctx.run.interactive), false);
});

test('run.interactive is true for the runtime’s direct invocation only and is not inherited', async (t) => {
  const rt = await bareRuntime(t, { interactive: true });
  rt.register(skill('leaf', (ctx) => ctx.run.interactive));
  rt.register(skill('top', async (ctx) => ({ top: ctx.run.interactive, child: await ctx.manager.invoke('leaf') })));
  assert.deepEqual(await rt.invoke('top'), { top: true, child: false });
});

test('run.interactive is set only through the context seed and cannot be assigned later', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('leaf', (ctx) => {
    try {
      (ctx.run as { interactive: boolean }).interactive = true;
    } catch {}
    return ctx.run.interactive;
  }));
  assert.equal(await rt.invoke('leaf'), false);
  assert.equal(await rt.invoke('leaf', {}, { context: { run: { interactive: true } } }), true);
});

test('run.signal is an AbortSignal that cannot be replaced', async (t) => {
  const out = await inside(t, (ctx) => {
    const s = ctx.run.signal;
    try {
      (ctx.run as { signal: unknown }).signal = null;
    } catch {}
    return { isSignal: s instanceof AbortSignal, same: ctx.run.signal === s, aborted: s.aborted };
  });
  assert.deepEqual(out, { isSignal: true, same: true, aborted: false });
});

test('run.signal aborts with the reason when the context is aborted', async (t) => {
  const rt = await bareRuntime(t);
  let seen: unknown;
  rt.register(skill('self-abort', (ctx) => {
    const s = ctx.run.signal;
    ctx.manager.abort('enough');
    seen = { aborted: s.aborted, reason: s.reason };
  }));
  const { error } = await settle(rt.invoke('self-abort'));
  assert.equal(error?.code, 'E_ABORTED');
  assert.deepEqual(seen, { aborted: true, reason: 'enough' });
});

test('run.signal follows the parent: aborting the parent aborts the child’s signal', async (t) => {
  const rt = await bareRuntime(t);
  let childSignal: AbortSignal | undefined;
  rt.register(skill('child', (ctx) => {
    childSignal = ctx.run.signal;
    return new Promise((resolve) => ctx.run.signal.addEventListener('abort', () => resolve('saw abort'), { once: true }));
  }));
  rt.register(skill('parent', (ctx) => {
    const p = ctx.manager.invoke('child');
    setTimeout(() => ctx.manager.abort('parent stopped'), 5);
    return p;
  }));
  const { error } = await settle(rt.invoke('parent'));
  assert.equal(error?.code, 'E_ABORTED');
  assert.equal(childSignal?.aborted, true);
  assert.equal(childSignal?.reason, 'parent stopped');
});

test('run.signal follows a seed signal', async (t) => {
  const rt = await bareRuntime(t);
  const ac = new AbortController();
  rt.register(skill('waits', (ctx) => new Promise((resolve) => ctx.run.signal.addEventListener('abort', () => resolve(ctx.run.signal.reason), { once: true }))));
  const p = settle(rt.invoke('waits', {}, { context: { signal: ac.signal } }));
  setTimeout(() => ac.abort('from outside'), 5);
  const { error } = await p;
  assert.equal(error?.code, 'E_ABORTED');
  assert.equal(error.reason, 'from outside');
});

test('signal listeners are released when a context finishes: no leak on the parent signal', async (t) => {
  const rt = await bareRuntime(t);
  const rootSignal = rt.root.run.signal;
  rt.register(skill('reads-signal', (ctx) => ctx.run.signal.aborted));
  const ac = new AbortController();
  for (let i = 0; i < 200; i++) await rt.invoke('reads-signal', {}, { context: { signal: ac.signal } });
  assert.equal(getEventListeners(rootSignal, 'abort').length, 0);
  assert.equal(getEventListeners(ac.signal, 'abort').length, 0);
});

test('signal listeners are released when a context fails or is aborted', async (t) => {
  const rt = await bareRuntime(t);
  const rootSignal = rt.root.run.signal;
  rt.register(skill('fails', (ctx) => {
    void ctx.run.signal;
    throw new Error('x');
  }));
  rt.register(skill('refuses', (ctx) => {
    void ctx.run.signal;
    ctx.manager.abort('no');
  }));
  for (let i = 0; i < 50; i++) {
    await settle(rt.invoke('fails'));
    await settle(rt.invoke('refuses'));
  }
  assert.equal(getEventListeners(rootSignal, 'abort').length, 0);
});

// ——— globals ———

test('globals is one long-lived object shared by every context of the runtime', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('bump', (ctx) => {
    const cache = ctx.globals.cache as Map<string, number>;
    cache.set('hits', (cache.get('hits') ?? 0) + 1);
    return ctx.globals === rt.root.globals;
  }));
  assert.equal(await rt.invoke('bump'), true);
  assert.equal(await rt.invoke('bump'), true);
  assert.equal((rt.root.globals.cache as Map<string, number>).get('hits'), 2);
});

test('globals.tools holds the programmatic tools and globals.internals the log ring', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('registered', () => 1));
  assert.ok(rt.root.globals.tools.has('registered'));
  assert.ok(rt.root.globals.internals.log, 'the log ring buffer lives on globals.internals');
  assert.ok(rt.root.globals.config && typeof rt.root.globals.config === 'object');
});

// ——— manager ———

test('manager is non-enumerable: not in Object.keys, not in JSON', async (t) => {
  const out = await inside(t, (ctx) => ({ keys: Object.keys(ctx), json: JSON.parse(JSON.stringify(serializeContext(ctx))) }));
  assert.ok(!out.keys.includes('manager'));
  for (const k of ['envelope', 'args', 'run', 'locals', 'nonlocals', 'globals']) assert.ok(out.keys.includes(k), k);
  assert.ok(!('manager' in out.json));
});

test('manager is immutable: the context’s manager cannot be replaced', async (t) => {
  const out = await inside(t, (ctx) => {
    const m = ctx.manager;
    let replaced = false;
    try {
      (ctx as unknown as { manager: unknown }).manager = {};
      replaced = true;
    } catch {}
    let deleted = false;
    try {
      deleted = delete (ctx as unknown as { manager?: unknown }).manager;
    } catch {}
    return { same: ctx.manager === m, replaced, stillThere: typeof ctx.manager?.next === 'function', deleted };
  });
  assert.equal(out.same, true);
  assert.equal(out.replaced, false);
  assert.equal(out.stillThere, true);
});

test('the manager offers every method of seed 001', async (t) => {
  const out = await inside(t, (ctx) => ['next', 'invoke', 'refresh', 'inject', 'finish', 'fail', 'abort', 'get', 'set', 'log', 'tail', 'configure'].filter((m) => typeof (ctx.manager as unknown as Record<string, unknown>)[m] !== 'function'));
  assert.deepEqual(out, []);
});

test('get reads a dotted path and returns undefined for a missing one', async (t) => {
  const out = await inside(t, (ctx) => ({ tool: ctx.manager.get('run.tool.name'), n: ctx.manager.get('args.n'), missing: ctx.manager.get('locals.nope.deeper') }), {}, { n: 4 });
  assert.deepEqual(out, { tool: 'probe', n: 4, missing: undefined });
});

test('set writes a dotted path, creating intermediate objects', async (t) => {
  const out = await inside(t, (ctx) => {
    ctx.manager.set('locals.report.summary.lines', 12);
    ctx.manager.set('nonlocals.gateway', 'gw');
    return { lines: (ctx.locals.report as { summary: { lines: number } }).summary.lines, gw: ctx.nonlocals.gateway };
  });
  assert.deepEqual(out, { lines: 12, gw: 'gw' });
});

test('set refuses the immutable parts: args, envelope, manager, run.signal, run.interactive', async (t) => {
  const out = await inside(t, (ctx) =>
    ['args.n', 'envelope.id', 'manager.next', 'run.signal', 'run.interactive'].map((p) => {
      try {
        ctx.manager.set(p, 1);
        return 'set';
      } catch (err) {
        return (err as { code?: string }).code;
      }
    }),
  {}, { n: 1 });
  assert.deepEqual(out, ['E_IMMUTABLE', 'E_IMMUTABLE', 'E_IMMUTABLE', 'E_IMMUTABLE', 'E_IMMUTABLE']);
});

test('set refuses prototype paths', async (t) => {
  const out = await inside(t, (ctx) => {
    try {
      ctx.manager.set('locals.__proto__.polluted', true);
      return 'set';
    } catch {
      return 'refused';
    }
  });
  assert.equal(out, 'refused');
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

// ——— logging ———

test('log(string) is a user message: type message, tag user, level error, with run and tool', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('talker', (ctx) => {
    ctx.manager.log('the disk is full');
    return ctx.envelope.id;
  }));
  const id = await rt.invoke('talker');
  const e = logs(rt, { tag: 'user' }).at(-1)!;
  assert.equal(e.text, 'the disk is full');
  assert.equal(e.type, 'message');
  assert.equal(e.level, 'error');
  assert.equal(e.rootContextId, rt.root.envelope.id);
  assert.equal(e.contextId, id);
  assert.equal(e.tool, 'talker');
  assert.equal(typeof e.timestamp, 'number');
});

test('log(event) keeps the given type, tag, level and fields', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('talker', (ctx) => ctx.manager.log({ type: 'progress', tag: 'build', level: 'info', text: 'half way', percent: 50 })));
  await rt.invoke('talker');
  const e = logs(rt, { type: 'progress' }).at(-1)!;
  assert.equal(e.tag, 'build');
  assert.equal(e.level, 'info');
  assert.equal(e.percent, 50);
});

test('log redacts secrets under keys like apiKey, token, password', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('leaky', (ctx) => ctx.manager.log({ type: 'config', level: 'warn', config: { apiKey: 'sk-123', nested: { password: 'hunter2' }, region: 'eu' } })));
  await rt.invoke('leaky');
  const e = logs(rt, { type: 'config' }).at(-1)! as LogEvent & { config: { apiKey: string; nested: { password: string }; region: string } };
  assert.equal(e.config.apiKey, '[REDACTED]');
  assert.equal(e.config.nested.password, '[REDACTED]');
  assert.equal(e.config.region, 'eu');
});

test('tail filters by tag, type (one or many), level and last', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('noisy', (ctx) => {
    ctx.manager.log({ type: 'a', tag: 'x', level: 'info', text: '1' });
    ctx.manager.log({ type: 'b', tag: 'y', level: 'warn', text: '2' });
    ctx.manager.log({ type: 'c', tag: 'x', level: 'error', text: '3' });
    ctx.manager.log({ type: 'a', tag: 'y', level: 'info', text: '4' });
  }));
  await rt.invoke('noisy');
  const texts = (events: LogEvent[]) => events.filter((e) => e.tool === 'noisy').map((e) => e.text);
  assert.deepEqual(texts(rt.root.manager.tail({ tag: 'x' })), ['1', '3']);
  assert.deepEqual(texts(rt.root.manager.tail({ type: 'a' })), ['1', '4']);
  assert.deepEqual(texts(rt.root.manager.tail({ type: ['b', 'c'] })), ['2', '3']);
  assert.deepEqual(texts(rt.root.manager.tail({ level: 'warn' })), ['2', '3']);
  assert.deepEqual(rt.root.manager.tail({ tag: 'x', last: 1 }).map((e) => e.text), ['3']);
});

test('tail is scoped to the current run', async (t) => {
  const a = await bareRuntime(t);
  const b = await bareRuntime(t);
  a.register(skill('talk', (ctx) => ctx.manager.log({ type: 'hello', level: 'warn', text: 'from a' })));
  await a.invoke('talk');
  assert.equal(a.root.manager.tail({ type: 'hello' }).length, 1);
  assert.equal(b.root.manager.tail({ type: 'hello' }).length, 0);
});

test('configure() with no args returns the current settings', async (t) => {
  const rt = await bareRuntime(t);
  const s = rt.root.manager.configure();
  assert.deepEqual(Object.keys(s).sort(), ['level', 'reporters', 'scope']);
  assert.equal(s.level, 'info');
});

test('configure({ level }) drops events below the level for this run', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('chatty', (ctx) => {
    ctx.manager.log({ type: 'detail', level: 'debug', text: 'hidden at info' });
    ctx.manager.configure({ level: 'debug' });
    ctx.manager.log({ type: 'detail', level: 'debug', text: 'shown at debug' });
    ctx.manager.configure({ level: 'error' });
    ctx.manager.log({ type: 'detail', level: 'warn', text: 'hidden at error' });
  }));
  await rt.invoke('chatty');
  assert.deepEqual(logs(rt, { type: 'detail' }).map((e) => e.text), ['shown at debug']);
});

test('configure({ scope }) keeps only events whose tag is in scope', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('scoped', (ctx) => {
    ctx.manager.configure({ scope: ['audit'] });
    ctx.manager.log({ type: 's', tag: 'audit', level: 'warn', text: 'kept' });
    ctx.manager.log({ type: 's', tag: 'noise', level: 'warn', text: 'dropped' });
  }));
  await rt.invoke('scoped');
  assert.deepEqual(logs(rt, { type: 's' }).map((e) => e.text), ['kept']);
});

test('configure({ reporter }) activates a reporter that receives the run’s events', async (t) => {
  const rt = await bareRuntime(t);
  const got: LogEvent[] = [];
  const reporter: Reporter = { name: 'collect', report: (e) => void got.push(e) };
  rt.register(skill('reported', (ctx) => {
    const s = ctx.manager.configure({ reporter });
    ctx.manager.log({ type: 'r', level: 'warn', text: 'to reporter' });
    return s.reporters;
  }));
  assert.ok(((await rt.invoke('reported')) as string[]).includes('collect'));
  assert.ok(got.some((e) => e.text === 'to reporter'));
});

test('reporters passed to createRuntime receive events; a throwing reporter never breaks the run', async (t) => {
  const got: string[] = [];
  const rt = await bareRuntime(t, {
    reporters: [
      { name: 'bad', report: () => { throw new Error('reporter down'); } },
      { name: 'good', report: (e) => void got.push(String(e.text)) },
    ],
  });
  rt.register(skill('talk', (ctx) => (ctx.manager.log({ type: 'm', level: 'warn', text: 'hello' }), 'ok')));
  assert.equal(await rt.invoke('talk'), 'ok');
  assert.ok(got.includes('hello'));
});

test('configure without global changes this run’s settings, not the global ones', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('tune', (ctx) => {
    const run = ctx.manager.configure({ level: 'debug' });
    const global = ctx.manager.configure({ global: true });
    return { run: run.level, global: global.level };
  }));
  assert.deepEqual(await rt.invoke('tune'), { run: 'debug', global: 'info' });
});

test('configure rejects an unknown level', async (t) => {
  const rt = await bareRuntime(t);
  assert.throws(() => rt.root.manager.configure({ level: 'loud' as never }), /unknown log level/);
});

// ——— serialization ———

test('serializeContext drops functions and the manager and keeps data', async (t) => {
  const out = await inside(t, (ctx) => {
    ctx.locals.callback = () => 1;
    ctx.locals.socket = new (class Socket { fd = 3; })();
    ctx.locals.data = { n: 1, list: [1, 'a', null] };
    return serializeContext(ctx);
  }, {}, { q: 'x' });
  const locals = out.locals as Record<string, unknown>;
  assert.ok(!('callback' in locals));
  assert.ok(!('socket' in locals), 'class instances (sockets, streams) are not data');
  assert.deepEqual(locals.data, { n: 1, list: [1, 'a', null] });
  assert.deepEqual(out.args, { q: 'x' });
  assert.ok(!('manager' in out));
  assert.equal((out.envelope as { id: string }).id.length, 36);
  const run = out.run as { tool: { name: string }; interactive: boolean; signal?: unknown };
  assert.equal(run.tool.name, 'probe');
  assert.equal(run.interactive, false);
  assert.ok(!('signal' in run), 'signals are not data');
  assert.doesNotThrow(() => JSON.stringify(out));
});

test('serializeContext replaces circular references with "[Circular]"', async (t) => {
  const out = await inside(t, (ctx) => {
    const a: Record<string, unknown> = { name: 'a' };
    a.self = a;
    ctx.locals.loop = a;
    return serializeContext(ctx);
  });
  assert.deepEqual((out.locals as Record<string, unknown>).loop, { name: 'a', self: '[Circular]' });
});

test('serializeContext cuts nesting at depth (default 8)', async (t) => {
  const out = await inside(t, (ctx) => {
    ctx.locals.deep = { l3: { l4: { l5: { l6: { l7: { l8: { l9: 'too deep' } } } } } } };
    return { shallow: serializeContext(ctx, { depth: 3 }), dflt: serializeContext(ctx) };
  });
  // ctx (0) → locals (1) → deep (2) → l3 (3): cut at depth 3
  const shallowLocals = out.shallow.locals as Record<string, Record<string, unknown>>;
  assert.ok('deep' in shallowLocals);
  assert.equal(shallowLocals.deep!.l3, undefined);
  let node = (out.dflt.locals as Record<string, unknown>).deep as Record<string, unknown>;
  const seen: string[] = [];
  while (node && typeof node === 'object') {
    const k = Object.keys(node)[0];
    if (!k) break;
    seen.push(k);
    node = node[k] as Record<string, unknown>;
  }
  assert.deepEqual(seen, ['l3', 'l4', 'l5', 'l6', 'l7']);
});

test('serializeContext leaves the in-memory context untouched', async (t) => {
  const out = await inside(t, (ctx) => {
    const fn = () => 1;
    ctx.locals.fn = fn;
    serializeContext(ctx);
    return ctx.locals.fn === fn && typeof ctx.manager.next === 'function';
  });
  assert.equal(out, true);
});

test('serializeContext writes parent and target as ids, not whole contexts', async (t) => {
  const rt = await bareRuntime(t);
  let s: Record<string, unknown> | undefined;
  rt.register(middleware('snap', (ctx, _a, target) => ((s = serializeContext(ctx)), target.manager.next())));
  rt.register(skill('served', (ctx) => ctx.envelope.id, { snap: true }));
  const servedId = await rt.invoke('served');
  const env = s!.envelope as Record<string, unknown>;
  assert.equal(env.target, servedId);
  assert.equal(env.parent, servedId);
  assert.equal(env.hasOtherTarget, true);
});
