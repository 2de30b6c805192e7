// Indexing one search root: which names live in which files, without parsing or importing
// anything. Names come from a cheap look at the frontmatter's top-level `name:` line (or a code
// skill's `name: '…'`), else the file stem; the full parse happens when a tool is loaded.
import fs from 'node:fs';
import path from 'node:path';
import type { ToolKind } from '../core/types.ts';
import { NAME_RE, agentSkillNameProblems, codeSkillStem, nameProblem } from './names.ts';
import { checkSkillFile, readSkillHead } from './read.ts';

export interface IndexEntry {
  name: string;
  kind: ToolKind;
  file: string;
  root: string;
  dir: string;
  /** A configuration problem found while indexing (duplicate or bad name, not a regular file, too big). */
  error?: string;
}

export interface RootIndex {
  root: string;
  /** Listed, invocable names (including the root-level `main`). */
  names: Map<string, IndexEntry>;
  /** Folder authorities: directory → its `main` skill (the root's own main included). */
  mains: Map<string, IndexEntry>;
  /** Files that could not become a tool, with their error (shown by `list`). */
  broken: IndexEntry[];
}

const SKIP_DIRS = new Set(['node_modules', '.git', '.agent-apps']);

/**
 * The cross-client roots (`.agents/skills/`, `.claude/skills/`, SPEC §4) hold Agent Skills
 * folders only, as every other client that reads them assumes: a loose `notes.md` there is not a
 * skill.
 */
export function isFoldersOnlyRoot(root: string): boolean {
  const parent = path.basename(path.dirname(root));
  return path.basename(root) === 'skills' && (parent === '.agents' || parent === '.claude');
}

interface Walk {
  index: RootIndex;
  foldersOnly: boolean;
  /** Real paths of the folders walked: a symbolic link back to one of them is a loop, not walked again. */
  seen: Set<string>;
}

export function scanRoot(root: string): RootIndex {
  const index: RootIndex = { root, names: new Map(), mains: new Map(), broken: [] };
  let rootStat: fs.Stats;
  try {
    rootStat = fs.statSync(root);
  } catch {
    return index;
  }
  if (!rootStat.isDirectory()) return index;
  const w: Walk = { index, foldersOnly: isFoldersOnlyRoot(root), seen: new Set() };
  try {
    w.seen.add(fs.realpathSync(root));
  } catch {}
  walk(root, w, readDir(root));
  return index;
}

