// The `agent-apps` program (SPEC §12): global options, one file per subcommand.
import { Command, CommanderError, Option } from 'commander';
import { EXIT, exitCodeFor, formatError, painter } from './output.ts';
import { registerRun } from './run.ts';
import { registerList } from './list.ts';
import { registerDescribe } from './describe.ts';
import { VERSION } from './version.ts';

export interface CliIO {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  stdin: NodeJS.ReadStream;
}

export function buildProgram(io: CliIO): Command {
  const program = new Command('agent-apps');
  program
    .description('Run skills — Markdown prompts and TypeScript modules — through one middleware kernel.')
    .version(VERSION, '-V, --version', 'print the version')
    .option('--cwd <dir>', 'run as if started in <dir>')
    .option('--path <dir>', 'prepend a skill search path (repeatable)', collect, [])
    .option('--set <key.path=value>', 'override cascade metadata; VALUE is YAML (repeatable)', collect, [])
    .option('--debug', 'instrument the pipeline (= --set debug=true) and print stacks on errors')
    .option('--profile', 'time every pipeline and chain entry and print a table')
    .addOption(new Option('--log-level <level>', 'minimum log level').choices(['trace', 'debug', 'info', 'warn', 'error']))
    .option('--json', 'print results and listings as JSON on one line')
    .option('--no-color', 'disable colour (NO_COLOR is honoured too)')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .exitOverride()
    .addHelpText(
      'after',
      `
Examples:
  $ agent-apps run greet --name Ada          run a skill with args
  $ agent-apps run summarize --text "…" --json
  $ agent-apps list --all                    every skill, hidden ones too
  $ agent-apps describe greet                cascade and middleware chain
  $ agent-apps --set model.provider=replay run summarize --text hi

Exit codes: 0 ok, 1 the skill failed, 2 usage or configuration error, 3 refused (abort),
130 interrupted (SIGINT), 143 terminated (SIGTERM).`,
    );
  registerRun(program, io);
  registerList(program, io);
  registerDescribe(program, io);
  return program;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Runs the CLI and returns the exit code (the launcher exits with it). */
export async function main(argv: string[], io: CliIO = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin }): Promise<number> {
  const program = buildProgram(io);
  if (argv.length === 0) {
    program.outputHelp();
    return EXIT.ok;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return (program as Command & { exitCodeOverride?: number }).exitCodeOverride ?? EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.ok;
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    const opts = program.opts();
    const paint = await painter(io.stderr, opts.color !== false);
    io.stderr.write(formatError(err, { debug: !!opts.debug, paint }) + '\n');
    return exitCodeFor(err);
  }
}
