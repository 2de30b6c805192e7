// The library's Markdown (skills/main.md and friends), parsed at build time: scripts/build.js
// writes dist/library-frontmatter.json with each file's frontmatter, body and content hash, so
// a run that only needs the library's authority does not load gray-matter and yaml (~25 ms of
// `cli.coldstart`). A file whose content no longer matches its hash is parsed as usual.
import { quickHash } from '../core/ids.ts';
import fs from 'node:fs';
import path from 'node:path';
import type { Frontmatter } from '../core/types.ts';
import { LIBRARY_ROOT, PACKAGE_ROOT } from './search-paths.ts';

export const LIBRARY_CACHE = path.join(PACKAGE_ROOT, 'dist', 'library-frontmatter.json');

interface Entry {
  hash: string;
  frontmatter: Frontmatter;
  body: string;
}

let cache: Record<string, Entry> | null | undefined;

export function contentHash(text: string): string {
  return quickHash(text);
}

export function cachedMarkdown(file: string, text: string): { frontmatter: Frontmatter; body: string } | undefined {
  if (!file.startsWith(LIBRARY_ROOT + path.sep)) return undefined;
  if (cache === undefined) {
    try {
      cache = JSON.parse(fs.readFileSync(LIBRARY_CACHE, 'utf8')) as Record<string, Entry>;
    } catch {
      cache = null;
    }
  }
  const entry = cache?.[path.relative(LIBRARY_ROOT, file)];
  if (!entry || entry.hash !== contentHash(text)) return undefined;
  return { frontmatter: entry.frontmatter, body: entry.body };
}