function readDir(dir: string): fs.Dirent[] {
  try {
    return fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/** The Agent Skills file among a folder's entries: `SKILL.md`, else the lower-case `skill.md` some clients accept. */
export function skillFileIn(entries: readonly fs.Dirent[] | readonly string[]): string | undefined {
  const names = entries.map((e) => (typeof e === 'string' ? e : e.name));
  return names.includes('SKILL.md') ? 'SKILL.md' : names.includes('skill.md') ? 'skill.md' : undefined;
}

function walk(dir: string, w: Walk, entries: fs.Dirent[]): void {
  const index = w.index;
  const isRoot = dir === index.root;
  for (const ent of entries) {
    if (ent.name.startsWith('.')) continue;
    const file = path.join(dir, ent.name);
    const stem = codeSkillStem(ent.name);
    const md = ent.name.endsWith('.md') ? ent.name.slice(0, -3) : null;
    let isDir = ent.isDirectory();
    if (ent.isSymbolicLink()) {
      // A linked folder (skills are often installed as links) is walked once: its real path is
      // remembered, so a link that leads back up is a loop that ends here.
      try {
        const real = fs.realpathSync(file);
        if (fs.statSync(real).isDirectory()) {
          if (w.seen.has(real)) continue;
          w.seen.add(real);
          isDir = true;
        }
      } catch {
        // Dangling or looping: only a name that looks like a skill file is worth reporting (peek does).
      }
    } else if (isDir) {
      try {
        w.seen.add(fs.realpathSync(file));
      } catch {}
    }
    if (isDir) {
      if (SKIP_DIRS.has(ent.name)) continue;
      const inside = readDir(file);
      const skillFile = skillFileIn(inside);
      if (skillFile) {
        // An Agent Skills folder: its other files are resources, not skills.
        const skillMd = path.join(file, skillFile);
        const look = peek(skillMd);
        const name = (look.head !== undefined ? frontmatterName(look.head) : undefined) ?? ent.name;
        add(index, { name, kind: 'skill-folder', file: skillMd, root: index.root, dir: file, ...(look.problem ? { error: look.problem } : {}) }, false);
        continue;
      }
      if (stem === null && md === null) {
        walk(file, w, inside);
        continue;
      }
      // A directory named like a skill file (`x.md`, `y.skill.ts`) is broken, not a folder to walk.
    } else if (stem === null && md === null) continue;
    if (w.foldersOnly) continue;
    // Symlinks are followed (stat), FIFOs and devices are never opened: see read.ts.
    const look = peek(file);
    let kind: ToolKind;
    let name: string;
    if (stem !== null) {
      kind = 'code';
      name = (look.head !== undefined ? codeName(look.head) : null) ?? stem;
    } else {
      const fmName = look.head !== undefined ? frontmatterName(look.head) : undefined;
      // A Markdown file without frontmatter whose stem is not a tool name (README.md) is a
      // document, not a skill. With frontmatter it is a skill — and a bad name is its error.
      if (look.head !== undefined && fmName === undefined && !look.head.startsWith('---') && !NAME_RE.test(md!)) continue;
      kind = 'markdown';
      name = fmName ?? md!;
    }
    add(index, { name, kind, file, root: index.root, dir, ...(look.problem ? { error: look.problem } : {}) }, !isRoot);
  }
}

/** The head of a skill file, or why it cannot be one (not a regular file, too big, unreadable). */
function peek(file: string): { head?: string; problem?: string } {
  const { problem } = checkSkillFile(file);
  if (problem) return { problem };
  try {
    return { head: readSkillHead(file) };
  } catch (err) {
    return { problem: (err as Error).message };
  }
}

function add(index: RootIndex, entry: IndexEntry, inSubfolder: boolean): void {
  if (entry.name === 'main') {
    // A `main` is its folder's authority; only the root-level one is listed and invocable.
    const existing = index.mains.get(entry.dir);
    if (existing) {
      index.broken.push({ ...entry, error: `duplicate 'main' in ${entry.dir} (also ${existing.file})` });
      return;
    }
    index.mains.set(entry.dir, entry);
    if (inSubfolder) return;
  }
  const bad = entry.kind === 'skill-folder' ? agentSkillNameProblems(entry.name).find((p) => p.severity === 'error')?.message : nameProblem(entry.name);
  if (bad) {
    // A file that could not be read keeps that error: its name is only a guess from the stem.
    index.broken.push({ ...entry, error: entry.error ?? (entry.kind === 'skill-folder' ? bad : `invalid skill name '${entry.name}' — ${bad}`) });
    return;
  }
  const existing = index.names.get(entry.name);
  if (existing) {
    const error = `duplicate skill name '${entry.name}' in ${index.root}: ${path.relative(index.root, existing.file)} and ${path.relative(index.root, entry.file)}`;
    index.names.set(entry.name, { ...existing, error });
    index.broken.push({ ...entry, error });
    return;
  }
  index.names.set(entry.name, entry);
}

/** `name:` at the top level of a leading `---` block; undefined when there is no frontmatter name. */
function frontmatterName(text: string): string | undefined {
  if (!text.startsWith('---')) return undefined;
  const end = text.indexOf('\n---', 3);
  const block = end === -1 ? text : text.slice(0, end);
  const m = /^name:[ \t]*(?:"([^"]*)"|'([^']*)'|([^\s#]+))/m.exec(block);
  if (!m) return undefined;
  return (m[1] ?? m[2] ?? m[3] ?? '').trim();
}

function codeName(text: string): string | null {
  // `export const frontmatter = { name: '…' }` or `export default defineSkill({ name: '…' }, …)`.
  const at = text.search(/frontmatter\s*[:=]|defineSkill\s*\(/);
  if (at === -1) return null;
  const m = /\bname\s*:\s*(['"`])([^'"`]+)\1/.exec(text.slice(at, at + 2000));
  return m ? m[2]! : null;
}
