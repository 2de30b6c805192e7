// `agent-apps new <name> [--code | --skill-folder]` (docs/cli.md): a skill in the workspace's skills/
// (the nearest workspace above, else ./skills) from templates/ — a Markdown agent skill with a
// replay cassette, so it runs before any model is configured, a TypeScript code skill, or an
// Agent Skills folder (NAME/SKILL.md, docs/writing-skills.md) that other clients read too.
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { AgentAppsError } from '../../core/errors.ts';
import { MAX_NAME_LENGTH, NAME_RE } from '../../loader/names.ts';
import { scanRoot } from '../../loader/scan.ts';
import { LIBRARY_ROOT, WORKSPACE_SKILL_DIRS, findWorkspace } from '../../loader/search-paths.ts';
import { commandCwd, relative, writePlanned, type PlannedFile } from '../shared/scaffold.ts';
import { globalsOf } from '../shared/runtime-options.ts';
import { painter } from '../shared/output.ts';
import type { CliIO } from '../shared/io.ts';

export function registerNew(program: Command, io: CliIO): void {
  program
    .command('new')
    .description('scaffold a skill in the workspace’s skills/: a Markdown agent skill, --code for TypeScript, --skill-folder for an Agent Skills folder')
    .argument('<name>', 'the skill’s name: lower-case letters, digits and -, starting with a letter or digit')
    .option('--code', 'a code skill (NAME.skill.ts) instead of a Markdown skill (NAME.md and NAME.cassette.yaml)')
    .option('--skill-folder', 'an Agent Skills folder (NAME/SKILL.md, replay.yaml, references/) that Claude Code, Codex and other clients read too')
    .addHelpText(
      'after',
      `
The workspace is the nearest folder at or above the current one (or --cwd) that holds skills/;
without one, skills/ is created here. A Markdown skill comes with a cassette that replays a
placeholder answer, so \`agent-apps run NAME\` works before any model is set up. Existing files
are never overwritten: new refuses (exit 2). A --skill-folder goes to the workspace's skills/
(or its .agents/skills/ or .claude/skills/ when only that one exists), passes
'agent-apps validate', and keeps agent-apps' settings under its agent-apps: key.

Examples:
  $ agent-apps new summarize                 skills/summarize.md + summarize.cassette.yaml
  $ agent-apps new word-count --code         skills/word-count.skill.ts
  $ agent-apps new pdf-notes --skill-folder  skills/pdf-notes/SKILL.md, replay.yaml, references/
  $ agent-apps run word-count --input "a b c"`,
    )
    .action(async (name: string, opts: { code?: boolean; skillFolder?: boolean }, cmd: Command) => {
      if (!NAME_RE.test(name)) {
        throw new AgentAppsError('E_USAGE', `invalid skill name '${name}': use lower-case letters, digits and '-', starting with a letter or digit (${NAME_RE.source})`);
      }
      if (opts.code && opts.skillFolder) throw new AgentAppsError('E_USAGE', '--code and --skill-folder exclude each other: a skill is one or the other');
      if (opts.skillFolder && (name.length > MAX_NAME_LENGTH || name.includes('--') || name.endsWith('-'))) {
        throw new AgentAppsError('E_USAGE', `invalid Agent Skills name '${name}': at most ${MAX_NAME_LENGTH} characters, no '--', not ending in '-' (agentskills.io)`);
      }
      if (name === 'main') {
        throw new AgentAppsError('E_USAGE', "'main' is the workspace's root authority, not a skill to scaffold: agent-apps init creates skills/main.md");
      }
      const cwd = commandCwd(cmd);
      const ws = findWorkspace(cwd);
      // A folder may go where the workspace keeps its Agent Skills, when skills/ is not there.
      const skills = path.join(ws, (opts.skillFolder && WORKSPACE_SKILL_DIRS.find((d) => isDir(path.join(ws, d)))) || 'skills');
      const index = scanRoot(skills);
      const main = index.names.get('main')?.file;
      const existing = index.names.get(name);
      if (existing) {
        throw new AgentAppsError('E_USAGE', `a skill named '${name}' already exists: ${relative(cwd, existing.file)} — choose another name, or edit that file`);
      }
      const folder = path.join(skills, name);
      const files: PlannedFile[] = opts.skillFolder
        ? [
            { from: 'skill-folder/SKILL.md', to: path.join(folder, 'SKILL.md') },
            { from: 'skill-folder/replay.yaml', to: path.join(folder, 'replay.yaml') },
            { from: 'skill-folder/references/REFERENCE.md', to: path.join(folder, 'references', 'REFERENCE.md') },
          ]
        : opts.code
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
        io.stdout.write(JSON.stringify({ name, kind: opts.skillFolder ? 'skill-folder' : opts.code ? 'code' : 'markdown', created }) + '\n');
        return;
      }
      if (opts.skillFolder) {
        let out = `Created ${created.map((f) => relative(cwd, f)).join(', ')}\n\nNext:\n`;
        out += `  agent-apps run ${name} --arguments "…"\n`;
        out += `  agent-apps validate ${relative(cwd, folder)}     the Agent Skills checks\n`;
        out += `  then write the instructions in SKILL.md; for a live model, `;
        out += main
          ? `set one for every skill in ${relative(cwd, main)} (model:) and delete the model: line under agent-apps: (and replay.yaml)\n`
          : `put yours in the model: line under agent-apps: (provider, baseURL, modelId …) and delete replay.yaml\n`;
        io.stdout.write(out);
        return;
      }
      let out = `Created ${created.map((f) => relative(cwd, f)).join(', ')}\n\nNext:\n`;
      out += `  agent-apps run ${name} --input "…"\n`;
      out += `  agent-apps describe ${name}          its cascade and middleware chain\n`;
      if (!opts.code) {
        // Point at a main skill only where there is one: outside a workspace there is none yet,
        // and the one `init` writes has its model: commented out — say to set it (docs/cli.md).
        out += main
          ? `  then set a model for every skill in ${relative(cwd, main)} (model:) and delete the model: block in ${name}.md\n`
          : `  then, for a live model, replace provider: replay and cassette: in ${name}.md with yours\n` +
            `  (provider, baseURL, modelId …) — or run agent-apps init here, set model: in its skills/main.md\n` +
            `  (one model for every skill) and delete the model: block in ${name}.md\n`;
      }
      io.stdout.write(out);
    });
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}
