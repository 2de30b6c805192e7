// SPEC §6.4 and seed 000 "Sorting" / "Leaf Middleware and Cycle Prevention": auto-static SCC
// demotion, $order with phase sentinels, the stable topological sort, ignored constraints and
// cycles as configuration errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigurationError } from '../src/index.ts';
import { bareRuntime, logs, middleware, runtimeFor, settle, skill } from './helpers.ts';

const pass = (name: string) => middleware(name, (_c, _a, target) => target.manager.next());
const chainOf = async (rt: Awaited<ReturnType<typeof bareRuntime>>, name: string) => (await rt.describe(name)).chain.map((e) => e.name);

// ——— auto-static (Tarjan SCC) ———

test('a pair of middleware skills that reference each other do not loop', async (t) => {
  const rt = await runtimeFor(t, 'newsroom');
  assert.equal(await rt.invoke('headline', { story: 'budget' }), 'The budget is out.');
  const checks = logs(rt, { type: 'copy-check' }).map((e) => e.text);
  assert.deepEqual(checks, ['spell-check(en-GB) for headline', 'style-guide(acme-news) for headline']);
});

test('auto-static demotes a toolKey in the same SCC to data: it stays in the metadata, not in the chain', async (t) => {
  const rt = await runtimeFor(t, 'newsroom');
  const spell = await rt.describe('spell-check');
  assert.ok(!spell.chain.some((e) => e.name === 'style-guide'), spell.chain.map((e) => e.name).join(' '));
  assert.deepEqual(spell.metadata['style-guide'], { house: 'acme-news' });
  const style = await rt.describe('style-guide');
  assert.ok(!style.chain.some((e) => e.name === 'spell-check'));
  // the served tool, outside the cycle, keeps both
  const head = (await rt.describe('headline')).chain.map((e) => e.name);
  assert.ok(head.indexOf('spell-check') !== -1 && head.indexOf('spell-check') < head.indexOf('style-guide'), head.join(' '));
});

test('auto-static needs no $inherit: false or $static in programmatic middleware either', async (t) => {
  const rt = await bareRuntime(t);
  const served: string[] = [];
  rt.register(middleware('left', (_c, _a, target) => (served.push(`left:${target.run.tool.name}`), target.manager.next()), { right: true }));
  rt.register(middleware('right', (_c, _a, target) => (served.push(`right:${target.run.tool.name}`), target.manager.next()), { left: true }));
  rt.register(skill('tool', () => 'ok', { left: true }));
  assert.equal(await rt.invoke('tool'), 'ok');
  assert.deepEqual(served, ['left:tool']);
  assert.equal(logs(rt).filter((e) => e.type === 'cycle-skip').length, 0, 'demoted statically, not skipped at run time');
});

test('a middleware outside the cycle still runs inside a cycle member’s pipeline', async (t) => {
  const rt = await bareRuntime(t);
  const served: string[] = [];
  rt.register(pass('left-helper'));
  rt.register(middleware('audit', (_c, _a, target) => (served.push(target.run.tool.name), target.manager.next())));
  rt.register(middleware('left', (_c, _a, target) => target.manager.next(), { right: true, audit: true }));
  rt.register(middleware('right', (_c, _a, target) => target.manager.next(), { left: true }));
  rt.register(skill('tool', () => 'ok', { left: true }));
  await rt.invoke('tool');
  assert.deepEqual(served, ['left']);
});

// ——— $order and the phase sentinels ———

test('the library main orders the built-in middleware in their slots', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('everything', () => 1, { delegate: 'x', role: 'skill', params: { type: 'object' }, model: { maxTurns: 1 }, paths: [], cwd: '.' }));
  assert.deepEqual(await chainOf(rt, 'everything'), [
    'model', 'cwd', 'paths', // before $configure (paths after cwd)
    'role', 'params', 'delegate', // $configure … $post-configure (delegate after params and role)
    'validate-returns', 'validate-args', 'validate-allowed-tools', // $post-configure … $pre-execute
    'directives', 'execute', 'agent-execute', // after $pre-execute
    'session', // after $agent (SPEC §18)
  ]);
});

test('an entry without $order sits after $configure and before $post-configure', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(pass('audit'));
  rt.register(skill('tool', () => 1, { audit: true, cwd: '.' }));
  const chain = await chainOf(rt, 'tool');
  assert.ok(chain.indexOf('cwd') < chain.indexOf('audit'), chain.join(' '));
  assert.ok(chain.indexOf('audit') < chain.indexOf('validate-returns'), chain.join(' '));
});

test('$order places an entry relative to a sentinel', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(pass('early'));
  rt.register(pass('late'));
  rt.register(skill('tool', () => 1, { late: true, early: true, cwd: '.', $order: { early: { before: ['$configure'] }, late: { after: ['$pre-execute'], before: ['execute'] } } }));
  const chain = await chainOf(rt, 'tool');
  assert.ok(chain.indexOf('early') < chain.indexOf('validate-args'));
  assert.ok(chain.indexOf('late') > chain.indexOf('validate-allowed-tools') && chain.indexOf('late') < chain.indexOf('execute'), chain.join(' '));
});

