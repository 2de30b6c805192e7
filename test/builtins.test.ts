// SPEC §7 and the middleware of §6.4: the built-in skills of the library, through the runtime.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ValidationError } from '../src/index.ts';
import { LIBRARY, bareRuntime, captureExpanded, logs, middleware, runtimeAt, runtimeFor, settle, skill, tempDir, workspace } from './helpers.ts';

type Rt = Awaited<ReturnType<typeof bareRuntime>>;

/** Invokes `ref` from inside a programmatic caller, as a skill would. */
async function from(rt: Rt, ref: string, args: Record<string, unknown>, metadata: Record<string, unknown> = {}): Promise<unknown> {
  rt.register(skill('caller', (ctx) => ctx.manager.invoke(ref, args), metadata));
  return rt.invoke('caller');
}

// ——— every built-in documents itself (§7) ———

test('every built-in skill has a description and params and returns schemas', async (t) => {
  const rt = await bareRuntime(t);
  const lib = pathToFileURL(LIBRARY).href + '/';
  const builtins = (await rt.list({ all: true })).filter((s) => s.origin?.startsWith(lib) && !s.error);
  assert.ok(builtins.length >= 15, `found ${builtins.length}`);
  const missing: string[] = [];
  for (const s of builtins) {
    const d = await rt.describe(s.name);
    if (!d.tool.description) missing.push(`${s.name}: description`);
    if (d.tool.params === undefined) missing.push(`${s.name}: params`);
    if (d.tool.returns === undefined) missing.push(`${s.name}: returns`);
  }
  assert.deepEqual(missing, []);
});

test('built-in middleware are hidden and declare role middleware', async (t) => {
  const rt = await bareRuntime(t);
  for (const name of ['validate-args', 'validate-returns', 'validate-allowed-tools', 'directives', 'execute', 'agent-execute', 'cwd', 'paths', 'model', 'params', 'role', 'delegate', 'include', 'arg']) {
    const d = await rt.describe(name);
    assert.equal(d.tool.visibility, 'hidden', name);
    assert.equal(d.tool.role, 'middleware', name);
  }
});

// ——— validate-args ———

test('validate-args lists every violation: ValidationError with code E_VALIDATION and ajv’s errors', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('signup', () => 'ok', {
    params: {
      type: 'object',
      properties: { email: { type: 'string', format: 'email' }, age: { type: 'integer', minimum: 13 }, plan: { enum: ['free', 'pro'] } },
      required: ['email', 'age', 'name'],
      additionalProperties: false,
    },
  }));
  const { error } = await settle(rt.invoke('signup', { email: 'not-an-email', age: 7, plan: 'gold', extra: 1 }));
  assert.ok(error instanceof ValidationError);
  assert.equal(error.code, 'E_VALIDATION');
  assert.equal(error.phase, 'args');
  const where = error.errors.map((e) => `${e.instancePath || '/'}:${e.keyword}`).sort();
  assert.deepEqual(where, ['/:additionalProperties', '/:required', '/age:minimum', '/email:format', '/plan:enum']);
  for (const bit of ["missing required property 'name'", "unknown property 'extra'", '/age', '/email', '/plan']) assert.ok(error.message.includes(bit), `${bit} in ${error.message}`);
});

test('validate-args passes valid args through to the tool', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('add', (_c, a: { a: number; b: number }) => a.a + a.b, { params: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] } }));
  assert.equal(await rt.invoke('add', { a: 1, b: 2 }), 3);
});

test('validate-args checks the args after params defaults were applied', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('page', (_c, a: { size: number }) => a.size, { params: { type: 'object', properties: { size: { type: 'integer', default: 20, maximum: 100 } }, required: ['size'] } }));
  assert.equal(await rt.invoke('page'), 20, 'the default satisfies required');
});

test('validate-args: false turns validation off for a tool', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('lenient', (_c, a) => a, { 'validate-args': false, params: { type: 'object', properties: { n: { type: 'number' } } } }));
  assert.deepEqual(await rt.invoke('lenient', { n: 'x' }), { n: 'x' });
});

