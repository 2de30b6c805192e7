// agent-apps installed from its packed tarball, as docs/ci.md ("Installing agent-apps") and the
// README say: `npm pack` (its `prepare` keeps a current dist/ or builds one), `npm install -g
// --prefix DIR ./agent-apps-X.tgz` into a temporary prefix, then the command from there, outside
// any checkout: it must run from the package's built JavaScript alone — no src/, no skills/*.ts
// (Node does not strip types under node_modules). Dependencies come from npm's cache, which
// `npm ci` filled (--prefer-offline: only what is missing from it is asked of the registry).
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REPO, SKIP_PACKAGE_TESTS, checkoutCopy, freshEnv, helloWorkspace, run, tempDir, type Run } from './package-helpers.ts';

const VERSION = (JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }).version;

function ok(r: Run, what: string): void {
  assert.equal(r.code, 0, `${what} exited ${r.code ?? r.signal}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
}

describe('the packed package, installed into a temporary prefix', { skip: SKIP_PACKAGE_TESTS, timeout: 240_000 }, () => {
  const home = tempDir('agent-apps-install-home-');
  const prefix = tempDir('agent-apps-install-prefix-');
  // npm and the installed command on Node 24 (this one), the rest of PATH a fresh shell's.
  const env = freshEnv(home, { withNode24: true });
  let bin: string;
  let pkgDir: string;
  let tarball: string;

  before(async () => {
    const copy = checkoutCopy('agent-apps-install-pkg-');
    const packed = await run('npm', ['pack', '--pack-destination', home, '--loglevel=error'], { cwd: copy, env, timeoutMs: 180_000 });
    ok(packed, 'npm pack');
    tarball = path.join(home, packed.stdout.trim().split('\n').at(-1)!);
    assert.ok(fs.existsSync(tarball), `no tarball ${tarball}: ${packed.stdout}`);
    const installed = await run('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball], { cwd: home, env, timeoutMs: 180_000 });
    ok(installed, 'npm install -g');
    bin = path.join(prefix, 'bin', 'agent-apps');
    pkgDir = path.join(prefix, 'lib', 'node_modules', 'agent-apps');
  });

  test('the package holds built JavaScript and no TypeScript to run: no src/, no skills/, the library in dist/skills', () => {
    assert.ok(fs.existsSync(bin), 'no agent-apps in the prefix’s bin/');
    assert.ok(!fs.lstatSync(pkgDir).isSymbolicLink(), 'a copy, not a link to a checkout');
    for (const absent of ['src', 'skills', 'scripts', 'test']) assert.ok(!fs.existsSync(path.join(pkgDir, absent)), `${absent}/ was packed`);
    const ts = fs.readdirSync(path.join(pkgDir, 'dist'), { recursive: true }).map(String).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
    assert.deepEqual(ts, []);
    for (const file of ['dist/surfaces/cli/bin-entry.js', 'dist/skills/main.md', 'dist/skills/agent.skill.js', 'dist/skills/extensions/agent/strands/agent-strands.skill.js', 'templates/workspace/skills/hello.md']) {
      assert.ok(fs.existsSync(path.join(pkgDir, file)), `${file} missing`);
    }
  });

  test('--version, and the example: a code skill and an agent skill replayed offline', async () => {
    const ws = helloWorkspace();
    const version = await run(bin, ['--version'], { cwd: home, env });
    ok(version, '--version');
    assert.equal(version.stdout, `${VERSION}\n`);
    const greet = await run(bin, ['--cwd', ws, 'run', 'greet', '--name', 'Ada'], { cwd: home, env });
    ok(greet, 'run greet');
    assert.equal(greet.stdout, 'Hello, Ada.\n');
    assert.equal(greet.stderr, '');
    const summarize = await run(bin, ['--cwd', ws, 'run', 'summarize', '--text', 'one two three', '--json'], { cwd: home, env });
    ok(summarize, 'run summarize');
    assert.deepEqual(JSON.parse(summarize.stdout), { words: 3, summary: 'one two three' });
  });

  test('the library is the installed dist/skills, and a workspace skill’s `agent-apps` is the installed runtime', async () => {
    const ws = helloWorkspace();
    const list = await run(bin, ['--cwd', ws, 'list', '--all'], { cwd: home, env });
    ok(list, 'list --all');
    assert.match(list.stdout, /^agent +code .*\(library\) agent\.skill\.js$/m);
    const probe = await run(bin, ['--cwd', ws, 'run', 'probe', '--json'], { cwd: home, env });
    ok(probe, 'run probe');
    assert.equal(JSON.parse(probe.stdout), `file://${path.join(fs.realpathSync(pkgDir), 'dist', 'index.js')}`);
  });

  test('init and new copy the installed templates; the new workspace’s evals pass', async () => {
    const ws = path.join(tempDir('agent-apps-install-init-'), 'project');
    ok(await run(bin, ['init', ws], { cwd: home, env }), 'init');
    const evals = await run(bin, ['test'], { cwd: ws, env });
    ok(evals, 'agent-apps test');
    assert.match(evals.stdout, /^3 passed, 0 failed$/m);
    ok(await run(bin, ['new', 'shout', '--code'], { cwd: ws, env }), 'new --code');
    const described = await run(bin, ['describe', 'shout'], { cwd: ws, env });
    ok(described, 'describe shout');
  });
});
