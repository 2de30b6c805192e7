import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ivm from 'isolated-vm';
import { Sandbox, type Isolation, type SandboxHost, type SandboxOptions, type SandboxResult } from '../src/sandbox/sandbox.ts';
import { sandboxProcessPid } from '../src/sandbox/process.ts';
import { AgentAppsError } from '../src/core/errors.ts';

// A host that records every call and answers from `answers` (a function per method).
type Answer = (args: unknown[]) => unknown;
function recordingHost(answers: Record<string, Answer> = {}): SandboxHost & { calls: [string, unknown[]][] } {
  const calls: [string, unknown[]][] = [];
  return {
    calls,
    async call(method, args) {
      calls.push([method, args]);
      const answer = answers[method];
      return answer ? answer(args) : null;
    },
  };
}

const neverHost: SandboxHost = { call: () => new Promise(() => {}) };

async function withSandboxIn<T>(isolation: Isolation, opts: SandboxOptions, fn: (sandbox: Sandbox) => Promise<T>): Promise<T> {
  const sandbox = await Sandbox.create({ isolation, ...opts });
  try {
    return await fn(sandbox);
  } finally {
    sandbox.dispose();
  }
}

function value(result: SandboxResult): unknown {
  assert.ok(result.ok, `expected success, got ${JSON.stringify(result)}`);
  return result.value;
}

function failed(result: SandboxResult): { code: string; message: string; line?: number; column?: number } {
  assert.ok(!result.ok, `expected failure, got ${JSON.stringify(result)}`);
  return result.error;
}

// Strings that would betray the host's file system in anything the sandbox can see.
const HOST_PATH_MARKERS = [import.meta.dirname, '/work/', 'node_modules', 'sandbox.ts', 'sandbox.test.ts', 'node:internal'];
function assertNoHostPaths(text: string): void {
  for (const marker of HOST_PATH_MARKERS) assert.ok(!text.includes(marker), `'${marker}' leaked into: ${text}`);
}