// ——— validate-returns ———

test('validate-returns checks the result on the way up: a mismatch is a ValidationError (phase returns)', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('count', () => 'three', { returns: { type: 'integer' } }));
  const { error } = await settle(rt.invoke('count'));
  assert.ok(error instanceof ValidationError);
  assert.equal(error.code, 'E_VALIDATION');
  assert.equal(error.phase, 'returns');
  assert.match(error.message, /count/);
  assert.equal(error.errors[0]?.keyword, 'type');
});

test('validate-returns lets a matching result through', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('count', () => 3, { returns: { type: 'integer' } }));
  assert.equal(await rt.invoke('count'), 3);
});

test('validate-returns checks what the tool produced, inside the metadata middleware that wrap it', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(middleware('stringify', async (_c, _a, target) => JSON.stringify(await target.manager.next())));
  rt.register(skill('data', () => ({ a: 1 }), { stringify: true, returns: { type: 'object' } }));
  assert.equal(await rt.invoke('data'), '{"a":1}');
  rt.register(skill('bad-data', () => 'not an object', { stringify: true, returns: { type: 'object' } }));
  assert.equal((await settle(rt.invoke('bad-data'))).error?.code, 'E_VALIDATION');
});

// ——— validate-allowed-tools ———

test('a skill with allowed-tools invoking a tool outside them fails with E_ALLOWED_TOOLS', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('secret', () => 'leaked'));
  const { error } = await settle(from(rt, 'secret', {}, {}));
  assert.equal(error, undefined, 'no allowed-tools: anything goes');
  rt.register(skill('restricted', (ctx) => ctx.manager.invoke('secret'), {}, { 'allowed-tools': 'file-read' }));
  const r = await settle(rt.invoke('restricted'));
  assert.equal(r.error?.code, 'E_ALLOWED_TOOLS');
  assert.match(r.error.message, /'restricted' may not invoke 'secret'/);
  assert.match(r.error.message, /file-read/);
});

test('allowed-tools entries are picomatch globs', async (t) => {
  const rt = await bareRuntime(t);
  for (const n of ['event-log', 'event-count', 'other']) rt.register(skill(n, () => n));
  rt.register(skill('globbed', async (ctx, a: { ref: string }) => ctx.manager.invoke(a.ref), { 'allowed-tools': 'file-read event-*' }));
  assert.equal(await rt.invoke('globbed', { ref: 'event-log' }), 'event-log');
  assert.equal(await rt.invoke('globbed', { ref: 'event-count' }), 'event-count');
  assert.equal((await settle(rt.invoke('globbed', { ref: 'other' }))).error?.code, 'E_ALLOWED_TOOLS');
});

test('an arg constraint like schedule-create(ref=my-*) allows or blocks by the arg’s value', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('schedule-create', (_c, a: { ref: string }) => `scheduled ${a.ref}`));
  rt.register(skill('planner', (ctx, a: { args: Record<string, unknown> }) => ctx.manager.invoke('schedule-create', a.args), {}, { 'allowed-tools': 'schedule-create(ref=my-*)' }));
  assert.equal(await rt.invoke('planner', { args: { ref: 'my-nightly' } }), 'scheduled my-nightly');
  const other = await settle(rt.invoke('planner', { args: { ref: 'their-job' } }));
  assert.equal(other.error?.code, 'E_ALLOWED_TOOLS');
  assert.match(other.error.message, /with these args/);
  assert.equal((await settle(rt.invoke('planner', { args: {} }))).error?.code, 'E_ALLOWED_TOOLS', 'a missing constrained arg does not match');
});

test('allowed-tools binds the tool’s own invocations only, not the tools those invoke', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('deep', () => 'deep'));
  rt.register(skill('broker', (ctx) => ctx.manager.invoke('deep')));
  rt.register(skill('restricted', (ctx) => ctx.manager.invoke('broker'), {}, { 'allowed-tools': 'broker' }));
  assert.equal(await rt.invoke('restricted'), 'deep');
});

