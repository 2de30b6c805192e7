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