test('$order places an entry relative to another entry', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(pass('first'));
  rt.register(pass('second'));
  rt.register(skill('tool', () => 1, { second: true, first: true, $order: { second: { after: ['$configure', 'first'], before: ['$post-configure'] } } }));
  const chain = await chainOf(rt, 'tool');
  assert.ok(chain.indexOf('first') < chain.indexOf('second'), chain.join(' '));
});

test('phase sentinels never appear in the chain', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('tool', () => 1, { cwd: '.', params: { type: 'object' } }));
  assert.deepEqual((await chainOf(rt, 'tool')).filter((n) => n.startsWith('$')), []);
});

test('the sort is stable: unconstrained entries keep their insertion order', async (t) => {
  const rt = await bareRuntime(t);
  for (const n of ['zeta', 'alpha', 'mid']) rt.register(pass(n));
  rt.register(skill('tool', () => 1, { zeta: true, alpha: true, mid: true }));
  const chain = (await chainOf(rt, 'tool')).filter((n) => ['zeta', 'alpha', 'mid'].includes(n));
  assert.deepEqual(chain, ['zeta', 'alpha', 'mid']);
});

test('the chain runs in the sorted order', async (t) => {
  const rt = await bareRuntime(t);
  const ran: string[] = [];
  const rec = (n: string) => middleware(n, (_c, _a, target) => (ran.push(n), target.manager.next()));
  for (const n of ['c', 'b', 'a']) rt.register(rec(`step-${n}`));
  rt.register(skill('tool', () => 1, { 'step-c': true, 'step-b': true, 'step-a': true, $order: { 'step-a': { after: ['$configure'], before: ['step-b'] }, 'step-b': { after: ['$configure'], before: ['step-c'] } } }));
  await rt.invoke('tool');
  assert.deepEqual(ran, ['step-a', 'step-b', 'step-c']);
});

test('a constraint naming an entry that is not in the chain is ignored', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(pass('audit'));
  rt.register(skill('tool', () => 'ok', { audit: true, $order: { audit: { after: ['$configure', 'not-installed'], before: ['$post-configure', 'also-missing'] } } }));
  assert.ok((await chainOf(rt, 'tool')).includes('audit'));
  assert.equal(await rt.invoke('tool'), 'ok');
});

test('a tool’s own $order for a key overrides the one its main gave', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(pass('audit'));
  rt.register(skill('tool', () => 1, { audit: true, $order: { audit: { after: ['execute'] } } }));
  const chain = await chainOf(rt, 'tool');
  assert.ok(chain.indexOf('audit') > chain.indexOf('execute'), chain.join(' '));
});

test('an $order cycle is a ConfigurationError whose message prints the cycle', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(pass('lint'));
  rt.register(pass('format'));
  rt.register(skill('tool', () => 1, { lint: true, format: true, $order: { lint: { before: ['format'] }, format: { before: ['lint'] } } }));
  const { error } = await settle(rt.invoke('tool'));
  assert.ok(error instanceof ConfigurationError);
  assert.equal(error.code, 'E_CONFIG');
  assert.ok(/lint → format → lint|format → lint → format/.test(error.message), error.message);
  await assert.rejects(rt.describe('tool'), /cycle/);
});

test('an $order that contradicts the phase sentinels is a cycle through them', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(pass('confused'));
  rt.register(skill('tool', () => 1, { confused: true, $order: { confused: { after: ['$pre-execute'], before: ['$configure'] } } }));
  const { error } = await settle(rt.invoke('tool'));
  assert.equal(error?.code, 'E_CONFIG');
  assert.match(error.message, /\$configure/);
  assert.match(error.message, /confused/);
});

test('$order must be a map of { before, after }: anything else names the key', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('tool', () => 1, { $order: { audit: 'first' } }));
  const { error } = await settle(rt.invoke('tool'));
  assert.equal(error?.code, 'E_CONFIG');
  assert.match(error.message, /\$order\.audit/);
});

test('the SCC result is recomputed when tools change: a cycle closed later is still demoted', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(pass('right'));
  rt.register(middleware('left', (_c, _a, target) => target.manager.next(), { right: true }));
  assert.ok((await chainOf(rt, 'left')).includes('right'), 'no cycle yet: right is middleware of left');
  // re-register right so that it now refers back to left
  rt.register(middleware('right', (_c, _a, target) => target.manager.next(), { left: true }));
  assert.ok(!(await chainOf(rt, 'left')).includes('right'), 'left ↔ right is a cycle now');
  rt.register(skill('tool', () => 'ok', { left: true, right: true }));
  assert.equal(await rt.invoke('tool'), 'ok');
  const chain = await chainOf(rt, 'tool');
  assert.ok(chain.includes('left') && chain.includes('right'), 'a tool outside the cycle keeps both');
});
