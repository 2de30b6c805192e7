// What `init` and `new` share (docs/cli.md): copying files out of the package's templates/ with
// `{{name}}` filled in — all or nothing, and never over a file that is already there.
import fs from 'node:fs';
import path from 'node:path';
import { AgentAppsError } from '../../core/errors.ts';
import { PACKAGE_ROOT } from '../../loader/search-paths.ts';
import { globalsOf } from './runtime-options.ts';
import type { Command } from 'commander';

export const TEMPLATES = path.join(PACKAGE_ROOT, 'templates');

export interface PlannedFile {
  /** Template path, relative to templates/. */
  from: string;
  /** Absolute destination. */
  to: string;
}

/** Fills `{{key}}` placeholders; anything else in the template is copied as written. */
export function fill(text: string, vars: Record<string, string>): string {
  return text.replace(/\{\{(\w+)\}\}/g, (match, key: string) => vars[key] ?? match);
}

/**
 * Writes every planned file or none: existing destinations are all named in one usage error
 * (exit 2) before anything is written.
 */
export function writePlanned(files: PlannedFile[], vars: Record<string, string>, cwd: string, hint: string): string[] {
  const taken = files.filter((f) => fs.existsSync(f.to));
  if (taken.length) {
    const list = taken.map((f) => relative(cwd, f.to)).join(', ');
    throw new AgentAppsError('E_USAGE', `refusing to overwrite ${taken.length === 1 ? 'an existing file' : 'existing files'}: ${list} — ${hint}`);
  }
  for (const f of files) {
    const text = fill(fs.readFileSync(path.join(TEMPLATES, f.from), 'utf8'), vars);
    fs.mkdirSync(path.dirname(f.to), { recursive: true });
    // `wx`: a file that appeared since the check is still not overwritten.
    fs.writeFileSync(f.to, text, { flag: 'wx' });
  }
  return files.map((f) => f.to);
}

/** The working directory of a scaffolding command: `--cwd`, else the process's. */
export function commandCwd(cmd: Command): string {
  const g = globalsOf(cmd);
  const cwd = path.resolve(g.cwd ?? process.cwd());
  if (!isDirectory(cwd)) throw new AgentAppsError('E_USAGE', `--cwd: '${g.cwd}' is not a directory`);
  return cwd;
}

export function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** A path as the user would type it from `cwd`. */
export function relative(cwd: string, file: string): string {
  const rel = path.relative(cwd, file);
  return rel === '' ? '.' : rel.startsWith('..') ? file : rel;
}
