// What every command's start pays for (docs/cli.md, "Start-up"; docs/ci.md, "From a fresh shell"):
// a plain run of a code skill loads no node:crypto (context and run ids are unique names made
// without it), while a run that needs it still gets it; and the set-up scripts make Node trust the
// system's certificates (a TLS proxy the system trusts) without overriding a choice already made.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BIN, REPO, cliEnv, folder, tempDir } from './cli-process.ts';

const SYSTEM_CA = '/etc/ssl/certs/ca-certificates.crt';

/** The Node built-ins a CLI run loaded, from process.moduleLoadList at its exit. */
function builtinsOf(args: string[], cwd: string): { status: number | null; stdout: string; stderr: string; builtins: string[] } {
  const dir = tempDir('agent-apps-startup-');
  const hook = path.join(dir, 'builtins.mjs');
  const log = path.join(dir, 'builtins.json');
  fs.writeFileSync(hook, `import fs from 'node:fs';\nprocess.on('exit', () => fs.writeFileSync(${JSON.stringify(log)}, JSON.stringify(process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13)))));\n`);
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(hook).href, BIN, ...args], { cwd, env: cliEnv(), encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, builtins: fs.existsSync(log) ? (JSON.parse(fs.readFileSync(log, 'utf8')) as string[]) : [] };
}

test('a plain run of a code skill loads no node:crypto; a trust check, which hashes, does', () => {
  const ws = folder({ 'skills/noop.skill.ts': "export const frontmatter = { name: 'noop', description: 'Does nothing.' };\nexport default async () => null;\n" });
  const plain = builtinsOf(['run', 'noop'], ws);
  assert.equal(plain.status, 0, plain.stderr);
  assert.equal(plain.stdout, 'null\n');
  assert.ok(plain.builtins.includes('fs'), 'the hook saw the run');
  assert.deepEqual(plain.builtins.filter((m) => m === 'crypto' || m.startsWith('internal/crypto/')), [], 'node:crypto is not loaded');
  // `trust` hashes the workspace's configuration: node:crypto is there when something needs it.
  const trust = builtinsOf(['trust', '--json'], ws);
  assert.equal(trust.status, 0, trust.stderr);
  assert.ok(trust.builtins.includes('crypto'), 'node:crypto loads when a hash is made');
});

test("scripts/node24.sh and scripts/on-node24.js add the system's certificates unless NODE_EXTRA_CA_CERTS is set", { skip: fs.existsSync(SYSTEM_CA) ? false : `no ${SYSTEM_CA} here` }, () => {
  const base = { HOME: process.env.HOME ?? '/tmp', PATH: `${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin` };
  const sourced = (env: Record<string, string>) => spawnSync('bash', ['-c', `source ${JSON.stringify(path.join(REPO, 'scripts', 'node24.sh'))} && printf %s "$NODE_EXTRA_CA_CERTS"`], { env: { ...base, ...env }, encoding: 'utf8', timeout: 60_000 });
  const started = (env: Record<string, string>) => spawnSync(process.execPath, [path.join(REPO, 'scripts', 'on-node24.js'), '-e', 'process.stdout.write(process.env.NODE_EXTRA_CA_CERTS ?? "")'], { env: { ...base, ...env }, encoding: 'utf8', timeout: 60_000 });
  for (const run of [sourced, started]) {
    const unset = run({});
    assert.equal(unset.status, 0, unset.stderr);
    assert.equal(unset.stdout, SYSTEM_CA);
    const chosen = run({ NODE_EXTRA_CA_CERTS: '/somewhere/else.pem' });
    assert.equal(chosen.stdout, '/somewhere/else.pem', 'a bundle someone chose is kept');
  }
});
