// Red-team round 2 on the bridge (SPEC §15): agent code replayed from cassettes through the real
// runtime, sandbox and pipeline (or the public CLI). The first describe blocks are holes found in
// this round — they FAIL until the host-call policy closes them; each test is named after the
// rule it shows broken. The last block keeps the attempts that were correctly refused.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { attackWorkspace, attempts, BIN, code, inlineRef, markerModule, runtimeIn, tryAll } from './attack.ts';

/** A folder outside the workspace holding a `secret` file; removed after the test. */
function outsideDir(t: Parameters<typeof tryAll>[0]): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-redteam-out-')));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'secret'), 'TOPSECRET');
  return dir;
}

function markerPath(t: Parameters<typeof tryAll>[0], tag: string): string {
  const marker = path.join(os.tmpdir(), `agent-apps-redteam-${tag}-${process.pid}-${Date.now()}`);
  t.after(() => fs.rmSync(marker, { force: true }));
  return marker;
}

/** Agent-code source of `JSON.parse(<text>)`: an object with an OWN `__proto__` key, as JSON.parse makes it. */
const parsed = (json: string) => `JSON.parse(${JSON.stringify(json)})`;

// ── hole A: an own `__proto__` key in invoke args becomes the args' prototype ───────────────────
// sanitizeArgs copies each key with `out[k] = v`; for k = '__proto__' that runs the setter, so the
// cleaned args inherit the attacker's object. checkArgs walks only own keys (nothing to check), the
// kernel neither copies nor freezes a non-plain object, ajv reads inherited properties, and the
// skill reads `args.path` / `args.ref` / `args.cwd` from the prototype.

describe('HOLE A: an own __proto__ key in invoke args smuggles args past the bridge', () => {
  test('file-read stays inside the workspace (SPEC §15): not when the path comes through __proto__ — discovery mode, as scaffolded skills run', async (t) => {
    const outside = outsideDir(t);
    const { out } = await tryAll(t, {
      proto: `return ctx.manager.invoke('file-read', ${parsed(JSON.stringify({ ['__proto__']: { path: path.join(outside, 'secret') } }))})`,
      plain: `return ctx.manager.invoke('file-read', { path: ${JSON.stringify(path.join(outside, 'secret'))} })`,
    });
    assert.equal(code(out.plain), 'E_ALLOWED_TOOLS', out.plain);
    assert.doesNotMatch(out.proto!, /TOPSECRET/, `read outside the workspace: ${out.proto}`);
  });

  test('file-write stays inside the workspace (SPEC §15): not when the path comes through __proto__', async (t) => {
    const outside = outsideDir(t);
    const target = path.join(outside, 'written-by-agent');
    const { out } = await tryAll(t, { proto: `return ctx.manager.invoke('file-write', ${parsed(JSON.stringify({ content: 'pwned', ['__proto__']: { path: target } }))})` }, { 'allowed-tools': 'file-write' });
    assert.equal(fs.existsSync(target), false, `wrote outside the workspace: ${out.proto}`);
  });

  test("refs from agent code are bare names checked before anything is imported: event-subscribe's ref through __proto__ imports an inline:// module", async (t) => {
    const marker = markerPath(t, 'proto-ref');
    const { out } = await tryAll(t, {
      proto: `return ctx.manager.invoke('event-subscribe', ${parsed(JSON.stringify({ topic: 'p', ['__proto__']: { ref: inlineRef(markerModule(marker)) } }))})`,
    });
    assert.equal(fs.existsSync(marker), false, `attacker code ran in the host: ${out.proto}`);
  });

  test("shell's cwd from agent code stays in the workspace: not through __proto__", async (t) => {
    const { out } = await tryAll(t, {
      proto: `return (await ctx.manager.invoke('shell', ${parsed(JSON.stringify({ command: 'pwd', timeoutMs: 5000, ['__proto__']: { cwd: '/' } }))})).stdout`,
    }, { 'allowed-tools': 'shell(command=pwd)' });
    assert.notEqual(out.proto, 'ok:"/\\n"', 'shell ran in / (outside the workspace)');
  });
});

