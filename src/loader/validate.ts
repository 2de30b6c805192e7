// `agent-apps validate` (docs/writing-skills.md): every problem of the skill files under some paths, placed.
// SKILL.md folders get the Agent Skills checks in full (every error, not only the first);
// NAME.md and code skills are loaded as `list` would load them, and their error — malformed YAML,
// a bad declaration, an import that fails — is reported where it is.
import fs from 'node:fs';
import path from 'node:path';
import type { AgentAppsError } from '../core/errors.ts';
import type { Diagnostic } from '../core/types.ts';
import { checkAgentSkillFile } from './agent-skills.ts';
import { codeSkillStem } from './names.ts';
import type { Registry } from './registry.ts';
import { scanRoot, skillFileIn, type IndexEntry } from './scan.ts';

export interface Problem extends Diagnostic {
  /** Absolute path of the file. */
  file: string;
  line: number;
  column: number;
}

export interface ValidateResult {
  problems: Problem[];
  /** How many skill files were checked. */
  checked: number;
}

/**
 * Checks each path: a skill file (`SKILL.md`, `NAME.md`, `NAME.skill.ts` …), a skill folder (one
 * holding `SKILL.md`), or a folder of skills (walked as a search root is).
 */
export async function validatePaths(targets: readonly string[], registry: Registry): Promise<ValidateResult> {
  const problems: Problem[] = [];
  const done = new Set<string>();
  let checked = 0;
  const add = (file: string, list: Diagnostic[]) => {
    for (const d of list) problems.push({ ...d, file, line: d.line ?? 1, column: d.column ?? 1 });
  };
  const checkEntry = async (entry: IndexEntry) => {
    if (done.has(entry.file)) return;
    done.add(entry.file);
    checked++;
    // A link out of the search root is reported, never read (docs/writing-skills.md, "Where folders are found").
    if (entry.outside !== undefined) {
      add(entry.file, [{ severity: 'error', rule: 'link-outside', message: entry.error ?? `a symbolic link to ${entry.outside}, outside the search root` }]);
      return;
    }
    if (entry.kind === 'skill-folder') {
      add(entry.file, checkAgentSkillFile(entry.file).diagnostics);
      return;
    }
    if (entry.error) {
      add(entry.file, [{ severity: 'error', rule: ruleOf(entry.error), message: entry.error }]);
      return;
    }
    try {
      const tool = await registry.load(entry);
      add(entry.file, tool.diagnostics ?? []);
    } catch (err) {
      add(entry.file, [loadProblem(err, entry.file)]);
    }
  };

  for (const target of targets) {
    let st: fs.Stats;
    try {
      st = fs.statSync(target);
    } catch (err) {
      problems.push({ file: target, line: 1, column: 1, severity: 'error', rule: 'file', message: `cannot read ${target} (${(err as { code?: string }).code ?? (err as Error).message})` });
      continue;
    }
    if (st.isDirectory()) {
      const skillFile = skillFileIn(safeReaddir(target));
      if (skillFile) {
        await checkEntry({ name: path.basename(target), kind: 'skill-folder', file: path.join(target, skillFile), root: path.dirname(target), dir: target });
        continue;
      }
      const index = scanRoot(target);
      const entries = [...index.names.values(), ...[...index.mains.values()].filter((m) => index.names.get('main') !== m)];
      // Broken entries: a duplicate name is an error of its own; a SKILL.md whose name the scan
      // refused gets the whole Agent Skills check (its every problem, placed).
      for (const b of index.broken) {
        if (b.kind === 'skill-folder') await checkEntry(b.outside !== undefined ? b : { ...b, error: undefined });
        else if (!done.has(b.file)) {
          done.add(b.file);
          checked++;
          add(b.file, [{ severity: 'error', rule: ruleOf(b.error ?? ''), message: b.error ?? 'broken' }]);
        }
      }
      for (const e of entries.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))) {
        if (e.error?.startsWith('duplicate')) {
          if (!done.has(e.file)) {
            done.add(e.file);
            checked++;
            add(e.file, [{ severity: 'error', rule: 'duplicate', message: e.error }]);
          }
          continue;
        }
        await checkEntry(e);
      }
      continue;
    }
    const base = path.basename(target);
    const kind = base === 'SKILL.md' || base === 'skill.md' ? 'skill-folder' : codeSkillStem(base) !== null ? 'code' : base.endsWith('.md') ? 'markdown' : undefined;
    if (!kind) {
      problems.push({ file: target, line: 1, column: 1, severity: 'error', rule: 'file', message: `${base} is not a skill file (SKILL.md, NAME.md or NAME.skill.ts / .js / .mjs) nor a folder` });
      continue;
    }
    const stem = kind === 'skill-folder' ? path.basename(path.dirname(target)) : (codeSkillStem(base) ?? base.slice(0, -3));
    await checkEntry({ name: stem, kind, file: target, root: path.dirname(target), dir: path.dirname(target) });
  }
  problems.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) || a.line - b.line || a.column - b.column);
  return { problems, checked };
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

function loadProblem(err: unknown, file: string): Diagnostic {
  const e = err as AgentAppsError;
  const place = e.place?.file === file ? e.place : undefined;
  let message = String(e?.message ?? err);
  // The message starts with its place (`FILE:LINE:COL (key): `); the problem carries it apart.
  if (message.startsWith(file)) message = message.slice(file.length).replace(/^(:\d+)*( \([^)]*\))?:\s*/, (m) => (/\(([^)]*)\)/.exec(m)?.[1] ? `${/\(([^)]*)\)/.exec(m)![1]} ` : ''));
  return { severity: 'error', rule: ruleOf(message, e.place?.key), message, ...(place?.line !== undefined ? { line: place.line } : {}), ...(place?.column !== undefined ? { column: place.column } : {}) };
}

function ruleOf(message: string, key?: string): string {
  if (message.startsWith('malformed frontmatter')) return 'yaml';
  if (message.startsWith('duplicate')) return 'duplicate';
  if (/not a regular file|over the .* limit|does not exist|cannot read/.test(message)) return 'file';
  if (/skill name|^name /.test(message)) return 'name';
  if (message.startsWith('cannot load skill') || message.includes('did not settle')) return 'import';
  if (key) return 'field';
  return 'load';
}
