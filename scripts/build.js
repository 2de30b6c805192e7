// Emits dist/ with tsc (tsconfig.build.json) and stamps it, so bin/agent-apps.js knows whether
// the build is current. Built-in skills stay TypeScript in skills/ and run by type stripping.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
fs.rmSync(path.join(root, 'dist'), { recursive: true, force: true });
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
await bundleTui();
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
