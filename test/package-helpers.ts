// Helpers for the tests of the package as it is installed and built (test/install.test.ts,
// test/build-atomic.test.ts, docs/ci.md "Installing agent-apps"): a throw-away copy of the
// checkout to pack or build in — never this checkout's own dist/, which other processes run from —
// and real processes with the environment of a fresh shell.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * `AGENT_APPS_SKIP_PACKAGE_TESTS=1` skips the tests that pack, install or build the package
 * (a minute or so of a 2-core machine). .ci/run never sets it.
 */
export const SKIP_PACKAGE_TESTS = process.env.AGENT_APPS_SKIP_PACKAGE_TESTS === '1' ? 'AGENT_APPS_SKIP_PACKAGE_TESTS=1' : false;

const temps: string[] = [];
process.on('exit', () => {
  for (const dir of temps) fs.rmSync(dir, { recursive: true, force: true });
});

export function tempDir(prefix: string): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  temps.push(dir);
  return dir;
}

/**
 * A package root that builds and packs like this checkout: src/, skills/, node_modules/ and
 * .node24/ are links to the checkout's, bin/, scripts/, templates/, docs/ and the package files
 * copies; dist/ a copy of the checkout's when it has one — `node scripts/build.js --if-stale`
 * then keeps it if it was built from these sources, and builds otherwise.
 */
export function checkoutCopy(prefix = 'agent-apps-copy-'): string {
  const root = tempDir(prefix);
  for (const dir of ['src', 'skills', 'node_modules', '.node24']) {
    if (fs.existsSync(path.join(REPO, dir))) fs.symlinkSync(path.join(REPO, dir), path.join(root, dir), 'dir');
  }
  for (const dir of ['bin', 'scripts', 'templates', 'docs']) fs.cpSync(path.join(REPO, dir), path.join(root, dir), { recursive: true });
  for (const file of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'README.md']) fs.copyFileSync(path.join(REPO, file), path.join(root, file));
  try {
    fs.cpSync(path.join(REPO, 'dist'), path.join(root, 'dist'), { recursive: true });
  } catch {
    fs.rmSync(path.join(root, 'dist'), { recursive: true, force: true }); // none, or caught mid-swap: build
  }
  return root;
}

/** A Node older than 24 on this machine (the system's, v20 here), for the fresh-shell runs. */
export function olderNode(): string | undefined {
  for (const dir of ['/usr/local/bin', '/usr/bin', '/bin']) {
    const node = path.join(dir, 'node');
    try {
      const major = Number(execFileSync(node, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).trim());
      if (major < 24) return node;
    } catch {
      // not there, or not a node
    }
  }
  return undefined;
}

/** How this machine reaches the registry (a proxy, its CA): a fresh shell of this machine has them too. */
const NETWORK = ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy'];

/**
 * The environment of a fresh shell (`env -i HOME=… PATH=/usr/local/bin:/usr/bin:/bin`), with
 * `node` on PATH the system's; `withNode24` puts this Node's folder first instead. npm keeps the
 * machine's cache (installs take their packages from it: npm ci filled it), the user's npmrc and
 * the network settings; no other npm_config_* of the npm that runs the tests leaks in.
 */
export function freshEnv(home: string, opts: { withNode24?: boolean } = {}): NodeJS.ProcessEnv {
  const PATH = (opts.withNode24 ? [path.dirname(process.execPath)] : []).concat(['/usr/local/bin', '/usr/bin', '/bin']).join(':');
  const env: NodeJS.ProcessEnv = {
    HOME: home,
    PATH,
    npm_config_cache: process.env.npm_config_cache ?? path.join(os.homedir(), '.npm'),
    npm_config_userconfig: path.join(os.homedir(), '.npmrc'),
    AGENT_APPS_HOME: path.join(home, '.agent-apps'),
  };
  for (const key of NETWORK) if (process.env[key]) env[key] = process.env[key];
  return env;
}

export interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

export function run(command: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<Run> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Math.round(performance.now() - started) });
    });
  });
}

/** A workspace with examples/hello's skills and `probe`, which says which `agent-apps` a skill gets. */
export function helloWorkspace(): string {
  const ws = tempDir('agent-apps-pkg-ws-');
  fs.cpSync(path.join(REPO, 'examples', 'hello'), ws, { recursive: true });
  fs.writeFileSync(
    path.join(ws, 'skills', 'probe.skill.ts'),
    `export const frontmatter = { name: 'probe', description: 'The runtime a skill runs in.', metadata: { params: { type: 'object', properties: { load: { type: 'string' } } } } };
// load: a module of the runtime, imported afresh on each call (the way a runtime loads its parts
// when they are first needed) — it must be there whenever it is asked for.
export default async function (_ctx: unknown, args: { load?: string }) {
  const entry = import.meta.resolve('agent-apps');
  if (args.load) await import(new URL(args.load, entry).href + '?' + Math.random());
  return entry;
}
`,
  );
  return ws;
}
