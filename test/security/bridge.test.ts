// The red-team suite of the bridge (issue 7, SPEC §15): every break found in the independent
// attack on the runtime around the sandbox, performed by agent code replayed from a cassette
// through the real runtime (or the public CLI), and the rule that now stops it. Test names are the
// rules; a change to src/agent/bridge.ts, the loader or a built-in must keep them green.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { invokeWithTrace } from '../agent-helpers.ts';
import { alive, attackWorkspace, attempts, cli, code, inlineRef, markerModule, runtimeIn, tryAll, until } from './attack.ts';

describe('refs from agent code are bare names, checked before anything is resolved (break 1, 3)', () => {
  test('skill-describe with an inline:// or path name is E_UNTRUSTED_REF and imports nothing — in discovery mode, as scaffolded skills run', async (t) => {
    const marker = path.join(os.tmpdir(), `agent-apps-pwned-${process.pid}-${Date.now()}`);
    t.after(() => fs.rmSync(marker, { force: true }));
    const { out } = await tryAll(t, {
      inline: `return ctx.manager.invoke('skill-describe', { name: ${JSON.stringify(inlineRef(markerModule(marker)))} })`,
      path: "return ctx.manager.invoke('skill-describe', { name: './evil.skill.mjs' })",
      file: "return ctx.manager.invoke('skill-describe', { name: 'file:///etc/passwd' })",
      bare: "return (await ctx.manager.invoke('skill-describe', { name: 'wordcount' })).tool.name",
    }, {}, { files: { 'skills/evil.skill.mjs': markerModule(marker) } });
    for (const k of ['inline', 'path', 'file']) assert.equal(code(out[k]), 'E_UNTRUSTED_REF', `${k}: ${out[k]}`);
    assert.equal(out.bare, 'ok:"wordcount"');
    assert.equal(fs.existsSync(marker), false, 'attacker code ran in the host');
  });

  test('event-subscribe with an inline:// ref is E_UNTRUSTED_REF at subscribe time and runs nothing', async (t) => {
    const marker = path.join(os.tmpdir(), `agent-apps-pwned-sub-${process.pid}-${Date.now()}`);
    t.after(() => fs.rmSync(marker, { force: true }));
    const { out } = await tryAll(t, {
      inline: `return ctx.manager.invoke('event-subscribe', { topic: 't', ref: ${JSON.stringify(inlineRef(markerModule(marker)))} })`,
    });
    assert.equal(code(out.inline), 'E_UNTRUSTED_REF', out.inline);
    assert.equal(fs.existsSync(marker), false, 'attacker code ran in the host');
  });

  test('event-subscribe(ref=my-*) does not admit a path that matches the glob (my-evil.skill.mjs); a bare my-* name works', async (t) => {
    const marker = path.join(os.tmpdir(), `agent-apps-pwned-glob-${process.pid}-${Date.now()}`);
    t.after(() => fs.rmSync(marker, { force: true }));
    const { out } = await tryAll(
      t,
      {
        path: "return ctx.manager.invoke('event-subscribe', { topic: 't', ref: 'my-evil.skill.mjs' })",
        relative: "return ctx.manager.invoke('event-subscribe', { topic: 't', ref: './my-evil.skill.mjs' })",
        bare: "return (await ctx.manager.invoke('event-subscribe', { topic: 't', ref: 'my-job' })) !== null",
      },
      { 'allowed-tools': 'event-subscribe(ref=my-*) my-*' },
      // Outside the search paths, where a path ref (relative to the cwd) would find it.
      { files: { 'my-evil.skill.mjs': markerModule(marker), 'skills/my-job.skill.mjs': "export default () => 'ran';\n" } },
    );
    assert.equal(code(out.path), 'E_UNTRUSTED_REF', out.path);
    assert.equal(code(out.relative), 'E_UNTRUSTED_REF', out.relative);
    assert.equal(out.bare, 'ok:true');
    assert.equal(fs.existsSync(marker), false, 'attacker code ran in the host');
  });

  test('a ref handler must be a tool the agent could invoke itself, with the handler args', async (t) => {
    const { out } = await tryAll(
      t,
      {
        hidden: "return ctx.manager.invoke('event-subscribe', { topic: 't', ref: 'shell', args: { command: 'id' } })",
        outside: "return ctx.manager.invoke('event-subscribe', { topic: 't', ref: 'wordcount', args: { text: 'b' } })",
        inside: "return (await ctx.manager.invoke('event-subscribe', { topic: 't', ref: 'wordcount', args: { text: 'a b' } })) !== null",
      },
      { 'allowed-tools': 'event-subscribe wordcount(text=a*)' },
    );
    assert.equal(code(out.hidden), 'E_ALLOWED_TOOLS', out.hidden);
    assert.equal(code(out.outside), 'E_ALLOWED_TOOLS', out.outside);
    assert.equal(out.inside, 'ok:true');
  });

  test('$context middleware args are checked like invoke args: delegate to an inline:// ref is E_UNTRUSTED_REF', async (t) => {
    const marker = path.join(os.tmpdir(), `agent-apps-pwned-mw-${process.pid}-${Date.now()}`);
    t.after(() => fs.rmSync(marker, { force: true }));
    const ref = JSON.stringify(inlineRef(markerModule(marker)));
    const { out } = await tryAll(
      t,
      {
        string: `return ctx.manager.invoke('wordcount', { text: 'a', $context: { middleware: { delegate: ${ref} } } })`,
        object: `return ctx.manager.invoke('wordcount', { text: 'a', $context: { middleware: { delegate: { args: { ref: ${ref} } } } } })`,
      },
      { 'allowed-tools': 'wordcount delegate' },
    );
    assert.equal(code(out.string), 'E_UNTRUSTED_REF', out.string);
    assert.equal(code(out.object), 'E_UNTRUSTED_REF', out.object);
    assert.equal(fs.existsSync(marker), false, 'attacker code ran in the host');
  });

  test('config middleware (paths, cwd, model, log, mcp) cannot be added with $context, even when allowed-tools names it', async (t) => {
    const marker = path.join(os.tmpdir(), `agent-apps-pwned-paths-${process.pid}-${Date.now()}`);
    t.after(() => fs.rmSync(marker, { force: true }));
    const evil = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-evil-paths-'));
    t.after(() => fs.rmSync(evil, { recursive: true, force: true }));
    fs.writeFileSync(path.join(evil, 'wordcount.skill.mjs'), markerModule(marker));
    const mw = (m: string) => `return ctx.manager.invoke('wordcount', { text: 'a', $context: { middleware: ${m} } })`;
    const { out } = await tryAll(
      t,
      {
        paths: mw(`{ paths: ${JSON.stringify(evil)} }`),
        cwd: mw("{ cwd: '/' }"),
        model: mw(`{ model: { agent: ${JSON.stringify(inlineRef(markerModule(marker)))} } }`),
        log: mw("{ log: { level: 'trace' } }"),
        // An MCP server entry is a command line: agent code must never choose one.
        mcp: mw(`{ mcp: { servers: { evil: { command: ${JSON.stringify(process.execPath)}, args: ['-e', ${JSON.stringify(`require('fs').writeFileSync(${JSON.stringify(marker)}, 'pwned')`)}] } } } }`),
      },
      { 'allowed-tools': 'wordcount paths cwd model log mcp' },
    );
    for (const k of ['paths', 'cwd', 'model', 'log', 'mcp']) assert.match(out[k]!, /^E_ALLOWED_TOOLS: agent code may not add middleware '\w+': it configures the runtime/, `${k}: ${out[k]}`);
    assert.equal(fs.existsSync(marker), false, 'attacker code ran in the host');
  });

  test('through the public CLI: a scaffold-style agent skill (no allowed-tools) cannot import code with skill-describe', (t) => {
    const marker = path.join(os.tmpdir(), `agent-apps-pwned-cli-${process.pid}-${Date.now()}`);
    t.after(() => fs.rmSync(marker, { force: true }));
    const ws = attackWorkspace(t, {
      attacker: { turns: [{ invoke: attempts({ describe: `return ctx.manager.invoke('skill-describe', { name: ${JSON.stringify(inlineRef(markerModule(marker)))} })` }) }] },
    });
    const r = cli(['--json', 'run', 'attacker'], ws);
    assert.equal(r.status, 0, r.stderr);
    assert.match(JSON.parse(r.stdout).describe, /^E_UNTRUSTED_REF: /);
    assert.equal(fs.existsSync(marker), false, 'attacker code ran in the host');
  });
});

