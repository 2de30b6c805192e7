// A build while agent-apps runs from the same package (docs/ci.md, "Building"): scripts/build.js
// builds into a temporary folder and renames it onto dist/ at the end, so an `mcp serve` started
// from dist/ (as an MCP client starts it) keeps answering — including calls that load a module of
// dist/ it had not loaded yet — and a command started meanwhile runs; afterwards `prepare` finds
// the build current and does not build again. All in a copy of the checkout (test/package-helpers.ts):
// this checkout's dist/ is never rebuilt by a test. The build is `npm run build` from a fresh
// shell, whose `node` is the system's (v20 here): it runs itself on .node24/ (scripts/on-node24.js).
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { SKIP_PACKAGE_TESTS, checkoutCopy, freshEnv, helloWorkspace, olderNode, run, tempDir, type Run } from './package-helpers.ts';

const OLD_NODE = olderNode();

function ok(r: Run, what: string): void {
  assert.equal(r.code, 0, `${what} exited ${r.code ?? r.signal}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
}

describe('npm run build while agent-apps runs from the package', { skip: SKIP_PACKAGE_TESTS, timeout: 300_000 }, () => {
  const home = tempDir('agent-apps-build-home-');
  let root: string;
  let ws: string;
  // A fresh shell: the system's Node when it is older than 24 and .node24/ is there to run on.
  let shell: NodeJS.ProcessEnv;

  before(async () => {
    root = checkoutCopy('agent-apps-build-pkg-');
    ws = helloWorkspace();
    shell = freshEnv(home, { withNode24: !(OLD_NODE && fs.existsSync(path.join(root, '.node24'))) });
    // dist/ as built from these sources: the checkout's copy when current, else a build.
    ok(await run(process.execPath, [path.join(root, 'scripts', 'build.js'), '--if-stale'], { cwd: root, env: shell, timeoutMs: 240_000 }), 'build --if-stale');
  });

  test('mcp serve answers every call and a command started meanwhile runs, before, during and after the swap', async () => {
    const stampBefore = fs.readFileSync(path.join(root, 'dist', '.build-stamp'), 'utf8');
    const transport = new StdioClientTransport({ command: process.execPath, args: [path.join(root, 'bin', 'agent-apps.js'), 'mcp', 'serve'], cwd: ws, env: { ...freshEnv(home, { withNode24: true }), NO_COLOR: '1' } as Record<string, string>, stderr: 'pipe' });
    let serverErr = '';
    transport.stderr?.on('data', (d: Buffer) => (serverErr += d.toString('utf8')));
    const client = new Client({ name: 'agent-apps-build-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const entry = await client.callTool({ name: 'probe', arguments: {} });
      assert.equal(entry.isError, undefined, JSON.stringify(entry));
      assert.match(JSON.stringify(entry.content), /dist\/index\.js/, 'the server runs from dist/');

      // Calls one after another until the build has ended and a second more: each greets, and
      // each loads dist/core/version.js afresh. Commands are started alongside, one at a time.
      const failures: string[] = [];
      let calls = 0;
      let commands = 0;
      let buildDone = false;
      let doneAt = 0;
      const caller = (async () => {
        while (!buildDone || performance.now() - doneAt < 1500) {
          const [greet, probe] = await Promise.all([
            client.callTool({ name: 'greet', arguments: { name: 'Ada' } }).catch((err: Error) => ({ isError: true, content: String(err) })),
            client.callTool({ name: 'probe', arguments: { load: './core/version.js' } }).catch((err: Error) => ({ isError: true, content: String(err) })),
          ]);
          calls += 2;
          if (greet.isError || !JSON.stringify(greet.content).includes('Hello, Ada.')) failures.push(`greet: ${JSON.stringify(greet.content)}`);
          if (probe.isError) failures.push(`probe: ${JSON.stringify(probe.content)}`);
          await sleep(20);
        }
      })();
      const commander = (async () => {
        while (!buildDone) {
          const r = await run(process.execPath, [path.join(root, 'bin', 'agent-apps.js'), '--cwd', ws, 'run', 'greet', '--name', 'Bo'], { cwd: ws, env: freshEnv(home, { withNode24: true }) });
          commands++;
          if (r.code !== 0 || r.stdout !== 'Hello, Bo.\n') failures.push(`agent-apps run greet: exit ${r.code}: ${r.stdout}${r.stderr}`);
        }
      })();
      const build = await run('npm', ['run', 'build', '--silent'], { cwd: root, env: shell, timeoutMs: 240_000 });
      buildDone = true;
      doneAt = performance.now();
      await Promise.all([caller, commander]);
      ok(build, 'npm run build');
      assert.match(build.stdout, /built dist\//);
      assert.deepEqual(failures.slice(0, 5), [], `${failures.length} of ${calls} calls and ${commands} commands failed (the first 5 shown); the server said:\n${serverErr}`);
      assert.ok(calls >= 20 && commands >= 2, `only ${calls} calls and ${commands} commands ran during the build`);
      assert.notEqual(fs.readFileSync(path.join(root, 'dist', '.build-stamp'), 'utf8'), stampBefore, 'dist/ was not replaced');
      assert.deepEqual(fs.readdirSync(root).filter((f) => f.startsWith('.dist-')), [], 'the build left its temporary folders');
    } finally {
      await client.close();
    }
  });

  test('prepare does not build again when dist/ was built from these sources, and does when one changed; an interrupted build changes nothing', async () => {
    const stamp = fs.readFileSync(path.join(root, 'dist', '.build-stamp'), 'utf8');
    const inode = fs.statSync(path.join(root, 'dist')).ino;
    const skipped = await run('npm', ['run', 'prepare', '--silent'], { cwd: root, env: shell });
    ok(skipped, 'npm run prepare');
    assert.match(skipped.stdout, /dist\/ is up to date with the sources: not rebuilt/);
    // Not rebuilt is shown by the message, the unchanged stamp and the same dist/ inode, not a clock.
    assert.equal(fs.readFileSync(path.join(root, 'dist', '.build-stamp'), 'utf8'), stamp);
    assert.equal(fs.statSync(path.join(root, 'dist')).ino, inode, 'dist/ was replaced');
    // A change to an input of the build (here the compiler options, a copy in this package) is
    // seen: the build starts — and, interrupted, leaves dist/ as it was and no temporary folder.
    fs.appendFileSync(path.join(root, 'tsconfig.build.json'), '\n');
    const building = spawn(process.execPath, [path.join(root, 'scripts', 'build.js'), '--if-stale'], { cwd: root, env: shell, stdio: 'ignore' });
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => building.on('exit', (code, signal) => resolve([code, signal])));
    const temporary = () => fs.readdirSync(root).filter((f) => f.startsWith('.dist-'));
    for (let i = 0; i < 200 && !temporary().length; i++) await sleep(50);
    assert.equal(temporary().length, 1, 'the build did not start');
    building.kill('SIGTERM');
    assert.deepEqual(await exited, [1, null]);
    assert.deepEqual(temporary(), []);
    assert.equal(fs.statSync(path.join(root, 'dist')).ino, inode);
    assert.equal(fs.readFileSync(path.join(root, 'dist', '.build-stamp'), 'utf8'), stamp);
  });
});
