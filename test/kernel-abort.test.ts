// Abort as refusal, not failure (seed 002; SPEC §6.6): no further entries run, upstream
// post-steps and finally blocks run, children are aborted, invoke rejects with an AbortError
// carrying the reason, and the log says `abort`, never `error`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { AbortError, createRuntime, type Context } from '../src/index.ts';
import { bareRuntime, logs, middleware, runtimeFor, settle, skill, tempDir } from './helpers.ts';

const noErrors = (rt: Parameters<typeof logs>[0]) => logs(rt).filter((e) => e.level === 'error' || e.type === 'error');

test('abort is refusal: invoke rejects with an AbortError carrying the reason (E_ABORTED)', async (t) => {
  const rt = await runtimeFor(t, 'release-desk');
  const { error } = await settle(rt.invoke('deploy', { service: 'api' }));
  assert.ok(error instanceof AbortError);
  assert.equal(error.code, 'E_ABORTED');
  assert.equal(error.reason, 'change freeze until the release is signed off');
  assert.match(error.message, /change freeze/);
});

test('abort is logged as type abort, never as an error', async (t) => {
  const rt = await runtimeFor(t, 'release-desk');
  await settle(rt.invoke('deploy'));
  const aborts = logs(rt, { type: 'abort' });
  assert.equal(aborts.length, 1);
  assert.notEqual(aborts[0]!.level, 'error');
  assert.match(String(aborts[0]!.text), /change freeze/);
  assert.deepEqual(noErrors(rt), []);
  assert.equal(logs(rt).filter((e) => e.code === 'E_PIPELINE_SHORT_CIRCUITED').length, 0, 'an abort is not a short circuit');
});

test('a refusing gate lets tools it does not cover through', async (t) => {
  const rt = await runtimeFor(t, 'release-desk');
  assert.equal(await rt.invoke('status'), 'green');
  // the ops folder's authority turns the gate off for its tools
  assert.equal(await rt.invoke('hotfix'), 'hotfix shipped');
});

test('after abort no further entries run and the tool does not execute', async (t) => {
  const rt = await bareRuntime(t);
  const ran: string[] = [];
  rt.register(middleware('refuse', (_c, _a, target) => {
    target.manager.abort('not today');
  }));
  rt.register(middleware('after-gate', (_c, _a, target) => (ran.push('after-gate'), target.manager.next())));
  rt.register(skill('tool', () => void ran.push('tool'), { refuse: true, 'after-gate': true }));
  const { error } = await settle(rt.invoke('tool'));
  assert.ok(error instanceof AbortError);
  assert.deepEqual(ran, []);
});

test('the aborting middleware finishes its own body inline', async (t) => {
  const rt = await bareRuntime(t);
  let cleanup = false;
  rt.register(middleware('refuse', (_c, _a, target) => {
    target.manager.abort('no');
    cleanup = true;
  }));
  rt.register(skill('tool', () => 'x', { refuse: true }));
  await settle(rt.invoke('tool'));
  assert.equal(cleanup, true);
});

test('upstream post-steps and finally blocks run on an abort', async (t) => {
  const rt = await bareRuntime(t);
  const seen: string[] = [];
  rt.register(middleware('outer', async (_c, _a, target) => {
    try {
      const r = await target.manager.next();
      seen.push(`post-step saw aborted=${target.run.signal.aborted} result=${String(r)}`);
    } finally {
      seen.push('finally');
    }
  }));
  rt.register(middleware('refuse', (_c, _a, target) => target.manager.abort('closed')));
  rt.register(skill('tool', () => 'x', { outer: true, refuse: true }));
  const { error } = await settle(rt.invoke('tool'));
  assert.equal(error?.reason, 'closed');
  assert.deepEqual(seen, ['post-step saw aborted=true result=undefined', 'finally']);
});

test('abort cascades to children: a running child’s run.signal fires with the reason', async (t) => {
  const rt = await bareRuntime(t);
  let childSaw: unknown;
  rt.register(skill('long-job', (ctx) => new Promise((resolve) => {
    ctx.run.signal.addEventListener('abort', () => {
      childSaw = ctx.run.signal.reason;
      resolve('stopped early');
    }, { once: true });
  })));
  rt.register(skill('supervisor', async (ctx) => {
    const job = ctx.manager.invoke('long-job');
    setTimeout(() => ctx.manager.abort('operator cancelled'), 5);
    return job;
  }));
  const { error } = await settle(rt.invoke('supervisor'));
  assert.ok(error instanceof AbortError);
  assert.equal(error.reason, 'operator cancelled');
  assert.equal(childSaw, 'operator cancelled');
});

test('a child invoked after its parent aborted starts aborted', async (t) => {
  const rt = await bareRuntime(t);
  let aborted: boolean | undefined;
  rt.register(skill('child', (ctx) => void (aborted = ctx.run.signal.aborted)));
  rt.register(skill('parent', async (ctx) => {
    ctx.manager.abort('stop');
    await settle(ctx.manager.invoke('child'));
  }));
  await settle(rt.invoke('parent'));
  assert.notEqual(aborted, false);
});

test('a middleware that aborts its own context refuses the tool it serves', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(middleware('self-refuse', (ctx) => ctx.manager.abort('policy says no')));
  rt.register(skill('tool', () => 'x', { 'self-refuse': true }));
  const { error } = await settle(rt.invoke('tool'));
  assert.ok(error instanceof AbortError);
  assert.equal(error.reason, 'policy says no');
});

