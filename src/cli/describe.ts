// `agent-apps describe <skill>` (SPEC §12): declaration, origin, resolved cascade, ordered chain.
import type { Command } from 'commander';
import { createRequire } from 'node:module';
import { createRuntime } from '../kernel/runtime.ts';
import { painter } from './output.ts';
import { shortOrigin } from './list.ts';
import { globalsOf, runtimeOptions } from './runtime-options.ts';
import type { CliIO } from './io.ts';

// yaml is loaded when first needed, not at start-up.
const yaml = (): typeof import('yaml') => createRequire(import.meta.url)('yaml') as typeof import('yaml');

export function registerDescribe(program: Command, io: CliIO): void {
  program
    .command('describe')
    .description('show a skill’s declaration, origin, resolved cascade metadata and middleware chain')
    .argument('<skill>', 'skill name or path')
    .addHelpText(
      'after',
      `
The chain is listed in the order it runs, each entry with the cascade level its key came from
(the library's main, a folder's main, the skill itself, or --set).

Examples:
  $ agent-apps describe greet
  $ agent-apps describe greet --json | jq '.chain[].name'
  $ agent-apps --set model.provider=replay describe summarize`,
    )
    .action(async (skill: string, _opts: unknown, cmd: Command) => {
      const g = globalsOf(cmd);
      const runtime = await createRuntime(runtimeOptions(g));
      try {
        const d = await runtime.describe(skill);
        if (g.json) {
          io.stdout.write(JSON.stringify(d) + '\n');
          return;
        }
        const paint = await painter(io.stdout, g.color !== false);
        const cwd = runtime.root.locals.config.cwd;
        const t = d.tool;
        let out = `${paint.bold(t.name)}  ${paint.dim(shortOrigin(d.origin.uri, cwd))}\n`;
        if (t.description) out += `  ${t.description}\n`;
        out += `\n${paint.bold('declaration')}\n`;
        out += indent(yaml().stringify({ visibility: t.visibility, role: t.role, tags: t.tags, ...(t.allowedTools ? { 'allowed-tools': t.allowedTools } : {}), ...(t.params ? { params: t.params } : {}), ...(t.returns ? { returns: t.returns } : {}) }));
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