describe('a sub-agent started by agent code runs on its caller\'s model config, and may only lower limits (break 2)', () => {
  // The sub-agent replays its caller's cassette: the same code, which recognises it by its prompt.
  const SUB = "if (ctx.args.prompt === 'Count.') { ctx.manager.finish(await ctx.manager.invoke('wordcount', { text: 'one two' })); return; }";
  const sub = (config: unknown) => `return ctx.manager.invoke('agent', { prompt: 'Count.', allowedTools: 'wordcount', config: ${JSON.stringify(config)} })`;

  test('the provider skill, endpoints, credentials, record/cassette paths and isolation are refused, naming the key', async (t) => {
    const marker = path.join(os.tmpdir(), `agent-apps-pwned-agent-${process.pid}-${Date.now()}`);
    const recorded = path.join(os.tmpdir(), `agent-apps-recorded-${process.pid}-${Date.now()}.yaml`);
    t.after(() => fs.rmSync(marker, { force: true }));
    t.after(() => fs.rmSync(recorded, { force: true }));
    const { out } = await tryAll(
      t,
      {
        agent: sub({ agent: inlineRef(markerModule(marker)) }),
        endpoint: sub({ provider: 'openai', baseURL: 'http://127.0.0.1:9/v1', apiKeyEnv: 'HOME' }),
        baseURL: sub({ baseURL: 'http://127.0.0.1:9/v1' }),
        isolation: sub({ sandbox: { isolation: 'inline' } }),
        record: sub({ record: recorded }),
        cassette: sub({ cassette: '/etc/passwd' }),
        hostMb: sub({ sandbox: { hostMb: 4096 } }),
      },
      { 'allowed-tools': 'agent(allowedTools=wordcount)' },
      { prelude: SUB },
    );
    const keys: Record<string, string> = { agent: 'agent', endpoint: 'provider', baseURL: 'baseURL', isolation: 'sandbox.isolation', record: 'record', cassette: 'cassette', hostMb: 'sandbox.hostMb' };
    for (const [k, key] of Object.entries(keys)) assert.match(out[k]!, new RegExp(`^E_ALLOWED_TOOLS: agent code may not set model\\.${key.replace('.', '\\.')} of a sub-agent`), `${k}: ${out[k]}`);
    assert.equal(fs.existsSync(marker), false, 'attacker code ran in the host');
    assert.equal(fs.existsSync(recorded), false, 'a cassette was written where agent code said');
  });

  test('limits may be lowered, never raised: maxTurns, maxSteps, sandbox.timeoutMs, sandbox.memoryMb', async (t) => {
    const { out } = await tryAll(
      t,
      {
        maxTurns: sub({ maxTurns: 1000 }),
        maxSteps: sub({ maxSteps: 1000 }),
        timeoutMs: sub({ sandbox: { timeoutMs: 1e9 } }),
        memoryMb: sub({ sandbox: { memoryMb: 4096 } }),
        lowered: sub({ maxTurns: 2, maxSteps: 3, temperature: 0.2, sandbox: { timeoutMs: 5000, memoryMb: 64 } }),
      },
      { 'allowed-tools': 'agent(allowedTools=wordcount)', model: { maxTurns: 5, maxSteps: 5 } },
      { prelude: SUB },
    );
    assert.match(out.maxTurns!, /^E_ALLOWED_TOOLS: agent code may not raise \(5 → 1000\) model\.maxTurns/);
    assert.match(out.maxSteps!, /^E_ALLOWED_TOOLS: agent code may not raise \(5 → 1000\) model\.maxSteps/);
    assert.match(out.timeoutMs!, /^E_ALLOWED_TOOLS: agent code may not raise \(30000 → 1000000000\) model\.sandbox\.timeoutMs/);
    assert.match(out.memoryMb!, /^E_ALLOWED_TOOLS: agent code may not raise \(128 → 4096\) model\.sandbox\.memoryMb/);
    assert.equal(out.lowered, 'ok:2');
  });
});

