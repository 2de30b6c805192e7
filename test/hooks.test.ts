// Seed 003 "Hooks" and "Debug, Profile, and Observe", SPEC §9: `$hook` bindings ($self, named
// tools), the `$next` / `$invoke` triggers, inheritance through the cascade, `nonlocals.debug =
// false`, zero cost when no hook is declared, and the debug / profile / observe skills. Real
// runtimes over throw-away workspaces.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import type { Event, LogEvent, Runtime, RuntimeOptions } from '../src/index.ts';
import { logs, runtimeAt, settle, workspace } from './helpers.ts';

// ——— skills the workspaces are made of ———

const MAIN = (metadata: string) => `---\nname: main\ndescription: The workspace root.\nmetadata:\n${metadata}\n---\nroot\n`;

/** A hook skill: logs what it wraps (`type`), then runs the wrapped operation. */
const hookSkill = (name: string, hook: string) => `
import { ctxTarget, type Context } from 'agent-apps';
export const frontmatter = { name: '${name}', description: 'test hook', metadata: { ${hook ? `$hook: ${hook}, ` : ''}role: 'middleware', visibility: 'hidden' } };
export default async function hook(ctx: Context, args: unknown) {
  const target = ctxTarget(ctx);
  const info = ctx.locals.hook as { trigger: string; entry?: string; config: unknown; tool: string };
  ctx.manager.log({ type: '${name}-enter', tag: 'hooktest', level: 'info', trigger: info.trigger, entry: info.entry, config: info.config, served: target.run.tool.name, args });
  try { await target.manager.next(); }
  finally { ctx.manager.log({ type: '${name}-exit', tag: 'hooktest', level: 'info', trigger: info.trigger, entry: info.entry, served: target.run.tool.name }); }
}
`;

const SKILLS = {
  'skills/outer.skill.ts': `
import type { Context } from 'agent-apps';
export const frontmatter = { name: 'outer', description: 'calls inner', metadata: { params: { type: 'object', properties: { n: { type: 'number' } } } } };
export default async function outer(ctx: Context, args: { n?: number }) {
  ctx.manager.log({ type: 'outer-ran', tag: 'hooktest', level: 'info' });
  return 'outer:' + String(await ctx.manager.invoke('inner', { x: args.n ?? 1 }));
}
`,
  'skills/inner.skill.ts': `
import type { Context } from 'agent-apps';
export const frontmatter = { name: 'inner', description: 'a leaf' };
export default function inner(ctx: Context) {
  ctx.manager.log({ type: 'inner-ran', tag: 'hooktest', level: 'info', nextHooks: (ctx.manager as unknown as { nextHooks?: unknown }).nextHooks === undefined ? 'none' : 'some' });
  return 'inner';
}
`,
  'skills/fails.skill.ts': `
export const frontmatter = { name: 'fails', description: 'throws' };
export default function fails() { throw Object.assign(new Error('it broke'), { code: 'E_BROKE' }); }
`,
  'skills/collector.skill.ts': `
import type { Context } from 'agent-apps';
export const frontmatter = { name: 'collector', description: 'observe callback' };
export default function collector(ctx: Context, args: unknown) {
  ctx.manager.log({ type: 'observed', tag: 'hooktest', level: 'info', data: args });
  return null;
}
`,
  'skills/tracer.skill.ts': hookSkill('tracer', `{ $self: '$next' }`),
  'skills/wrapper.skill.ts': hookSkill('wrapper', `{ $self: '$invoke' }`),
  'skills/both.skill.ts': hookSkill('both', `{ $self: ['$next', '$invoke'] }`),
  'skills/audit.skill.ts': hookSkill('audit', ''),
};

async function hooked(t: TestContext, main: string | null, opts: RuntimeOptions = {}, extra: Record<string, string> = {}): Promise<Runtime> {
  const files: Record<string, string> = { ...SKILLS, ...extra };
  if (main !== null) files['skills/main.md'] = MAIN(main);
  return runtimeAt(t, workspace(t, files), opts);
}

const hookLog = (rt: Runtime, type?: string): LogEvent[] => logs(rt, { tag: 'hooktest', ...(type ? { type } : {}) });
const chainOf = async (rt: Runtime, name: string) => (await rt.describe(name)).chain.map((e) => e.name);
const DEFAULT_CHAIN = ['validate-returns', 'validate-args', 'validate-allowed-tools', 'directives', 'execute', 'agent-execute', 'session'];

// ——— $hook: { $self } ———

