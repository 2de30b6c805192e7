// `agent-apps validate [PATH…]` (docs/writing-skills.md): each problem of the skill files as
// `FILE:LINE:COL: error|warning: message [rule]`, then `N errors, N warnings`; `--json` prints
// `[{ file, line, column, severity, message, rule }]`. Exit 0, or 2 when there is an error.
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { createRuntime } from '../../runtime.ts';
import { LIBRARY_ROOT } from '../../loader/search-paths.ts';
import { validatePaths } from '../../loader/validate.ts';
import { painter } from '../shared/output.ts';
import { globalsOf, runtimeOptions } from '../shared/runtime-options.ts';
import type { CliIO } from '../shared/io.ts';

export function registerValidate(program: Command, io: CliIO): void {
  program
    .command('validate')
    .description('check skill files and folders — Agent Skills SKILL.md folders and agent-apps skills — and report every problem')
    .argument('[paths...]', 'skill files, skill folders or folders of skills (default: the search roots of this workspace)')
    .addHelpText(
      'after',
      `
A SKILL.md folder is checked against the Agent Skills format (agentskills.io): name (1-64
characters, a-z 0-9 and '-', no leading, trailing or double '-', equal to the folder's name),
description (required, at most 1024 characters), compatibility (at most 500), allowed-tools,
metadata, unknown fields. NAME.md and NAME.skill.ts skills are loaded as 'list' loads them.
Errors make a skill broken (it does not load); warnings load it anyway.

Without paths: every search root of this workspace (--path, AGENT_APPS_PATH, skills/,
.agents/skills/, .claude/skills/, ~/.agent-apps/skills, ~/.agents/skills), not the library.

Exit codes: 0 no errors (warnings allowed), 2 at least one error.

Examples:
  $ agent-apps validate
  $ agent-apps validate .claude/skills/pdf
  $ agent-apps validate ~/src/skills --json | jq '.[] | select(.severity == "error")'`,
    )
    .action(async (paths: string[], _opts: unknown, cmd: Command) => {
      const g = globalsOf(cmd);
      const runtime = await createRuntime(runtimeOptions(g));
      try {
        const config = runtime.root.locals.config;
        const cwd = config.cwd;
        const targets = paths.length ? paths.map((p) => path.resolve(cwd, p)) : config.paths.filter((p) => p !== LIBRARY_ROOT && exists(p));
        const kernel = runtime.root.globals.internals.kernel;
        const { problems, checked } = await validatePaths(targets, kernel.registry);
        const errors = problems.filter((p) => p.severity === 'error').length;
        const warnings = problems.length - errors;
        if (g.json) {
          io.stdout.write(JSON.stringify(problems.map(({ file, line, column, severity, message, rule }) => ({ file, line, column, severity, message, rule }))) + '\n');
        } else {
          const paint = await painter(io.stdout, g.color !== false);
          let out = '';
          for (const p of problems) {
            const sev = p.severity === 'error' ? paint.red('error') : paint.yellow('warning');
            out += `${shown(p.file, cwd)}:${p.line}:${p.column}: ${sev}: ${p.message} ${paint.dim(`[${p.rule}]`)}\n`;
          }
          const where = paths.length ? '' : targets.length ? '' : ' (no search root of this workspace exists: give a path)';
          out += `${errors} ${errors === 1 ? 'error' : 'errors'}, ${warnings} ${warnings === 1 ? 'warning' : 'warnings'}${paint.dim(` (${checked} skill ${checked === 1 ? 'file' : 'files'} checked)`)}${where}\n`;
          io.stdout.write(out);
        }
        if (errors) (program as Command & { exitCodeOverride?: number }).exitCodeOverride = 2;
      } finally {
        await runtime.close();
      }
    });
}

function shown(file: string, cwd: string): string {
  const rel = path.relative(cwd, file);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file;
}

function exists(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