// Every behaviour holds in both modes: the isolate in this process, or in the shared child process.
for (const isolation of ['inline', 'process'] as const) {
describe(`${isolation} isolation`, () => {
  const create = (opts: SandboxOptions = {}): Promise<Sandbox> => Sandbox.create({ isolation, ...opts });
  const withSandbox = <T>(opts: SandboxOptions, fn: (sandbox: Sandbox) => Promise<T>): Promise<T> => withSandboxIn(isolation, opts, fn);

  // ---- the bridge --------------------------------------------------------------------------------

  test('a host call carries its arguments to the host and its JSON result back to the code', async () => {
    const host = recordingHost({ invoke: (args) => ({ count: (args[1] as { text: string }).text.split(' ').length }) });
    await withSandbox({}, async (sandbox) => {
      const result = await sandbox.run(
        `const n = await ctx.manager.invoke('wordcount', { text: 'a b c' }, { trace: true });
         return { n, echo: ctx.args };`,
        host,
        { args: { who: 'me' } },
      );
      assert.deepEqual(value(result), { n: { count: 3 }, echo: { who: 'me' } });
      assert.deepEqual(host.calls, [['invoke', ['wordcount', { text: 'a b c' }, { trace: true }]]]);
    });
  });

  test('every ctx.manager method reaches the host under its own name, trailing undefined arguments dropped', async () => {
    const host = recordingHost({ get: () => 7 });
    await withSandbox({}, async (sandbox) => {
      const result = await sandbox.run(
        `await ctx.manager.invoke('noop');
         await ctx.manager.set('a.b', [1]);
         const got = await ctx.manager.get('a.b');
         await ctx.manager.log({ type: 'note' });
         await ctx.manager.fail(Object.assign(new Error('bad input'), { code: 'E_INPUT' }));
         await ctx.manager.fail('plain reason');
         await ctx.manager.abort('no');
         await ctx.manager.finish({ done: got });`,
        host,
      );
      value(result);
      assert.deepEqual(host.calls, [
        ['invoke', ['noop']],
        ['set', ['a.b', [1]]],
        ['get', ['a.b']],
        ['log', [{ type: 'note' }]],
        ['fail', [{ message: 'bad input', code: 'E_INPUT' }]],
        ['fail', ['plain reason']],
        ['abort', ['no']],
        ['finish', [{ done: 7 }]],
      ]);
    });
  });

  test('a host result that is not JSON data reaches the code as JSON (functions dropped, dates as strings)', async () => {
    const host = recordingHost({ get: () => ({ fn: () => 1, when: new Date(0), list: [1, undefined] }) });
    await withSandbox({}, async (sandbox) => {
      const result = await sandbox.run(`return await ctx.manager.get('x');`, host);
      assert.deepEqual(value(result), { when: '1970-01-01T00:00:00.000Z', list: [1, null] });
    });
  });

  test('arguments that are not JSON data reject the call inside the sandbox', async () => {
    await withSandbox({}, async (sandbox) => {
      const host = recordingHost();
      const result = await sandbox.run(
        `try { await ctx.manager.set('x', 10n); } catch (e) { return e.name + ': ' + e.message; }`,
        host,
      );
      assert.match(value(result) as string, /^TypeError: ctx\.manager\.set: arguments must be JSON data/);
      assert.equal(host.calls.length, 0);
    });
  });

  test('a host error arrives as an Error with its message and code, and no host stack', async () => {
    function deepInTheHost(): never {
      throw new AgentAppsError('E_NOPE', 'not allowed here');
    }
    const host: SandboxHost = {
      async call(method) {
        if (method === 'get') deepInTheHost();
        throw 'a thrown string';
      },
    };
    await withSandbox({}, async (sandbox) => {
      const result = await sandbox.run(
        `const out = [];
         try { await ctx.manager.get('x'); } catch (e) {
           out.push(e instanceof Error, e.message, e.code, String(e.stack), Object.getOwnPropertyNames(e).join());
         }
         try { await ctx.manager.set('x', 1); } catch (e) { out.push(e instanceof Error, e.message, e.code === undefined); }
         return out;`,
        host,
      );
      const [isError, message, code, stack, names, isError2, message2, noCode] = value(result) as [boolean, string, string, string, string, boolean, string, boolean];
      assert.equal(isError, true);
      assert.equal(message, 'not allowed here');
      assert.equal(code, 'E_NOPE');
      assert.ok(!stack.includes('deepInTheHost'), stack);
      assertNoHostPaths(stack);
      assert.equal(names, 'stack,message,code');
      assert.deepEqual([isError2, message2, noCode], [true, 'a thrown string', true]);
    });
  });

  test('an uncaught host error fails the run with the host error\'s code and message', async () => {
    const host: SandboxHost = { call: async () => { throw new AgentAppsError('E_ALLOWED_TOOLS', "'rm' is not in allowed-tools"); } };
    await withSandbox({}, async (sandbox) => {
      const error = failed(await sandbox.run(`await ctx.manager.invoke('rm');`, host));
      assert.equal(error.code, 'E_ALLOWED_TOOLS');
      assert.equal(error.message, "'rm' is not in allowed-tools");
      assert.equal(error.line, undefined, 'a host error has no line in the agent code');
    });
  });

  test('an unawaited host call made before the code returns still reaches the host', async () => {
    const host = recordingHost();
    await withSandbox({}, async (sandbox) => {
      const result = await sandbox.run(`ctx.manager.finish({ answer: 42 }); ctx.manager.log('bye'); return 'returned';`, host);
      assert.equal(value(result), 'returned');
      assert.deepEqual(host.calls, [['finish', [{ answer: 42 }]], ['log', ['bye']]]);
    });
  });

  test('a promise rejection nobody handles fails the run, keeping the host error\'s code', async () => {
    const host: SandboxHost = { call: async () => { throw new AgentAppsError('E_UNTRUSTED_REF', 'refs must be tool names'); } };
    await withSandbox({}, async (sandbox) => {
      const orphan = failed(await sandbox.run(`ctx.manager.invoke('file:///x.js'); await ctx.manager.get('y').catch(() => {}); return 1;`, host));
      assert.deepEqual(orphan, { code: 'E_UNTRUSTED_REF', message: 'refs must be tool names (unhandled promise rejection)' });
      const own = failed(await sandbox.run(`\n(async () => { await null; throw new RangeError('late'); })(); return 1;`, host));
      assert.deepEqual(own, { code: 'E_SKILL', message: 'RangeError: late (unhandled promise rejection)', line: 2, column: 34 });
      assert.equal(value(await sandbox.run(`return 'still usable';`, host)), 'still usable');
    });
  });

  test('a host call still in flight when the run ends is dropped, and the sandbox keeps working', async () => {
    let release!: (v: unknown) => void;
    const slow = new Promise((resolve) => (release = resolve));
    const host: SandboxHost = { call: (method) => (method === 'invoke' ? slow : Promise.resolve('fast')) };
    await withSandbox({}, async (sandbox) => {
      assert.equal(value(await sandbox.run(`ctx.manager.invoke('slow').then(v => { memory.late = v; }); return 1;`, host)), 1);
      release('late answer');
      await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(value(await sandbox.run(`return [memory.late ?? 'never delivered', await ctx.manager.get('x')];`, host)), ['never delivered', 'fast']);
    });
  });

  test('target is ctx outside middleware mode; in middleware mode target.manager.next() calls the host', async () => {
    const host = recordingHost({ next: () => 'downstream' });
    await withSandbox({}, async (sandbox) => {
      assert.deepEqual(value(await sandbox.run(`return [target === ctx, typeof target.manager.next];`, host)), [true, 'undefined']);
      assert.equal(value(await sandbox.run(`return await target.manager.next();`, host, { middleware: true })), 'downstream');
      assert.deepEqual(host.calls, [['next', []]]);
    });
  });

  test('ctx, ctx.manager and ctx.args are frozen', async () => {
    await withSandbox({}, async (sandbox) => {
      const result = await sandbox.run(
        `'use strict';
         const attempts = [() => { ctx.args.list.push(2); }, () => { ctx.manager.invoke = null; }, () => { ctx.extra = 1; }, () => { ctx = {}; }];
         return attempts.map(f => { try { f(); return 'changed'; } catch (e) { return e.name; } });`,
        recordingHost(),
        { args: { list: [1] } },
      );
      assert.deepEqual(value(result), ['TypeError', 'TypeError', 'TypeError', 'TypeError']);
    });
  });

  // ---- running code --------------------------------------------------------------------------------

  test('top-level await works and the last return value is the result (null when none)', async () => {
    await withSandbox({}, async (sandbox) => {
      assert.equal(value(await sandbox.run(`const x = await Promise.resolve(20); return x + 22;`, recordingHost())), 42);
      assert.equal(value(await sandbox.run(`await null;`, recordingHost())), null);
    });
  });

  test('an error thrown by the code reports its code (default E_SKILL), message and line', async () => {
    await withSandbox({}, async (sandbox) => {
      const plain = failed(await sandbox.run(`const a = 1;\nawait null;\nthrow new Error('boom');`, recordingHost()));
      assert.deepEqual(plain, { code: 'E_SKILL', message: 'boom', line: 3, column: 7 });
      const typed = failed(await sandbox.run(`\nnull.x;`, recordingHost()));
      assert.equal(typed.code, 'E_SKILL');
      assert.match(typed.message, /^TypeError: Cannot read properties of null/);
      assert.equal(typed.line, 2);
      const coded = failed(await sandbox.run(`throw Object.assign(new Error('mine'), { code: 'E_MINE' });`, recordingHost()));
      assert.equal(coded.code, 'E_MINE');
      const thrownString = failed(await sandbox.run(`throw 'just a string';`, recordingHost()));
      assert.deepEqual(thrownString, { code: 'E_SKILL', message: 'just a string' });
    });
  });

  test("stack traces inside the sandbox show the code's own line numbers", async () => {
    await withSandbox({}, async (sandbox) => {
      const stack = value(await sandbox.run(`// line 1\nconst e = new Error('here'); // line 2\nreturn e.stack;`, recordingHost())) as string;
      assert.match(stack, /file:\/\/\/agent\.js:2:11/);
    });
  });

  test('a syntax error reports E_SKILL with the line', async () => {
    await withSandbox({}, async (sandbox) => {
      const error = failed(await sandbox.run(`const ok = 1;\nconst = 2;`, recordingHost()));
      assert.equal(error.code, 'E_SKILL');
      assert.match(error.message, /^SyntaxError: /);
      assert.equal(error.line, 2);
    });
  });

  test('a return value that is not JSON data fails the run; functions become null', async () => {
    await withSandbox({}, async (sandbox) => {
      assert.match(failed(await sandbox.run(`return 10n;`, recordingHost())).message, /return value is not JSON data/);
      assert.equal(value(await sandbox.run(`return () => 1;`, recordingHost())), null);
    });
  });

  test('console output is captured like Node prints it, on success and on failure', async () => {
    await withSandbox({}, async (sandbox) => {
      const ok = await sandbox.run(
        `console.log('plain', 1, -0, 2n, null, undefined, true);
         console.info({ a: 1, 'b-c': 'x', nested: { deep: { deeper: { deepest: 1 } } } });
         console.warn([1, 'two', [3]], new Map([['k', 1]]), new Set([1]));
         console.error('%s has %d items', 'list', 3);
         const loop = { name: 'loop' }; loop.self = loop;
         console.debug(loop, function named() {}, Symbol('s'));`,
        recordingHost(),
      );
      assert.deepEqual(ok.logs, [
        'plain 1 -0 2n null undefined true',
        "{ a: 1, 'b-c': 'x', nested: { deep: { deeper: [Object] } } }",
        "[ 1, 'two', [ 3 ] ] Map(1) { 'k' => 1 } Set(1) { 1 }",
        'list has 3 items',
        "{ name: 'loop', self: [Circular] } [Function: named] Symbol(s)",
      ]);
      const bad = await sandbox.run(`console.log('before'); throw new Error('after');`, recordingHost());
      assert.deepEqual(bad.logs, ['before']);
    });
  });

  test('console output past the per-execution limit is truncated with a note', async () => {
    await withSandbox({}, async (sandbox) => {
      const result = await sandbox.run(`for (let i = 0; i < 5000; i++) console.log(i);`, recordingHost());
      assert.equal(result.logs.length, 1001);
      assert.match(result.logs.at(-1)!, /console output truncated/);
    });
  });

  test('setTimeout and clearTimeout work inside an execution, backed by host timers', async () => {
    await withSandbox({}, async (sandbox) => {
      const result = await sandbox.run(
        `const order = [];
         const cancelled = setTimeout(() => order.push('cancelled'), 5);
         clearTimeout(cancelled);
         await new Promise(resolve => setTimeout(() => { order.push('fired'); resolve(); }, 10));
         return order;`,
        recordingHost(),
      );
      assert.deepEqual(value(result), ['fired']);
    });
  });

  test('runs on one sandbox execute one at a time, in call order', async () => {
    await withSandbox({}, async (sandbox) => {
      const host = recordingHost();
      const results = await Promise.all([
        sandbox.run(`await ctx.manager.log(1); memory.order = [1]; return 1;`, host),
        sandbox.run(`memory.order.push(2); return 2;`, host),
      ]);
      assert.deepEqual(results.map(value), [1, 2]);
      assert.deepEqual(sandbox.memorySnapshot(), { order: [1, 2] });
    });
  });

  // ---- memory ------------------------------------------------------------------------------------

  test('memory persists across runs, seeded from options, and a JSON snapshot is kept', async () => {
    await withSandbox({ memory: { seeded: true } }, async (sandbox) => {
      assert.deepEqual(sandbox.memorySnapshot(), { seeded: true });
      value(await sandbox.run(`memory.count = 1; memory.fn = () => 'closure'; memory.map = new Map(); memory.cycle = {}; memory.cycle.me = memory.cycle;`, recordingHost()));
      const result = await sandbox.run(`memory.count++; return [memory.seeded, memory.count, memory.fn(), memory.map instanceof Map];`, recordingHost());
      assert.deepEqual(value(result), [true, 2, 'closure', true]);
      assert.deepEqual(sandbox.memorySnapshot(), { seeded: true, count: 2 }, 'values that are not JSON data are left out');
    });
  });

  test('memory survives a timeout: the fresh isolate is restored from the last snapshot', async () => {
    await withSandbox({ timeoutMs: 150 }, async (sandbox) => {
      value(await sandbox.run(`memory.kept = 'yes'; memory.fn = () => 1;`, recordingHost()));
      assert.equal(failed(await sandbox.run(`memory.kept = 'lost'; while (true) {}`, recordingHost())).code, 'E_SANDBOX');
      assert.deepEqual(value(await sandbox.run(`return [memory.kept, typeof memory.fn];`, recordingHost())), ['yes', 'undefined']);
    });
  });

  // ---- limits --------------------------------------------------------------------------------------

  test('a synchronous infinite loop is stopped with E_SANDBOX and the sandbox then runs new code', async () => {
    await withSandbox({ timeoutMs: 100 }, async (sandbox) => {
      // No clock: the loop never ends by itself, so an E_SANDBOX naming the 100 ms timeout is the kill.
      const error = failed(await sandbox.run(`console.log('spinning'); while (true) {}`, recordingHost()));
      assert.equal(error.code, 'E_SANDBOX');
      assert.match(error.message, /timed out after 100 ms/);
      assert.equal(value(await sandbox.run(`return 'alive';`, recordingHost())), 'alive');
    });
  });

  test('an infinite loop after an awaited host call is stopped too', async () => {
    await withSandbox({ timeoutMs: 150 }, async (sandbox) => {
      const host = recordingHost({ get: () => 1 });
      // No clock: the loop never ends by itself, so an E_SANDBOX naming the 150 ms timeout is the kill.
      const error = failed(await sandbox.run(`await ctx.manager.get('x'); while (true) {}`, host));
      assert.equal(error.code, 'E_SANDBOX');
      assert.match(error.message, /timed out after 150 ms/);
      assert.equal(value(await sandbox.run(`return await ctx.manager.get('x');`, host)), 1);
    });
  });

  test('an infinite loop after the code has returned is stopped too', async () => {
    await withSandbox({ timeoutMs: 150 }, async (sandbox) => {
      const error = failed(await sandbox.run(`Promise.resolve().then(() => { while (true) {} }); return 1;`, recordingHost()));
      assert.equal(error.code, 'E_SANDBOX');
      assert.equal(value(await sandbox.run(`return 2;`, recordingHost())), 2);
    });
  });

  test('a promise that never settles ends with an E_SANDBOX timeout instead of hanging', async () => {
    await withSandbox({ timeoutMs: 100 }, async (sandbox) => {
      const error = failed(await sandbox.run(`await new Promise(() => {});`, recordingHost()));
      assert.equal(error.code, 'E_SANDBOX');
      assert.match(error.message, /timed out/);
      const hostNeverAnswers = failed(await sandbox.run(`await ctx.manager.get('x');`, neverHost));
      assert.match(hostNeverAnswers.message, /timed out/);
    });
  });

  test('a memory bomb ends with E_SANDBOX, the host survives and memory is restored', async () => {
    await withSandbox({ memoryMb: 32, timeoutMs: 10_000 }, async (sandbox) => {
      value(await sandbox.run(`memory.before = 'bomb';`, recordingHost()));
      const error = failed(await sandbox.run(`const a = []; while (true) a.push(new Array(1e6).fill(1));`, recordingHost()));
      assert.equal(error.code, 'E_SANDBOX');
      assert.match(error.message, /out of memory.*32 MB/);
      const afterAwait = failed(await sandbox.run(`await ctx.manager.get('x'); const s = []; while (true) s.push('x'.repeat(1e5) + s.length);`, recordingHost()));
      assert.match(afterAwait.message, /out of memory/);
      assert.equal(value(await sandbox.run(`return memory.before;`, recordingHost())), 'bomb');
    });
  });

  test('more pending host calls than the cap end the run with E_SANDBOX; up to the cap is fine', async () => {
    const host: SandboxHost = { call: () => new Promise((resolve) => setTimeout(() => resolve(1), 5)) };
    await withSandbox({ maxPendingCalls: 10 }, async (sandbox) => {
      const within = await sandbox.run(`return (await Promise.all(Array.from({ length: 10 }, () => ctx.manager.get('x')))).length;`, host);
      assert.equal(value(within), 10);
      const over = failed(await sandbox.run(`await Promise.all(Array.from({ length: 11 }, () => ctx.manager.get('x')));`, host));
      assert.equal(over.code, 'E_SANDBOX');
      assert.match(over.message, /too many pending host calls and timers \(limit 10\)/);
      const loop = failed(await sandbox.run(`while (true) ctx.manager.get('x');`, host));
      assert.equal(loop.code, 'E_SANDBOX');
      assert.equal(value(await sandbox.run(`return 'after';`, host)), 'after');
    });
  });

  test('an aborted signal stops the execution with E_ABORTED', async () => {
    await withSandbox({}, async (sandbox) => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('user pressed ctrl-c')), 50);
      const spinning = failed(await sandbox.run(`while (true) {}`, recordingHost(), { signal: controller.signal }));
      assert.deepEqual(spinning, { code: 'E_ABORTED', message: 'aborted: user pressed ctrl-c' });
      const waiting = new AbortController();
      setTimeout(() => waiting.abort(), 20);
      assert.equal(failed(await sandbox.run(`await ctx.manager.get('x');`, neverHost, { signal: waiting.signal })).code, 'E_ABORTED');
      const host = recordingHost();
      assert.equal(failed(await sandbox.run(`await ctx.manager.get('x');`, host, { signal: AbortSignal.abort() })).code, 'E_ABORTED');
      assert.equal(host.calls.length, 0, 'an already aborted signal runs nothing');
      assert.equal(value(await sandbox.run(`return 'next';`, host)), 'next');
    });
  });

  test('an aborted signal also stops a loop that runs after an awaited host call', async () => {
    await withSandbox({ timeoutMs: 20_000 }, async (sandbox) => {
      const host = recordingHost({ get: () => 1 });
      value(await sandbox.run(`memory.kept = 'yes';`, host));
      const controller = new AbortController();
      setTimeout(() => controller.abort('stop'), 50);
      // No clock: the loop never ends and the 20 s timeout would be E_SANDBOX, so E_ABORTED is the abort.
      const error = failed(await sandbox.run(`await ctx.manager.get('x'); memory.kept = 'lost'; while (true) {}`, host, { signal: controller.signal }));
      assert.deepEqual(error, { code: 'E_ABORTED', message: 'aborted: stop' });
      assert.equal(value(await sandbox.run(`return memory.kept;`, host)), 'yes');
    });
  });

  test('dispose is idempotent, ends a running execution, and later runs fail with E_SANDBOX', async () => {
    const sandbox = await create();
    const running = sandbox.run(`await new Promise(() => {});`, recordingHost());
    await new Promise((r) => setTimeout(r, 20));
    sandbox.dispose();
    sandbox.dispose();
    assert.equal(sandbox.disposed, true);
    assert.equal(failed(await running).code, 'E_SANDBOX');
    assert.match(failed(await sandbox.run(`return 1;`, recordingHost())).message, /disposed/);
  });

  test('invalid limits are configuration errors', async () => {
    await assert.rejects(create({ timeoutMs: 0 }), { code: 'E_CONFIG', message: /model\.sandbox\.timeoutMs/ });
    await assert.rejects(create({ memoryMb: 4 }), { code: 'E_CONFIG', message: /model\.sandbox\.memoryMb/ });
  });

  // ---- escapes -----------------------------------------------------------------------------------

  test('ESCAPE: constructor.constructor does not reach the Node process', async () => {
    await withSandbox({}, async (sandbox) => {
      const result = await sandbox.run(
        `const tries = [
           () => constructor.constructor('return process')(),
           () => this.constructor.constructor('return process')(),
           () => ctx.manager.get.constructor('return process')(),
           () => (async () => {}).constructor('return process')(),
         ];
         const outcomes = [];
         for (const t of tries) {
           try { const r = await t(); outcomes.push(typeof r); } catch (e) { outcomes.push(e.name + ': ' + e.message); }
         }
         return outcomes;`,
        recordingHost(),
      );
      assert.deepEqual(value(result), Array(4).fill('ReferenceError: process is not defined'));
    });
  });

  test('ESCAPE: the global object seen through Function shows no host objects', async () => {
    // What a fresh isolated-vm context has, so that the sandbox's extra globals can be listed exactly.
    const isolate = new ivm.Isolate();
    const plain = new Set((await (await isolate.createContext()).eval('Object.getOwnPropertyNames(globalThis).join()')).split(','));
    isolate.dispose();
    await withSandbox({}, async (sandbox) => {
      const result = await sandbox.run(
        `const seen = [Function('return globalThis')(), this.constructor.constructor('return this')(), globalThis];
         return [seen[0] === seen[1] && seen[1] === seen[2], Object.getOwnPropertyNames(seen[0]), Reflect.ownKeys(seen[0]).filter(k => typeof k === 'symbol').map(String)];`,
        recordingHost(),
      );
      const [same, names, symbols] = value(result) as [boolean, string[], string[]];
      assert.equal(same, true);
      for (const hostName of ['require', 'process', 'ivm', 'module', 'exports', 'Buffer', 'global', 'fetch', '_ivm', 'isolatedVm', 'WebAssembly']) {
        assert.ok(!names.includes(hostName), `${hostName} is visible`);
      }
      const extra = names.filter((n) => !plain.has(n)).sort();
      assert.deepEqual(extra, ['clearTimeout', 'ctx', 'memory', 'setTimeout', 'target']);
      assert.deepEqual(symbols, []);
    });
  });

  test('ESCAPE: no isolated-vm Reference, ExternalCopy or Callback is reachable from globals or host results', async () => {
    const host = recordingHost({ get: () => ({ nested: { list: [1, { deep: true }] } }) });
    await withSandbox({ memory: { seed: { a: 1 } } }, async (sandbox) => {
      const result = await sandbox.run(
        `const roots = [globalThis, ctx, target, memory, await ctx.manager.get('x'), ctx.manager.get('y'), console, setTimeout];
         try { await ctx.manager.invoke('x'); } catch (e) { roots.push(e); }
         const ivmNames = /^(Reference|ExternalCopy|Callback|Isolate|Context|Script|Module|NativeModule|Dereference|Copy)$/;
         const ivmMethods = ['derefInto', 'copySync', 'applySync', 'applySyncPromise', 'copyInto', 'getSync', 'setSync', 'release', 'compileScriptSync'];
         const seen = new Set(), found = [];
         const queue = [...roots];
         while (queue.length) {
           const v = queue.shift();
           if (v === null || (typeof v !== 'object' && typeof v !== 'function') || seen.has(v)) continue;
           seen.add(v);
           let keys;
           try { keys = Reflect.ownKeys(v); } catch { continue; }
           for (const k of keys) {
             if (typeof k === 'string' && ivmMethods.includes(k)) found.push('method ' + k);
             const d = Reflect.getOwnPropertyDescriptor(v, k);
             if (!d) continue;
             if ('value' in d) queue.push(d.value);
             if (d.get) { queue.push(d.get); try { queue.push(d.get.call(v)); } catch {} }
             if (d.set) queue.push(d.set);
           }
           const proto = Reflect.getPrototypeOf(v);
           if (proto) queue.push(proto);
           const name = typeof v === 'function' ? v.name : v.constructor && v.constructor.name;
           if (typeof name === 'string' && ivmNames.test(name)) found.push('class ' + name);
         }
         return { visited: seen.size, found };`,
        host,
      );
      const { visited, found } = value(result) as { visited: number; found: string[] };
      assert.deepEqual(found, []);
      assert.ok(visited > 500, `walked only ${visited} objects`);
    });
  });

  test('ESCAPE: polluting Object.prototype with transfer options does not turn host results into References', async () => {
    const host = recordingHost({ get: () => ({ data: { list: [1, 2] } }), invoke: () => 'text' });
    await withSandbox({}, async (sandbox) => {
      const pollute = await sandbox.run(
        `for (const key of ['reference', 'copy', 'externalCopy', 'promise', 'release', 'transferIn']) Object.prototype[key] = true;
         Object.prototype.result = { reference: true };
         Object.prototype.arguments = { reference: true };
         Object.prototype.timeout = 1;
         Array.prototype.reference = true;
         const got = await ctx.manager.get('x');
         const text = await ctx.manager.invoke('t');
         return {
           own: Object.getOwnPropertyNames(got), protoIsObject: Object.getPrototypeOf(got) === Object.prototype,
           deref: typeof got.derefInto, listIsArray: Array.isArray(got.data.list), text, textType: typeof text, got,
         };`,
        host,
      );
      const out = value(pollute) as Record<string, unknown>;
      assert.deepEqual(out.own, ['data']);
      assert.equal(out.protoIsObject, true);
      assert.equal(out.deref, 'undefined');
      assert.equal(out.listIsArray, true);
      assert.equal(out.textType, 'string');
      assert.deepEqual(out.got, { data: { list: [1, 2] } });
      // The pollution persists in the context; later executions still only exchange JSON.
      const later = await sandbox.run(`const v = await ctx.manager.get('again'); memory.v = v; return { v, same: Object.getPrototypeOf(v) === Object.prototype };`, host);
      const laterValue = value(later);
      assert.ok(!(laterValue instanceof ivm.Reference));
      assert.deepEqual(laterValue, { v: { data: { list: [1, 2] } }, same: true });
      assert.deepEqual(sandbox.memorySnapshot(), { v: { data: { list: [1, 2] } } });
      assert.deepEqual(host.calls.map(([method]) => method), ['get', 'invoke', 'get']);
    });
  });

  test('ESCAPE: the internal send and deliver functions cannot be found by name', async () => {
    await withSandbox({}, async (sandbox) => {
      const result = await sandbox.run(
        `const names = ['send', 'deliver', 'dispatch', 'bridge', 'exec', 'call', 'notify', 'complete', 'pending',
                        '$0', '$1', '_send', '__send', '__deliver', '_deliver', 'ivm', 'host', 'reference', 'callback'];
         return names.map(n => {
           let viaEval;
           try { viaEval = typeof eval(n); } catch (e) { viaEval = e.name; }
           return [n, typeof globalThis[n], viaEval];
         }).filter(([, g, e]) => g !== 'undefined' || e !== 'ReferenceError');`,
        recordingHost(),
      );
      assert.deepEqual(value(result), []);
    });
  });

  test("ESCAPE: Error.prepareStackTrace cannot pull the bridge's functions out of stack frames", async () => {
    await withSandbox({}, async (sandbox) => {
      const result = await sandbox.run(
        `const grabbed = [];
         Error.prepareStackTrace = (e, frames) => { for (const f of frames) { grabbed.push(f.getFunction(), f.getThis()); } return ''; };
         const probe = () => new Error('probe').stack;
         probe();
         try { await ctx.manager.get({ toJSON() { probe(); return 1; } }); } catch {}
         await ctx.manager.get('x');
         probe();
         console.log({ get x() { probe(); return 1; } }, { toString() { probe(); return ''; } });
         Error.prepareStackTrace = undefined;
         return grabbed.filter(f => typeof f === 'function').map(f => f.name);`,
        recordingHost(),
      );
      // Only the code's own (sloppy-mode) functions may show up.
      for (const name of value(result) as string[]) assert.ok(['probe', 'toJSON', ''].includes(name), `got ${name}`);
    });
  });

  test('ESCAPE: host errors carry no file paths into the sandbox or the result', async () => {
    const host: SandboxHost = {
      async call() {
        const error = new Error('failed inside the host');
        (error as Error & { code: string }).code = 'E_HOST';
        return Promise.reject(error);
      },
    };
    await withSandbox({}, async (sandbox) => {
      const seen = await sandbox.run(
        `try { await ctx.manager.invoke('x'); } catch (e) {
           return [String(e.stack), String(e), JSON.stringify(Object.getOwnPropertyDescriptors(e)), String(e.cause)];
         }`,
        host,
      );
      for (const text of value(seen) as string[]) assertNoHostPaths(text);
      const uncaught = await sandbox.run(`await ctx.manager.invoke('x');`, host);
      assertNoHostPaths(JSON.stringify(uncaught));
      assert.deepEqual(failed(uncaught), { code: 'E_HOST', message: 'failed inside the host' });
    });
  });
});
}