test('$self: "$next" — a hook key wraps every chain entry instead of joining the chain', async (t) => {
  const rt = await hooked(t, '  tracer: { mode: deep }');
  assert.equal(await rt.invoke('inner'), 'inner');
  const description = (await rt.describe('inner')) as { chain: { name: string }[]; hooks?: { next: { name: string; args: unknown }[]; invoke: unknown[] } };
  assert.deepEqual(description.chain.map((e) => e.name), DEFAULT_CHAIN, 'tracer is not a chain entry');
  // Each hook names the file that bound it (a workspace's hook that runs commands needs its trust).
  const bound = (list: unknown[] = []) => (list as { name: string; args: unknown; file?: string }[]).map(({ name, args, file }) => ({ name, args, bound: typeof file === "string" }));
  assert.deepEqual({ next: bound(description.hooks?.next), invoke: bound(description.hooks?.invoke) }, { next: [{ name: 'tracer', args: { mode: 'deep' }, bound: true }], invoke: [] });

  const enters = hookLog(rt, 'tracer-enter').filter((e) => e.served === 'inner');
  // The chain stops at execute (it returns the result), so agent-execute and session never run.
  assert.deepEqual(enters.map((e) => e.entry), DEFAULT_CHAIN.slice(0, 5));
  for (const e of enters) {
    assert.equal(e.trigger, '$next');
    assert.deepEqual(e.config, { mode: 'deep' }, 'the hook’s own cascade value');
    assert.equal(e.args, true, 'the hook receives the chain entry’s args (validate-args: true …)');
  }
  // An onion: each entry's exit comes after the entries it wraps.
  const seq = hookLog(rt).filter((e) => e.served === 'inner' || e.type === 'inner-ran').map((e) => (e.type === 'inner-ran' ? 'RUN' : `${e.type === 'tracer-enter' ? '>' : '<'}${String(e.entry)}`));
  assert.deepEqual(seq, [...DEFAULT_CHAIN.slice(0, 5).map((n) => `>${n}`), 'RUN', ...DEFAULT_CHAIN.slice(0, 5).reverse().map((n) => `<${n}`)]);
});

test('$self: "$invoke" — the hook wraps the whole pipeline once, and receives the tool’s args', async (t) => {
  const rt = await hooked(t, '  wrapper: true');
  assert.equal(await rt.invoke('outer', { n: 4 }), 'outer:inner');
  const seq = hookLog(rt).map((e) => (e.type.startsWith('wrapper') ? `${e.type.endsWith('enter') ? '>' : '<'}${String(e.served)}` : e.type));
  assert.deepEqual(seq, ['>outer', 'outer-ran', '>inner', 'inner-ran', '<inner', '<outer']);
  const enters = hookLog(rt, 'wrapper-enter');
  assert.deepEqual(enters.map((e) => e.args), [{ n: 4 }, { x: 4 }]);
  assert.ok(enters.every((e) => e.trigger === '$invoke' && e.entry === undefined));
});

test('$self: ["$next", "$invoke"] binds at both trigger points; the $invoke hook encloses the $next ones', async (t) => {
  const rt = await hooked(t, '  both: true');
  await rt.invoke('inner');
  const seq = hookLog(rt).filter((e) => e.type.startsWith('both')).map((e) => `${e.type.endsWith('enter') ? '>' : '<'}${e.trigger === '$invoke' ? 'pipeline' : String(e.entry)}`);
  assert.equal(seq[0], '>pipeline');
  assert.equal(seq[seq.length - 1], '<pipeline');
  assert.deepEqual(seq.slice(1, 3), ['>validate-returns', '>validate-args']);
});

test('a named binding in a main — $hook: { audit: "$invoke" } — makes a plain skill a hook for the workspace', async (t) => {
  const rt = await hooked(t, '  $hook: { audit: $invoke }\n  audit: { label: A }');
  assert.equal(await rt.invoke('outer'), 'outer:inner');
  const enters = hookLog(rt, 'audit-enter');
  assert.deepEqual(enters.map((e) => [e.served, e.trigger, e.config]), [['outer', '$invoke', { label: 'A' }], ['inner', '$invoke', { label: 'A' }]]);
  assert.equal((await chainOf(rt, 'outer')).includes('audit'), false);
});

test('a named binding with no metadata key still binds the tool (its config is undefined)', async (t) => {
  const rt = await hooked(t, '  $hook: { audit: [$invoke] }');
  await rt.invoke('inner');
  assert.deepEqual(hookLog(rt, 'audit-enter').map((e) => [e.served, e.trigger, e.config]), [['inner', '$invoke', undefined]]);
});

