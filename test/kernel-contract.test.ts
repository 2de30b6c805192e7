// The kernel's contract as an independent review of issue 8 read it: SPEC §5, §6.4, §6.5 and
// seeds 000, 001 and 003, each test named after the rule it checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { ConfigurationError } from '../src/index.ts';
import { withEntryPlace } from '../src/kernel/plan.ts';
import { ContextLocals } from '../src/kernel/context.ts';
import { bareRuntime, middleware, runtimeAt, settle, skill, workspace } from './helpers.ts';

type Rt = Awaited<ReturnType<typeof bareRuntime>>;

/**
 * Registers pass-through middleware that record their names in `ran`, in run order — marked
 * `(late)` when the served tool already has its result (the entry ran after `execute`).
 */
function recorders(rt: Rt, ...names: string[]): string[] {
  const ran: string[] = [];
  for (const n of names) rt.register(middleware(n, (_c, _a, target) => (ran.push(target.locals.result === undefined ? n : `${n} (late)`), target.manager.next())));
  return ran;
}

const chainOf = async (rt: Rt, name: string) => (await rt.describe(name)).chain.map((e) => e.name);

// ——— SPEC §6.4: ignored constraints ———

/** A project whose main orders beta before alpha; `tool` removes alpha, `kept` does not. */
function alphaBeta(t: Parameters<typeof workspace>[0]): string {
  return workspace(t, {
    'skills/main.md': '---\nname: main\nmetadata:\n  $order:\n    beta: { before: [alpha] }\n  alpha: true\n  beta: true\n---\n',
    'skills/tool.skill.ts': "export const frontmatter = { name: 'tool', metadata: { $remove: ['alpha'], cwd: '.' } };\nexport default () => 'ok';\n",
    'skills/kept.skill.ts': "export const frontmatter = { name: 'kept' };\nexport default () => 'ok';\n",
  });
}

test('an entry whose $order constraints are all ignored gets the default slot: removing one middleware never moves another out of its phase', async (t) => {
  const rt = await runtimeAt(t, alphaBeta(t));
  const ran = recorders(rt, 'alpha', 'beta');
  const chain = await chainOf(rt, 'tool');
  assert.ok(chain.indexOf('cwd') < chain.indexOf('beta'), `after $configure: ${chain.join(' ')}`);
  assert.ok(chain.indexOf('beta') < chain.indexOf('validate-returns'), `before $post-configure: ${chain.join(' ')}`);
  assert.equal(await rt.invoke('tool'), 'ok');
  assert.deepEqual(ran, ['beta'], 'beta ran before execute finished the chain');
});

test('a constraint that names an entry in the chain still applies when the entry is there', async (t) => {
  const rt = await runtimeAt(t, alphaBeta(t));
  const ran = recorders(rt, 'alpha', 'beta');
  await rt.invoke('kept');
  assert.deepEqual(ran, ['beta', 'alpha']);
});

test('an entry keeps the constraints that are not ignored: only all-ignored means the default slot', async (t) => {
  const rt = await bareRuntime(t);
  recorders(rt, 'late');
  rt.register(skill('tool', () => 'ok', { late: true, $order: { late: { after: ['$pre-execute', 'not-installed'], before: ['execute'] } } }));
  const chain = await chainOf(rt, 'tool');
  assert.ok(chain.indexOf('late') > chain.indexOf('validate-allowed-tools') && chain.indexOf('late') < chain.indexOf('execute'), chain.join(' '));
});

test('extra middleware: removing an entry never moves another out of its phase (SPEC §6.5)', async (t) => {
  const rt = await runtimeAt(t, alphaBeta(t));
  const ran = recorders(rt, 'alpha', 'beta');
  assert.equal(await rt.invoke('kept', {}, { context: { locals: { middleware: { alpha: { remove: true } } } } }), 'ok');
  assert.deepEqual(ran, ['beta']);
});

test('extra middleware whose constraints all name absent entries gets the default slot (SPEC §6.5)', async (t) => {
  const rt = await bareRuntime(t);
  const ran = recorders(rt, 'extra');
  rt.register(skill('tool', () => 'ok'));
  assert.equal(await rt.invoke('tool', {}, { context: { locals: { middleware: { extra: { before: ['not-installed'] } } } } }), 'ok');
  assert.deepEqual(ran, ['extra']);
});

// ——— seed 001: no side channels, and what "Mutable" means ———

