// The library's Markdown is parsed at build time (dist/library-frontmatter.json) so that a run
// does not load gray-matter for it; the cache is only trusted while the file's content matches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cachedMarkdown, LIBRARY_CACHE } from '../src/loader/library-cache.ts';
import { parseMarkdown } from '../src/loader/frontmatter.ts';
import { LIBRARY } from './helpers.ts';

const main = path.join(LIBRARY, 'main.md');
const built = fs.existsSync(LIBRARY_CACHE);

test('the build-time cache gives exactly what parsing main.md gives', { skip: !built && 'dist/ is not built' }, () => {
  const text = fs.readFileSync(main, 'utf8');
  assert.deepEqual(cachedMarkdown(main, text), parseMarkdown(text, main));
});

test('a library file whose content changed since the build is not served from the cache', () => {
  const text = fs.readFileSync(main, 'utf8') + '\nedited\n';
  assert.equal(cachedMarkdown(main, text), undefined);
});

test('files outside the library never come from the cache', () => {
  assert.equal(cachedMarkdown('/tmp/elsewhere/main.md', '---\nname: main\n---\n'), undefined);
});