test('a restricted tool still runs its own middleware pipeline', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('restricted', () => 'ran', { params: { type: 'object', properties: { n: { type: 'number' } } } }, { 'allowed-tools': 'nothing' }));
  assert.equal(await rt.invoke('restricted', { n: 1 }), 'ran');
  assert.equal((await settle(rt.invoke('restricted', { n: 'x' }))).error?.code, 'E_VALIDATION');
});

test('a malformed allowed-tools spec is a configuration error before the tool runs', async (t) => {
  const rt = await bareRuntime(t);
  let ran = false;
  rt.register(skill('odd', () => ((ran = true), 1), {}, { 'allowed-tools': 'schedule-create(ref)' }));
  assert.equal((await settle(rt.invoke('odd'))).error?.code, 'E_CONFIG');
  assert.equal(ran, false);
});

// ——— directives, arg, include (§6.4a) ———

test(':arg{name=X} is replaced by the invocation’s arg X', async (t) => {
  const rt = await runtimeFor(t, 'docs-desk');
  const out = String(await rt.invoke('release-notes', { version: '2.0', codename: 'Otter' }, { context: { locals: { middleware: captureExpanded } } }));
  assert.match(out, /^# Release 2\.0 "Otter"\n/);
});

test(':arg for an arg that was not given renders as empty text', async (t) => {
  const rt = await runtimeFor(t, 'docs-desk');
  const out = String(await rt.invoke('release-notes', { version: '2.1' }, { context: { locals: { middleware: captureExpanded } } }));
  assert.match(out, /^# Release 2\.1 ""\n/);
});

test('::include{file=PATH} is replaced by the file’s text, the path relative to the skill', async (t) => {
  const rt = await runtimeFor(t, 'docs-desk');
  const out = String(await rt.invoke('release-notes', { version: '2.0' }, { context: { locals: { middleware: captureExpanded } } }));
  assert.ok(out.endsWith('— The Docs Desk, shipping notes since 2024.\n'), JSON.stringify(out));
  assert.ok(!out.includes('::include'));
});

test('::include of a missing file is a configuration error naming the directive', async (t) => {
  const dir = workspace(t, { 'skills/broken-include.md': '---\nname: broken-include\n---\nStart\n\n::include{file=nope.md}\n' });
  const rt = await runtimeAt(t, dir);
  const { error } = await settle(rt.invoke('broken-include', {}, { context: { locals: { middleware: captureExpanded } } }));
  assert.equal(error?.code, 'E_CONFIG');
  assert.match(error.message, /include\{file=nope\.md\}/);
});

test('unknown directive names stay as written', async (t) => {
  const rt = await runtimeFor(t, 'docs-desk');
  const out = String(await rt.invoke('release-notes', { version: '2.0' }, { context: { locals: { middleware: captureExpanded } } }));
  assert.match(out, /Keep it :emoji\[smile\] and under the word budget\./);
});

test('a directive middleware that sets no replacement disappears from the prompt', async (t) => {
  const rt = await runtimeFor(t, 'docs-desk');
  const out = String(await rt.invoke('release-notes', { version: '2.0' }, { context: { locals: { middleware: captureExpanded } } }));
  assert.ok(!out.includes('todo') && !out.includes('link the changelog') && !out.includes('ask legal'), out);
});

test('a directive middleware can replace its directive with text', async (t) => {
  const rt = await runtimeFor(t, 'docs-desk');
  const out = String(await rt.invoke('release-notes', { version: '2.0' }, { context: { locals: { middleware: captureExpanded } } }));
  assert.match(out, /\n> WARN: Breaking changes\n/);
  assert.ok(!out.includes('Mention the removed flags'), 'a container directive replaces its whole span');
});

test('directive middleware run in document order with attributes plus directive { index, kind, label }', async (t) => {
  const rt = await runtimeFor(t, 'docs-desk');
  await rt.invoke('release-notes', { version: '2.0' }, { context: { locals: { middleware: captureExpanded } } });
  const seen = logs(rt, { type: 'directive-seen' }).filter((e) => e.name !== 'word-budget').map((e) => ({ name: e.name, args: e.args }));
  assert.deepEqual(seen, [
    { name: 'todo', args: { directive: { index: 2, kind: 'text', label: 'link the changelog' } } },
    { name: 'note', args: { level: 'warn', directive: { index: 3, kind: 'container', label: 'Breaking changes' } } },
    { name: 'todo', args: { directive: { index: 4, kind: 'leaf', label: 'ask legal about the licence' } } },
  ]);
});

test('directive middleware run after all metadata middleware', async (t) => {
  const rt = await runtimeFor(t, 'docs-desk');
  await rt.invoke('release-notes', { version: '2.0' }, { context: { locals: { middleware: captureExpanded } } });
  const order = logs(rt, { type: 'directive-seen' }).filter((e) => e.name !== 'word-budget' || e.served === 'release-notes').map((e) => e.name);
  assert.deepEqual(order, ['word-budget', 'todo', 'note', 'todo']);
});

test('a prompt without directives is passed through as its expansion', async (t) => {
  const dir = workspace(t, { 'skills/plain.md': '---\nname: plain\n---\nJust text, no colon-directives here\n' });
  const rt = await runtimeAt(t, dir);
  assert.equal(await rt.invoke('plain', {}, { context: { locals: { middleware: captureExpanded } } }), 'Just text, no colon-directives here\n');
});

test('a prompt skill whose model provider is not configured fails with one clear E_MODEL line', async (t) => {
  if (['AWS_ACCESS_KEY_ID', 'AWS_PROFILE', 'AWS_BEARER_TOKEN_BEDROCK', 'AWS_WEB_IDENTITY_TOKEN_FILE', 'AWS_CONTAINER_CREDENTIALS_FULL_URI', 'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI'].some((k) => process.env[k])) return t.skip('AWS credentials in the environment: the default provider would be live');
  const dir = workspace(t, { 'skills/ask.md': '---\nname: ask\n---\nAnswer the question.\n' });
  const rt = await runtimeAt(t, dir);
  const { error } = await settle(rt.invoke('ask'));
  assert.equal(error?.code, 'E_MODEL');
  assert.ok(!String(error.message).includes('\n'), 'one line');
  assert.match(error.message, /provider|credentials/i, 'says what to configure');
});

// ——— delegate ———

test('delegate: a ref invokes that tool with the served tool’s args and finishes with its result', async (t) => {
  const rt = await bareRuntime(t);
  let ownRan = false;
  rt.register(skill('translate-v2', (_c, a: { text: string }) => `v2:${a.text}`));
  rt.register(skill('translate', () => ((ownRan = true), 'v1'), { delegate: 'translate-v2' }));
  assert.equal(await rt.invoke('translate', { text: 'hola' }), 'v2:hola');
  assert.equal(ownRan, false);
});

test('delegate: { ref, args } invokes the ref with the given args', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('search', (_c, a) => a));
  rt.register(skill('search-docs', () => 'unused', { delegate: { ref: 'search', args: { index: 'docs', limit: 5 } } }));
  assert.deepEqual(await rt.invoke('search-docs', { q: 'ignored' }), { index: 'docs', limit: 5 });
});