// ---- process isolation: what only a separate process can contain ---------------------------------

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const end = performance.now() + ms;
  while (!check()) {
    if (performance.now() > end) assert.fail(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Runs a node process to its end (killed after 30 s, only to stop a hang): exit code and signal, output, and how long it took. */
function runNode(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; ms: number }> {
  const t0 = performance.now();
  const env = { ...process.env, ...opts.env };
  delete env.NODE_TEST_CONTEXT;
  delete env.NODE_OPTIONS;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: opts.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const kill = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(kill);
      resolve({ code, signal, stdout, stderr, ms: performance.now() - t0 });
    });
  });
}

const MAP_BOMB = `const m = new Map(); for (let i = 0; ; i++) m.set(i, { i });`;
const CRASHES: Record<string, string> = {
  'a Map grown without bound': MAP_BOMB,
  'an object used as a growing dictionary': `const o = {}; for (let i = 0; ; i++) o['k' + i] = i;`,
  'new Array(2 ** 31).fill(0)': `new Array(2 ** 31).fill(0);`,
  'a Map grown after an awaited host call': `await ctx.manager.get('x'); ${MAP_BOMB}`,
};
const CRASHED = /^the sandbox process crashed \(.+\): memory or an engine limit was exceeded; the next run starts a fresh sandbox/;

