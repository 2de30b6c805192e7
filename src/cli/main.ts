// The `agent-apps` program (SPEC §12): global options, one file per subcommand.
import { Command, CommanderError } from 'commander';
import { EXIT, exitCodeFor, formatError, painter } from './output.ts';
import { registerRun } from './run.ts';
import { registerList } from './list.ts';
import { registerDescribe } from './describe.ts';
import { registerTail } from './tail.ts';
import { registerRuns } from './runs.ts';
import { registerDebug } from './debug.ts';
import { registerInit } from './init.ts';
import { registerNew } from './new.ts';
import { registerMcp } from './mcp.ts';
import { registerAcp } from './acp.ts';
import { registerInteractive } from './repl.ts';
import { registerCompletion } from './completion.ts';
import { registerValidate } from './validate.ts';
import { registerWorker } from './worker.ts';
import { registerTest } from './test-cmd.ts';
import { VERSION } from './version.ts';
import { addGlobalOptions, formatInArgv, globalsOf } from './runtime-options.ts';
import { StreamJson } from './stream-json.ts';
import { isCommanderExit, pointToGlobalOptions, throwUsageErrors, usageError } from './usage.ts';
import type { CliIO } from './io.ts';

export type { CliIO } from './io.ts';

export function buildProgram(io: CliIO): Command {
  const program = new Command('agent-apps');
  program
    .description('Run skills — Markdown prompts and TypeScript modules — through one middleware kernel.')
    .version(VERSION, '-V, --version', 'print the version')
    // Program options only before the subcommand: after `run SKILL` a flag may be the skill's.
    .enablePositionalOptions()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .addHelpText(
      'after',
      `
Examples:
  $ agent-apps run greet --name Ada          run a skill with args
  $ agent-apps run summarize --text "…" --json
  $ agent-apps list --all                    every skill, hidden ones too
  $ agent-apps describe greet                cascade and middleware chain
  $ agent-apps debug greet --name Ada        the pipeline as a tree with timings
  $ agent-apps tail --level warn             events of the latest run
  $ agent-apps runs                          past runs, newest first (runs show ID)
  $ agent-apps test                          run the eval files (*.test.yaml)
  $ agent-apps --set model.provider=replay run summarize --text hi

Exit codes: 0 ok, 1 the skill failed, 2 usage or configuration error, 3 refused (abort),
130 interrupted (SIGINT), 143 terminated (SIGTERM).`,
    );
  addGlobalOptions(program);
  registerRun(program, io);
  registerList(program, io);
  registerDescribe(program, io);
  registerTail(program, io);
  registerRuns(program, io);
  registerDebug(program, io);
  registerInit(program, io);
  registerNew(program, io);
  registerMcp(program, io);
  registerAcp(program, io);
  registerInteractive(program, io);
  registerCompletion(program, io);
  registerValidate(program, io);
  registerWorker(program, io);
  registerTest(program, io);
  // Every subcommand accepts the global options too: `list --json`, `describe greet --set x=1`.
  for (const cmd of program.commands) addGlobalOptions(cmd, true);
  // The global options are listed once, in this help; each subcommand's help points here.
  pointToGlobalOptions(program);
  throwUsageErrors(program);
  return program;
}

/** Runs the CLI and returns the exit code (the launcher exits with it). */
export async function main(argv: string[], io: CliIO = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin }): Promise<number> {
  const started = Date.now();
  const program = buildProgram(io);
  if (argv.length === 0) {
    program.outputHelp();
    return EXIT.ok;
  }
  let active: Command = program;
  program.hook('preAction', (_program, actionCommand) => {
    active = actionCommand;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return (program as Command & { exitCodeOverride?: number }).exitCodeOverride ?? EXIT.ok;
  } catch (err) {
    if (isCommanderExit(err)) return EXIT.ok;
    const g = globalsOf(active);
    const paint = await painter(io.stderr, g.color !== false && !argv.includes('--no-color'));
    const shown = err instanceof CommanderError ? usageError(err) : err;
    io.stderr.write(formatError(shown, { debug: !!g.debug && !(err instanceof CommanderError), paint }) + '\n');
    // stream-json (SPEC §18): a run that fails before it starts is its result line alone.
    const command = ((err as { command?: Command }).command ?? active).name();
    if ((command === 'run' || command === program.name()) && formatInArgv(argv) === 'stream-json') {
      new StreamJson(io.stdout).result({ run: undefined, exitCode: exitCodeFor(shown), error: shown, durationMs: Date.now() - started });
    }
    return exitCodeFor(shown);
  }
}
