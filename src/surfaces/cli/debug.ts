// `agent-apps debug <skill> [--PARAM VALUE …]` (docs/cli.md): runs the skill with the `debug` hooks
// on and prints the pipeline as an indented tree with timings on stderr; the result on stdout.
import type { Command } from 'commander';
import type { LogEvent } from '../../core/types.ts';
import type { Runtime } from '../../runtime.ts';
import { painter, type Painter } from '../shared/output.ts';
import { runSkill } from './run.ts';
import { globalsOf } from '../shared/runtime-options.ts';
import type { CliIO } from '../shared/io.ts';
import { buildTree, treeLines } from '../shared/debug-tree.ts';

export function registerDebug(program: Command, io: CliIO): void {
  program
    .command('debug')
    .description('run a skill with pipeline debugging on and print the pipeline as a tree with timings')
    .argument('<skill>', 'skill name or path')
    .argument('[args...]', 'the skill’s args as --NAME VALUE')
    .option('--break <tool>', 'pause at this tool’s pipeline or chain entry (repeatable); interactive runs wait for Enter', (v: string, p: string[]) => [...p, v], [] as string[])
    .option('--args-json <json>', "args as a JSON object, or '-' to read it from stdin")
    .allowUnknownOption()
    .allowExcessArguments()
    .addHelpText(
      'after',
      `
The tree goes to stderr when the run ends, before the result (alone on stdout). Each line is a
pipeline (▸) with its total time, or one of its chain entries (·) with the time spent in that
entry itself (its pre- and post-steps, and any tool it invoked, which is indented under it).
Breakpoints emit a breakpoint-hit event; in a terminal the run pauses until you press Enter,
otherwise it is printed and the run goes on.

Examples:
  $ agent-apps debug hello --name Ada                # hello: the skill agent-apps init writes
  $ agent-apps debug hello --name Ada --break hello  # pause where hello's pipeline starts
  $ agent-apps tail --tag debug                      # the same events, afterwards`,
    )
    .action(async (skill: string, tokens: string[], opts: { break: string[]; argsJson?: string }, cmd: Command) => {
      const g = globalsOf(cmd);
      const overrides = { debug: opts.break.length ? { break: opts.break } : true };
      const code = await runSkill(skill, tokens, opts, g, io, {
        overrides,
        after: async (runtime: Runtime) => {
          const paint = await painter(io.stderr, g.color !== false);
          const events = runtime.root.manager.tail({ tag: 'debug' });
          // The debug events are info events: a higher --log-level drops them before anyone sees them.
          if (!events.length && (g.logLevel === 'warn' || g.logLevel === 'error')) {
            io.stderr.write(`${paint.yellow('warn')}: no pipeline tree — --log-level ${g.logLevel} hides the debug events (level info)\n`);
          } else io.stderr.write(renderTree(events, paint));
        },
      });
      (program as Command & { exitCodeOverride?: number }).exitCodeOverride = code;
    });
}

/**
 * Rebuilds the pipeline from enter/exit pairs. A pipeline's chain entries are listed side by
 * side under it (the onion nests them, but reading them as a list is clearer); a pipeline
 * started inside an entry — the tool that entry invoked — is indented under that entry.
 */
export function renderTree(events: LogEvent[], paint: Painter): string {
  const roots = buildTree(events);
  let out = '';
  for (const { depth, node, ms } of treeLines(roots)) {
    const mark = node.kind === 'pipeline' ? paint.bold('▸') : node.kind === 'break' ? paint.yellow('⏸') : paint.dim('·');
    const time = ms !== undefined ? paint.dim(` ${ms.toFixed(3)} ms`) : '';
    const err = node.error ? ' ' + paint.red(`✗ ${node.error}`) : '';
    out += `${'  '.repeat(depth)}${mark} ${node.kind === 'pipeline' ? paint.cyan(node.label) : node.label}${time}${err}\n`;
  }
  return out;
}
