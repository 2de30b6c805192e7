// The `agent-apps` program (docs/cli.md): global options, one file per subcommand.
import { Command, CommanderError, Help } from 'commander';
import { EXIT, exitCodeFor, formatError, painter } from '../shared/output.ts';
import { VERSION } from '../../core/version.ts';
import { addGlobalOptions, formatInArgv, globalsOf } from '../shared/runtime-options.ts';
import { StreamJson } from '../shared/stream-json.ts';
import { GLOBAL_OPTIONS_LINE, isCommanderExit, pointToGlobalOptions, throwUsageErrors, usageError } from '../shared/usage.ts';
import type { CliIO } from '../shared/io.ts';

export type { CliIO } from '../shared/io.ts';

type Register = (program: Command, io: CliIO) => void;

/**
 * The subcommands, in the program help's order. Each module is imported only when its command
 * runs or its help is asked (cli.coldstart, issue 8: loading all of them cost a `run` ~20
 * modules). `term` and `description` are what the program help lists before the module loads:
 * keep them equal to what the module defines (arguments, description), or the help changes.
 */
// repl.ts defines repl and tutor, completion.ts completion and __complete: one loader each.
const loadRepl = async (): Promise<Register> => (await import('./repl.ts')).registerInteractive;
const loadCompletion = async (): Promise<Register> => (await import('./completion.ts')).registerCompletion;
const COMMANDS: { name: string; term: string; description: string; hidden?: boolean; load: () => Promise<Register> }[] = [
  { name: 'run', term: 'run [options] [skill] [args...]', description: 'invoke a skill (default: the workspace’s main) and print its result', load: async () => (await import('./run.ts')).registerRun },
  { name: 'list', term: 'list [options]', description: 'list the skills on the search paths: name, kind, description, origin', load: async () => (await import('./list.ts')).registerList },
  { name: 'describe', term: 'describe [options] <skill>', description: 'show a skill’s declaration, origin, resolved cascade metadata and middleware chain', load: async () => (await import('./describe.ts')).registerDescribe },
  { name: 'tail', term: 'tail [options]', description: 'show the log events of the latest run (or --run ID), optionally following it live', load: async () => (await import('./tail.ts')).registerTail },
  { name: 'runs', term: 'runs [options]', description: 'list past runs of this workspace, newest first (show one as a transcript, prune old ones)', load: async () => (await import('./runs.ts')).registerRuns },
  { name: 'debug', term: 'debug [options] <skill> [args...]', description: 'run a skill with pipeline debugging on and print the pipeline as a tree with timings', load: async () => (await import('./debug.ts')).registerDebug },
  { name: 'init', term: 'init [options] [dir]', description: 'scaffold a workspace: skills/main.md, a hello skill that runs offline with its evals, a .gitignore', load: async () => (await import('./init.ts')).registerInit },
  { name: 'new', term: 'new [options] <name>', description: 'scaffold a skill in the workspace’s skills/: a Markdown agent skill, --code for TypeScript, --skill-folder for an Agent Skills folder', load: async () => (await import('./new.ts')).registerNew },
  { name: 'mcp', term: 'mcp [options]', description: 'MCP: serve the workspace’s skills to MCP clients (Claude Code, Claude Desktop, Cursor …)', load: async () => (await import('./mcp.ts')).registerMcp },
  { name: 'serve', term: 'serve [options]', description: 'run the workspace’s gateways (web, webhook, websocket, email, slack), schedules and event routes until SIGTERM / SIGINT', load: async () => (await import('./serve.ts')).registerServe },
  { name: 'acp', term: 'acp [options]', description: 'serve the workspace as an ACP agent over stdio, for editors (Zed, JetBrains, Kiro)', load: async () => (await import('./acp.ts')).registerAcp },
  { name: 'repl', term: 'repl [options]', description: 'an interactive prompt: run skills as SKILL --param value, with Tab completion and history (needs a terminal)', load: loadRepl },
  { name: 'tutor', term: 'tutor [options]', description: 'a guided tour in your own workspace: write and run a skill, a middleware, an agent skill, debug (needs a terminal)', load: loadRepl },
  { name: 'completion', term: 'completion [options] <shell>', description: 'print a shell completion script (bash, zsh or fish): commands, options, and the skills of the workspace you are in', load: loadCompletion },
  { name: '__complete', term: '__complete [options]', description: 'print the completion candidates for a command line (used by the completion scripts)', hidden: true, load: loadCompletion },
  { name: '__acp-mcp-relay', term: '__acp-mcp-relay [options]', description: 'relay an ACP agent’s stdio MCP connection to the agent-apps run that started the agent (started by the ACP provider)', hidden: true, load: async () => (await import('./acp-relay.ts')).registerAcpRelay },
  { name: 'validate', term: 'validate [options] [paths...]', description: 'check skill files and folders — Agent Skills SKILL.md folders and agent-apps skills — and report every problem', load: async () => (await import('./validate.ts')).registerValidate },
  { name: 'trust', term: 'trust [options] [path]', description: 'trust a workspace to start what it configures (its .mcp.json servers, SKILL.md !`…` spans); --list, --revoke', load: async () => (await import('./trust.ts')).registerTrust },
  { name: 'worker', term: 'worker [options]', description: 'run skills for `run --remote` from a NATS JetStream work queue (or show the queues)', load: async () => (await import('./worker.ts')).registerWorker },
  { name: 'test', term: 'test [options] [paths...]', description: 'run eval files (*.test.yaml): each case invokes a skill and checks its result', load: async () => (await import('./test-cmd.ts')).registerTest },
];

