// `agent-apps debug <skill> [--PARAM VALUE …]` (SPEC §12): runs the skill with the `debug` hooks
// on and prints the pipeline as an indented tree with timings on stderr; the result on stdout.
import type { Command } from 'commander';
import type { LogEvent } from '../kernel/types.ts';
import type { Runtime } from '../kernel/runtime.ts';
import { painter, type Painter } from './output.ts';
import { runSkill } from './run.ts';
import { globalsOf } from './runtime-options.ts';
import type { CliIO } from './io.ts';

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
The tree goes to stderr (the result alone to stdout). Each line is a pipeline (▸) with its
total time, or one of its chain entries (·) with the time spent in that entry itself (its pre-
and post-steps, and any tool it invoked, which is indented under it). Breakpoints emit a breakpoint-hit event; in a terminal the
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

interface Node {
  label: string;
  kind: 'pipeline' | 'next' | 'break';
  contextId?: string;
  duration?: number;
  error?: string;
  children: Node[];
}

/**
 * Rebuilds the pipeline from enter/exit pairs. A pipeline's chain entries are listed side by
 * side under it (the onion nests them, but reading them as a list is clearer); a pipeline
 * started inside an entry — the tool that entry invoked — is indented under that entry.
 */
export function renderTree(events: LogEvent[], paint: Painter): string {
  const roots: Node[] = [];
  const stack: Node[] = [];
  const top = () => (stack.length ? stack[stack.length - 1]!.children : roots);
  /** The open pipeline of a context: its chain entries (and breakpoints) are listed under it. */
  const pipelineOf = (contextId: string): Node | undefined => {
    for (let i = stack.length - 1; i >= 0; i--) if (stack[i]!.kind === 'pipeline' && stack[i]!.contextId === contextId) return stack[i];
    return undefined;
  };
  for (const e of events) {
    if (e.type === 'pipeline-enter') {
      const node: Node = { label: e.tool, kind: 'pipeline', contextId: e.contextId, children: [] };
      top().push(node);
      stack.push(node);
    } else if (e.type === 'next-enter') {
      const node: Node = { label: String(e.entry), kind: 'next', contextId: e.contextId, children: [] };
      (pipelineOf(e.contextId)?.children ?? top()).push(node);
      stack.push(node);
    } else if (e.type === 'pipeline-exit' || e.type === 'next-exit') {
      const node = stack.pop();
      if (node) {
        node.duration = e.duration as number | undefined;
        if (e.error) node.error = String(e.error);
      }
    } else if (e.type === 'breakpoint-hit') {
      // A breakpoint at an entry sits beside that entry, in its pipeline; one at a tool, where its pipeline starts.
      (pipelineOf(e.contextId)?.children ?? top()).push({ label: e.text ?? 'breakpoint', kind: 'break', children: [] });
    }
  }
  let out = '';
  const walk = (node: Node, depth: number, own?: number) => {
    const mark = node.kind === 'pipeline' ? paint.bold('▸') : node.kind === 'break' ? paint.yellow('⏸') : paint.dim('·');
    const ms = own ?? node.duration;
    const time = ms !== undefined ? paint.dim(` ${ms.toFixed(3)} ms`) : '';
    const err = node.error ? ' ' + paint.red(`✗ ${node.error}`) : '';
    out += `${'  '.repeat(depth)}${mark} ${node.kind === 'pipeline' ? paint.cyan(node.label) : node.label}${time}${err}\n`;
    // Entries nest in the onion, so an entry's own time is its time minus the next entry's.
    const entries = node.children.filter((c) => c.kind === 'next');
    for (const c of node.children) {
      let self: number | undefined;
      if (c.kind === 'next' && c.duration !== undefined) {
        const next = entries[entries.indexOf(c) + 1];
        self = next?.duration !== undefined ? Math.max(0, c.duration - next.duration) : c.duration;
      }
      walk(c, depth + 1, self);
    }
  };
  for (const r of roots) walk(r, 0);
  return out;
}
