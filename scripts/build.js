// Builds dist/: tsc (tsconfig.build.json) emits src/ as dist/ and the library, skills/, as
// dist/skills/ — JavaScript, because Node strips types only outside node_modules and an installed
// agent-apps lives under it (docs/ci.md, "Installing agent-apps"). Then the bundles, the library's
// parsed Markdown, and dist/.build-stamp, which tells bin/agent-apps.js that the build is current.
// Bundles load faster than the modules they replace: the terminal UI (dist/surfaces/tui/bundle.js), and in
// dist/bundles/ the Strands agent loop without the clients a run may not need, remark, ajv,
// gray-matter and yaml.
//
// Everything is built into a temporary folder beside dist/ and renamed onto dist/ at the end, so
// whatever runs from this checkout meanwhile (an `mcp serve` an MCP client started, a test run)
// keeps a whole dist/: the old one until the rename, the new one after.
//   node scripts/build.js              build
//   node scripts/build.js --if-stale   (npm's `prepare`) build only when dist/ was not built from
//                                      these sources: a hash of them is kept in dist/.build-stamp
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const STAMP = '.build-stamp';
/** esbuild's options for every ES-module bundle here: one file for Node 24. */
const ESM_FOR_NODE = { bundle: true, format: 'esm', platform: 'node', target: 'node24', logLevel: 'warning' };

const inputs = inputsHash();
if (process.argv.includes('--if-stale') && builtFrom(inputs)) {
  // Touched, so that the launcher's check (the stamp newer than every file in src/) holds for a
  // clone or checkout whose files are newer than the build but the same.
  const now = new Date();
  fs.utimesSync(path.join(dist, STAMP), now, now);
  console.log('dist/ is up to date with the sources: not rebuilt (npm run build rebuilds)');
  process.exit(0);
}

const started = new Date();
removeLeftovers();
// A direct child of the package root, like dist/: the built modules find the package root two
// folders up (src/loader/search-paths.ts), so they can be imported from here during the build.
const out = path.join(root, `.dist-build-${process.pid}`);
// An interrupted or failed build leaves dist/ as it was, and no temporary folder.
process.on('exit', () => fs.rmSync(out, { recursive: true, force: true }));
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => process.exit(1));
fs.mkdirSync(out);
await compile();
const packageBundles = await bundleCliPackages();
await bundleTui();
await bundleStrands();
await bundleRemark();
await bundleAjv();
await bundleGrayMatter();
await bundleYaml();
// After the bundles, so that their own imports of Node's modules are rewritten too.
rewriteImports(out, packageBundles);
// The library's Markdown, parsed once here so that runs need not load gray-matter for it.
const { parseMarkdown } = await import(pathToFileURL(path.join(out, 'loader', 'frontmatter.js')).href);
const { contentHash } = await import(pathToFileURL(path.join(out, 'loader', 'library-cache.js')).href);
const library = path.join(root, 'skills');
const cache = {};
for (const file of fs.readdirSync(library, { recursive: true })) {
  if (!String(file).endsWith('.md') || String(file).split(path.sep).includes('node_modules')) continue;
  const text = fs.readFileSync(path.join(library, file), 'utf8');
  if (!text.startsWith('---')) continue;
  const { frontmatter, body } = parseMarkdown(text, path.join(library, file));
  cache[file] = { hash: contentHash(text), frontmatter, body };
}
fs.writeFileSync(path.join(out, 'library-frontmatter.json'), JSON.stringify(cache) + '\n');
fs.writeFileSync(path.join(out, STAMP), JSON.stringify({ builtAt: new Date().toISOString(), inputs }) + '\n');
// Dated when the build started: a source edited while it ran is newer than the stamp, and the
// launcher runs the sources.
fs.utimesSync(path.join(out, STAMP), started, started);
swapIn(out);
console.log('built dist/');

/**
 * One tsc program over src/ and skills/ (tsconfig.build.json, rootDir the package root), emitted
 * into out/.tsc and moved into place: src/ → out/, skills/ → out/skills/, the library's Markdown
 * copied beside its code. The library needs no declarations.
 */