// ── hole B: a ref handler's args are not checked like invoke args ─────────────────────────────
// checkArgs only checks that event-subscribe's `ref` names a callable tool with the handler args;
// it does not sanitize a `$context` inside those args, nor walk the handler tool's x-path args. The
// bus later invokes the handler from the ROOT context (no untrustedRef, no allowed-tools) with
// `{ ...args, ...event, event }`, and Kernel.invoke turns the nested `$context` into a context seed:
// any middleware (delegate, validate-args removal, event routes …), any locals.

describe('HOLE B: a $context inside a ref handler\'s args reaches the kernel unchecked', () => {
  const emitAndWait = (topic: string) => `await ctx.manager.invoke('event-emit', { topic: '${topic}', type: 'go' }); await new Promise((r) => setTimeout(r, 800)); return 'emitted';`;

  test('ref handler args are checked like invoke args (SPEC §15): a $context in event-subscribe args cannot add delegate to an inline:// ref — discovery mode', async (t) => {
    const marker = markerPath(t, 'handler-delegate');
    const { out } = await tryAll(t, {
      nested: `await ctx.manager.invoke('event-subscribe', { topic: 'n', ref: 'wordcount', args: { text: 'a', $context: { middleware: { delegate: ${JSON.stringify(inlineRef(markerModule(marker)))} } } } }); ${emitAndWait('n')}`,
    });
    assert.equal(fs.existsSync(marker), false, `attacker code ran in the host: ${out.nested}`);
  });

  test('a sub-agent runs on its caller\'s model config (SPEC §15): not when started as a ref handler whose $context removes validate-args', async (t) => {
    const marker = markerPath(t, 'handler-agent');
    const { out } = await tryAll(t, {
      nested: `await ctx.manager.invoke('event-subscribe', { topic: 'a', ref: 'agent', args: { prompt: 'x', config: { agent: ${JSON.stringify(inlineRef(markerModule(marker)))} }, $context: { middleware: { 'validate-args': { remove: true } } } } }); ${emitAndWait('a')}`,
    }, { 'allowed-tools': 'agent event-subscribe event-emit' });
    assert.equal(fs.existsSync(marker), false, `the sub-agent's provider was attacker code: ${out.nested}`);
  });

  test('file-write stays inside the workspace (SPEC §15): not as a ref handler (path args of handler args are not checked)', async (t) => {
    const outside = outsideDir(t);
    const target = path.join(outside, 'written-by-handler');
    const { out } = await tryAll(t, {
      nested: `await ctx.manager.invoke('event-subscribe', { topic: 'w', ref: 'file-write', args: { path: ${JSON.stringify(target)}, content: 'pwned', $context: { middleware: { 'validate-args': { remove: true } } } } }); ${emitAndWait('w')}`,
    }, { 'allowed-tools': 'file-write event-subscribe event-emit' });
    assert.equal(fs.existsSync(target), false, `wrote outside the workspace: ${out.nested}`);
  });

  test('$context middleware args are checked like invoke args (SPEC §15): a $context nested in delegate\'s args (delegate named) adds delegate to an inline:// ref', async (t) => {
    const marker = markerPath(t, 'delegate-nested');
    const ref = JSON.stringify(inlineRef(markerModule(marker)));
    const { out } = await tryAll(t, {
      nested: `return ctx.manager.invoke('wordcount', { text: 'a', $context: { middleware: { delegate: { args: { ref: 'wordcount', args: { text: 'b', $context: { middleware: { delegate: ${ref} } } } } } } } })`,
    }, { 'allowed-tools': 'wordcount delegate' });
    assert.equal(fs.existsSync(marker), false, `attacker code ran in the host: ${out.nested}`);
  });

  test('agent code cannot hang the host (SPEC §15): a ref handler that re-emits its own topic wedges the CLI forever', (t) => {
    const ws = attackWorkspace(t, {
      attacker: {
        turns: [{
          invoke: attempts({
            loop: "await ctx.manager.invoke('event-subscribe', { topic: 'loop', ref: 'event-emit', args: { topic: 'loop', type: 'x', $context: { middleware: { 'validate-args': { remove: true } } } } }); await ctx.manager.invoke('event-emit', { topic: 'loop', type: 'x' }); return 1",
          }),
        }],
      },
    });
    const home = fs.mkdtempSync(path.join(ws, '.home-'));
    const env: NodeJS.ProcessEnv = { ...process.env, AGENT_APPS_HOME: home };
    for (const key of ['AGENT_APPS_PATH', 'NODE_OPTIONS', 'NODE_TEST_CONTEXT']) delete env[key];
    const r = spawnSync(process.execPath, [BIN, '--json', 'run', 'attacker'], { cwd: ws, env, encoding: 'utf8', timeout: 15_000, killSignal: 'SIGKILL' });
    assert.notEqual(r.signal, 'SIGKILL', 'the CLI was still running after 15 s (killed): the handler loop starves the event loop');
    assert.equal(r.status, 0, r.stderr);
  });
});

