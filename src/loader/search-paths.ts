// Search paths (SPEC §4): --path flags, AGENT_APPS_PATH, the workspace's skills/,
// ~/.agent-apps/skills, the library's skills/ — first root that holds a name wins.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's own `skills/` (src/loader and dist/loader are both two levels below the package root). */
export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const LIBRARY_ROOT = path.join(PACKAGE_ROOT, 'skills');

/** The nearest ancestor of `cwd` that holds `skills/`, or `cwd` itself. */
export function findWorkspace(cwd: string): string {
  let dir = path.resolve(cwd);
  for (;;) {
    try {
      if (fs.statSync(path.join(dir, 'skills')).isDirectory()) return dir;
    } catch {}
    const parent = path.dirname(dir);
    if (parent === dir) return path.resolve(cwd);
    dir = parent;
  }
}

export function defaultPaths(opts: { cwd: string; workspace: string; paths?: string[]; env?: NodeJS.ProcessEnv }): string[] {
  const env = opts.env ?? process.env;
  const list: string[] = [];
  for (const p of opts.paths ?? []) list.push(path.resolve(opts.cwd, p));
  for (const p of (env.AGENT_APPS_PATH ?? '').split(':')) if (p) list.push(path.resolve(opts.cwd, p));
  list.push(path.join(opts.workspace, 'skills'));
  list.push(path.join(env.AGENT_APPS_HOME ?? path.join(os.homedir(), '.agent-apps'), 'skills'));
  list.push(LIBRARY_ROOT);
  return [...new Set(list)];
}