test('run.origin.frontmatter is not a side channel: a write in one invocation does not appear in the next (seed 000 step 4, seed 001)', async (t) => {
  const dir = workspace(t, {
    'skills/scribble.skill.ts': [
      "export const frontmatter = { name: 'scribble', description: 'Writes on its origin.', metadata: { tone: 'calm' } };",
      'export default (ctx) => {',
      '  const fm = ctx.run.origin.frontmatter;',
      '  const seen = { description: fm.description, tone: fm.metadata.tone, note: fm.note };',
      "  fm.description = 'scribbled'; fm.metadata.tone = 'loud'; fm.note = 'left behind';",
      '  return seen;',
      '};',
    ].join('\n'),
  });
  const rt = await runtimeAt(t, dir);
  const first = { description: 'Writes on its origin.', tone: 'calm', note: undefined };
  assert.deepEqual(await rt.invoke('scribble'), first);
  assert.deepEqual(await rt.invoke('scribble'), first, 'the second invocation sees the tool’s frontmatter, not the first one’s writes');
  assert.equal((await rt.describe('scribble')).metadata.tone, 'calm', 'nor does the cascade');
});

test('run.origin assigned whole (as manager.refresh does) keeps its own copy of the frontmatter', async (t) => {
  const rt = await bareRuntime(t);
  const shared = { name: 'x', description: 'shared', metadata: {} };
  rt.register(skill('reassign', (ctx) => {
    ctx.run.origin = { uri: 'mcp://demo/x', frontmatter: shared };
    ctx.run.origin.frontmatter.description = 'changed';
    return [ctx.run.origin.uri, ctx.run.origin.frontmatter.description];
  }));
  assert.deepEqual(await rt.invoke('reassign'), ['mcp://demo/x', 'changed']);
  assert.equal(shared.description, 'shared');
});

/** What a write did: 'ok' (and it reads back), the AgentAppsError's code, or the bare error. */
function attempt(write: () => void, read: () => unknown, expected: unknown): string {
  try {
    write();
  } catch (err) {
    const e = err as { code?: unknown; name?: string; message?: string };
    return typeof e.code === 'string' && e.code.startsWith('E_') ? e.code : `bare ${e.name}: ${e.message}`;
  }
  return JSON.stringify(read()) === JSON.stringify(expected) ? 'ok' : `wrote, but reads ${JSON.stringify(read())}`;
}

test('the Mutable properties of seed 001 (run.middleware, run.tool, locals.config) change in place by set() or assignment — never a bare TypeError', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('mutate', (ctx) => {
    const c = ctx as any;
    return {
      'run.tool.description =': attempt(() => (c.run.tool.description = 'x'), () => c.run.tool.description, 'x'),
      "set('run.tool.description')": attempt(() => ctx.manager.set('run.tool.description', 'y'), () => c.run.tool.description, 'y'),
      'run.tool.params =': attempt(() => (c.run.tool.params = { type: 'object' }), () => c.run.tool.params, { type: 'object' }),
      'locals.config.cwd =': attempt(() => (c.locals.config.cwd = '/x'), () => c.locals.config.cwd, '/x'),
      "set('locals.config.model.provider')": attempt(() => ctx.manager.set('locals.config.model.provider', 'replay'), () => c.locals.config.model.provider, 'replay'),
      'locals.config.model.sandbox.timeoutMs =': attempt(() => (c.locals.config.model.sandbox.timeoutMs = 5), () => c.locals.config.model.sandbox.timeoutMs, 5),
      'locals.config.paths =': attempt(() => (c.locals.config.paths = ['/p']), () => c.locals.config.paths, ['/p']),
      'run.middleware.x =': attempt(() => (c.run.middleware.x = 1), () => c.run.middleware.x, 1),
      'run.middleware.nested.deep =': attempt(() => (c.run.middleware.nested.deep = 2), () => c.run.middleware.nested.deep, 2),
      "set('run.middleware.nested.deep')": attempt(() => ctx.manager.set('run.middleware.nested.deep', 3), () => c.run.middleware.nested.deep, 3),
      'delete run.middleware.tone': attempt(() => delete c.run.middleware.tone, () => c.run.middleware.tone, undefined),
      'run.middleware =': attempt(() => (c.run.middleware = { fresh: true }), () => c.run.middleware, { fresh: true }),
    };
  }, { tone: 'calm', nested: { deep: 1 }, model: { sandbox: { timeoutMs: 1000 } } }, { description: 'before' }));
  const out = (await rt.invoke('mutate')) as Record<string, string>;
  for (const [write, result] of Object.entries(out)) assert.equal(result, 'ok', write);
});

