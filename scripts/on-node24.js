// `node scripts/on-node24.js ARGS…` runs `node ARGS…` on a Node ≥ 24: the one running this when it
// is new enough, else the checkout's .node24/ (which scripts/node24.sh and scripts/setup.sh
// install). The npm scripts — test, build, bench, prepare — start with it, so `npm test` works
// from a fresh shell whose `node` is older, as the README's commands are written (docs/ci.md,
// "From a fresh shell"). Without .node24/ it says in one line how to get Node 24 and exits 1:
// `node --test` on Node 20 would only say "Could not find test/**/*.test.ts".
// Plain JavaScript that any Node parses.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const major = Number(process.versions.node.split('.')[0]);
let node = process.execPath;
const env = { ...process.env };
// The system's certificates for what the child starts (npm in test/install.test.ts), as
// scripts/node24.sh adds them: Node reads NODE_EXTRA_CA_CERTS only when a process starts.
const SYSTEM_CA = '/etc/ssl/certs/ca-certificates.crt';
if (!env.NODE_EXTRA_CA_CERTS && fs.existsSync(SYSTEM_CA)) env.NODE_EXTRA_CA_CERTS = SYSTEM_CA;
if (major < 24) {
  node = path.join(root, '.node24', 'node_modules', 'node', 'bin', 'node');
  if (!fs.existsSync(node)) {
    process.stderr.write(`agent-apps needs Node.js \u2265 24 (this is ${process.version}): run bash scripts/setup.sh, or source scripts/node24.sh, to install it into .node24/\n`);
    process.exit(1);
  }
  // What scripts/node24.sh puts on PATH: a test or a build that starts `node` or `npm` by name
  // gets Node 24 too, not the system's.
  env.PATH = [path.dirname(node), path.join(root, '.node24', 'node_modules', '.bin'), env.PATH].filter(Boolean).join(path.delimiter);
  env.NODE = node;
  env.npm_node_execpath = node;
}

const child = spawn(node, process.argv.slice(2), { stdio: 'inherit', env });
// Ctrl-C reaches the child from the terminal itself; a signal sent to this process is passed on.
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
child.on('error', (err) => {
  process.stderr.write(`cannot start ${node}: ${err.message}\n`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  }
  process.exit(code ?? 1);
});
