// `agent-apps new <name> [--code]` (SPEC §12): a skill in the workspace's skills/ (the nearest
// ancestor folder with skills/, else ./skills) from templates/ — a Markdown agent skill with a
// replay cassette, so it runs before any model is configured, or a TypeScript code skill.
import path from 'node:path';
import type { Command } from 'commander';
import { AgentAppsError } from '../kernel/errors.ts';
import { NAME_RE } from '../loader/names.ts';
import { scanRoot } from '../loader/scan.ts';
import { LIBRARY_ROOT, findWorkspace } from '../loader/search-paths.ts';
import { commandCwd, relative, writePlanned, type PlannedFile } from './scaffold.ts';
import { globalsOf } from './runtime-options.ts';
import { painter } from './output.ts';
import type { CliIO } from './io.ts';

export function registerNew(program: Command, io: CliIO): void {
  program
    .command('new')
    .description('scaffold a skill in the workspace’s skills/: a Markdown agent skill, or --code for TypeScript')
    .argument('<name>', 'the skill’s name: lower-case letters, digits and -, starting with a letter or digit')
    .option('--code', 'a code skill (NAME.skill.ts) instead of a Markdown skill (NAME.md and NAME.cassette.yaml)')
    .addHelpText(
      'after',
      `
The workspace is the nearest folder at or above the current one (or --cwd) that holds skills/;
without one, skills/ is created here. A Markdown skill comes with a cassette that replays a
placeholder answer, so \`agent-apps run NAME\` works before any model is set up. Existing files
are never overwritten: new refuses (exit 2).

Examples:
  $ agent-apps new summarize                 skills/summarize.md + summarize.cassette.yaml
  $ agent-apps new word-count --code         skills/word-count.skill.ts
  $ agent-apps run word-count --input "a b c"`,
    )
    .action(async (name: string, opts: { code?: boolean }, cmd: Command) => {
      if (!NAME_RE.test(name)) {
        throw new AgentAppsError('E_USAGE', `invalid skill name '${name}': use lower-case letters, digits and '-', starting with a letter or digit (${NAME_RE.source})`);
      }
      if (name === 'main') {
        throw new AgentAppsError('E_USAGE', "'main' is the workspace's root authority, not a skill to scaffold: agent-apps init creates skills/main.md");
      }
      const cwd = commandCwd(cmd);
      const skills = path.join(findWorkspace(cwd), 'skills');
      const index = scanRoot(skills);
      const main = index.names.get('main')?.file;
      const existing = index.names.get(name);
      if (existing) {
        throw new AgentAppsError('E_USAGE', `a skill named '${name}' already exists: ${relative(cwd, existing.file)} — choose another name, or edit that file`);
      }
      const files: PlannedFile[] = opts.code
        ? [{ from: 'skill.skill.ts', to: path.join(skills, `${name}.skill.ts`) }]
        : [
            { from: 'skill.md', to: path.join(skills, `${name}.md`) },
            { from: 'skill.cassette.yaml', to: path.join(skills, `${name}.cassette.yaml`) },
          ];
      const created = writePlanned(files, { name }, cwd, 'choose another name, or edit that file');
      // Shadowing is allowed (it is how a built-in is replaced), but rarely what a new skill wants.
      const builtin = scanRoot(LIBRARY_ROOT).names.get(name);
      if (builtin) {
        const paint = await painter(io.stderr, globalsOf(cmd).color !== false);
        io.stderr.write(`${paint.yellow('warn')}: '${name}' is also a built-in skill: in this workspace yours replaces it everywhere it is used, middleware chains included\n`);
      }
      if (globalsOf(cmd).json) {
        io.stdout.write(JSON.stringify({ name, kind: opts.code ? 'code' : 'markdown', created }) + '\n');
        return;
      }
      let out = `Created ${created.map((f) => relative(cwd, f)).join(', ')}\n\nNext:\n`;
      out += `  agent-apps run ${name} --input "…"\n`;
      out += `  agent-apps describe ${name}          its cascade and middleware chain\n`;
      if (!opts.code) {
        // Point at a main skill only where there is one: outside a workspace there is none yet.
        out += main
          ? `  then set a model for every skill in ${relative(cwd, main)} (model:) and delete the model: block in ${name}.md\n`
          : `  then put your model in the model: block of ${name}.md (provider, baseURL, modelId …),\n  or run agent-apps init here for a skills/main.md that sets one for every skill\n`;
      }
      io.stdout.write(out);
    });
}