test('set() into shared, frozen data under a Mutable property copies on write along the path: this invocation changes, the shared declaration and the next invocation do not', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('frozen', (ctx) => {
    const before = { params: ctx.run.tool.params, tags: ctx.run.tool.tags, paths: ctx.locals.config.paths };
    const seen = { type: (ctx.run.tool.params as any)?.properties?.n?.type, tag: ctx.run.tool.tags[0], path: ctx.locals.config.paths[0] };
    ctx.manager.set('run.tool.params.properties.n.type', 'string');
    ctx.manager.set('run.tool.tags.0', 'mine');
    ctx.manager.set('run.tool.tags.1', 'more');
    ctx.manager.set('locals.config.paths.0', '/elsewhere');
    return {
      seen,
      now: { type: (ctx.run.tool.params as any)?.properties?.n?.type, tags: ctx.run.tool.tags, path: ctx.locals.config.paths[0] },
      // The shared objects are untouched; only the ones on the path were copied.
      shared: { type: (before.params as any).properties.n.type, tags: [...before.tags], path: before.paths[0], frozen: Object.isFrozen(before.tags) },
      kept: (ctx.run.tool.params as any).properties.m === (before.params as any).properties.m,
    };
  }, { params: { type: 'object', properties: { n: { type: 'number' }, m: { type: 'object' } } }, tags: ['demo'] }));
  const first = (await rt.invoke('frozen')) as any;
  const path0 = first.seen.path;
  assert.deepEqual(first.now, { type: 'string', tags: ['mine', 'more'], path: '/elsewhere' });
  assert.deepEqual(first.shared, { type: 'number', tags: ['demo'], path: path0, frozen: true });
  assert.equal(first.kept, true, 'a sibling off the path is the same (shared) object');
  const second = (await rt.invoke('frozen')) as any;
  assert.deepEqual(second.seen, { type: 'number', tag: 'demo', path: path0 }, 'the next invocation sees the declaration as it was');
});

test('set() still refuses what is not data to copy: locals.history (append-only) and frozen non-plain objects', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('refused', (ctx) => {
    const errors: Record<string, string | undefined> = {};
    (ctx.locals as any).box = Object.freeze(new Map());
    for (const path of ['locals.history.0.tool', 'locals.box.size']) {
      try {
        ctx.manager.set(path, 'x');
      } catch (err) {
        errors[path] = `${(err as { code?: string }).code}: ${(err as Error).message}`;
      }
    }
    return { errors, tool: ctx.locals.history[0]!.tool };
  }));
  const out = (await rt.invoke('refused')) as any;
  assert.match(out.errors['locals.history.0.tool'], /^E_IMMUTABLE: locals\.history is append-only/);
  assert.match(out.errors['locals.box.size'], /^E_IMMUTABLE: refusing to set 'locals\.box\.size': 'locals\.box' is read-only/);
  assert.equal(out.tool, 'refused');
});

test('run.tool is the invocation’s own: its shared schemas and tags cannot carry a write to the next invocation', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('tagger', (ctx) => {
    const tags = [...ctx.run.tool.tags];
    try {
      ctx.run.tool.tags.push('leaked');
    } catch {}
    ctx.run.tool.tags = [...ctx.run.tool.tags, 'mine'];
    return { tags, now: ctx.run.tool.tags };
  }, { tags: ['demo'] }));
  assert.deepEqual(await rt.invoke('tagger'), { tags: ['demo'], now: ['demo', 'mine'] });
  assert.deepEqual(await rt.invoke('tagger'), { tags: ['demo'], now: ['demo', 'mine'] });
});

// ——— seed 001: locals.history is append-only ———

test('locals.history is append-only: its frames cannot be removed or rewritten', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('rewrite', (ctx) => {
    const history = ctx.locals.history as any[];
    const tries = {
      pop: () => history.pop(),
      splice: () => history.splice(0, 1),
      replace: () => (history[0] = { tool: 'forged', args: {}, timestamp: 0 }),
      push: () => history.push({ tool: 'forged', args: {}, timestamp: 0 }),
      'frame.tool': () => (history[0].tool = 'forged'),
      "set('locals.history.0.tool')": () => ctx.manager.set('locals.history.0.tool', 'forged'),
    };
    const refused = Object.entries(tries).filter(([, attempt]) => {
      try {
        attempt();
        return false;
      } catch {
        return true;
      }
    });
    return { refused: refused.map(([name]) => name), tools: history.map((f) => f.tool) };
  }));
  assert.deepEqual(await rt.invoke('rewrite'), { refused: ['pop', 'splice', 'replace', 'push', 'frame.tool', "set('locals.history.0.tool')"], tools: ['rewrite'] });
});

