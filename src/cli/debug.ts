// `agent-apps debug <skill> [--PARAM VALUE …]` (SPEC §12): runs the skill with the `debug` hooks
// on and prints the pipeline as an indented tree with timings on stderr; the result on stdout.
import type { Command } from 'commander';
import type { LogEvent } from '../kernel/types.ts';
import type { Runtime } from '../kernel/runtime.ts';
import { painter, type Painter } from './output.ts';
import { runSkill } from './run.ts';
import { globalsOf } from './runtime-options.ts';
import type { CliIO } from './main.ts';

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
The tree goes to stderr (the result alone to stdout). Each line is a pipeline (▸) or a chain
entry (·) with its inclusive time. Breakpoints emit a breakpoint-hit event; in a terminal the
run pauses until you press Enter, otherwise it is printed and the run goes on.

Examples:
  $ agent-apps debug greet --name Ada
  $ agent-apps debug greet --name Ada --break execute
  $ agent-apps tail --tag debug          # the same events, afterwards`,
    )
    .action(async (skill: string, tokens: string[], opts: { break: string[]; argsJson?: string }, cmd: Command) => {
      const g = globalsOf(cmd);
      const overrides = { debug: opts.break.length ? { break: opts.break } : true };
      const code = await runSkill(skill, tokens, opts, g, io, {
        overrides,
        after: async (runtime: Runtime) => {
          const paint = await painter(io.stderr, g.color !== false);
          io.stderr.write(renderTree(runtime.root.manager.tail({ tag: 'debug' }), paint));
        },
      });
      (program as Command & { exitCodeOverride?: number }).exitCodeOverride = code;
    });
}

interface Node {
  label: string;
  kind: 'pipeline' | 'next' | 'break';
  duration?: number;
  error?: string;
  children: Node[];
}

/** Rebuilds the onion from enter/exit pairs: each enter opens a node, its exit closes it. */
export function renderTree(events: LogEvent[], paint: Painter): string {
  const roots: Node[] = [];
  const stack: Node[] = [];
  for (const e of events) {
    if (e.type === 'pipeline-enter' || e.type === 'next-enter') {
      const node: Node = { label: e.type === 'pipeline-enter' ? e.tool : String(e.entry), kind: e.type === 'pipeline-enter' ? 'pipeline' : 'next', children: [] };
      (stack.length ? stack[stack.length - 1]!.children : roots).push(node);
      stack.push(node);
    } else if (e.type === 'pipeline-exit' || e.type === 'next-exit') {
      const node = stack.pop();
      if (node) {
        node.duration = e.duration as number | undefined;
        if (e.error) node.error = String(e.error);
      }
    } else if (e.type === 'breakpoint-hit') {
      (stack.length ? stack[stack.length - 1]!.children : roots).push({ label: e.text ?? 'breakpoint', kind: 'break', children: [] });
    }
  }
  let out = '';
  const walk = (node: Node, depth: number) => {
    const mark = node.kind === 'pipeline' ? paint.bold('▸') : node.kind === 'break' ? paint.yellow('⏸') : paint.dim('·');
    const time = node.duration !== undefined ? paint.dim(` ${node.duration.toFixed(3)} ms`) : '';
    const err = node.error ? ' ' + paint.red(`✗ ${node.error}`) : '';
    out += `${'  '.repeat(depth)}${mark} ${node.kind === 'pipeline' ? paint.cyan(node.label) : node.label}${time}${err}\n`;
    for (const c of node.children) walk(c, depth + 1);
  };
  for (const r of roots) walk(r, 0);
  return out;
}