test('a $hook naming a trigger that does not exist is E_CONFIG naming the file', async (t) => {
  const rt = await hooked(t, '  $hook: { audit: $around }');
  const { error } = await settle(rt.invoke('inner'));
  assert.equal(error?.code, 'E_CONFIG');
  assert.match(error.message, /skills\/main\.md.*\$hook\.audit.*"\$next", "\$invoke"/);

  const rt2 = await hooked(t, '  sloppy: true', {}, { 'skills/sloppy.skill.ts': hookSkill('sloppy', `{ $self: '$before' }`) });
  const { error: own } = await settle(rt2.invoke('inner'));
  assert.equal(own?.code, 'E_CONFIG');
  assert.match(own.message, /sloppy\.skill\.ts.*\$hook\.\$self/);
});

test('a named $hook binding to a skill that does not exist is E_CONFIG naming the file', async (t) => {
  const rt = await hooked(t, '  $hook: { auditt: $invoke }');
  const { error } = await settle(rt.invoke('inner'));
  assert.equal(error?.code, 'E_CONFIG');
  assert.match(error.message, /skills\/main\.md.*\$hook\.auditt.*no skill/);
});

test('a hook that never calls next() still lets the wrapped operation run: hooks observe, they do not gate', async (t) => {
  const lazy = `
import type { Context } from 'agent-apps';
export const frontmatter = { name: 'lazy', description: 'a hook that returns at once', metadata: { $hook: { $self: ['$invoke', '$next'] }, role: 'middleware', visibility: 'hidden' } };
export default function lazy() { return undefined; }
`;
  const rt = await hooked(t, '  lazy: true', {}, { 'skills/lazy.skill.ts': lazy });
  assert.equal(await rt.invoke('outer'), 'outer:inner');
  assert.deepEqual(hookLog(rt).map((e) => e.type), ['outer-ran', 'inner-ran']);
});

// ——— inheritance, nonlocals.debug, zero cost ———

test('hooks inherit through the cascade: debug: true in a workspace main instruments every skill', async (t) => {
  const rt = await hooked(t, '  debug: true');
  assert.equal(await rt.invoke('outer'), 'outer:inner');
  const pipelines = logs(rt, { tag: 'debug', type: 'pipeline-enter' }).map((e) => e.tool);
  assert.deepEqual(pipelines, ['outer', 'inner']);
  for (const tool of ['outer', 'inner']) {
    const entries = logs(rt, { tag: 'debug', type: 'next-enter' }).filter((e) => e.tool === tool).map((e) => e.entry);
    const chain = (await chainOf(rt, tool)).filter((n) => n !== 'agent-execute' && n !== 'session'); // execute ends the chain
    assert.deepEqual(entries, chain, `${tool}'s chain entries are wrapped`);
  }
  assert.deepEqual(await chainOf(rt, 'outer'), ['params', ...DEFAULT_CHAIN], 'outer declares params');
  const inner = (await rt.describe('inner') as { hooks?: { next: { name: string; args: unknown }[]; invoke: { name: string; args: unknown }[] } }).hooks;
  const plain = (list: { name: string; args: unknown }[] = []) => list.map(({ name, args }) => ({ name, args }));
  assert.deepEqual({ next: plain(inner?.next), invoke: plain(inner?.invoke) }, { next: [{ name: 'debug', args: true }], invoke: [{ name: 'debug', args: true }] });
});

test('nonlocals.debug = false silences a whole subtree', async (t) => {
  const rt = await hooked(t, '  debug: true\n  observe: { ref: collector }');
  assert.equal(await rt.invoke('outer', { $context: { nonlocals: { debug: false } } }), 'outer:inner');
  assert.deepEqual(logs(rt, { tag: 'debug' }), []);
  assert.deepEqual(hookLog(rt, 'observed'), []);
  assert.deepEqual(hookLog(rt, 'inner-ran').map((e) => e.nextHooks), ['none']);
  // The same call without it is instrumented.
  await rt.invoke('outer');
  assert.deepEqual(logs(rt, { tag: 'debug', type: 'pipeline-enter' }).map((e) => e.tool), ['outer', 'inner']);
});

test('a skill setting nonlocals.debug = false for its children keeps itself instrumented', async (t) => {
  const quiet = `
import type { Context } from 'agent-apps';
export const frontmatter = { name: 'quiet', description: 'calls inner quietly' };
export default function quiet(ctx: Context) { return ctx.manager.invoke('inner', { $context: { nonlocals: { debug: false } } }); }
`;
  const rt = await hooked(t, '  debug: true', {}, { 'skills/quiet.skill.ts': quiet });
  await rt.invoke('quiet');
  assert.deepEqual(logs(rt, { tag: 'debug', type: 'pipeline-enter' }).map((e) => e.tool), ['quiet']);
});

