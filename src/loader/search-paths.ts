// Search paths (docs/concepts.md): --path flags, AGENT_APPS_PATH, the workspace's skills/, .agents/skills/
// and .claude/skills/, then ~/.agent-apps/skills, ~/.agents/skills and the library's skills/ —
// the first root that holds a name wins.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root (src/loader and dist/loader are both two levels below it). */
export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The library: the package's own `skills/`, TypeScript that Node runs by type stripping — or the
 * build's JavaScript copy of it, `dist/skills/`, when this runtime is the build (dist/) and the
 * TypeScript cannot run: Node strips types only outside node_modules, where an installed package
 * lives, and a packed package ships dist/ without skills/ (docs/ci.md, "Installing agent-apps").
 * In a checkout, running from dist/ or src/, skills/ is the library, so an edit to it counts at once.
 */
export function libraryRoot(root: string = PACKAGE_ROOT, built: boolean = !import.meta.url.endsWith('.ts')): string {
  const source = path.join(root, 'skills');
  const compiled = path.join(root, 'dist', 'skills');
  if (!built || !isDir(compiled)) return source;
  return root.split(path.sep).includes('node_modules') || !isDir(source) ? compiled : source;
}
export const LIBRARY_ROOT = libraryRoot();

/** The workspace's skill folders, in search order: ours, then the cross-client conventions. */
export const WORKSPACE_SKILL_DIRS = ['skills', path.join('.agents', 'skills'), path.join('.claude', 'skills')] as const;

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** `~/.agent-apps` (AGENT_APPS_HOME). */
export function agentAppsHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.AGENT_APPS_HOME ?? path.join(os.homedir(), '.agent-apps');
}

/** `~/.agents`, the cross-client user folder (AGENT_APPS_AGENTS_HOME, for tests and sandboxes). */
export function agentsHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.AGENT_APPS_AGENTS_HOME ?? path.join(os.homedir(), '.agents');
}

/**
 * True when `dir` is a workspace (docs/concepts.md): it holds `skills/`, `.agents/skills/`,
 * `.claude/skills/` or `.agent-apps/`. In the home folder only `skills/` counts: its
 * `.agents/skills/`, `.claude/skills/` and `.agent-apps/` are the user-level folders (and every
 * project below home would otherwise be part of one workspace, home).
 */
export function isWorkspace(dir: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (isDir(path.join(dir, 'skills'))) return true;
  const abs = path.resolve(dir);
  if (abs === path.resolve(os.homedir())) return false;
  if (isDir(path.join(abs, '.claude', 'skills'))) return true;
  if (path.join(abs, '.agents') !== path.resolve(agentsHome(env)) && isDir(path.join(abs, '.agents', 'skills'))) return true;
  return path.join(abs, '.agent-apps') !== path.resolve(agentAppsHome(env)) && isDir(path.join(abs, '.agent-apps'));
}

/** The nearest ancestor of `cwd` (itself included) that is a workspace, or `cwd` itself. */
export function findWorkspace(cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  let dir = path.resolve(cwd);
  for (;;) {
    if (isWorkspace(dir, env)) return dir;
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
  for (const d of WORKSPACE_SKILL_DIRS) list.push(path.join(opts.workspace, d));
  list.push(path.join(agentAppsHome(env), 'skills'));
  list.push(path.join(agentsHome(env), 'skills'));
  list.push(LIBRARY_ROOT);
  return [...new Set(list)];
}
