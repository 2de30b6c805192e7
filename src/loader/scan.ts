// Indexing one search root: which names live in which files, without parsing or importing
// anything. Names come from a cheap look at the frontmatter's top-level `name:` line (or a code
// skill's `name: '…'`), else the file stem; the full parse happens when a tool is loaded.
import fs from 'node:fs';
import path from 'node:path';
import type { ToolKind } from '../core/types.ts';
import { NAME_RE, agentSkillNameProblems, codeSkillStem, nameProblem } from './names.ts';
import { checkSkillFile, readSkillHead } from './read.ts';
import { WORKSPACE_SKILL_DIRS } from './search-paths.ts';

export interface IndexEntry {
  name: string;
  kind: ToolKind;
  file: string;
  root: string;
  dir: string;
  /** A configuration problem found while indexing (duplicate or bad name, not a regular file, too big). */
  error?: string;
  /** The real path of a symbolic link that leaves the search root: never read nor walked (`error` says so). */
  outside?: string;
}

export interface RootIndex {
  root: string;
  /** Listed, invocable names (including the root-level `main`). */
  names: Map<string, IndexEntry>;
  /** Folder authorities: directory → its `main` skill (the root's own main included). */
  mains: Map<string, IndexEntry>;
  /** Files that could not become a tool, with their error (shown by `list`). */
  broken: IndexEntry[];
  /**
   * What a person should know about a root that yields no skill: the `SKILL.md` files below the
   * folders the scan skips (`list` prints these as warnings).
   */
  notes: string[];
}

/**
 * Folders never walked. Dot folders are walked like any other (collections keep skills in
 * `.curated/`, `.system/`); these three hold a repository, packages and our own state.
 */
const SKIP_DIRS = new Set(['node_modules', '.git', '.agent-apps']);

/**
 * The cross-client roots (`.agents/skills/`, `.claude/skills/`, docs/concepts.md) hold Agent Skills
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
  /** Real paths a symbolic link may lead into: the root, and its workspace's other skill folders. */
  within: string[];
  /** Folders left unwalked (SKIP_DIRS), looked into only when the root yields no skill. */
  skipped: string[];
}

export function scanRoot(root: string): RootIndex {
  const index: RootIndex = { root, names: new Map(), mains: new Map(), broken: [], notes: [] };
  let rootStat: fs.Stats;
  let real: string;
  try {
    rootStat = fs.statSync(root);
    real = fs.realpathSync(root);
  } catch {
    return index;
  }
  if (!rootStat.isDirectory()) return index;
  const w: Walk = { index, foldersOnly: isFoldersOnlyRoot(root), seen: new Set([real]), within: linkTargets(root, real), skipped: [] };
  walk(root, w, readDir(root));
  if (index.names.size === 0 && w.skipped.length) {
    const note = skippedSkills(root, w.skipped);
    if (note) index.notes.push(note);
  }
  return index;
}

/**
 * Where a symbolic link in `root` may lead (real paths): inside the root, or into one of the
 * workspace's other skill folders — `.claude/skills/x -> ../../.agents/skills/x` is how skill
 * installers share one copy between clients. A link anywhere else (a downloaded folder's
 * `data -> /usr`) would make files outside the workspace into skills: it is a broken entry,
 * never followed (docs/writing-skills.md, "Where folders are found").
 */
function linkTargets(root: string, real: string): string[] {
  const abs = path.resolve(root);
  if (path.basename(abs) !== 'skills') return [real];
  const parent = path.dirname(abs);
  const workspace = ['.agents', '.claude'].includes(path.basename(parent)) ? path.dirname(parent) : parent;
  const out = [real];
  for (const d of WORKSPACE_SKILL_DIRS) {
    try {
      out.push(fs.realpathSync(path.join(workspace, d)));
    } catch {}
  }
  return [...new Set(out)];
}

/** The real path a symbolic link `file` leads to when that is outside `w.within`; undefined otherwise (or when it dangles). */
function leavesRoot(file: string, w: Walk): string | undefined {
  let real: string;
  try {
    real = fs.realpathSync(file);
  } catch {
    return undefined; // dangling or a loop: peek reports it, if it is named like a skill file
  }
  return w.within.some((dir) => isInside(real, dir)) ? undefined : real;
}

