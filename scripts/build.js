// Emits dist/ with tsc (tsconfig.build.json) and stamps it, so bin/agent-apps.js knows whether
// the build is current. Built-in skills stay TypeScript in skills/ and run by type stripping.
// Bundles load faster than the modules they replace: the terminal UI (dist/tui/bundle.js), and in
// dist/bundles/ the Strands agent loop without the clients a run may not need, remark, ajv,
// gray-matter and yaml.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
fs.rmSync(path.join(root, 'dist'), { recursive: true, force: true });
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
await bundleTui();
await bundleStrands();
await bundleRemark();
await bundleAjv();
await bundleGrayMatter();
await bundleYaml();
// The library's Markdown, parsed once here so that runs need not load gray-matter for it.
const { parseMarkdown } = await import(new URL('../dist/loader/frontmatter.js', import.meta.url).href);
const { contentHash } = await import(new URL('../dist/loader/library-cache.js', import.meta.url).href);
const library = path.join(root, 'skills');
const cache = {};
for (const file of fs.readdirSync(library, { recursive: true })) {
  if (!String(file).endsWith('.md') || String(file).split(path.sep).includes('node_modules')) continue;
  const text = fs.readFileSync(path.join(library, file), 'utf8');
  if (!text.startsWith('---')) continue;
  const { frontmatter, body } = parseMarkdown(text, path.join(library, file));
  cache[file] = { sha1: contentHash(text), frontmatter, body };
}
fs.writeFileSync(path.join(root, 'dist', 'library-frontmatter.json'), JSON.stringify(cache) + '\n');
fs.writeFileSync(path.join(root, 'dist', '.build-stamp'), new Date().toISOString() + '\n');
console.log('built dist/');

/**
 * The terminal UI (src/tui, SPEC §17) with ink, React and @inkjs/ui in one file, dist/tui/bundle.js,
 * which src/tui/load.ts loads when the UI is shown: one file loads in about a third of the time of
 * the ~600 modules it replaces (es-toolkit alone is 415, for ink's `throttle`), which is what keeps
 * the repl ready to type in under 300 ms. Our own modules outside tui/ stay imports, so the UI
 * shares the CLI's kernel and error classes. Without esbuild the UI loads unbundled, only slower.
 */
async function bundleTui() {
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    console.warn('esbuild is not installed: dist/tui is not bundled (the terminal UI loads slower)');
    return;
  }
  const tui = path.join(root, 'dist', 'tui');
  await esbuild.build({
    entryPoints: [path.join(tui, 'index.js')],
    outfile: path.join(tui, 'bundle.js'),
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    logLevel: 'warning',
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
  const outdir = path.join(root, 'dist', 'bundles');
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
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    logLevel: 'warning',
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
    outfile: path.join(root, 'dist', 'bundles', 'remark.js'),
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    logLevel: 'warning',
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
  const { AJV_OPTIONS } = await import(new URL('../dist/kernel/schema.js', import.meta.url).href);
  const ajv = new Ajv({ ...AJV_OPTIONS, code: { source: true, esm: true } });
  addFormats(ajv);
  const draft07 = standaloneCode(ajv, ajv.getSchema('http://json-schema.org/draft-07/schema'));
  await esbuild.build({
    stdin: { contents: "export { default as Ajv } from 'ajv';\nexport { default as addFormats } from 'ajv-formats';\nexport { default as draft07 } from 'draft-07-check';\n", resolveDir: root, sourcefile: 'ajv.js', loader: 'js' },
    outfile: path.join(root, 'dist', 'bundles', 'ajv.js'),
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    logLevel: 'warning',
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
    outfile: path.join(root, 'dist', 'bundles', 'gray-matter.cjs'),
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
    outfile: path.join(root, 'dist', 'bundles', 'yaml.cjs'),
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node24',
    logLevel: 'warning',
  });
}