async function compile() {
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const emitted = path.join(out, '.tsc');
  // Not execFileSync: a signal must reach this process's handlers (and end tsc) while tsc runs.
  const child = spawn(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json'), '--outDir', emitted], { stdio: 'inherit', cwd: root });
  process.on('exit', () => child.exitCode === null && child.kill());
  const [code, signal] = await new Promise((resolve) => child.on('exit', (c, s) => resolve([c, s])));
  if (code !== 0) {
    console.error(`tsc failed (${signal ?? `exit ${code}`}): dist/ is unchanged`);
    process.exit(1);
  }
  for (const entry of fs.readdirSync(path.join(emitted, 'src'))) fs.renameSync(path.join(emitted, 'src', entry), path.join(out, entry));
  const skills = path.join(out, 'skills');
  fs.renameSync(path.join(emitted, 'skills'), skills);
  fs.rmSync(emitted, { recursive: true });
  for (const file of fs.readdirSync(skills, { recursive: true })) {
    if (String(file).endsWith('.d.ts')) fs.rmSync(path.join(skills, file));
  }
  const library = path.join(root, 'skills');
  for (const file of fs.readdirSync(library, { recursive: true })) {
    const from = path.join(library, file);
    if (String(file).endsWith('.ts') || !fs.statSync(from).isFile()) continue;
    fs.mkdirSync(path.dirname(path.join(skills, file)), { recursive: true });
    fs.copyFileSync(from, path.join(skills, file));
  }
}

/**
 * Rewrites the compiled modules' imports, in one pass over out/ (docs/cli.md, "Start-up"):
 * - of Node's own modules (`import fs from 'node:fs'`, `import { spawn } from 'node:child_process'`)
 *   as `process.getBuiltinModule` calls. An ES import of a Node module builds an ES facade of it,
 *   reading every export once — node:http's WebSocket getter loads undici (~30 ms), node:fs's
 *   streams and node:util's getters ~3 ms each — while getBuiltinModule hands over the module
 *   itself. Only whole-line imports of a default and/or named bindings are rewritten.
 * - of the packages in `bundles` (name → bundle file) as imports of that file.
 */
function rewriteImports(dir, bundles) {
  const builtin = /^import (?:([\w$]+)(?:, )?)?(?:\{([^}]*)\})? from (['"])(node:[\w/]+)\3;$/gm;
  const packages = Object.keys(bundles).length ? new RegExp(`^(import [^;'"]* from )(['"])(${Object.keys(bundles).join('|')})\\2;$`, 'gm') : undefined;
  for (const file of fs.readdirSync(dir, { recursive: true })) {
    if (!String(file).endsWith('.js')) continue;
    const full = path.join(dir, file);
    const text = fs.readFileSync(full, 'utf8');
    let rewritten = text.replace(builtin, (whole, def, named, _q, name) => {
      if (!def && named === undefined) return whole;
      const get = `globalThis.process.getBuiltinModule('${name}')`;
      let bindings = named?.split(',').map((b) => b.trim()).filter(Boolean).map((b) => b.replace(/^([\w$]+) as ([\w$]+)$/, '$1: $2'));
      if (bindings?.some((b) => !/^[\w$]+(?:: [\w$]+)?$/.test(b))) return whole;
      // `{ default as x }` (esbuild writes it so) is the module itself, as a default import is.
      const defaults = bindings?.filter((b) => b.startsWith('default: ')).map((b) => b.slice('default: '.length)) ?? [];
      bindings = bindings?.filter((b) => !b.startsWith('default: '));
      const names = [def, ...defaults].filter(Boolean);
      if (!names.length) return `const { ${bindings.join(', ')} } = ${get};`;
      const [first, ...rest] = names;
      return [`const ${first} = ${get}`, ...rest.map((n) => `${n} = ${first}`), ...(bindings?.length ? [`{ ${bindings.join(', ')} } = ${first}`] : [])].join(', ') + ';';
    });
    if (packages) {
      rewritten = rewritten.replace(packages, (_whole, head, q, name) => {
        const rel = path.relative(path.dirname(full), bundles[name]).split(path.sep).join('/');
        return `${head}${q}${rel.startsWith('.') ? rel : './' + rel}${q};`;
      });
    }
    if (rewritten !== text) fs.writeFileSync(full, rewritten);
  }
}

/**
 * The packages every command loads, each in one file of dist/bundles/, which rewriteImports points
 * the compiled modules at: commander (7 modules, and its ES imports of node:fs, node:util … would
 * build their facades) with node:child_process taken only when it spawns (a subcommand that is a
 * program of its own, which ours never are: ~3 ms of every start), and picomatch (6 modules, for
 * allowed-tools). Returns name → bundle; none without esbuild (the packages are imported as they are).
 */
async function bundleCliPackages() {
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    return {}; // said once by bundleStrands
  }
  const bundles = { commander: path.join(out, 'bundles', 'commander.js'), picomatch: path.join(out, 'bundles', 'picomatch.js') };
  for (const [name, outfile] of Object.entries(bundles)) {
    await esbuild.build({
      stdin: { contents: name === 'commander' ? "export * from 'commander';\n" : "export { default } from 'picomatch';\n", resolveDir: root, sourcefile: `${name}.js`, loader: 'js' },
      outfile,
      ...ESM_FOR_NODE,
      plugins: [
        {
          name: 'agent-apps-lazy-child-process',
          setup(build) {
            build.onResolve({ filter: /^node:child_process$/ }, () => ({ path: 'child_process', namespace: 'lazy' }));
            build.onLoad({ filter: /.*/, namespace: 'lazy' }, () => ({ contents: "export default { spawn: (...args) => globalThis.process.getBuiltinModule('node:child_process').spawn(...args) };\n", loader: 'js' }));
          },
        },
      ],
    });
  }
  return bundles;
}

/**
 * Renames the finished build onto dist/: the old dist/ is moved aside and the new one takes its
 * name, two renames on one file system, so there is never a half-written dist/ — only, for the
 * microseconds between the two renames, none. A build that runs at the same time may take the
 * name in between: then this one moves that aside too and tries again (the last build wins).
 */
function swapIn(built) {
  for (let attempt = 0; ; attempt++) {
    const aside = path.join(root, `.dist-old-${process.pid}-${attempt}`);
    let moved = false;
    try {
      fs.renameSync(dist, aside);
      moved = true;
    } catch (err) {
      if (err.code !== 'ENOENT') throw err;
    }
    try {
      fs.renameSync(built, dist);
      if (moved) fs.rmSync(aside, { recursive: true, force: true });
      return;
    } catch (err) {
      if (moved) fs.rmSync(aside, { recursive: true, force: true });
      if (!['ENOTEMPTY', 'EEXIST'].includes(err.code) || attempt >= 5) throw err;
    }
  }
}

/** The temporary folders of builds that died before they finished (their process is gone). */
function removeLeftovers() {
  for (const name of fs.readdirSync(root)) {
    const m = /^\.dist-(?:build|old)-(\d+)/.exec(name);
    if (!m || Number(m[1]) === process.pid) continue;
    try {
      process.kill(Number(m[1]), 0);
      continue; // a build still running
    } catch (err) {
      if (err.code === 'EPERM') continue;
    }
    fs.rmSync(path.join(root, name), { recursive: true, force: true });
  }
}

/**
 * What the build is made from: the sources (src/, skills/), this script and the compiler options,
 * the dependencies as locked (the bundles hold their code), and whether esbuild is there to bundle.
 */
function inputsHash() {
  const hash = crypto.createHash('sha256');
  const add = (rel) => {
    const file = path.join(root, rel);
    if (!fs.existsSync(file)) return;
    hash.update(rel + '\0');
    hash.update(fs.readFileSync(file));
    hash.update('\0');
  };
  for (const dir of ['src', 'skills']) {
    const files = fs.readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    for (const rel of files.map((e) => path.relative(root, path.join(e.parentPath, e.name))).sort()) add(rel);
  }
  for (const rel of ['scripts/build.js', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json']) add(rel);
  hash.update(`esbuild:${fs.existsSync(path.join(root, 'node_modules', 'esbuild'))}`);
  return hash.digest('hex');
}

/** True when dist/ is whole and its stamp says it was built from `inputs`. */
function builtFrom(hash) {
  try {
    const stamp = JSON.parse(fs.readFileSync(path.join(dist, STAMP), 'utf8'));
    return stamp.inputs === hash && fs.existsSync(path.join(dist, 'surfaces', 'cli', 'bin-entry.js'));
  } catch {
    return false; // no build, or one from before the stamp held the hash
  }
}

/**
 * The terminal UI (src/surfaces/tui) with ink, React and @inkjs/ui in one file, dist/surfaces/tui/bundle.js,
 * which src/surfaces/tui/load.ts loads when the UI is shown: one file loads in about a third of the time of
 * the ~600 modules it replaces (es-toolkit alone is 415, for ink's `throttle`), which is what keeps
 * the repl ready to type in under 300 ms. Our own modules outside tui/ stay imports, so the UI
 * shares the CLI's kernel and error classes. Without esbuild the UI loads unbundled, only slower.
 */
async function bundleTui() {
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    console.warn('esbuild is not installed: dist/surfaces/tui is not bundled (the terminal UI loads slower)');
    return;
  }
  const tui = path.join(out, 'surfaces', 'tui');
  await esbuild.build({
    entryPoints: [path.join(tui, 'index.js')],
    outfile: path.join(tui, 'bundle.js'),
    ...ESM_FOR_NODE,
    // React's production build: the development one is larger, slower, and checks for tests.
    // yoga-layout's wasm loader asks `typeof fetch` before it takes the wasm inlined in it: in
    // Node that first look at `fetch` loads undici (~25 ms). Nothing in the UI fetches.
    define: { 'process.env.NODE_ENV': '"production"', fetch: 'undefined' },
    // CommonJS inside the bundle (React) may require Node's modules.
    banner: { js: "import { createRequire as __aaCreateRequire } from 'node:module'; const require = __aaCreateRequire(import.meta.url);" },
    plugins: [
      {
        name: 'agent-apps-tui',
        setup(build) {
          // ink imports React DevTools only when DEV=true; it is not installed.
          build.onResolve({ filter: /^react-devtools-core$/ }, () => ({ path: 'react-devtools-core', namespace: 'stub' }));
          build.onLoad({ filter: /.*/, namespace: 'stub' }, () => ({ contents: 'export default { initialize() {}, connectToDevTools() {} };' }));
          // A module of ours outside tui/ is the one the rest of dist/ uses, not a copy.
          build.onResolve({ filter: /^\.\.?\// }, (args) => {
            const target = path.resolve(args.resolveDir, args.path);
            if (!args.resolveDir.startsWith(tui) || target.startsWith(tui + path.sep)) return undefined;
            return { path: path.relative(tui, target).split(path.sep).join('/'), external: true };
          });
        },
      },
    ],
  });
}

/**
 * The Strands SDK's agent loop as the agent-strands provider uses it — the values in
 * skills/extensions/agent/strands/sdk-names.ts — in one file, dist/bundles/strands-sdk.js, which
 * skills/extensions/agent/strands/sdk.ts loads instead of the SDK's index when it fits the
 * installed SDK (strands-sdk.json beside it says which one). The index loads in ~450 ms, mostly
 * clients an agent run may never call: Bedrock's (the AWS SDK), MCP's, and zod for features the
 * provider does not use; the bundle loads in ~20 ms.
 * - CUT modules become stubs: their constants stay, everything else throws, naming itself, if
 *   reached. The provider always hands the Agent its model and one FunctionTool, and never sets
 *   structuredOutputSchema, memoryManager, contextManager or backgroundTasks — the only ways in.
 * - The modules the SDK's model providers import (Model, errors, messages, streaming events, the
 *   logger …) stay imports of the installed SDK's files, not copies: the providers are loaded
 *   from the SDK itself (models.ts), and both sides must share one `logger` binding and one class
 *   of each error and message for `instanceof`.
 */
async function bundleStrands() {
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    console.warn('esbuild is not installed: dist/bundles/strands-sdk.js is not built (agent runs load the whole Strands SDK)');
    return;
  }
  const sdkSrc = path.dirname(fileURLToPath(import.meta.resolve('@strands-agents/sdk')));
  const { version } = JSON.parse(fs.readFileSync(path.join(sdkSrc, '..', '..', 'package.json'), 'utf8'));
  const outdir = path.join(out, 'bundles');
  const { SDK_NAMES } = await import(new URL('../skills/extensions/agent/strands/sdk-names.ts', import.meta.url).href);
  const CUT = [
    'models/bedrock.js', // the AWS SDK: the Agent's default model, when it is given none
    'mcp/index.js', // the MCP SDK: tools that are MCP clients
    'tools/structured-output-tool.js', // zod, from here on: structuredOutputSchema
    'memory/memory-manager.js', // memoryManager
    'context-manager/modes/agentic/agentic-context.js', // contextManager: 'agentic'
    'context-manager/retrieval-tool.js', // contextManager's retrieval tool
    'background-tasks/background-tasks.js', // backgroundTasks
  ].map((f) => path.join(sdkSrc, f));

  // The providers' SDK modules, and what each imports (esbuild's metafile, third-party packages left out).
  const shared = new Map();
  for (const provider of ['models/openai/index.js', 'models/anthropic.js', 'models/bedrock.js']) {
    const { metafile } = await esbuild.build({ entryPoints: [path.join(sdkSrc, provider)], bundle: true, write: false, metafile: true, format: 'esm', platform: 'node', packages: 'external', logLevel: 'silent' });
    for (const [file, input] of Object.entries(metafile.inputs)) {
      const abs = path.resolve(root, file);
      if (abs.startsWith(sdkSrc + path.sep)) shared.set(abs, input.imports.map((i) => path.resolve(root, i.path)));
    }
  }

  const stubs = new Map();
  for (const file of CUT) {
    const mod = await import(pathToFileURL(file).href);
    let text = `const unavailable = (name) => { throw new Error(name + " is not in agent-apps' light Strands bundle (dist/bundles/strands-sdk.js); run with AGENT_APPS_STRANDS_BUNDLE=0 to use the whole SDK"); };\n`;
    for (const [name, value] of Object.entries(mod)) {
      const stub =
        value === null || ['string', 'number', 'boolean'].includes(typeof value)
          ? JSON.stringify(value)
          : typeof value === 'function'
            ? `function () { unavailable(${JSON.stringify(name)}); }`
            : `new Proxy({}, { get() { unavailable(${JSON.stringify(name)}); } })`;
      text += name === 'default' ? `export default ${stub};\n` : `export const ${name} = ${stub};\n`;
    }
    stubs.set(file, text);
  }

  const index = path.join(sdkSrc, 'index.js').split(path.sep).join('/');
  const nodeDefaults = path.join(sdkSrc, 'sandbox', 'register-node-defaults.js').split(path.sep).join('/');
  const externals = new Set();
  await esbuild.build({
    // The Node entry's default sandbox is the Agent's too; its MCP config loader goes with MCP.
    stdin: { contents: `export { ${SDK_NAMES.join(', ')} } from '${index}';\nimport { registerNodeSandboxDefault } from '${nodeDefaults}';\nregisterNodeSandboxDefault();\n`, resolveDir: sdkSrc, sourcefile: 'strands-sdk.js', loader: 'js' },
    outfile: path.join(outdir, 'strands-sdk.js'),
    ...ESM_FOR_NODE,
    plugins: [
      {
        name: 'agent-apps-strands',
        setup(build) {
          build.onResolve({ filter: /^\.\.?\// }, (args) => {
            const abs = path.resolve(args.resolveDir, args.path);
            if (stubs.has(abs)) return { path: abs, namespace: 'stub' };
            if (!shared.has(abs)) return undefined;
            externals.add(abs);
            const rel = path.relative(outdir, abs).split(path.sep).join('/');
            return { path: rel.startsWith('../') ? rel : './' + rel, external: true };
          });
          build.onLoad({ filter: /.*/, namespace: 'stub' }, (args) => ({ contents: stubs.get(args.path), loader: 'js' }));
        },
      },
    ],
  });
  // A shared module is the SDK's own file, so what it imports is not stubbed: none may reach a cut one.
  const reach = (file, seen) => {
    if (seen.has(file)) return;
    seen.add(file);
    if (CUT.includes(file)) throw new Error(`dist/bundles/strands-sdk.js: ${path.relative(sdkSrc, file)} is cut from the bundle but imported by the SDK modules it shares with the providers`);
    for (const next of shared.get(file) ?? []) reach(next, seen);
  };
  const seen = new Set();
  for (const file of externals) reach(file, seen);
  const manifest = { sdkVersion: version, sdk: path.relative(outdir, sdkSrc).split(path.sep).join('/') + '/' };
  fs.writeFileSync(path.join(outdir, 'strands-sdk.json'), JSON.stringify(manifest, null, 2) + '\n');
}

/**
 * remark with remark-directive, which the `directives` middleware parses prompts with, in one file:
 * dist/bundles/remark.js loads in ~30 ms, the ~90 modules it replaces in ~130 ms (measured on a
 * busy 2-core machine), on every run of a Markdown skill whose prompt has a directive.
 */
async function bundleRemark() {
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    return; // said once by bundleStrands
  }
  await esbuild.build({
    stdin: { contents: "export { remark } from 'remark';\nexport { default as remarkDirective } from 'remark-directive';\n", resolveDir: root, sourcefile: 'remark.js', loader: 'js' },
    outfile: path.join(out, 'bundles', 'remark.js'),
    ...ESM_FOR_NODE,
  });
}

