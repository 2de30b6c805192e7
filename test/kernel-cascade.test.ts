// SPEC §6.1–6.3 and seed 000 step 7: cascade levels, annotations, merge policies and
// interpolation, on the `acme` fixture (a workspace with nested folder authorities).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { ConfigurationError } from '../src/index.ts';
import { LIBRARY, bareRuntime, fixture, runtimeFor, settle, skill } from './helpers.ts';

const ACME = fixture('acme');
const SKILLS = path.join(ACME, 'skills');
type Meta = Record<string, any>;

// ——— levels (6.1) ———

test('the library main is the lowest level: every tool inherits the default pipeline keys', async (t) => {
  const rt = await runtimeFor(t, 'acme');
  const md = (await rt.invoke('report')) as Meta;
  for (const k of ['validate-args', 'validate-allowed-tools', 'validate-returns', 'execute', 'agent-execute']) assert.equal(md[k], true, k);
});

test('a workspace main overrides the library main', async (t) => {
  const rt = await runtimeFor(t, 'acme');
  const d = await rt.describe('report');
  assert.equal(d.metadata.directives, false);
  // `directives: false` in the workspace main turns the library's directives off: no entry at all.
  assert.equal(d.chain.find((e) => e.name === 'directives'), undefined);
  assert.ok(d.chain.some((e) => e.name === 'execute'));
});

test('folder mains apply outermost first, down to the tool’s own folder', async (t) => {
  const rt = await runtimeFor(t, 'acme');
  assert.equal(((await rt.invoke('report')) as Meta).tone, 'formal');
  assert.equal(((await rt.describe('merge-demo')).metadata as Meta).tone, 'casual');
  const api = (await rt.invoke('api')) as Meta;
  assert.equal(api.tone, 'terse', 'the nearest folder main wins over the outer ones');
  assert.equal(api.owner, 'platform', 'keys only the root main sets still reach the tool');
});

test('describe records which level each key came from', async (t) => {
  const rt = await runtimeFor(t, 'acme');
  const d = await rt.describe('api');
  assert.equal(d.metadata.tone, 'terse');
  const fromOf = (name: string) => d.chain.find((e) => e.name === name)?.from;
  assert.equal(fromOf('execute'), `file://${path.join(LIBRARY, 'main.md')}`);
});

test('the tool’s own metadata beats every main', async (t) => {
  const rt = await runtimeFor(t, 'acme');
  const db = (await rt.invoke('db')) as Meta;
  assert.equal(db.tone, 'db-admin');
});

test('CLI overrides (createRuntime({ overrides })) beat the tool’s own metadata', async (t) => {
  const rt = await runtimeFor(t, 'acme', { overrides: { tone: 'cli', limits: { maxTokens: 5 } } });
  const db = (await rt.invoke('db')) as Meta;
  assert.equal(db.tone, 'cli');
  assert.deepEqual(db.limits, { maxTokens: 5, timeoutMs: 9000, retry: { times: 2, backoff: 'linear' } }, 'overrides merge like any level');
});

test('$private keys of a main apply to that main only and do not cascade', async (t) => {
  const rt = await runtimeFor(t, 'acme');
  assert.equal(((await rt.invoke('report')) as Meta).audience, undefined);
  assert.equal((await rt.describe('main')).metadata.audience, 'maintainers');
});

test('the library main’s private visibility does not make every tool hidden', async (t) => {
  const rt = await runtimeFor(t, 'acme');
  const d = await rt.describe('report');
  assert.equal(d.metadata.visibility, undefined);
  assert.equal(d.tool.visibility, 'public');
  assert.ok((await rt.list()).some((s) => s.name === 'report'));
});

test('$inherit: false drops the library and folder mains but keeps CLI overrides', async (t) => {
  const rt = await runtimeFor(t, 'acme', { overrides: { owner: 'cli-owner' } });
  const md = (await rt.invoke('loner')) as Meta;
  assert.deepEqual(md, { tone: 'alone', owner: 'cli-owner' });
  const d = await rt.describe('loner');
  assert.deepEqual(d.chain, [], 'no default pipeline without the library level');
});

// ——— annotations (6.2) ———

test('annotations are extracted per level and never reach the merged metadata', async (t) => {
  const rt = await runtimeFor(t, 'acme');
  for (const name of ['report', 'api', 'merge-demo', 'loner', 'static-demo']) {
    const d = await rt.describe(name);
    assert.deepEqual(Object.keys(d.metadata).filter((k) => k.startsWith('$')), [], name);
  }
});

test('$remove drops a key the levels above gave', async (t) => {
  const rt = await runtimeFor(t, 'acme');
  const api = (await rt.invoke('api')) as Meta;
  assert.ok(!('reviewers' in api), 'backend/main.md removes the reviewers of team/main.md');
});

