// Where eval files are (docs/ci.md): `*.test.yaml` beside the skills — the workspace's search roots
// and --path folders, not the library or the user-level folders — or under the workspace's
// `tests/`, and `evals/evals.json` in an Agent Skills folder; or the files and folders named on
// the command line.
import fs from 'node:fs';
import path from 'node:path';
import { EVAL_SUFFIXES } from './eval-file.ts';
import { isAgentSkillsEvals } from './agent-skills.ts';

/** Folders never searched: dependencies, VCS data, run records, build output. */
const SKIPPED = new Set(['node_modules', '.git', '.agent-apps', 'dist']);

export const isEvalFile = (name: string): boolean => EVAL_SUFFIXES.some((s) => name.endsWith(s));

/**
 * The eval files under `targets` (a file is taken as it is; a folder is searched), sorted and
 * without repeats. A target that does not exist is skipped.
 */
export function findEvalFiles(targets: string[]): string[] {
  const found = new Set<string>();
  for (const target of targets) {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(target);
    } catch {
      continue;
    }
    if (stat.isDirectory()) walk(target, found);
    else found.add(path.resolve(target));
  }
  return [...found].sort();
}

function walk(dir: string, out: Set<string>): void {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const ent of entries) {
    const p = path.join(dir, ent.name);
    if (ent.isDirectory()) {
      if (!SKIPPED.has(ent.name)) walk(p, out);
    } else if ((ent.isFile() || ent.isSymbolicLink()) && (isEvalFile(ent.name) || isAgentSkillsEvals(p))) {
      out.add(path.resolve(p));
    }
  }
}