test('no hook declared means no wrapper: describe shows no hooks, no debug entry, no $next hooks at run time', async (t) => {
  const rt = await hooked(t, null);
  const description = (await rt.describe('inner')) as { hooks?: unknown; chain: { name: string }[] };
  assert.equal(description.hooks, undefined);
  assert.deepEqual(description.chain.map((e) => e.name), DEFAULT_CHAIN);
  await rt.invoke('inner');
  assert.deepEqual(hookLog(rt, 'inner-ran').map((e) => e.nextHooks), ['none']);
  assert.deepEqual(logs(rt, { tag: 'debug' }), []);
});

test('hooks are per-context: instrumenting one skill does not instrument another', async (t) => {
  const noisy = `
export const frontmatter = { name: 'noisy', description: 'debugs itself', metadata: { debug: true } };
export default function noisy() { return 'noisy'; }
`;
  const rt = await hooked(t, null, {}, { 'skills/noisy.skill.ts': noisy });
  await rt.invoke('noisy');
  await rt.invoke('inner');
  assert.deepEqual([...new Set(logs(rt, { tag: 'debug' }).map((e) => e.tool))], ['noisy']);
});

test('debug and profile bind at $invoke and $next, observe at $invoke: none of them is a chain entry', async (t) => {
  const rt = await hooked(t, '  debug: true\n  profile: true\n  observe: { topic: watch }');
  const description = (await rt.describe('inner')) as { chain: { name: string }[]; hooks?: { next: { name: string }[]; invoke: { name: string }[] } };
  assert.deepEqual(description.hooks?.invoke.map((h) => h.name).sort(), ['debug', 'observe', 'profile']);
  assert.deepEqual(description.hooks?.next.map((h) => h.name).sort(), ['debug', 'profile']);
  assert.deepEqual(description.chain.map((e) => e.name), DEFAULT_CHAIN);
});

// ——— debug ———

test('debug emits pipeline-enter/exit and next-enter/exit with tool, entry, depth and duration', async (t) => {
  const rt = await hooked(t, null, { overrides: { debug: true } });
  await rt.invoke('outer');
  const events = logs(rt, { tag: 'debug' }).filter((e) => e.tool === 'outer' || e.tool === 'inner');
  const kinds = new Set(events.map((e) => e.type));
  assert.deepEqual([...kinds].sort(), ['next-enter', 'next-exit', 'pipeline-enter', 'pipeline-exit']);
  for (const e of events) {
    assert.equal(e.level, 'info');
    assert.equal(typeof e.contextId, 'string');
    assert.equal(e.depth, e.tool === 'outer' ? 0 : 1, `${e.type} ${e.tool}`);
    if (e.type.startsWith('next')) assert.equal(typeof e.entry, 'string');
    if (e.type.endsWith('exit')) assert.ok(typeof e.duration === 'number' && e.duration >= 0);
  }
  const [outerEnter] = events.filter((e) => e.type === 'pipeline-enter' && e.tool === 'outer');
  const [outerExit] = events.filter((e) => e.type === 'pipeline-exit' && e.tool === 'outer');
  const [innerExit] = events.filter((e) => e.type === 'pipeline-exit' && e.tool === 'inner');
  assert.equal(outerEnter?.contextId, outerExit?.contextId, 'debug reports on the served context');
  assert.ok((outerExit!.duration as number) >= (innerExit!.duration as number), 'durations are inclusive');
});

test('debug: an error is reported on the exits it passes through, with its code', async (t) => {
  const rt = await hooked(t, null, { overrides: { debug: true } });
  assert.equal((await settle(rt.invoke('fails'))).error?.code, 'E_BROKE');
  const [exit] = logs(rt, { tag: 'debug', type: 'pipeline-exit' }).filter((e) => e.tool === 'fails');
  assert.equal(exit?.error, 'it broke');
  assert.equal(exit?.code, 'E_BROKE');
});

test('debug: { break: [...] } logs breakpoint-hit at a tool or an entry and, not interactive, the run goes on', async (t) => {
  const rt = await hooked(t, null, { overrides: { debug: { break: ['inner', 'execute'] } } });
  assert.equal(await rt.invoke('outer'), 'outer:inner');
  const hits = logs(rt, { tag: 'debug', type: 'breakpoint-hit' }).map((e) => [e.tool, e.entry ?? null]);
  assert.deepEqual(hits, [['outer', 'execute'], ['inner', null], ['inner', 'execute']]);
  for (const e of logs(rt, { type: 'breakpoint-hit' })) assert.match(e.text ?? '', /^breakpoint at /);
});

