#!/usr/bin/env node
// Thin launcher: checks the Node version, turns on the compile cache, and runs the built CLI
// (dist/) — or the TypeScript sources when this is a checkout whose src/ is newer than dist/.
// An installed package (under node_modules, or packed without src/) always runs dist/: Node does
// not strip types under node_modules (docs/ci.md, "Installing agent-apps").
// It runs on every start, so it loads almost nothing (docs/cli.md, "Start-up"): Node's modules are
// taken with process.getBuiltinModule where there is one — an ES import of node:fs reads all its
// exports, which loads its streams (~3 ms) — and `--version` is answered here.
const builtin = (name) => process.getBuiltinModule?.(name);
const fs = builtin('node:fs') ?? (await import('node:fs')).default;
const module = builtin('node:module') ?? (await import('node:module')).default;
const path = builtin('node:path') ?? (await import('node:path')).default;
const { fileURLToPath, pathToFileURL } = builtin('node:url') ?? (await import('node:url'));

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  // A checkout set up by scripts/node24.sh has Node 24 in .node24/: run on it, so that a linked
  // `agent-apps` works from any shell, not only one that sourced node24.sh.
  const local = path.join(root, '.node24', 'node_modules', 'node', 'bin', 'node');
  if (fs.existsSync(local)) await rerunOn(local);
  process.stderr.write(
    `agent-apps needs Node.js 24 or newer; this is ${process.version}.\n` +
      `Install Node 24 from the npm registry without touching the system Node:\n` +
      `  npm install --prefix ~/.node24 node@24 && export PATH="$HOME/.node24/node_modules/node/bin:$PATH"\n`,
  );
  process.exit(2);
}
module.enableCompileCache?.();

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  // What the program's --version prints (src/surfaces/cli/main.ts), without loading the CLI.
  const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  await new Promise((resolve) => process.stdout.write(version + '\n', resolve));
  process.exit(0);
}

const dist = path.join(root, 'dist', 'surfaces', 'cli', 'bin-entry.js');
const src = path.join(root, 'src', 'surfaces', 'cli', 'bin-entry.ts');

/** True when a file under `dir` was changed after `time` (ms): one stat per file, ~2 ms for src/. */
function changedSince(dir, time) {
  for (const ent of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = dir + path.sep + ent.name;
    if (ent.isDirectory() ? changedSince(p, time) : fs.statSync(p).mtimeMs > time) return true;
  }
  return false;
}

let entry = src;
if (fs.existsSync(dist)) {
  const stamp = path.join(root, 'dist', '.build-stamp');
  const built = fs.statSync(stamp, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const installed = root.split(path.sep).includes('node_modules') || !fs.existsSync(path.join(root, 'src'));
  if (installed || !changedSince(path.join(root, 'src'), built)) entry = dist;
}
const { run } = await import(pathToFileURL(entry).href);
await run(argv);

/** Runs this launcher again on `node` with the same args and stdio; exits as that run exits. */
async function rerunOn(node) {
  const { spawn } = await import('node:child_process');
  const child = spawn(node, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  // Ctrl-C reaches the child from the terminal itself; a signal sent to this process is passed on.
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  const [code, signal] = await new Promise((resolve) => child.on('exit', (c, s) => resolve([c, s])));
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  }
  process.exit(code ?? 1);
}