test('a caller can catch a child’s refusal and carry on: abort does not travel up', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('child', (ctx) => ctx.manager.abort('child refuses')));
  rt.register(skill('parent', async (ctx) => {
    try {
      await ctx.manager.invoke('child');
      return 'unexpected';
    } catch (err) {
      return { fallback: true, reason: (err as AbortError).reason, parentAborted: ctx.run.signal.aborted };
    }
  }));
  assert.deepEqual(await rt.invoke('parent'), { fallback: true, reason: 'child refuses', parentAborted: false });
});

test('validate-returns does not judge the result of an aborted invocation', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('tool', (ctx) => ctx.manager.abort('no'), { returns: { type: 'string' } }));
  const { error } = await settle(rt.invoke('tool'));
  assert.equal(error?.code, 'E_ABORTED', 'not E_VALIDATION');
});

test('closing the runtime aborts invocations in flight', async (t) => {
  const rt = await createRuntime({ cwd: tempDir(t) });
  rt.register(skill('waits', (ctx: Context) => new Promise((resolve) => ctx.run.signal.addEventListener('abort', () => resolve('woke'), { once: true }))));
  const p = settle(rt.invoke('waits'));
  await new Promise((r) => setTimeout(r, 5));
  await rt.close();
  const { error } = await p;
  assert.ok(error instanceof AbortError);
});

test('the runtime’s signal option aborts everything below the root', async (t) => {
  const ac = new AbortController();
  const rt = await bareRuntime(t, { signal: ac.signal } as never);
  rt.register(skill('waits', (ctx: Context) => new Promise((resolve) => ctx.run.signal.addEventListener('abort', () => resolve('woke'), { once: true }))));
  const p = settle(rt.invoke('waits'));
  setTimeout(() => ac.abort('SIGINT'), 5);
  const { error } = await p;
  assert.ok(error instanceof AbortError);
  assert.equal(error.reason, 'SIGINT');
});

test('many invocations in flight reading run.signal put one listener on the signal they follow, and an abort still reaches each (docs/events.md, Performance)', async (t) => {
  const ac = new AbortController();
  const rt = await bareRuntime(t, { signal: ac.signal } as never);
  const parents = new Set<AbortSignal>();
  rt.register(skill('waits', (ctx: Context) => {
    parents.add(ctx.envelope.parent!.run.signal);
    return new Promise((resolve) => ctx.run.signal.addEventListener('abort', () => resolve(String(ctx.run.signal.reason)), { once: true }));
  }));
  const all = Array.from({ length: 200 }, () => settle(rt.invoke('waits')));
  while (parents.size === 0) await new Promise((r) => setTimeout(r, 1));
  await new Promise((r) => setTimeout(r, 20));
  const [parent] = [...parents];
  assert.equal(parents.size, 1, 'one parent: the root');
  assert.equal(getEventListeners(parent!, 'abort').length, 1);
  ac.abort('SIGINT');
  const outcomes = await Promise.all(all);
  assert.equal(outcomes.filter((o) => o.error instanceof AbortError && o.error.reason === 'SIGINT').length, 200);
  // Settled: their signals follow nothing any more.
  assert.equal(getEventListeners(parent!, 'abort').length, 0);
});

test('a settled invocation leaves no listener on the signal it followed', async (t) => {
  const rt = await bareRuntime(t);
  let parent: AbortSignal | undefined;
  rt.register(skill('reads', (ctx: Context) => {
    parent = ctx.envelope.parent!.run.signal;
    return ctx.run.signal.aborted;
  }));
  for (let i = 0; i < 3; i++) assert.equal(await rt.invoke('reads'), false);
  assert.equal(getEventListeners(parent!, 'abort').length, 0);
});

test('an invocation through the whole default pipeline aborted mid-way logs no error events', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('tool', async (ctx) => {
    await new Promise((r) => setTimeout(r, 2));
    ctx.manager.abort('changed my mind');
    return 'ignored';
  }, { returns: { type: 'number' } }));
  const { error } = await settle(rt.invoke('tool'));
  assert.equal(error?.code, 'E_ABORTED');
  assert.deepEqual(noErrors(rt), []);
});

test('a deadline middleware refuses a slow tool: the tool’s signal fires and the middleware cleans up', async (t) => {
  const rt = await bareRuntime(t);
  let cleared = false;
  let toolSaw: unknown;
  rt.register(middleware('deadline', async (_c, ms: number, target) => {
    const timer = setTimeout(() => target.manager.abort(`deadline of ${ms} ms exceeded`), ms);
    try {
      return await target.manager.next();
    } finally {
      clearTimeout(timer);
      cleared = true;
    }
  }));
  rt.register(skill('slow-report', (ctx) => new Promise((resolve) => {
    const done = setTimeout(() => resolve('report'), 5000);
    ctx.run.signal.addEventListener('abort', () => {
      clearTimeout(done);
      toolSaw = ctx.run.signal.reason;
      resolve('partial');
    }, { once: true });
  }), { deadline: 30 }));
  rt.register(skill('fast-report', () => 'report', { deadline: 1000 }));
  assert.equal(await rt.invoke('fast-report'), 'report');
  // No clock: the skill resolves 'partial' only from its abort listener (its own 'report' timer is
  // cleared there), so the deadline, not the 5 s timer, ended it — asserted by the reason it saw.
  const { error } = await settle(rt.invoke('slow-report'));
  assert.ok(error instanceof AbortError);
  assert.equal(error.reason, 'deadline of 30 ms exceeded');
  assert.equal(toolSaw, 'deadline of 30 ms exceeded');
  assert.equal(cleared, true);
});