describe('arg constraints on paths match the normalised, symlink-resolved path; file tools stay in the workspace (break 4)', () => {
  function files(outside: string) {
    return { 'docs/a.md': 'A', 'docs/sub/b.md': 'B', 'out/.keep': '', 'secret.txt': 'S' };
  }
  async function setup(t: Parameters<typeof tryAll>[0], list: Record<string, string>, allowed: string) {
    const outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-outside-')));
    t.after(() => fs.rmSync(outside, { recursive: true, force: true }));
    fs.writeFileSync(path.join(outside, 'passwd'), 'root:x:0:0');
    const prelude = '';
    const ws = attackWorkspace(t, { attacker: { 'allowed-tools': allowed, turns: [{ invoke: attempts(list, prelude) }] } }, files(outside));
    fs.symlinkSync(path.join(outside, 'passwd'), path.join(ws, 'docs', 'link'));
    fs.symlinkSync(outside, path.join(ws, 'docs', 'dirlink'));
    const rt = await runtimeIn(t, ws);
    return { out: (await rt.invoke('attacker', {})) as Record<string, string>, ws, outside };
  }
  const read = (p: string) => `return ctx.manager.invoke('file-read', { path: ${JSON.stringify(p)} })`;

  test("file-read(path=docs/*): `..` never escapes the pattern's base, `*` never crosses `/`, symlinks are resolved first", async (t) => {
    const { out } = await setup(
      t,
      {
        inside: read('docs/a.md'),
        dotted: read('./docs/a.md'),
        escape: read('docs/../../../../../../etc/passwd'),
        sibling: read('docs/../secret.txt'),
        nested: read('docs/sub/b.md'),
        symlink: read('docs/link'),
        symlinkDir: read('docs/dirlink/passwd'),
        absolute: read('/etc/passwd'),
      },
      'file-read(path=docs/*)',
    );
    assert.equal(out.inside, 'ok:"A"');
    assert.equal(out.dotted, 'ok:"A"');
    for (const k of ['escape', 'sibling', 'nested', 'symlink', 'symlinkDir', 'absolute']) assert.equal(code(out[k]), 'E_ALLOWED_TOOLS', `${k}: ${out[k]}`);
  });

  test('file-read(path=docs/**) crosses folders but not `..`', async (t) => {
    const { out } = await setup(t, { nested: read('docs/sub/b.md'), escape: read('docs/sub/../../secret.txt') }, 'file-read(path=docs/**)');
    assert.equal(out.nested, 'ok:"B"');
    assert.equal(code(out.escape), 'E_ALLOWED_TOOLS', out.escape);
  });

  test('file-write(path=out/*) cannot overwrite a skill through `..`, and the skill still runs as written', async (t) => {
    const evil = "export default () => 'pwned';";
    const write = (p: string) => `return ctx.manager.invoke('file-write', { path: ${JSON.stringify(p)}, content: ${JSON.stringify(evil)} })`;
    const { out, ws } = await setup(t, { escape: write('out/../skills/wordcount.skill.mjs'), inside: write('out/x.txt') }, 'file-write(path=out/*)');
    assert.equal(code(out.escape), 'E_ALLOWED_TOOLS', out.escape);
    assert.equal(code(out.inside), 'ok');
    assert.doesNotMatch(fs.readFileSync(path.join(ws, 'skills', 'wordcount.skill.mjs'), 'utf8'), /pwned/);
  });

  test('file tools named without a constraint stay inside the workspace; an absolute pattern admits an outside folder', async (t) => {
    const plain = await setup(t, { inside: read('docs/a.md'), absolute: read('/etc/hostname'), symlink: read('docs/link') }, 'file-read');
    assert.equal(plain.out.inside, 'ok:"A"');
    assert.match(plain.out.absolute!, /^E_ALLOWED_TOOLS: .*outside the workspace/);
    assert.equal(code(plain.out.symlink), 'E_ALLOWED_TOOLS', plain.out.symlink);
    const outside = fs.realpathSync(os.tmpdir());
    const file = path.join(outside, `agent-apps-allowed-${process.pid}.txt`);
    fs.writeFileSync(file, 'outside');
    t.after(() => fs.rmSync(file, { force: true }));
    const allowed = await setup(t, { outside: read(file) }, `file-read(path=${outside}/*)`);
    assert.equal(allowed.out.outside, 'ok:"outside"');
  });

  test('Bash(prefix:*) and shell(command=PREFIX *) admit one simple command: no ; & | ` $( < > or newline', async (t) => {
    const sh = (c: string) => `return (await ctx.manager.invoke('shell', { command: ${JSON.stringify(c)} })).stdout`;
    const attacks = {
      chained: 'echo hi; id',
      and: 'echo hi && id',
      or: 'echo hi || id',
      background: 'echo hi & id',
      pipe: 'echo hi | sh',
      backtick: 'echo `id`',
      substitution: 'echo $(id)',
      redirect: 'echo hi > pwned.txt',
      input: 'echo < /etc/passwd',
      newline: 'echo hi\nid',
    };
    for (const allowed of ['Bash(echo:*)', 'shell(command=echo *)']) {
      const { out, ws } = await setup(t, { simple: sh('echo hi'), ...Object.fromEntries(Object.entries(attacks).map(([k, c]) => [k, sh(c)])) }, allowed);
      assert.equal(out.simple, 'ok:"hi\\n"', allowed);
      for (const k of Object.keys(attacks)) assert.equal(code(out[k]), 'E_ALLOWED_TOOLS', `${allowed} ${k}: ${out[k]}`);
      assert.equal(fs.existsSync(path.join(ws, 'pwned.txt')), false);
    }
  });

  test("shell's cwd from agent code stays in the workspace", async (t) => {
    const { out } = await setup(t, { root: "return ctx.manager.invoke('shell', { command: 'echo hi', cwd: '/' })", here: "return (await ctx.manager.invoke('shell', { command: 'echo hi', cwd: 'docs' })).stdout" }, 'shell(command=echo *)');
    assert.equal(code(out.root), 'E_ALLOWED_TOOLS', out.root);
    assert.equal(out.here, 'ok:"hi\\n"');
  });
});