// ── hole C: sub-agents are not confined to their caller's allowed-tools ──────────────────────

describe('HOLE C: a sub-agent may use tools its caller may not', () => {
  // The sub-agent replays its caller's cassette: the same code, which recognises it by its prompt.
  const SUB = "if (ctx.args.prompt === 'Sub.') { let sh; try { sh = (await ctx.manager.invoke('shell', { command: 'echo sub-shell' })).stdout; } catch (e) { sh = e.code; } let list; try { list = (await ctx.manager.invoke('skill-list', {})).map((s) => s.name); } catch (e) { list = e.code; } ctx.manager.finish({ sh, list }); return; }";

  test("a sub-agent's tools are what its caller granted (seed 004, bridge.ts): `agent` named bare does not let agent code start one with shell", async (t) => {
    const { out } = await tryAll(t, { sub: "return ctx.manager.invoke('agent', { prompt: 'Sub.', allowedTools: 'shell' })" }, { 'allowed-tools': 'agent' }, { prelude: SUB });
    assert.doesNotMatch(out.sub!, /sub-shell/, `the sub-agent ran shell, which its caller may not: ${out.sub}`);
  });

  test("a sub-agent's tools are what its caller granted: without allowedTools it is not in discovery mode over every public tool", async (t) => {
    const { out } = await tryAll(t, { sub: "return ctx.manager.invoke('agent', { prompt: 'Sub.' })" }, { 'allowed-tools': 'agent' }, { prelude: SUB });
    assert.doesNotMatch(out.sub!, /file-read|event-subscribe/, `the sub-agent may call tools its caller may not: ${out.sub}`);
    // Its `self` is 'agent', so the self-recursion rule no longer keeps it from the caller's own skill.
    assert.doesNotMatch(out.sub!, /"attacker"/, `the sub-agent may invoke its caller's skill: ${out.sub}`);
  });
});

// ── hole D: config secrets reach agent code outside get() ─────────────────────────────────────