/** The placeholder commands not loaded yet, with the term the program help shows for them. */
type Lazy = { term: string; load: () => Promise<void> };
const lazyOf = new WeakMap<Command, Lazy>();

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
  $ agent-apps init my-app && cd my-app      a workspace with two skills, main and hello
  $ agent-apps run hello --name Ada          run a skill with args
  $ agent-apps run hello --name Ada --json
  $ agent-apps list --all                    every skill, hidden ones too
  $ agent-apps describe hello                cascade and middleware chain
  $ agent-apps debug hello --name Ada        the pipeline as a tree with timings
  $ agent-apps tail --level warn             events of the latest run
  $ agent-apps runs                          past runs, newest first (runs show ID)
  $ agent-apps test                          run the eval files (*.test.yaml)
  $ agent-apps --set model.provider=openai --set model.baseURL=http://127.0.0.1:11434/v1 run hello

Exit codes: 0 ok, 1 the skill failed, 2 usage or configuration error, 3 refused (abort),
130 interrupted (SIGINT), 143 terminated (SIGTERM).`,
    );
  addGlobalOptions(program);
  // A placeholder per subcommand (name, description, the global options) for the program help,
  // the unknown-command suggestions and the dispatch; loadCommand fills it in from its module.
  const modules = new Map<() => Promise<Register>, Promise<void>>();
  for (const entry of COMMANDS) {
    const cmd = program.command(entry.name, { hidden: !!entry.hidden }).description(entry.description);
    lazyOf.set(cmd, {
      term: entry.term,
      load: () => {
        // One module may define two commands (repl and tutor): it fills in both placeholders.
        let done = modules.get(entry.load);
        if (!done) {
          done = entry.load().then((register) => {
            // Every subcommand accepts the global options too: `list --json`, `describe greet --set x=1`.
            // Added here, when its module loads, not to all twenty placeholders up front (~300
            // options built on every start; docs/cli.md, "Start-up").
            const own = program.commands.filter((c) => COMMANDS.find((e) => e.name === c.name())?.load === entry.load);
            for (const c of own) addGlobalOptions(c, true);
            register(registrar(program), io);
            for (const c of own) {
              lazyOf.delete(c);
              // The global options are listed once, in the program help; each subcommand's help
              // points there (after the module's own help text), and so do its subcommands'.
              c.addHelpText('after', GLOBAL_OPTIONS_LINE);
              pointToGlobalOptions(c);
              // Commander's errors are thrown, for the commands the module nested in it too.
              throwUsageErrors(c);
            }
          });
          modules.set(entry.load, done);
        }
        return done;
      },
    });
  }
  program.configureHelp({
    subcommandTerm(this: Help, cmd: Command) {
      return lazyOf.get(cmd)?.term ?? Help.prototype.subcommandTerm.call(this, cmd);
    },
  });
  // A command dispatched without loadCommandsFor having loaded it (it should not happen) is loaded here.
  program.hook('preSubcommand', async (_program, sub) => {
    await loadCommand(sub);
    if (sub.name() === '__complete') await Promise.all(program.commands.map(loadCommand));
  });
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
    await loadCommandsFor(program, argv);
    await program.parseAsync(argv, { from: 'user' });
    return (program as Command & { exitCodeOverride?: number }).exitCodeOverride ?? EXIT.ok;
  } catch (err) {
    if (isCommanderExit(err)) return EXIT.ok;
    const g = globalsOf(active);
    const paint = await painter(io.stderr, g.color !== false && !argv.includes('--no-color'));
    const shown = err instanceof CommanderError ? usageError(err) : err;
    io.stderr.write(formatError(shown, { debug: !!g.debug && !(err instanceof CommanderError), paint }) + '\n');
    // stream-json (docs/ci.md): a run that fails before it starts is its result line alone.
    const command = ((err as { command?: Command }).command ?? active).name();
    if ((command === 'run' || command === program.name()) && formatInArgv(argv) === 'stream-json') {
      new StreamJson(io.stdout).result({ run: undefined, exitCode: exitCodeFor(shown), error: shown, durationMs: Date.now() - started });
    }
    return exitCodeFor(shown);
  }
}

/**
 * What a subcommand module's register function is given as the program: `program.command(name)`
 * returns the placeholder of that name (the module configures it: arguments, options, action);
 * anything else is the program itself.
 */
function registrar(program: Command): Command {
  return new Proxy(program, {
    get(target, key) {
      if (key === 'command') {
        return (nameAndArgs: string, ...rest: unknown[]) => {
          const cmd = target.commands.find((c) => c.name() === nameAndArgs);
          if (cmd && lazyOf.has(cmd)) return cmd;
          return (target.command as (...a: unknown[]) => Command).call(target, nameAndArgs, ...rest);
        };
      }
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
    set(target, key, value) {
      return Reflect.set(target, key, value, target);
    },
  });
}

/** Loads a placeholder subcommand's module; then it is the command its module defines. */
async function loadCommand(cmd: Command): Promise<void> {
  await lazyOf.get(cmd)?.load();
}

/**
 * Loads the module of the subcommand `argv` names (or whose help `help NAME` asks for) before
 * commander parses it: the first operand after the program's options, skipping their values.
 */
async function loadCommandsFor(program: Command, argv: string[]): Promise<void> {
  const valued = new Set(program.options.filter((o) => o.required || o.optional).flatMap((o) => [o.long, o.short]));
  const operands: string[] = [];
  for (let i = 0; i < argv.length && operands.length < 2; i++) {
    const arg = argv[i]!;
    if (arg === '--') break;
    if (arg.startsWith('-') && arg !== '-') {
      if (valued.has(arg)) i++;
      continue;
    }
    operands.push(arg);
    if (arg !== 'help') break;
  }
  const name = operands[0] === 'help' ? operands[1] : operands[0];
  const cmd = name === undefined ? undefined : program.commands.find((c) => c.name() === name);
  if (cmd) await loadCommand(cmd);
  if (name === '__complete') await Promise.all(program.commands.map(loadCommand));
}