test('delegate with a value that is neither a ref nor { ref } is an error', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('odd', () => 1, { delegate: { to: 'x' } }));
  assert.ok((await settle(rt.invoke('odd'))).error);
});

// ——— configuration middleware: cwd, paths, model, params, role, log ———

test('cwd sets the served tool’s locals.config.cwd, relative to the current one', async (t) => {
  const dir = workspace(t, { 'data/x.txt': 'x', 'skills/in-data.skill.ts': "import type { Context } from 'agent-apps';\nexport const frontmatter = { metadata: { cwd: 'data' } };\nexport default (ctx: Context) => ctx.locals.config.cwd;\n" });
  const rt = await runtimeAt(t, dir);
  assert.equal(await rt.invoke('in-data'), path.join(dir, 'data'));
});

test('locals.config starts from the runtime’s base for each invocation: a caller’s cwd does not reach the tools it invokes', async (t) => {
  // seed 001 ("starts with { cwd, library, runtime } from globals"); docs/decisions.md
  const dir = workspace(t, {
    'data/notes.txt': 'from the data folder\n',
    'notes.txt': 'from the workspace root\n',
    'skills/reader.skill.ts': "import type { Context } from 'agent-apps';\nexport const frontmatter = { metadata: { cwd: 'data' } };\nexport default async (ctx: Context) => ({ own: ctx.locals.config.cwd, read: await ctx.manager.invoke('file-read', { path: 'notes.txt' }) });\n",
  });
  const rt = await runtimeAt(t, dir);
  assert.deepEqual(await rt.invoke('reader'), { own: path.join(dir, 'data'), read: 'from the workspace root\n' });
});