test('$remove only affects lower levels: a tool below may set the key again', async (t) => {
  const rt = await runtimeFor(t, 'acme');
  assert.deepEqual(((await rt.invoke('db')) as Meta).reviewers, ['carol']);
});

test('$remove of a key naming a tool takes it out of the chain', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('plain', () => 'ok', { $remove: ['validate-returns', 'agent-execute'] }));
  const d = await rt.describe('plain');
  assert.ok(!d.chain.some((e) => e.name === 'validate-returns' || e.name === 'agent-execute'));
  assert.ok(d.chain.some((e) => e.name === 'execute'));
  assert.equal(await rt.invoke('plain'), 'ok');
});

test('default merge: plain objects merge deeply, the higher level wins on conflicts', async (t) => {
  const rt = await runtimeFor(t, 'acme');
  const api = (await rt.invoke('api')) as Meta;
  assert.deepEqual(api.limits, { maxTokens: 1000, timeoutMs: 9000, retry: { times: 2, backoff: 'linear' } });
});

test('default merge: arrays and scalars are replaced', async (t) => {
  const rt = await runtimeFor(t, 'acme');
  const d = (await rt.invoke('deep-demo')) as Meta;
  assert.deepEqual(d.reviewers, ['erin']);
  assert.equal(d.retries, 5);
});

test('$merge replace: the higher level’s object replaces the lower one whole', async (t) => {
  const rt = await runtimeFor(t, 'acme');
  assert.deepEqual(((await rt.invoke('merge-demo')) as Meta).limits, { maxTokens: 10 });
});

test('$merge append: arrays are concatenated, lower level first', async (t) => {
  const rt = await runtimeFor(t, 'acme');
  assert.deepEqual(((await rt.invoke('merge-demo')) as Meta).reviewers, ['bob', 'dave']);
});

test('$merge deep: nested objects merge at every depth', async (t) => {
  const rt = await runtimeFor(t, 'acme');
  assert.deepEqual(((await rt.invoke('deep-demo')) as Meta).limits, { maxTokens: 1000, timeoutMs: 9000, retry: { times: 2, backoff: 'exp' } });
});

test('an unknown $merge policy is a configuration error naming the file', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('odd', () => 1, { $merge: { limits: 'shuffle' } }));
  const { error } = await settle(rt.invoke('odd'));
  assert.ok(error instanceof ConfigurationError);
  assert.match(error.message, /\$merge\.limits/);
});

test('an unknown annotation is a configuration error', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('odd', () => 1, { $frobnicate: true }));
  const { error } = await settle(rt.invoke('odd'));
  assert.equal(error?.code, 'E_CONFIG');
  assert.match(error.message, /\$frobnicate/);
});

test('$static keeps a key as data although a tool has that name', async (t) => {
  const rt = await runtimeFor(t, 'acme');
  const d = await rt.describe('static-demo');
  assert.ok(!d.chain.some((e) => e.name === 'cwd'));
  const out = (await rt.invoke('static-demo')) as { cwd: string; meta: string };
  assert.equal(out.meta, './somewhere-else');
  assert.equal(out.cwd, ACME, 'the cwd middleware did not run');
});

test('$dynamic: a key naming no tool yet is skipped silently', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('hooked', () => 'ran', { $dynamic: ['late-audit'], 'late-audit': { level: 'full' } }));
  assert.equal(await rt.invoke('hooked'), 'ran');
  assert.deepEqual(rt.root.manager.tail({ level: 'warn' }), []);
});

test('$dynamic: a tool registered later runs as middleware with the key’s value as args', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('hooked', () => 'ran', { $dynamic: ['late-audit'], 'late-audit': { level: 'full' } }));
  await rt.invoke('hooked');
  let got: unknown;
  rt.register({ name: 'late-audit', frontmatter: { name: 'late-audit', metadata: { role: 'middleware' } }, fn: (ctx, args) => ((got = args), ctx.envelope.target.manager.next()) });
  assert.equal(await rt.invoke('hooked'), 'ran');
  assert.deepEqual(got, { level: 'full' });
});

test('without $dynamic a key naming no tool is plain data: registering the tool later makes it middleware', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('tool', () => 'ran', { 'spell-check': true }));
  assert.ok(!(await rt.describe('tool')).chain.some((e) => e.name === 'spell-check'));
  rt.register({ name: 'spell-check', frontmatter: { name: 'spell-check' }, fn: (ctx) => ctx.envelope.target.manager.next() });
  assert.ok((await rt.describe('tool')).chain.some((e) => e.name === 'spell-check'), 'plans are recomputed when tools appear');
});

// ——— toolKeys (6.4) ———

