// `agent-apps init [dir]` (docs/cli.md): a workspace from templates/workspace — skills/main.md (the
// project's authority), a `hello` agent skill that replays a cassette so it runs offline, its
// eval file (`agent-apps test`, docs/ci.md, passing offline too), and a .gitignore for the run
// records.
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { AgentAppsError } from '../../core/errors.ts';
import { RUNS_DIR } from '../shared/reporters.ts';
import { readTrust, trustFolder } from '../../policy/workspace-trust.ts';
import { TEMPLATES, commandCwd, isDirectory, relative, writePlanned, type PlannedFile } from '../shared/scaffold.ts';
import { globalsOf } from '../shared/runtime-options.ts';
import type { CliIO } from '../shared/io.ts';

// npm leaves `.gitignore` files out of published packages, so the template is `gitignore`.
const GITIGNORE_TEMPLATE = 'gitignore';
const IGNORED = RUNS_DIR.split(path.sep)[0] + '/';

export function registerInit(program: Command, io: CliIO): void {
  program
    .command('init')
    .description('scaffold a workspace: skills/main.md, a hello skill that runs offline with its evals, a .gitignore')
    .argument('[dir]', 'the workspace folder, created if missing', '.')
    .addHelpText(
      'after',
      `
Creates skills/main.md (the project's root authority: its metadata cascades to every skill),
skills/hello.md with hello.cassette.yaml (an agent skill that replays a recorded model run, so it
works with no network), skills/hello.test.yaml (its evals: agent-apps test runs them, offline),
and .gitignore (or adds ${IGNORED} to an existing one). Existing files are never overwritten: init
refuses (exit 2) and writes nothing.

Examples:
  $ agent-apps init my-project && cd my-project
  $ agent-apps run hello --name Ada
  $ agent-apps test                           the evals in skills/hello.test.yaml
  $ agent-apps init                           the current folder`,
    )
    .action((dir: string, _opts: unknown, cmd: Command) => {
      const cwd = commandCwd(cmd);
      const root = path.resolve(cwd, dir);
      if (fs.existsSync(root) && !isDirectory(root)) throw new AgentAppsError('E_USAGE', `init: '${dir}' exists and is not a directory`);
      const source = path.join(TEMPLATES, 'workspace');
      const files: PlannedFile[] = listFiles(source)
        .filter((rel) => rel !== GITIGNORE_TEMPLATE)
        .map((rel) => ({ from: path.join('workspace', rel), to: path.join(root, rel) }));
      const gitignore = path.join(root, '.gitignore');
      const hasGitignore = fs.existsSync(gitignore);
      if (!hasGitignore) files.push({ from: path.join('workspace', GITIGNORE_TEMPLATE), to: gitignore });
      const created = writePlanned(files, {}, cwd, 'init scaffolds a new workspace: choose an empty folder, e.g. agent-apps init my-project');
      const updated: string[] = [];
      // An existing .gitignore is the user's: add the run records to it rather than refuse.
      if (hasGitignore && addIgnore(gitignore)) updated.push(gitignore);
      // init trusts what it creates (docs/security.md): the templates start no process, so the trust
      // covers "nothing" — a .mcp.json the folder held already, or one added later, still asks.
      if (!readTrust().folders[fs.realpathSync(root)]) trustFolder(root, []);

      if (globalsOf(cmd).json) {
        io.stdout.write(JSON.stringify({ workspace: root, created, updated }) + '\n');
        return;
      }
      let out = `Created a workspace in ${relative(cwd, root)}:\n`;
      for (const f of created) out += `  ${path.relative(root, f)}\n`;
      for (const f of updated) out += `  ${path.relative(root, f)} (added ${IGNORED})\n`;
      out += '\nNext:\n';
      if (root !== cwd) out += `  cd ${relative(cwd, root)}\n`;
      out += '  agent-apps run hello --name Ada     an agent skill, replayed offline\n';
      out += '  agent-apps test                     its evals (skills/hello.test.yaml), offline\n';
      out += '  agent-apps new my-skill --code      a TypeScript skill (without --code: Markdown)\n';
      io.stdout.write(out);
    });
}

/** Files under `dir`, relative to it, in a stable order. */
function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const ent of fs.readdirSync(path.join(dir, rel), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const child = rel ? path.join(rel, ent.name) : ent.name;
      if (ent.isDirectory()) walk(child);
      else out.push(child);
    }
  };
  walk('');
  return out;
}

/** Appends the run-records line unless the file already ignores them; true if it changed. */
function addIgnore(file: string): boolean {
  const text = fs.readFileSync(file, 'utf8');
  if (text.split(/\r?\n/).some((line) => /^\/?\.agent-apps\/?\s*$/.test(line.trim()))) return false;
  fs.appendFileSync(file, `${text === '' || text.endsWith('\n') ? '' : '\n'}${IGNORED}\n`);
  return true;
}