test('a child cannot change its caller’s history frames', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('child', (ctx) => {
    const callerFrame = ctx.locals.history[0] as any;
    try {
      callerFrame.tool = 'forged';
    } catch {}
    try {
      (ctx.envelope.parent!.locals.history as any[]).length = 0;
    } catch {}
    return ctx.locals.history.map((f) => f.tool);
  }));
  rt.register(skill('caller', async (ctx) => [await ctx.manager.invoke('child'), ctx.locals.history.map((f) => f.tool)]));
  assert.deepEqual(await rt.invoke('caller'), [['caller', 'child'], ['caller']]);
});

test('set() into the history is E_IMMUTABLE', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('forge', (ctx) => {
    try {
      ctx.manager.set('locals.history.0.args', {});
      return 'set';
    } catch (err) {
      return (err as { code?: string }).code;
    }
  }));
  assert.equal(await rt.invoke('forge'), 'E_IMMUTABLE');
});

test('ContextLocals (for the orchestrator): the history is the caller’s frames plus its own, frozen, built on first read; replacing it is E_IMMUTABLE', () => {
  const root = new ContextLocals(undefined, undefined, {} as never);
  const a = new ContextLocals(root, { tool: 'a', args: {}, timestamp: 1 }, {} as never);
  const b = new ContextLocals(a, { tool: 'b', args: { n: 1 }, timestamp: 2 }, {} as never);
  assert.deepEqual(b.history.map((f) => f.tool), ['a', 'b']);
  assert.ok(Object.isFrozen(b.history) && b.history.every((f) => Object.isFrozen(f)));
  assert.equal(a.history[0], b.history[0], 'the caller’s frame itself, not a copy');
  assert.deepEqual(root.history, []);
  assert.throws(() => ((b as { history: unknown }).history = []), { code: 'E_IMMUTABLE' });
  b.result = 42;
  assert.deepEqual(JSON.parse(JSON.stringify(b)), { result: 42, config: {}, history: [{ tool: 'a', args: {}, timestamp: 1 }, { tool: 'b', args: { n: 1 }, timestamp: 2 }] });
});

test('a context seed cannot replace the history ($context: { locals: { history } })', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('stack', (ctx) => ctx.locals.history.map((f) => f.tool)));
  assert.deepEqual(await rt.invoke('stack', { $context: { locals: { history: [{ tool: 'forged', args: {}, timestamp: 0 }] } } }), ['stack']);
});

// ——— STYLE.md: errors are values with a code and a place ———

test('a middleware’s configuration error names the file and key of the cascade level that set the value (paths: 42 in a main)', async (t) => {
  const dir = workspace(t, {
    'skills/team/main.md': '---\nname: main\nmetadata:\n  paths: 42\n---\n',
    'skills/team/greet.skill.ts': "export const frontmatter = { name: 'greet' };\nexport default () => 'hi';\n",
  });
  const rt = await runtimeAt(t, dir);
  const { error } = await settle(rt.invoke('greet'));
  const main = path.join(dir, 'skills/team/main.md');
  assert.equal(error?.code, 'E_CONFIG');
  assert.deepEqual(error.place, { file: main, key: 'paths' });
  assert.equal(error.message, `${main} (paths): must be a path or a list of paths, got 42`);
});

test('a bad model.sandbox.timeoutMs names the level that set that sub-key, though a higher level set model last', async (t) => {
  const dir = workspace(t, {
    'skills/main.md': '---\nname: main\nmetadata:\n  model: { provider: replay, sandbox: { timeoutMs: soon } }\n---\n',
    'skills/greet.skill.ts': "export const frontmatter = { name: 'greet', metadata: { model: { cassette: 'greet.yaml' } } };\nexport default () => 'hi';\n",
  });
  const rt = await runtimeAt(t, dir);
  const { error } = await settle(rt.invoke('greet'));
  assert.equal(error?.code, 'E_CONFIG');
  assert.deepEqual(error.place, { file: path.join(dir, 'skills/main.md'), key: 'model.sandbox.timeoutMs' });
  assert.match(error.message, /\(model\.sandbox\.timeoutMs\): must be number$/);
});