describe('the host memory agent code can pin is bounded per agent run (break 5)', () => {
  test('set / log / invoke payloads count together against model.sandbox.hostMb; the call that passes it is E_SANDBOX and ends the execution', async (t) => {
    const big = "'x'.repeat(300000)";
    const code1 = [
      'const out = [];',
      `for (let i = 0; i < 3; i++) { try { await ctx.manager.set('locals.k' + i, ${big}); out.push('set'); } catch (e) { out.push(e.code); } }`,
      // The budget is 1 MiB: the fourth payload of 300,000 characters passes it, whatever the call.
      `try { await ctx.manager.log(${big}); out.push('log'); } catch (e) { out.push(e.code); }`,
      "await ctx.manager.set('locals.after', 'still running');",
      'ctx.manager.finish(out);',
    ].join('\n');
    const ws = attackWorkspace(t, { hog: { model: { sandbox: { hostMb: 1 } }, turns: [{ invoke: code1 }, { text: 'gave up' }] } });
    const rt = await runtimeIn(t, ws);
    const run = await invokeWithTrace(rt, 'hog');
    assert.equal(run.error, undefined, run.error?.message);
    assert.equal(run.value, 'gave up', 'the execution went on after its budget was spent');
    const failed = run.trace.find((e) => e.type === 'tool-result' && e.error);
    assert.ok(failed, 'the model saw no error');
    assert.match(JSON.stringify(failed), /E_SANDBOX/);
    assert.match(JSON.stringify(failed), /host memory budget exceeded: ctx\.manager\.log .* 1 MiB \(model\.sandbox\.hostMb\)/);
    assert.equal(typeof run.served!.locals.k2, 'string');
    assert.equal(run.served!.locals.after, undefined);
  });

  test('the default budget (64 MiB) stops 15 MB set() payloads in a loop at the fifth', async (t) => {
    const loop = "const out = []; const s = 'x'.repeat(15_000_000); for (let i = 0; i < 8; i++) { try { await ctx.manager.set('locals.k' + i, s); out.push(i); } catch (e) { out.push(e.code); } } ctx.manager.finish(out);";
    const ws = attackWorkspace(t, { hog: { turns: [{ invoke: loop }, { text: 'stopped' }] } });
    const rt = await runtimeIn(t, ws);
    const run = await invokeWithTrace(rt, 'hog');
    assert.equal(run.value, 'stopped');
    assert.equal(typeof run.served!.locals.k3, 'string');
    assert.equal(run.served!.locals.k4, undefined);
  });

  test('sub-agents share their caller\'s budget', async (t) => {
    const code2 = [
      "if (ctx.args.prompt === 'Hog.') { await ctx.manager.set('locals.sub', 'x'.repeat(600000)); ctx.manager.finish('sub done'); return; }",
      "await ctx.manager.set('locals.mine', 'x'.repeat(600000));",
      "let r; try { r = await ctx.manager.invoke('agent', { prompt: 'Hog.' }); } catch (e) { r = e.code + ': ' + e.message; }",
      'ctx.manager.finish(r);',
    ].join('\n');
    const ws = attackWorkspace(t, { hog: { 'allowed-tools': 'agent', model: { sandbox: { hostMb: 1 } }, turns: [{ invoke: code2 }, { text: 'sub gave up' }] } });
    const rt = await runtimeIn(t, ws);
    // The sub-agent replays the same cassette: with a budget of its own it would finish 'sub done';
    // sharing its caller's, its set() passes the 1 MiB, the execution ends and the model gives up.
    assert.equal(await rt.invoke('hog', {}), 'sub gave up');
  });
});