test('debug: false in a skill’s own metadata turns the inherited debug off for it', async (t) => {
  const calm = `
export const frontmatter = { name: 'calm', description: 'opts out', metadata: { debug: false } };
export default function calm() { return 'calm'; }
`;
  const rt = await hooked(t, '  debug: true', {}, { 'skills/calm.skill.ts': calm });
  await rt.invoke('calm');
  await rt.invoke('inner');
  assert.deepEqual([...new Set(logs(rt, { tag: 'debug' }).map((e) => e.tool))], ['inner']);
});

// ——— profile ———

test('profile fills globals.internals.profile with per-pipeline and per-entry count, total and max', async (t) => {
  const rt = await hooked(t, null, { overrides: { profile: true } });
  await rt.invoke('outer');
  await rt.invoke('inner');
  const profile = rt.root.globals.internals.profile as { pipelines: Record<string, { count: number; total: number; max: number }>; entries: Record<string, { count: number; total: number; max: number }> };
  assert.equal(profile.pipelines.outer?.count, 1);
  assert.equal(profile.pipelines.inner?.count, 2);
  assert.equal(profile.entries['inner › execute']?.count, 2);
  assert.equal(profile.entries['outer › validate-args']?.count, 1);
  for (const s of [...Object.values(profile.pipelines), ...Object.values(profile.entries)]) {
    assert.ok(s.total >= s.max && s.max >= 0 && s.count >= 1);
  }
  assert.ok(profile.pipelines.outer!.total >= profile.entries['outer › execute']!.total);
});

// ——— observe ———

test('observe: { ref } invokes the callback with phase enter / exit / error, tool, args, result and contextId', async (t) => {
  const rt = await hooked(t, '  observe: { ref: collector }');
  assert.equal(await rt.invoke('outer', { n: 2 }), 'outer:inner');
  await settle(rt.invoke('fails'));
  const seen = hookLog(rt, 'observed').map((e) => e.data as Record<string, unknown>);
  assert.deepEqual(seen.map((d) => `${String(d.phase)}:${String(d.tool)}`), ['enter:outer', 'enter:inner', 'exit:inner', 'exit:outer', 'enter:fails', 'error:fails']);
  assert.deepEqual(seen[0]!.args, { n: 2 });
  assert.equal(seen[3]!.result, 'outer:inner');
  assert.equal(seen[2]!.result, 'inner');
  assert.equal(seen[0]!.contextId, seen[3]!.contextId);
  assert.notEqual(seen[0]!.contextId, seen[1]!.contextId);
  assert.deepEqual(seen[5]!.error, { message: 'it broke', code: 'E_BROKE' });
  assert.ok(!seen.some((d) => d.tool === 'collector'), 'the observer’s own invocations are not observed');
});

test('observe: { topic } emits observe-enter / observe-exit events to the topic', async (t) => {
  const rt = await hooked(t, '  observe: { topic: watch }');
  await rt.invoke('event-subscribe', { topic: 'watch' });
  await rt.invoke('inner');
  const events = (await rt.invoke('event-wait', { topic: 'watch', timeout: 0 })) as Event[];
  assert.deepEqual(events.map((e) => e.type), ['observe-enter', 'observe-exit']);
  assert.ok(events.every((e) => e.source === 'observe'));
  assert.deepEqual(events.map((e) => (e.data as { tool: string }).tool), ['inner', 'inner']);
  assert.equal((events[1]!.data as { result: unknown }).result, 'inner');
});

test('an observer that fails is logged (observe-failed) and the observed call still succeeds', async (t) => {
  const rt = await hooked(t, '  observe: { ref: fails }');
  assert.equal(await rt.invoke('inner'), 'inner');
  const failures = logs(rt, { type: 'observe-failed' });
  assert.deepEqual(failures.map((e) => [e.tool, e.level, e.code]), [['inner', 'error', 'E_BROKE'], ['inner', 'error', 'E_BROKE']]);
  assert.match(failures[0]!.text ?? '', /observe ref 'fails' failed on enter: it broke/);
});

test('observe without a topic or a ref is a configuration error', async (t) => {
  const rt = await hooked(t, '  observe: { args: {} }');
  assert.equal((await settle(rt.invoke('inner'))).error?.code, 'E_CONFIG');
});