test('a value set with --set is placed at the flag; a value given as extra middleware names its key', async (t) => {
  const rt = await bareRuntime(t, { overrides: { log: 'loud' } });
  rt.register(skill('tool', () => 'ok'));
  const flagged = await settle(rt.invoke('tool'));
  assert.equal(flagged.error?.code, 'E_CONFIG');
  assert.equal(flagged.error.message, '--set log: must be one of trace, debug, info, warn, error, got "loud"');
  const plain = await bareRuntime(t);
  plain.register(skill('tool', () => 'ok'));
  const extra = await settle(plain.invoke('tool', { $context: { middleware: { cwd: 42 } } }));
  assert.equal(extra.error?.code, 'E_CONFIG');
  assert.equal(extra.error.message, 'cwd: must be a directory (a path), got 42');
});

test('an $order cycle names the file that declared its edges, not the tool’s own file', async (t) => {
  const dir = workspace(t, {
    'skills/main.md': '---\nname: main\nmetadata:\n  $order:\n    lint: { before: [format] }\n    format: { before: [lint] }\n  lint: true\n  format: true\n---\n',
    'skills/tool.skill.ts': "export const frontmatter = { name: 'tool' };\nexport default () => 'ok';\n",
  });
  const rt = await runtimeAt(t, dir);
  recorders(rt, 'lint', 'format');
  const { error } = await settle(rt.invoke('tool'));
  const main = path.join(dir, 'skills/main.md');
  assert.equal(error?.code, 'E_CONFIG');
  assert.equal(error.place?.file, main);
  assert.match(error.message, /^.*main\.md: the middleware order of 'tool' has a cycle: (lint → format → lint|format → lint → format)/);
  assert.match(error.message, /lint before format: \$order\.lint\.before/);
  assert.match(error.message, /format before lint: \$order\.format\.before/);
});

test('an $order cycle across levels names each edge’s file', async (t) => {
  const dir = workspace(t, {
    'skills/main.md': '---\nname: main\nmetadata:\n  $order:\n    lint: { before: [format] }\n  lint: true\n  format: true\n---\n',
    'skills/tool.skill.ts': "export const frontmatter = { name: 'tool', metadata: { $order: { format: { before: ['lint'] } } } };\nexport default () => 'ok';\n",
  });
  const rt = await runtimeAt(t, dir);
  recorders(rt, 'lint', 'format');
  const { error } = await settle(rt.invoke('tool'));
  const [main, tool] = [path.join(dir, 'skills/main.md'), path.join(dir, 'skills/tool.skill.ts')];
  assert.equal(error?.code, 'E_CONFIG');
  const files = [error.place?.file, ...[...error.message.matchAll(/ in (\S+\.(?:md|ts))/g)].map((m) => m[1])];
  assert.deepEqual(files.sort(), [main, tool].sort(), error.message);
});

test('withEntryPlace gives an unplaced ConfigurationError from a chain entry the place of its cascade level', () => {
  const entry = { name: 'audit', args: 1, place: { file: '/ws/skills/main.md', key: 'audit' } };
  const placed = withEntryPlace(new ConfigurationError('must be a list'), entry) as ConfigurationError;
  assert.equal(placed.message, '/ws/skills/main.md (audit): must be a list');
  const already = new ConfigurationError('x', { place: { file: '/elsewhere.md' } });
  assert.equal(withEntryPlace(already, entry), already, 'an error with a place keeps it');
  const other = new Error('boom');
  assert.equal(withEntryPlace(other, entry), other, 'only configuration errors are placed');
});

test('a configuration error thrown by any middleware names the level that set its value', async (t) => {
  const dir = workspace(t, {
    'skills/main.md': '---\nname: main\nmetadata:\n  strict: 42\n---\n',
    'skills/tool.skill.ts': "export const frontmatter = { name: 'tool' };\nexport default () => 'ok';\n",
  });
  const rt = await runtimeAt(t, dir);
  rt.register(middleware('strict', () => {
    throw new ConfigurationError('must be a list of rules');
  }));
  const { error } = await settle(rt.invoke('tool'));
  assert.deepEqual(error?.place, { file: path.join(dir, 'skills/main.md'), key: 'strict' });
});