/**
 * ajv and ajv-formats in one file, dist/bundles/ajv.js, with draft-07's meta-schema check compiled
 * ahead by ajv itself (its standalone code, with src/kernel/schema.ts's options): schema.ts would
 * otherwise load ~70 modules and compile that check at the first schema of every run (~40 ms).
 */
async function bundleAjv() {
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    return; // said once by bundleStrands
  }
  const require = createRequire(import.meta.url);
  const { default: Ajv } = require('ajv');
  const { default: addFormats } = require('ajv-formats');
  const { default: standaloneCode } = require('ajv/dist/standalone');
  const { AJV_OPTIONS } = await import(pathToFileURL(path.join(out, 'kernel', 'schema.js')).href);
  const ajv = new Ajv({ ...AJV_OPTIONS, code: { source: true, esm: true } });
  addFormats(ajv);
  const draft07 = standaloneCode(ajv, ajv.getSchema('http://json-schema.org/draft-07/schema'));
  await esbuild.build({
    stdin: { contents: "export { default as Ajv } from 'ajv';\nexport { default as addFormats } from 'ajv-formats';\nexport { default as draft07 } from 'draft-07-check';\n", resolveDir: root, sourcefile: 'ajv.js', loader: 'js' },
    outfile: path.join(out, 'bundles', 'ajv.js'),
    ...ESM_FOR_NODE,
    plugins: [
      {
        name: 'agent-apps-ajv',
        setup(build) {
          build.onResolve({ filter: /^draft-07-check$/ }, () => ({ path: 'draft-07-check', namespace: 'draft-07' }));
          build.onLoad({ filter: /.*/, namespace: 'draft-07' }, () => ({ contents: draft07, resolveDir: root, loader: 'js' }));
        },
      },
    ],
  });
}

