// `agent-apps list` (docs/cli.md): the skills on the search paths, broken ones with their error.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { createRuntime } from '../../runtime.ts';
import { LIBRARY_ROOT } from '../../loader/search-paths.ts';
import { painter } from '../shared/output.ts';
import { redact } from '../../core/redact.ts';
import { globalsOf, runtimeOptions } from '../shared/runtime-options.ts';
import type { CliIO } from '../shared/io.ts';
import type { ToolSummary } from '../../core/types.ts';

export function registerList(program: Command, io: CliIO): void {
  program
    .command('list')
    .description('list the skills on the search paths: name, kind, description, origin')
    .option('-a, --all', 'include hidden skills (built-in middleware, shell, file-write …)')
    .addHelpText(
      'after',
      `
Broken skills (malformed frontmatter, duplicate names, files that fail to import) are listed
with their error, and make the exit code 2. A skill that loaded with a warning (a SKILL.md whose
name differs from its folder, an unknown field …) is marked WARN; 'agent-apps validate' and
'agent-apps describe NAME' explain it. A skill that shadows another of the same name in a later
search root says so. SKILL.md skills with 'user-invocable: false' are listed with --all only.

Examples:
  $ agent-apps list
  $ agent-apps list --all --json | jq '.[].name'`,
    )
    .action(async (opts: { all?: boolean }, cmd: Command) => {
      const g = globalsOf(cmd);
      const runtime = await createRuntime(runtimeOptions(g));
      try {
        const config = runtime.root.locals.config;
        // A listing for a person: SKILL.md's user-invocable / disable-model-invocation decide (docs/writing-skills.md).
        // Errors may quote what configured them (an MCP server's URL): redacted (docs/security.md, "Secrets").
        const list = redact(await runtime.root.globals.internals.kernel.registry.list(config.paths, { all: !!opts.all, user: true })) as ToolSummary[];
        const cwd = config.cwd;
        if (g.json) io.stdout.write(JSON.stringify(list) + '\n');
        else io.stdout.write(await table(list, cwd, g.color !== false, io));
        // A root that yields no skill though SKILL.md files lie below a folder the scan skips says so.
        const notices = runtime.root.globals.internals.kernel.registry.notices(config.paths);
        if (notices.length) {
          const paint = await painter(io.stderr, g.color !== false);
          for (const n of notices) io.stderr.write(`${paint.yellow('warn')}: ${n}\n`);
        }
        const warned = list.filter((s) => !s.error && s.warnings?.length);
        if (warned.length && !g.json) {
          const paint = await painter(io.stderr, g.color !== false);
          const names = warned.map((s) => s.name);
          const shown = names.length > 5 ? `${names.slice(0, 5).join(', ')} and ${names.length - 5} more` : names.join(', ');
          io.stderr.write(`${paint.yellow('warn')}: ${shown} loaded with warnings: agent-apps validate (or describe NAME) explains them\n`);
        }
        const untrusted = list.filter((s) => s.untrusted);
        if (untrusted.length) {
          const paint = await painter(io.stderr, g.color !== false);
          const names = untrusted.map((s) => s.name).join(', ');
          io.stderr.write(`${paint.yellow('warn')}: MCP server${untrusted.length === 1 ? '' : 's'} ${names} not started: this workspace is not trusted to start processes — 'agent-apps trust' shows what it would run and trusts it\n`);
        }
        const broken = list.filter((s) => s.error);
        if (broken.length) {
          // The table shows each error cut to fit; the whole message goes to stderr.
          const paint = await painter(io.stderr, g.color !== false);
          for (const b of broken) io.stderr.write(`${paint.red('error')}: ${b.name}: ${b.error}\n`);
          (program as Command & { exitCodeOverride?: number }).exitCodeOverride = 2;
        }
      } finally {
        await runtime.close();
      }
    });
}

/** Where a listed skill comes from; a server's skill (kind mcp-skill) names its server before its skill:// uri. */
function originText(s: { origin: string | null; kind: string; server?: string }, cwd: string): string {
  const origin = shortOrigin(s.origin, cwd);
  return s.kind === 'mcp-skill' && s.server ? `mcp://${s.server} ${origin}` : origin;
}

export function shortOrigin(origin: string | null, cwd: string): string {
  if (!origin) return '(builtin)';
  if (!origin.startsWith('file://')) return origin.length > 50 ? origin.slice(0, 47) + '…' : origin;
  const file = fileURLToPath(origin);
  if (file.startsWith(LIBRARY_ROOT + path.sep)) return `(library) ${path.relative(LIBRARY_ROOT, file)}`;
  const rel = path.relative(cwd, file);
  return rel.startsWith('..') ? file : rel;
}

async function table(list: ToolSummary[], cwd: string, color: boolean, io: CliIO): Promise<string> {
  const paint = await painter(io.stdout, color);
  if (!list.length) return 'No skills found. Create skills/hello.md, or run `agent-apps list --all` to see the built-ins.\n';
  const rows = list.map((s) => [s.name, s.kind, s.error ? `ERROR ${s.error}` : s.untrusted ? `UNTRUSTED ${s.untrusted}` : (s.warnings?.length ? 'WARN ' : '') + shadowNote(s, cwd) + (s.description ?? ''), originText(s, cwd)]);
  const width = [0, 1].map((i) => Math.max(...rows.map((r) => r[i]!.length), i === 0 ? 4 : 4));
  const descWidth = Math.max(20, Math.min(60, (io.stdout.columns ?? 120) - width[0]! - width[1]! - 40));
  const fit = (s: string, n: number) => (s.length > n ? s.slice(0, n - 1) + '…' : s.padEnd(n));
  let out = paint.bold(`${'NAME'.padEnd(width[0]!)}  ${'KIND'.padEnd(width[1]!)}  ${'DESCRIPTION'.padEnd(descWidth)}  ORIGIN`) + '\n';
  list.forEach((s, i) => {
    const r = rows[i]!;
    const cell = fit(r[2]!, descWidth);
    const desc = s.error ? paint.red(cell) : s.warnings?.length ? paint.yellow(cell.slice(0, 4)) + cell.slice(4) : cell;
    out += `${paint.cyan(r[0]!.padEnd(width[0]!))}  ${r[1]!.padEnd(width[1]!)}  ${desc}  ${paint.dim(r[3]!)}\n`;
  });
  return out;
}

/** An MCP tool a skill of the same name wins over is listed, marked (docs/mcp.md); so is the skill. */
function shadowNote(s: ToolSummary & { shadowedBy?: string; shadows?: string }, cwd: string): string {
  if (s.shadowedBy !== undefined) return `(shadowed by ${shortOrigin(s.shadowedBy, cwd)}) `;
  if (s.shadows !== undefined) return `(shadows ${shortOrigin(s.shadows, cwd)}) `;
  return '';
}
