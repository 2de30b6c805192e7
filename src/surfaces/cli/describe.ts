// `agent-apps describe <skill>` (docs/cli.md): declaration, origin, resolved cascade, ordered chain.
import type { Command } from 'commander';
import { createRuntime } from '../../runtime.ts';
import { yaml } from '../../core/yaml.ts';
import { redact } from '../../core/redact.ts';
import { diagnosticText } from '../../loader/agent-skills.ts';
import { painter } from '../shared/output.ts';
import { trustOf, type Trust } from '../../policy/approval.ts';
import { shortOrigin } from './list.ts';
import { globalsOf, runtimeOptions } from '../shared/runtime-options.ts';
import type { CliIO } from '../shared/io.ts';

export function registerDescribe(program: Command, io: CliIO): void {
  program
    .command('describe')
    .description('show a skill’s declaration, origin, resolved cascade metadata and middleware chain')
    .argument('<skill>', 'skill name or path')
    .addHelpText(
      'after',
      `
Trust (docs/agents.md) is how calls of the skill from agent code are gated — allow (the default), ask
(a person approves each call) or deny — with the file (or --set, or MCP server entry) that set it.
The chain is listed in the order it runs, each entry with the cascade level its key came from
(the library's main, a folder's main, the skill itself, or --set). A SKILL.md skill's warnings
(what 'agent-apps validate' reports) and argument-hint are shown, and so is the skill of the same
name that this one shadows in a later search root.

Examples:
  $ agent-apps describe hello
  $ agent-apps describe hello --json | jq '.chain[].name'
  $ agent-apps --set model.maxTurns=3 describe hello`,
    )
    .action(async (skill: string, _opts: unknown, cmd: Command) => {
      const g = globalsOf(cmd);
      const runtime = await createRuntime(runtimeOptions(g));
      try {
        // The resolved cascade holds what mains and --set configure, credentials too: printed
        // redacted, as the log and agent code see it (docs/security.md, "Secrets").
        const d = redact(await runtime.describe(skill)) as Awaited<ReturnType<typeof runtime.describe>>;
        const config = runtime.root.locals.config;
        const kernel = runtime.root.globals.internals.kernel;
        const tool = await kernel.resolve(skill, config.paths, config.cwd);
        const warnings = (tool.diagnostics ?? []).filter((x) => x.severity === 'warning').map(diagnosticText);
        // Only the skill a bare name finds shadows anything (a path ref may name a shadowed one).
        const winner = kernel.registry.lookup(tool.name, config.paths);
        const isWinner = winner !== undefined && ('decl' in winner ? winner === tool : winner.file === tool.file);
        const shadows = isWinner ? kernel.registry.shadowed(tool.name, config.paths) : undefined;
        const hint = tool.skill?.argumentHint;
        // The effective trust and where it came from; a bad value is said, not thrown.
        let trust: Trust | { error: string };
        try {
          trust = await trustOf(kernel, tool, config.paths);
        } catch (err) {
          trust = { error: (err as Error).message };
        }
        if (g.json) {
          io.stdout.write(JSON.stringify({ ...d, trust, warnings, ...(shadows ? { shadows } : {}), ...(hint !== undefined ? { argumentHint: hint } : {}) }) + '\n');
          return;
        }
        const paint = await painter(io.stdout, g.color !== false);
        const cwd = config.cwd;
        const t = d.tool;
        let out = `${paint.bold(t.name)}  ${paint.dim(shortOrigin(d.origin.uri, cwd))}\n`;
        if (t.description) out += `  ${t.description}\n`;
        if (hint !== undefined) out += `  ${paint.dim('arguments:')} ${hint}  ${paint.dim(`(agent-apps run ${t.name} --arguments "…")`)}\n`;
        if (shadows) out += `  ${paint.dim('shadows')} ${shortOrigin(shadows, cwd)}\n`;
        if (warnings.length) out += `\n${paint.yellow('warnings')}\n${warnings.map((w) => `  ${w}\n`).join('')}`;
        out += `\n${paint.bold('declaration')}\n`;
        out += indent(yaml().stringify({ visibility: t.visibility, role: t.role, tags: t.tags, ...(t.allowedTools ? { 'allowed-tools': t.allowedTools } : {}), ...(t.askTools ? { 'ask-tools': t.askTools } : {}), ...(t.params ? { params: t.params } : {}), ...(t.returns ? { returns: t.returns } : {}) }));
        out += `\n${paint.bold('trust')} ${'error' in trust ? paint.red(trust.error) : `${trust.value === 'allow' ? trust.value : paint.yellow(trust.value)}  ${paint.dim(trust.source === 'default' ? '(default)' : `from ${trust.from?.startsWith('file://') ? shortOrigin(trust.from, cwd) : trust.source}`)}`}\n`;
        out += `\n${paint.bold('metadata')} ${paint.dim('(resolved cascade)')}\n`;
        out += Object.keys(d.metadata).length ? indent(yaml().stringify(d.metadata)) : '  (none)\n';
        out += `\n${paint.bold('chain')} ${paint.dim('(in order)')}\n`;
        const w = Math.max(...d.chain.map((e) => e.name.length), 4);
        d.chain.forEach((e, i) => {
          const args = e.args === true ? '' : ` ${paint.dim(JSON.stringify(e.args))}`;
          out += `  ${String(i + 1).padStart(2)}. ${paint.cyan(e.name.padEnd(w))}  ${paint.dim('from ' + shortOrigin(e.from ?? null, cwd))}${args}\n`;
        });
        const hooks = (d as { hooks?: { next: { name: string }[]; invoke: { name: string }[] } }).hooks;
        if (hooks) out += `\n${paint.bold('hooks')}\n  $invoke: ${hooks.invoke.map((h) => h.name).join(', ') || '-'}\n  $next:   ${hooks.next.map((h) => h.name).join(', ') || '-'}\n`;
        io.stdout.write(out);
      } finally {
        await runtime.close();
      }
    });
}

function indent(text: string): string {
  return text.replace(/^/gm, '  ').replace(/ +$/gm, '');
}