describe('host work ends with the execution that started it (break 6)', () => {
  test('a shell command the code did not await is killed when the execution ends', async (t) => {
    const start = "ctx.manager.invoke('shell', { command: 'echo $$ > pid.txt; exec sleep 30' }).catch(() => {}); await new Promise((r) => setTimeout(r, 400)); ctx.manager.finish('returned');";
    const ws = attackWorkspace(t, { runner: { 'allowed-tools': 'shell', turns: [{ invoke: start }] } });
    const rt = await runtimeIn(t, ws);
    assert.equal(await rt.invoke('runner', {}), 'returned');
    const pid = Number(fs.readFileSync(path.join(ws, 'pid.txt'), 'utf8'));
    assert.ok(pid > 0);
    assert.ok(await until(() => !alive(pid), 5000), `shell process ${pid} outlived the agent`);
  });

  test('a timed-out execution kills the shell command it awaited', async (t) => {
    const start = "await ctx.manager.invoke('shell', { command: 'echo $$ > pid.txt; exec sleep 30' });";
    const ws = attackWorkspace(t, { runner: { 'allowed-tools': 'shell', model: { sandbox: { timeoutMs: 1000 } }, turns: [{ invoke: start }, { text: 'timed out' }] } });
    const rt = await runtimeIn(t, ws);
    const run = await invokeWithTrace(rt, 'runner');
    assert.equal(run.value, 'timed out');
    assert.match(JSON.stringify(run.trace.find((e) => e.type === 'tool-result' && e.error)), /timed out after 1000 ms/);
    const pid = Number(fs.readFileSync(path.join(ws, 'pid.txt'), 'utf8'));
    assert.ok(await until(() => !alive(pid), 5000), `shell process ${pid} outlived the execution`);
  });

  test('an event-wait the code left behind does not swallow the next event on its queue', async (t) => {
    const leave = "ctx.manager.invoke('event-wait', { topic: 'jobs', queue: 'workers' }).catch(() => {}); await new Promise((r) => setTimeout(r, 100)); ctx.manager.finish('left');";
    const ws = attackWorkspace(t, { leaver: { 'allowed-tools': 'event-wait', turns: [{ invoke: leave }] } });
    const rt = await runtimeIn(t, ws);
    await rt.invoke('event-subscribe', { topic: 'jobs', queue: 'workers' });
    assert.equal(await rt.invoke('leaver', {}), 'left');
    await rt.invoke('event-emit', { topic: 'jobs', type: 'job', data: { n: 1 } });
    const got = (await rt.invoke('event-wait', { topic: 'jobs', queue: 'workers', timeout: 200 })) as { data: unknown }[];
    assert.deepEqual(got.map((e) => e.data), [{ n: 1 }]);
  });

  test('a sub-agent cannot choose inline isolation, so its runaway code cannot take the host down', async (t) => {
    const { out } = await tryAll(t, { inline: "return ctx.manager.invoke('agent', { prompt: 'x', config: { sandbox: { isolation: 'inline' } } })" }, { 'allowed-tools': 'agent' });
    assert.match(out.inline!, /^E_ALLOWED_TOOLS: agent code may not set model\.sandbox\.isolation/);
  });
});