test('paths prepends search paths: the served tool can invoke tools found there', async (t) => {
  const dir = workspace(t, {
    'plugins/weather.skill.ts': "export default () => 'sunny';\n",
    'skills/forecast.skill.ts': "import type { Context } from 'agent-apps';\nexport const frontmatter = { metadata: { paths: ['plugins'] } };\nexport default (ctx: Context) => ctx.manager.invoke('weather');\n",
    'skills/no-plugins.skill.ts': "import type { Context } from 'agent-apps';\nexport default (ctx: Context) => ctx.manager.invoke('weather');\n",
  });
  const rt = await runtimeAt(t, dir);
  assert.equal(await rt.invoke('forecast'), 'sunny');
  assert.equal((await settle(rt.invoke('no-plugins'))).error?.code, 'E_TOOL_NOT_FOUND');
  assert.equal((await settle(rt.invoke('weather'))).error?.code, 'E_TOOL_NOT_FOUND', 'the runtime’s own paths are unchanged');
});

test('paths re-resolves the served tool (manager.refresh) so a plugin root can shadow it', async (t) => {
  const dir = workspace(t, {
    'overrides/greeting.skill.ts': "export const frontmatter = { name: 'greeting', description: 'override' };\nexport default () => 'from overrides';\n",
    'skills/greeting.skill.ts': "export const frontmatter = { name: 'greeting', description: 'original', metadata: { paths: ['overrides'] } };\nexport default () => 'from skills';\n",
  });
  const rt = await runtimeAt(t, dir);
  assert.equal(await rt.invoke('greeting'), 'from overrides');
});

test('model writes the model configuration, cassette and record paths relative to the skill', async (t) => {
  const dir = workspace(t, {
    'skills/agents/summarise.skill.ts': [
      "import type { Context } from 'agent-apps';",
      "export const frontmatter = { metadata: { model: { provider: 'replay', cassette: 'cassettes/summarise.yaml', maxTurns: 3 } } };",
      'export default (ctx: Context) => ctx.locals.config.model;',
    ].join('\n'),
  });
  const rt = await runtimeAt(t, dir);
  const model = (await rt.invoke('summarise')) as Record<string, unknown>;
  assert.equal(model.provider, 'replay');
  assert.equal(model.maxTurns, 3);
  assert.equal(model.cassette, path.join(dir, 'skills/agents/cassettes/summarise.yaml'));
});

test('model set in a main merges with the tool’s own model keys', async (t) => {
  const dir = workspace(t, {
    'skills/main.md': '---\nname: main\nmetadata:\n  model: { provider: openai, baseURL: "http://localhost:11434/v1", maxTurns: 10 }\n---\n',
    'skills/brief.skill.ts': "import type { Context } from 'agent-apps';\nexport const frontmatter = { metadata: { model: { maxTurns: 2 } } };\nexport default (ctx: Context) => ctx.locals.config.model;\n",
  });
  const rt = await runtimeAt(t, dir);
  const model = (await rt.invoke('brief')) as Record<string, unknown>;
  assert.equal(model.provider, 'openai');
  assert.equal(model.baseURL, 'http://localhost:11434/v1');
  assert.equal(model.maxTurns, 2);
});