describe('HOLE D: config secrets reach agent code', () => {
  const MAIN = '---\nname: main\ndescription: the workspace main\nmetadata:\n  apiToken: sekret-main\n  service: { headers: { Authorization: "Bearer sekret-bearer" } }\n---\nmain\n';

  test('agent code never reads config secrets (SPEC §15): skill-describe returns the cascade metadata unredacted', async (t) => {
    const { out } = await tryAll(t, {
      describe: "return JSON.stringify(await ctx.manager.invoke('skill-describe', { name: 'wordcount' }))",
      get: "return ctx.manager.get('run.middleware.apiToken')",
    }, {}, { files: { 'skills/main.md': MAIN } });
    assert.equal(out.get, 'ok:"[REDACTED]"', 'get() redacts it');
    assert.doesNotMatch(out.describe!, /sekret-main/, 'skill-describe leaks the apiToken of the workspace main');
  });

  test('agent code never reads config secrets: an Authorization header in the cascade is not redacted by get()', async (t) => {
    const { out } = await tryAll(t, { get: "return ctx.manager.get('run.middleware.service')" }, {}, { files: { 'skills/main.md': MAIN } });
    assert.doesNotMatch(out.get!, /sekret-bearer/, `get() returns a bearer token: ${out.get}`);
  });

  test('shell(command=echo *) admits one simple command: `$VAR` expansion reads the host environment (provider credentials)', async (t) => {
    process.env.AGENT_APPS_REDTEAM_API_KEY = 'sekret-env';
    t.after(() => delete process.env.AGENT_APPS_REDTEAM_API_KEY);
    const { out } = await tryAll(t, { env: "return (await ctx.manager.invoke('shell', { command: 'echo $AGENT_APPS_REDTEAM_API_KEY' })).stdout" }, { 'allowed-tools': 'shell(command=echo *)' });
    assert.doesNotMatch(out.env!, /sekret-env/, 'the shell expanded a secret of the host environment');
  });
});

// ── refused: regressions worth keeping ────────────────────────────────────────────────────────