describe('get() never returns config secrets or internals; set() cannot reach what audit reads (break 9)', () => {
  test('get of any ancestor path leaves out internals and config, and redacts secrets', async (t) => {
    const { out } = await tryAll(t, {
      locals: "return ctx.manager.get('locals')",
      run: "return ctx.manager.get('run')",
      nonlocals: "return ctx.manager.get('nonlocals')",
      envelope: "return ctx.manager.get('envelope')",
      secret: "return ctx.manager.get('run.middleware.apiToken')",
      internals: "return ctx.manager.get('locals.internals.untrustedRef')",
    }, { metadata: { apiToken: 'sekret-123' } });
    const keys = (v: unknown, found = new Set<string>()): Set<string> => {
      if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) found.add(k) && keys(x, found);
      return found;
    };
    for (const k of ['locals', 'run', 'nonlocals', 'envelope']) {
      assert.equal(code(out[k]), 'ok', `${k}: ${out[k]}`);
      assert.doesNotMatch(out[k]!, /sekret-123/, k);
      const seen = keys(JSON.parse(out[k]!.slice(3)));
      for (const hidden of ['internals', 'config', 'untrustedRef', 'parent', 'target', 'signal']) assert.equal(seen.has(hidden), false, `${k} has ${hidden}`);
    }
    assert.match(out.run!, /"apiToken":"\[REDACTED\]"/);
    assert.equal(out.secret, 'ok:"[REDACTED]"');
    assert.equal(code(out.internals), 'E_UNTRUSTED_REF');
  });

  test('through the CLI, a --set token never reaches agent code', (t) => {
    const ws = attackWorkspace(t, { attacker: { turns: [{ invoke: attempts({ locals: "return ctx.manager.get('locals')", run: "return ctx.manager.get('run')" }) }] } });
    const r = cli(['--set', 'apiToken=sekret-456', '--json', 'run', 'attacker'], ws);
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /sekret-456/);
    assert.match(JSON.parse(r.stdout).locals, /^ok:/);
  });

  test('the trace, usage and agent scope are not writable from agent code, and the trace survives the attempt', async (t) => {
    const list = {
      trace: "return ctx.manager.set('locals.agent.trace', [])",
      agent: "return ctx.manager.set('locals.agent', { trace: [] })",
      usage: "return ctx.manager.set('locals.agent.usage.inputTokens', 0)",
      locals: "return ctx.manager.set('locals', {})",
      scope: "return ctx.manager.set('nonlocals.agent.events', 'elsewhere')",
      debug: "return ctx.manager.set('nonlocals.debug', false)",
      history: "return ctx.manager.set('locals.history', [])",
      own: "await ctx.manager.set('locals.note', 1); return ctx.manager.get('locals.note')",
    };
    const ws = attackWorkspace(t, { attacker: { turns: [{ invoke: attempts(list) }] } });
    const rt = await runtimeIn(t, ws);
    const run = await invokeWithTrace(rt, 'attacker');
    const out = run.value as Record<string, string>;
    for (const k of ['trace', 'agent', 'usage', 'locals', 'scope', 'debug', 'history']) assert.equal(code(out[k]), 'E_UNTRUSTED_REF', `${k}: ${out[k]}`);
    assert.equal(out.own, 'ok:1');
    assert.ok(run.trace.some((e) => e.type === 'tool-call'), 'the trace was emptied');
  });

  test('log from agent code cannot file its event under another tool, context or run', async (t) => {
    const ws = attackWorkspace(t, { attacker: { turns: [{ invoke: "await ctx.manager.log({ text: 'spoof', tool: 'main', contextId: 'x', rootContextId: 'y', tag: 'kernel', level: 'error' }); ctx.manager.finish('ok');" }] } });
    const rt = await runtimeIn(t, ws);
    await rt.invoke('attacker', {});
    const ev = rt.root.manager.tail({ tag: 'agent' }).find((e) => e.text === 'spoof');
    assert.ok(ev, 'the log event was not recorded');
    assert.equal(ev.tool, 'attacker');
    assert.notEqual(ev.contextId, 'x');
    assert.notEqual(ev.rootContextId, 'y');
    assert.equal(ev.level, 'error');
  });
});