test('params copies the cascade’s params schema into run.tool.params, and validate-args uses it', async (t) => {
  const dir = workspace(t, {
    'skills/main.md': '---\nname: main\nmetadata:\n  params: { type: object, properties: { dryRun: { type: boolean } } }\n---\n',
    'skills/deploy.skill.ts': [
      "import type { Context } from 'agent-apps';",
      "export const frontmatter = { metadata: { params: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] } } };",
      'export default (ctx: Context) => ctx.run.tool.params;',
    ].join('\n'),
  });
  const rt = await runtimeAt(t, dir);
  const params = (await rt.invoke('deploy', { service: 'api' })) as { properties: Record<string, unknown>; required: string[] };
  assert.deepEqual(Object.keys(params.properties).sort(), ['dryRun', 'service']);
  assert.deepEqual(params.required, ['service']);
  assert.equal((await settle(rt.invoke('deploy', { service: 'api', dryRun: 'yes' }))).error?.code, 'E_VALIDATION');
});

test('role copies the cascade’s role into run.tool.role', async (t) => {
  const dir = workspace(t, {
    'skills/hooks/main.md': '---\nname: main\nmetadata:\n  role: middleware\n---\n',
    'skills/hooks/tap.skill.ts': "import type { Context } from 'agent-apps';\nexport default (ctx: Context) => ctx.run.tool.role;\n",
  });
  const rt = await runtimeAt(t, dir);
  assert.equal((await rt.describe('tap')).tool.role, 'skill', 'the file declares nothing');
  assert.equal(await rt.invoke('tap'), 'middleware');
});

test('role with a value other than skill or middleware is a configuration error', async (t) => {
  const rt = await bareRuntime(t);
  rt.register({ name: 'odd', frontmatter: { name: 'odd' }, fn: () => 1 });
  const rt2 = await bareRuntime(t, { overrides: { role: 'boss' } });
  rt2.register({ name: 'odd', frontmatter: { name: 'odd' }, fn: () => 1 });
  assert.equal((await settle(rt2.invoke('odd'))).error?.code, 'E_CONFIG');
  assert.equal(await rt.invoke('odd'), 1);
});

test('log configures the run’s log level from the cascade', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('verbose', (ctx) => ctx.manager.log({ type: 'detail', level: 'debug', text: 'fine print' }), { log: 'debug' }));
  rt.register(skill('quiet', (ctx) => ctx.manager.log({ type: 'detail', level: 'debug', text: 'dropped' })));
  await rt.invoke('quiet');
  assert.deepEqual(logs(rt, { type: 'detail' }), []);
  await rt.invoke('verbose');
  assert.deepEqual(logs(rt, { type: 'detail' }).map((e) => e.text), ['fine print']);
});

// ——— file-read, file-write, shell ———

test('file-read reads a text file relative to the working directory', async (t) => {
  const dir = workspace(t, { 'docs/a.txt': 'alpha\n' });
  const rt = await runtimeAt(t, dir);
  assert.equal(await rt.invoke('file-read', { path: 'docs/a.txt' }), 'alpha\n');
  assert.equal(await rt.invoke('file-read', { path: path.join(dir, 'docs/a.txt') }), 'alpha\n');
});

test('file-read refuses a missing file, a directory and a file over maxBytes with E_FILE', async (t) => {
  const dir = workspace(t, { 'big.txt': 'x'.repeat(100), 'folder/keep': '' });
  const rt = await runtimeAt(t, dir);
  assert.equal((await settle(rt.invoke('file-read', { path: 'missing.txt' }))).error?.code, 'E_FILE');
  assert.equal((await settle(rt.invoke('file-read', { path: 'folder' }))).error?.code, 'E_FILE');
  const big = await settle(rt.invoke('file-read', { path: 'big.txt', maxBytes: 10 }));
  assert.equal(big.error?.code, 'E_FILE');
  assert.match(big.error.message, /maxBytes 10/);
  assert.equal(((await rt.invoke('file-read', { path: 'big.txt' })) as string).length, 100, 'the default limit is 1 MiB');
});

test('file-read rejects unknown args', async (t) => {
  const rt = await runtimeAt(t, tempDir(t));
  assert.equal((await settle(rt.invoke('file-read', { path: 'x', encoding: 'latin1' }))).error?.code, 'E_VALIDATION');
});