test('only keys that name a tool become chain entries', async (t) => {
  const rt = await runtimeFor(t, 'acme');
  const d = await rt.describe('api');
  const names = d.chain.map((e) => e.name);
  for (const data of ['tone', 'limits', 'owner', 'data-dir', 'team-dir']) assert.ok(!names.includes(data), data);
  assert.ok(names.includes('execute'));
  assert.equal(d.metadata.tone, 'terse');
});

test('a tool never becomes middleware of itself', async (t) => {
  const rt = await bareRuntime(t);
  let calls = 0;
  rt.register(skill('echo', (_c, a) => (calls++, a), { echo: { note: 'self-reference is data' } }));
  assert.ok(!(await rt.describe('echo')).chain.some((e) => e.name === 'echo'));
  await rt.invoke('echo', { x: 1 });
  assert.equal(calls, 1);
});

// ——— interpolation (6.3) ———

test('${workspace}, ${dir}, ${root}, ${cwd} and ${name} interpolate per level', async (t) => {
  const rt = await runtimeFor(t, 'acme');
  const md = (await rt.invoke('api')) as Meta;
  assert.equal(md['data-dir'], path.join(ACME, 'data'));
  assert.equal(md['house-note'], `main in ${SKILLS} (root ${SKILLS}), run from ${ACME}`, '${name} and ${dir} are the level’s own main');
  assert.equal(md['team-dir'], path.join(SKILLS, 'team'));
  assert.deepEqual(md['tags-note'], ['main', path.join(SKILLS, 'team')], 'strings inside arrays interpolate too');
});

test('${name} and ${dir} at a tool’s own level are the tool’s', async (t) => {
  const rt = await runtimeFor(t, 'acme');
  assert.equal(((await rt.invoke('db')) as Meta).owner, 'db');
  const md = (await rt.invoke('env-demo')) as Meta;
  assert.deepEqual(md.where, { dir: SKILLS, root: SKILLS, workspace: ACME, cwd: ACME, name: 'env-demo' });
});

test('${env.NAME} reads the environment', async (t) => {
  process.env.ACME_REGION = 'eu-west-1';
  t.after(() => delete process.env.ACME_REGION);
  const rt = await runtimeFor(t, 'acme');
  assert.equal(((await rt.invoke('env-demo')) as Meta).region, 'eu-west-1');
});

test('only string values interpolate: numbers and booleans pass through', async (t) => {
  const rt = await runtimeFor(t, 'acme');
  assert.deepEqual(((await rt.invoke('env-demo')) as Meta).list, ['env-demo', 42, true]);
});

test('$${ escapes interpolation', async (t) => {
  const rt = await runtimeFor(t, 'acme');
  const md = (await rt.invoke('env-demo')) as Meta;
  assert.equal(md.literal, '${dir}');
  assert.equal(((await rt.invoke('report')) as Meta).template, 'Hello ${user}, costs are $$5');
});

test('an unknown variable is a configuration error naming the file and the key', async (t) => {
  const rt = await runtimeFor(t, 'acme');
  const { error } = await settle(rt.invoke('typo'));
  assert.ok(error instanceof ConfigurationError);
  assert.equal(error.code, 'E_CONFIG');
  assert.match(error.message, /typo\.skill\.ts/);
  assert.match(error.message, /output\.path/);
  assert.match(error.message, /wrkspace/);
});

test('an unknown variable in a folder main names that main and breaks only the tools below it', async (t) => {
  const rt = await runtimeFor(t, 'acme');
  const { error } = await settle(rt.invoke('old'));
  assert.equal(error?.code, 'E_CONFIG');
  assert.ok(error.message.includes(path.join('legacy', 'main.md')), error.message);
  assert.match(error.message, /owner/);
  assert.equal(((await rt.invoke('report')) as Meta).owner, 'platform', 'the rest of the workspace keeps working');
});

test('interpolation takes dotted look-ups only, no expressions', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('expr', () => 1, { size: '${1 + 1}' }));
  assert.equal((await settle(rt.invoke('expr'))).error?.code, 'E_CONFIG');
});

test('run.middleware is the invocation’s own copy of the cascade: a write stays in it and never reaches the next invocation', async (t) => {
  const rt = await runtimeFor(t, 'acme');
  rt.register(skill('vandal', (ctx) => {
    const before = ctx.run.middleware.tone;
    (ctx.run.middleware as Meta).tone = 'vandalised';
    return [before, ctx.run.middleware.tone];
  }, { tone: 'calm' }));
  assert.deepEqual(await rt.invoke('vandal'), ['calm', 'vandalised']);
  assert.deepEqual(await rt.invoke('vandal'), ['calm', 'vandalised']);
  assert.equal((await rt.describe('vandal')).metadata.tone, 'calm');
});
