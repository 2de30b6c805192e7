// Commander's own usage errors (unknown option or command, missing argument, a bad choice) in the
// CLI's one format, `error [E_USAGE]: message` (exit 2), naming the command whose --help to read;
// and the one line each subcommand's help gives instead of repeating every global option.
import { CommanderError, type Command } from 'commander';
import { AgentAppsError } from '../../core/errors.ts';
import { closest } from './suggest.ts';

export const GLOBAL_OPTIONS_LINE = '\nGlobal options (--cwd, --path, --set, --debug, --json …): see agent-apps --help';

/** Commander errors that are not errors: help and version were printed. */
export function isCommanderExit(err: unknown): boolean {
  return err instanceof CommanderError && (err.exitCode === 0 || err.code === 'commander.helpDisplayed' || err.code === 'commander.help' || err.code === 'commander.version');
}

/**
 * Lets commander throw instead of printing: each command's errors carry that command (for the
 * hint), and the message is printed once, by the CLI, in its own format.
 */
export function throwUsageErrors(cmd: Command): void {
  cmd.configureOutput({ outputError: () => {} });
  cmd.exitOverride((err) => {
    throw Object.assign(err, { command: cmd });
  });
  for (const sub of cmd.commands) throwUsageErrors(sub);
}

/** Adds the global-options line to every subcommand's help (the program's own help lists them). */
export function pointToGlobalOptions(program: Command): void {
  const walk = (cmd: Command) => {
    for (const sub of cmd.commands) {
      sub.addHelpText('after', GLOBAL_OPTIONS_LINE);
      walk(sub);
    }
  };
  walk(program);
}

/** A commander error as E_USAGE: `unknown option '--jsn' (Did you mean --json?) — see 'agent-apps run --help'`. */
export function usageError(err: CommanderError): AgentAppsError {
  const cmd = (err as CommanderError & { command?: Command }).command;
  let message = err.message.replace(/^error: /, '').replace(/\.$/, '');
  // Commander suggests only among visible options; the global options are hidden on subcommands.
  const unknown = err.code === 'commander.unknownOption' && !/Did you mean/.test(message) ? /'(--[^'=]+)'/.exec(message)?.[1] : undefined;
  if (unknown && cmd) {
    const longs = [...new Set(ancestry(cmd).flatMap((c) => c.options.map((o) => o.long).filter((l): l is string => !!l)))];
    const near = closest(unknown, longs);
    if (near) message += ` (Did you mean ${near}?)`;
  }
  return new AgentAppsError('E_USAGE', `${message} — see '${cmd ? commandPath(cmd) : 'agent-apps'} --help'`);
}

function ancestry(cmd: Command): Command[] {
  const out: Command[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) out.push(c);
  return out;
}

function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}