function isInside(file: string, dir: string): boolean {
  const rel = path.relative(dir, file);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

function outsideError(file: string, target: string, root: string): string {
  return `${path.basename(file)} is a symbolic link to ${target}, outside the search root ${root}: not followed (a link is followed only inside its search root or into the workspace's skills/, .agents/skills/ or .claude/skills/; to use what it points to, copy it in or pass that folder with --path)`;
}

/**
 * Why a root with no skill may hold some all the same: `SKILL.md` files below the folders the
 * scan skips, found by a bounded look that follows no link. Undefined when there are none.
 */
function skippedSkills(root: string, skipped: string[]): string | undefined {
  const found: string[] = [];
  let count = 0;
  let budget = 5000;
  const look = (dir: string, depth: number) => {
    if (depth > 8 || budget-- <= 0) return;
    for (const ent of readDir(dir)) {
      if (ent.isFile() && ent.name === 'SKILL.md') {
        count++;
        if (found.length < 3) found.push(path.relative(root, path.join(dir, ent.name)));
      } else if (ent.isDirectory()) look(path.join(dir, ent.name), depth + 1);
    }
  };
  for (const dir of skipped) look(dir, 0);
  if (!count) return undefined;
  const names = [...new Set(skipped.map((d) => path.basename(d)))].join(', ');
  return `${root} yields no skill, but ${count === 1 ? 'a SKILL.md lies' : `${count} SKILL.md files lie`} below ${names}, which the scan skips (${found.join(', ')}${count > found.length ? ', …' : ''}): node_modules, .git and .agent-apps are never searched — move the skill folders out, or pass their parent folder with --path`;
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
    // Dot files are never skills; dot folders are walked (SKIP_DIRS says which folders are not).
    if (ent.name.startsWith('.') && !ent.isDirectory() && !ent.isSymbolicLink()) continue;
    const file = path.join(dir, ent.name);
    const stem = codeSkillStem(ent.name);
    const md = ent.name.endsWith('.md') ? ent.name.slice(0, -3) : null;
    let isDir = ent.isDirectory();
    if (ent.isSymbolicLink()) {
      if (SKIP_DIRS.has(ent.name)) continue;
      let real: string | undefined;
      let linkedDir = false;
      try {
        real = fs.realpathSync(file);
        linkedDir = fs.statSync(real).isDirectory();
      } catch {
        // Dangling or looping: only a name that looks like a skill file is worth reporting (peek does).
      }
      if (ent.name.startsWith('.') && !linkedDir) continue;
      // Named like a skill (a folder, NAME.md, NAME.skill.ts) and leading out of the root: a
      // broken entry naming its target (running it is E_CONFIG saying so), never read or walked.
      const target = real !== undefined ? leavesRoot(file, w) : undefined;
      if (target !== undefined && (stem !== null || md !== null ? !w.foldersOnly : linkedDir)) {
        const kind: ToolKind = stem !== null ? 'code' : md !== null ? 'markdown' : 'skill-folder';
        add(index, { name: stem ?? md ?? ent.name, kind, file, root: index.root, dir, error: outsideError(file, target, index.root), outside: target }, !isRoot);
        continue;
      }
      if (linkedDir) {
        // A linked folder inside the root (skills are often installed as links) is walked once:
        // its real path is remembered, so a link that leads back up is a loop that ends here. One
        // named like a skill file is never walked: it is broken below, wherever it leads.
        if (stem === null && md === null) {
          if (w.seen.has(real!)) continue;
          w.seen.add(real!);
        }
        isDir = true;
      }
    } else if (isDir) {
      try {
        w.seen.add(fs.realpathSync(file));
      } catch {}
    }
    if (isDir) {
      if (SKIP_DIRS.has(ent.name)) {
        w.skipped.push(file);
        continue;
      }
      const inside = readDir(file);
      const skillFile = skillFileIn(inside);
      if (skillFile) {
        // An Agent Skills folder: its other files are resources, not skills.
        const skillMd = path.join(file, skillFile);
        const out = inside.find((e) => e.name === skillFile)?.isSymbolicLink() ? leavesRoot(skillMd, w) : undefined;
        if (out !== undefined) {
          add(index, { name: ent.name, kind: 'skill-folder', file: skillMd, root: index.root, dir: file, error: outsideError(skillMd, out, index.root), outside: out }, false);
          continue;
        }
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