test('file-write writes a file, creating folders, and returns { path, bytes }', async (t) => {
  const dir = tempDir(t);
  const rt = await runtimeAt(t, dir);
  const out = (await rt.invoke('file-write', { path: 'out/deep/note.txt', content: 'héllo' })) as { path: string; bytes: number };
  assert.deepEqual(out, { path: path.join(dir, 'out/deep/note.txt'), bytes: 6 });
  assert.equal(fs.readFileSync(out.path, 'utf8'), 'héllo');
});

test('file-write with append adds to the file', async (t) => {
  const dir = workspace(t, { 'log.txt': 'one\n' });
  const rt = await runtimeAt(t, dir);
  await rt.invoke('file-write', { path: 'log.txt', content: 'two\n', append: true });
  await rt.invoke('file-write', { path: 'log.txt', content: 'three\n', append: true });
  assert.equal(fs.readFileSync(path.join(dir, 'log.txt'), 'utf8'), 'one\ntwo\nthree\n');
  await rt.invoke('file-write', { path: 'log.txt', content: 'reset\n' });
  assert.equal(fs.readFileSync(path.join(dir, 'log.txt'), 'utf8'), 'reset\n');
});

test('shell and file-write are hidden; file-read is public', async (t) => {
  const rt = await bareRuntime(t);
  const names = (await rt.list()).map((s) => s.name);
  assert.ok(!names.includes('shell') && !names.includes('file-write'));
  assert.ok(names.includes('file-read'));
});

test('shell runs a command in the working directory and returns { code, stdout, stderr }', async (t) => {
  const dir = workspace(t, { 'sub/marker': '' });
  const rt = await runtimeAt(t, dir);
  assert.deepEqual(await rt.invoke('shell', { command: 'pwd; echo oops >&2' }), { code: 0, stdout: `${dir}\n`, stderr: 'oops\n' });
  assert.deepEqual(await rt.invoke('shell', { command: 'ls', cwd: 'sub' }), { code: 0, stdout: 'marker\n', stderr: '' });
});

test('shell reports a failing command’s exit code instead of throwing', async (t) => {
  const rt = await runtimeAt(t, tempDir(t));
  const out = (await rt.invoke('shell', { command: 'exit 3' })) as { code: number };
  assert.equal(out.code, 3);
});

test('shell writes input to the command’s stdin', async (t) => {
  const rt = await runtimeAt(t, tempDir(t));
  const out = (await rt.invoke('shell', { command: 'tr a-z A-Z', input: 'quiet please' })) as { stdout: string };
  assert.equal(out.stdout, 'QUIET PLEASE');
});

/** Running (a zombie left for a non-reaping init does not count). */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
};

test('shell kills a command that outlives timeoutMs, children included', { timeout: 30_000 }, async (t) => {
  const dir = tempDir(t);
  const rt = await runtimeAt(t, dir);
  // No clock: the sleep (60 s) outlasts this test's timeout (30 s), so returning at all means the
  // shell returned at the timeout, not when sleep ended; `ran-to-end`, written only if the command
  // outlives its sleep, is absent; and the sleep is no longer running (below): it was killed.
  const out = (await rt.invoke('shell', { command: 'sleep 60 & echo $! > sleeper.pid; wait; touch ran-to-end', timeoutMs: 150 })) as { code: number | null; stderr: string };
  assert.equal(fs.existsSync(path.join(dir, 'ran-to-end')), false, 'returned at the timeout, not when sleep ended');
  assert.equal(out.code, null);
  assert.match(out.stderr, /killed after 150 ms/);
  const pid = Number(fs.readFileSync(path.join(dir, 'sleeper.pid'), 'utf8'));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(alive(pid), false, 'no orphaned child process');
});