describe('refused attempts (regressions)', () => {
  test('$context from agent code: no other $ keys, no locals/nonlocals beyond middleware, no config middleware, no remove, no glob or __proto__ names', async (t) => {
    const { out } = await tryAll(t, {
      detached: "return ctx.manager.invoke('wordcount', { text: 'a', $detached: true })",
      localsInternals: "return ctx.manager.invoke('wordcount', { text: 'a', $context: { locals: { internals: {} } } })",
      nonlocals: "return ctx.manager.invoke('wordcount', { text: 'a', $context: { nonlocals: { middleware: { cwd: '/' } } } })",
      cwd: "return ctx.manager.invoke('file-read', { path: 'etc/passwd', $context: { middleware: { cwd: '/' } } })",
      removeValidate: "return ctx.manager.invoke('file-read', { path: 'x', $context: { middleware: { 'validate-args': { remove: true } } } })",
      glob: "return ctx.manager.invoke('wordcount', { text: 'a', $context: { middleware: { 'validate-*': { remove: true } } } })",
      proto: `return ctx.manager.invoke('wordcount', ${parsed('{"text":"a","$context":{"middleware":{"__proto__":{"cwd":"/"}}}}')})`,
    });
    for (const k of ['detached', 'localsInternals', 'nonlocals', 'proto']) assert.equal(code(out[k]), 'E_UNTRUSTED_REF', `${k}: ${out[k]}`);
    for (const k of ['cwd', 'removeValidate', 'glob']) assert.equal(code(out[k]), 'E_ALLOWED_TOOLS', `${k}: ${out[k]}`);
  });

  test('file-read without a constraint: /proc/self/root, /proc/self/cwd, //, trailing slash and NUL tricks stay outside the workspace; an array path is E_VALIDATION', async (t) => {
    const read = (p: string) => `return ctx.manager.invoke('file-read', { path: ${JSON.stringify(p)} })`;
    const { out } = await tryAll(t, {
      procRoot: read('/proc/self/root/etc/hostname'),
      procCwd: read('/proc/self/cwd/package.json'),
      doubleSlash: read('//etc/hostname'),
      trailing: read('skills/../../../../../etc/hostname/'),
      nul: read('skills/wordcount.skill.mjs\u0000/../../../etc/hostname'),
      array: "return ctx.manager.invoke('file-read', { path: ['/etc/hostname'] })",
    });
    for (const k of ['procRoot', 'procCwd', 'doubleSlash', 'trailing', 'nul']) assert.equal(code(out[k]), 'E_ALLOWED_TOOLS', `${k}: ${out[k]}`);
    assert.equal(code(out.array), 'E_VALIDATION', out.array);
  });

  test('hidden tools stay hidden: agent-execute, context-manager, shell as a describe name or handler ref', async (t) => {
    const { out } = await tryAll(t, {
      agentExecute: "return ctx.manager.invoke('agent-execute', true)",
      contextManager: "return ctx.manager.invoke('context-manager', { op: 'get', path: 'locals.internals' })",
      describeShell: "return ctx.manager.invoke('skill-describe', { name: 'shell' })",
      handlerShell: "return ctx.manager.invoke('event-subscribe', { topic: 't', ref: 'shell', args: { command: 'id' } })",
    });
    for (const k of Object.keys(out)) assert.equal(code(out[k]), 'E_ALLOWED_TOOLS', `${k}: ${out[k]}`);
  });

  test('get/set: __proto__, constructor, config, globals, internals and nonlocals.middleware are out of reach', async (t) => {
    const { out } = await tryAll(t, {
      getProto: "return ctx.manager.get('__proto__')",
      getCtor: "return ctx.manager.get('constructor.name')",
      getConfig: "return ctx.manager.get('locals.config')",
      getGlobals: "return ctx.manager.get('globals.internals')",
      setInternals: "return ctx.manager.set('locals.internals.allowedTools', '*')",
      setMiddleware: "return ctx.manager.set('nonlocals.middleware', { cwd: '/' })",
    });
    for (const k of Object.keys(out)) assert.equal(code(out[k]), 'E_UNTRUSTED_REF', `${k}: ${out[k]}`);
  });

  test('Bash(echo:*): ${IFS}, tab, CR, $((…)), ${x:-$(…)}, env sh, backslash-newline, U+2028, __proto__ command and a cwd of .. are refused', async (t) => {
    const sh = (c: string) => `return (await ctx.manager.invoke('shell', { command: ${JSON.stringify(c)} })).stdout`;
    const { out } = await tryAll(t, {
      ifs: sh('echo${IFS}hi'),
      tab: sh('echo\tx'),
      cr: sh('echo hi\rid'),
      arith: sh('echo $((1+1))'),
      param: sh('echo ${x:-$(id)}'),
      envSh: sh('env sh -c id'),
      continuation: sh('echo hi \\\nid'),
      u2028: sh('echo hi\u2028id'),
      protoCommand: `return ctx.manager.invoke('shell', ${parsed('{"__proto__": {"command": "id"}}')})`,
      protoShadowed: `return (await ctx.manager.invoke('shell', ${parsed('{"command": "echo hi", "timeoutMs": 5000, "__proto__": {"command": "id"}}')})).stdout`,
      cwdEscape: "return ctx.manager.invoke('shell', { command: 'echo hi', cwd: 'skills/../..' })",
    }, { 'allowed-tools': 'Bash(echo:*)' });
    for (const k of Object.keys(out).filter((k) => !k.startsWith('proto'))) assert.equal(code(out[k]), 'E_ALLOWED_TOOLS', `${k}: ${out[k]}`);
    // A `__proto__` key in args is refused outright, wherever it is.
    assert.equal(code(out.protoCommand), 'E_UNTRUSTED_REF', out.protoCommand);
    assert.equal(code(out.protoShadowed), 'E_UNTRUSTED_REF', out.protoShadowed);
  });

  test('error messages of failed executions do not pin host memory past the budget (the trace stays small)', async (t) => {
    const { invokeWithTrace } = await import('../agent-helpers.ts');
    const ws = attackWorkspace(t, { hog: { model: { sandbox: { hostMb: 1 } }, turns: [{ invoke: "ctx.manager.fail('x'.repeat(8000000))" }, { invoke: "throw new Error('y'.repeat(8000000))" }, { text: 'done' }] } });
    const rt = await runtimeIn(t, ws);
    const run = await invokeWithTrace(rt, 'hog');
    assert.equal(run.value, 'done');
    assert.ok(JSON.stringify(run.trace).length < 1 << 20, 'the trace holds megabytes of error text');
  });
});