describe('process isolation contains what would abort this process', () => {
  for (const [what, code] of Object.entries(CRASHES)) {
    test(`${what}: E_SANDBOX, this process survives, the next run works with memory restored`, async () => {
      await withSandboxIn('process', { memoryMb: 16, timeoutMs: 10_000 }, async (sandbox) => {
        const host = recordingHost({ get: () => 1 });
        value(await sandbox.run(`memory.before = 'kept'; memory.fn = () => 1;`, host));
        const pid = sandboxProcessPid()!;
        assert.ok(pid > 0 && pid !== process.pid);
        const error = failed(await sandbox.run(`memory.before = 'lost'; ${code}`, host));
        assert.equal(error.code, 'E_SANDBOX');
        assert.match(error.message, CRASHED);
        await until('the crashed process is gone', () => !alive(pid));
        assert.deepEqual(value(await sandbox.run(`return [memory.before, typeof memory.fn, await ctx.manager.get('x')];`, host)), ['kept', 'undefined', 1]);
        assert.notEqual(sandboxProcessPid(), pid, 'a new sandbox process');
        assert.deepEqual(sandbox.memorySnapshot(), { before: 'kept' });
      });
    });
  }

  test('every run in flight on the crashed process reports E_SANDBOX, and each sandbox then works again', async () => {
    await withSandboxIn('process', { timeoutMs: 20_000 }, async (bystander) => {
      await withSandboxIn('process', { memoryMb: 16, timeoutMs: 20_000 }, async (crashing) => {
        const host = recordingHost();
        value(await bystander.run(`memory.mine = 1;`, host));
        const waiting = bystander.run(`console.log('waiting'); await new Promise(() => {});`, host);
        const error = failed(await crashing.run(MAP_BOMB, host));
        assert.match(error.message, CRASHED);
        const victim = failed(await waiting);
        assert.equal(victim.code, 'E_SANDBOX');
        assert.match(victim.message, CRASHED);
        assert.equal(value(await bystander.run(`return memory.mine;`, host)), 1);
        assert.equal(value(await crashing.run(`return 'fine';`, host)), 'fine');
      });
    });
  });

  test('a sandbox process that dies between runs is replaced without the caller noticing', async () => {
    await withSandboxIn('process', {}, async (sandbox) => {
      value(await sandbox.run(`memory.n = 41;`, recordingHost()));
      const pid = sandboxProcessPid()!;
      process.kill(pid, 'SIGKILL');
      await until('the killed process is gone', () => !alive(pid));
      assert.equal(value(await sandbox.run(`return memory.n + 1;`, recordingHost())), 42);
      const fresh = await Sandbox.create({ isolation: 'process' });
      assert.equal(value(await fresh.run(`return 'new';`, recordingHost())), 'new');
      fresh.dispose();
    });
  });

  test('a sandbox process that stops answering is replaced once a run is past its time limit', async () => {
    await withSandboxIn('process', { timeoutMs: 200 }, async (sandbox) => {
      value(await sandbox.run(`memory.n = 1;`, recordingHost()));
      const pid = sandboxProcessPid()!;
      const running = sandbox.run(`await new Promise(() => {});`, recordingHost());
      await new Promise((r) => setTimeout(r, 20));
      process.kill(pid, 'SIGSTOP');
      const error = failed(await running);
      assert.deepEqual(error, { code: 'E_SANDBOX', message: 'execution timed out after 200 ms (model.sandbox.timeoutMs)' });
      await until('the stopped process is gone', () => !alive(pid));
      assert.equal(value(await sandbox.run(`return memory.n;`, recordingHost())), 1);
    });
  });

  test('isolation must be process or inline', async () => {
    await assert.rejects(Sandbox.create({ isolation: 'thread' as Isolation }), { code: 'E_CONFIG', message: /model\.sandbox\.isolation must be 'process' or 'inline'/ });
    const sandbox = await Sandbox.create();
    assert.ok(['process', 'inline'].includes(sandbox.isolation));
    sandbox.dispose();
  });

  test('the sandbox process keeps nothing alive, writes nothing to stdout, and ends with its parent', async () => {
    const script = `
      import { Sandbox } from ${JSON.stringify(path.join(import.meta.dirname, '..', 'src', 'sandbox', 'sandbox.ts'))};
      import { sandboxProcessPid } from ${JSON.stringify(path.join(import.meta.dirname, '..', 'src', 'sandbox', 'process.ts'))};
      const host = { call: async () => 1 };
      const sandbox = await Sandbox.create({ isolation: 'process', memoryMb: 16 });
      const logged = await sandbox.run("console.log('from the sandbox'); return await ctx.manager.get('x');", host);
      const crashed = await sandbox.run(${JSON.stringify(MAP_BOMB)}, host);
      const after = await sandbox.run('return 2;', host);
      process.stdout.write(JSON.stringify({ logged, crashed: crashed.ok, after: after.ok && after.value, pid: sandboxProcessPid() }) + '\\n');
      // not disposed: the live sandbox process must not keep this process running
    `;
    const run = await runNode(['--input-type=module', '-e', script]);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.split('\n').filter(Boolean);
    assert.equal(lines.length, 1, `stdout carries only the result: ${run.stdout}`);
    const out = JSON.parse(lines[0]!) as { logged: SandboxResult; crashed: boolean; after: number; pid: number };
    assert.deepEqual(out.logged, { ok: true, value: 1, logs: ['from the sandbox'] });
    assert.deepEqual([out.crashed, out.after], [false, 2]);
    assert.ok(!/CALL_AND_RETRY_LAST|Heap statistics/.test(run.stderr), "the crashed process's report stays out of the parent's output");
    assert.equal(run.signal, null, 'exited by itself, not killed by the 30 s hang bound');
    await until('the sandbox process has ended with its parent', () => !alive(out.pid), 3000);
  });

  test('a CLI agent run exits promptly once done, with only its result on stdout; a bad model.sandbox.isolation is E_CONFIG', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-sandbox-home-'));
    try {
      const run = await runNode([path.join(import.meta.dirname, '..', 'bin', 'agent-apps.js'), '--set', 'model.sandbox.isolation=process', 'run', 'summarize', '--text', 'x'], {
        cwd: path.join(import.meta.dirname, '..', 'examples', 'hello'),
        env: { AGENT_APPS_HOME: home, AGENT_APPS_PATH: undefined, NO_COLOR: '1' },
      });
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(JSON.parse(run.stdout), { words: 1, summary: 'x' });
      assert.equal(run.signal, null, 'exited by itself, not killed by the 30 s hang bound');
      const bad = await runNode([path.join(import.meta.dirname, '..', 'bin', 'agent-apps.js'), '--set', 'model.sandbox.isolation=thread', 'run', 'summarize', '--text', 'x'], {
        cwd: path.join(import.meta.dirname, '..', 'examples', 'hello'),
        env: { AGENT_APPS_HOME: home, AGENT_APPS_PATH: undefined, NO_COLOR: '1' },
      });
      assert.equal(bad.code, 2);
      // The place first (SPEC: errors with a place): the --set level that gave the value, then the rule.
      assert.match(bad.stderr, /E_CONFIG.*--set model\.sandbox\.isolation: must be one of "process", "inline"/);
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});