/**
 * gray-matter in one CommonJS file, dist/bundles/gray-matter.cjs, without js-yaml: the loader
 * always hands gray-matter its YAML engine (the `yaml` package, src/loader/frontmatter.ts), but
 * gray-matter requires js-yaml for its default one, and js-yaml requires esprima (~280 KB). ~2 ms
 * instead of ~30 ms, on every run of a Markdown skill that was not parsed at build time.
 */
async function bundleGrayMatter() {
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    return; // said once by bundleStrands
  }
  await esbuild.build({
    stdin: { contents: "module.exports = require('gray-matter');\n", resolveDir: root, sourcefile: 'gray-matter.cjs', loader: 'js' },
    outfile: path.join(out, 'bundles', 'gray-matter.cjs'),
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node24',
    logLevel: 'warning',
    plugins: [
      {
        name: 'agent-apps-gray-matter',
        setup(build) {
          build.onResolve({ filter: /^js-yaml$/ }, () => ({ path: 'js-yaml', namespace: 'stub' }));
          build.onLoad({ filter: /.*/, namespace: 'stub' }, () => ({
            contents: "const none = () => { throw new Error('gray-matter: its js-yaml engine is not in dist/bundles/gray-matter.cjs; pass a yaml engine'); };\nmodule.exports = { safeLoad: none, safeDump: none };\n",
            loader: 'js',
          }));
        },
      },
    ],
  });
}

/**
 * The `yaml` package in one CommonJS file, dist/bundles/yaml.cjs, which src/core/yaml.ts (and the
 * Strands provider's copy of it) require: ~5 ms instead of ~30 ms for its ~70 modules.
 */
async function bundleYaml() {
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    return; // said once by bundleStrands
  }
  await esbuild.build({
    stdin: { contents: "module.exports = require('yaml');\n", resolveDir: root, sourcefile: 'yaml.cjs', loader: 'js' },
    outfile: path.join(out, 'bundles', 'yaml.cjs'),
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node24',
    logLevel: 'warning',
  });
}