test('shell stops its command, children included, when the invocation is aborted', { timeout: 30_000 }, async (t) => {
  const dir = tempDir(t);
  const rt = await runtimeAt(t, dir);
  rt.register(skill('runner', (ctx) => {
    const p = ctx.manager.invoke('shell', { command: 'sleep 60 & echo $! > sleeper.pid; wait; touch ran-to-end' });
    setTimeout(() => ctx.manager.abort('user pressed ctrl-c'), 150);
    return p;
  }));
  const { error } = await settle(rt.invoke('runner'));
  assert.equal(error?.code, 'E_ABORTED');
  assert.equal(error.reason, 'user pressed ctrl-c');
  // No clock: the sleep (60 s) outlasts this test's timeout (30 s), and the marker the command
  // writes after it is absent: the abort, not the sleep's end, stopped it.
  assert.equal(fs.existsSync(path.join(dir, 'ran-to-end')), false, 'the command did not run to completion');
  const pid = Number(fs.readFileSync(path.join(dir, 'sleeper.pid'), 'utf8'));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(alive(pid), false, 'no orphaned child process');
});

// ——— context-manager ———

test('context-manager get and set read and write the calling context', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('cm', async (ctx) => {
    await ctx.manager.invoke('context-manager', { op: 'set', path: 'locals.plan.step', value: 2 });
    const step = await ctx.manager.invoke('context-manager', { op: 'get', path: 'locals.plan.step' });
    const name = await ctx.manager.invoke('context-manager', { op: 'get', path: 'run.tool.name' });
    const missing = await ctx.manager.invoke('context-manager', { op: 'get', path: 'locals.nothing' });
    return { step, name, local: (ctx.locals.plan as { step: number }).step, missing };
  }));
  assert.deepEqual(await rt.invoke('cm'), { step: 2, name: 'cm', local: 2, missing: null });
});

test('context-manager finish sets the caller’s result', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('cm', async (ctx) => {
    await ctx.manager.invoke('context-manager', { op: 'finish', value: { answer: 42 } });
  }));
  assert.deepEqual(await rt.invoke('cm'), { answer: 42 });
});

test('context-manager abort refuses the calling invocation', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('cm', async (ctx) => {
    await ctx.manager.invoke('context-manager', { op: 'abort', reason: 'not my job' });
    return 'continued';
  }));
  const { error } = await settle(rt.invoke('cm'));
  assert.equal(error?.code, 'E_ABORTED');
  assert.equal(error.reason, 'not my job');
});

test('context-manager log, tail and configure act on the caller’s run', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('cm', async (ctx) => {
    await ctx.manager.invoke('context-manager', { op: 'log', event: { type: 'cm-note', level: 'warn', text: 'via context-manager' } });
    const tail = (await ctx.manager.invoke('context-manager', { op: 'tail', options: { type: 'cm-note' } })) as { text: string; tool: string }[];
    const settings = (await ctx.manager.invoke('context-manager', { op: 'configure', options: { level: 'debug' } })) as { level: string };
    return { tail: tail.map((e) => `${e.tool}:${e.text}`), level: settings.level };
  }));
  assert.deepEqual(await rt.invoke('cm'), { tail: ['cm:via context-manager'], level: 'debug' });
});

test('context-manager rejects an unknown op with E_VALIDATION', async (t) => {
  const rt = await bareRuntime(t);
  assert.equal((await settle(from(rt, 'context-manager', { op: 'explode' }))).error?.code, 'E_VALIDATION');
});

// ——— discovery skills ———

test('skill-list and skill-describe document the skills on the caller’s paths', async (t) => {
  const rt = await runtimeFor(t, 'greeter');
  const list = (await rt.invoke('skill-list', { query: 'greet' })) as { name: string }[];
  assert.ok(list.some((s) => s.name === 'greet'));
  const tagged = (await rt.invoke('skill-list', { tag: 'demo' })) as { name: string }[];
  assert.deepEqual(tagged.map((s) => s.name), ['greet']);
  const d = (await rt.invoke('skill-describe', { name: 'greet' })) as { tool: { description: string }; chain: { name: string }[] };
  assert.equal(d.tool.description, 'Greet someone by name.');
  assert.ok(d.chain.some((e) => e.name === 'directives'));
});
