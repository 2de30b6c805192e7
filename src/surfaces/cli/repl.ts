// `agent-apps repl` and `agent-apps tutor` (docs/terminal.md): the same as `run repl` / `run tutor` — the
// ink apps in skills/repl.skill.ts and skills/tutor.skill.ts — with the UI's loading started
// while the runtime is made, so the prompt is ready sooner. Without a terminal both refuse with
// E_NOT_INTERACTIVE (exit 2), as the skills do.
import type { Command } from 'commander';
import { loadTui } from '../tui/load.ts';
import { runSkill } from './run.ts';
import { globalsOf } from '../shared/runtime-options.ts';
import type { CliIO } from '../shared/io.ts';

export function registerInteractive(program: Command, io: CliIO): void {
  program
    .command('repl')
    .description('an interactive prompt: run skills as SKILL --param value, with Tab completion and history (needs a terminal)')
    .addHelpText(
      'after',
      `
Keys: Tab completes skill names and --params; ↑ ↓ history (~/.agent-apps/history); Ctrl-C cancels
the running command; Ctrl-D, or Ctrl-C twice on an empty line, leaves. :help lists the commands
(:describe SKILL, :set KEY.PATH=VALUE, :list, :quit). docs/terminal.md has every key.

Examples:
  $ agent-apps repl
  $ agent-apps --set model.provider=replay repl`,
    )
    .action(async (_opts: unknown, cmd: Command) => {
      const code = await interactiveSkill('repl', [], cmd, io);
      (program as Command & { exitCodeOverride?: number }).exitCodeOverride = code;
    });
  program
    .command('tutor')
    .description('a guided tour in your own workspace: write and run a skill, a middleware, an agent skill, debug (needs a terminal)')
    .option('--restart', 'start again from the first step')
    .addHelpText(
      'after',
      `
Each step is checked for real; run it again to go on at the first unfinished step (the progress is
kept in .agent-apps/tutor.json).

Examples:
  $ agent-apps init tour && cd tour && agent-apps tutor
  $ agent-apps tutor --restart`,
    )
    .action(async (opts: { restart?: boolean }, cmd: Command) => {
      const code = await interactiveSkill('tutor', opts.restart ? ['--restart'] : [], cmd, io);
      (program as Command & { exitCodeOverride?: number }).exitCodeOverride = code;
    });
}

function interactiveSkill(skill: string, tokens: string[], cmd: Command, io: CliIO): Promise<number> {
  // The UI will be shown: load it while the runtime is made (a failure shows when it is used).
  if (io.stdin.isTTY && io.stdout.isTTY && io.stderr.isTTY && process.env.TERM !== 'dumb') loadTui().catch(() => undefined);
  return runSkill(skill, tokens, {}, globalsOf(cmd), io);
}
