// `agent-apps run [skill] [--PARAM VALUE …]` (SPEC §12).
import type { Command } from 'commander';
import { createRuntime, type Runtime } from '../kernel/runtime.ts';
import { ToolNotFoundError } from '../kernel/errors.ts';
import type { Kernel } from '../kernel/orchestrator.ts';
import type { JsonObject } from '../kernel/types.ts';
import { EXIT, exitCodeFor, formatError, formatResult, painter } from './output.ts';
import { parseSkillArgs, readArgsJson } from './skill-args.ts';
import { runtimeOptions, type GlobalOptions } from './runtime-options.ts';
import type { CliIO } from './main.ts';

export function registerRun(program: Command, io: CliIO): void {
  program
    .command('run')
    .description('invoke a skill (default: the workspace’s main) and print its result')
    .argument('[skill]', 'skill name, or a path to a skill file', 'main')
    .argument('[args...]', 'the skill’s args as --NAME VALUE (coerced by its params schema)')
    .option('--args-json <json>', "args as a JSON object, or '-' to read it from stdin")
    .allowUnknownOption()
    .allowExcessArguments()
    .addHelpText(
      'after',
      `
Args: --flag alone is true, a repeated flag is an array, --obj.key v nests, and values are
coerced by the skill's params schema. The result goes to stdout (a string raw, anything else as
JSON; --json always one JSON line); everything else goes to stderr.

Examples:
  $ agent-apps run greet --name Ada
  $ agent-apps run resize --sizes 16 --sizes 32 --opts.format png
  $ echo '{"name":"Ada"}' | agent-apps run greet --args-json -
  $ agent-apps run ./skills/greet.skill.ts --name Ada --json | jq .`,
    )
    .action(async (skill: string, tokens: string[], opts: { argsJson?: string }) => {
      const g = program.opts() as GlobalOptions;
      const code = await runSkill(skill, tokens, opts, g, io);
      (program as Command & { exitCodeOverride?: number }).exitCodeOverride = code;
    });
}

export async function runSkill(skill: string, tokens: string[], opts: { argsJson?: string }, g: GlobalOptions, io: CliIO): Promise<number> {
  const rtOpts = runtimeOptions(g);
  const interactive = !!(io.stdin.isTTY && io.stdout.isTTY);
  const controller = new AbortController();
  const runtime = await createRuntime({ ...rtOpts, interactive, signal: controller.signal });
  if (rtOpts.logLevel) runtime.root.manager.configure({ level: rtOpts.logLevel, global: true });
  const stop = installSignals(controller, runtime, io);
  try {
    const kernel = runtime.root.globals.internals.kernel as Kernel;
    const config = runtime.root.locals.config;
    let params: unknown;
    try {
      params = (await kernel.resolve(skill, config.paths, config.cwd)).decl.params;
    } catch (err) {
      if (skill === 'main' && err instanceof ToolNotFoundError) {
        throw new ToolNotFoundError('main', [], `this workspace (${config.workspace}) has no main skill — create skills/main.md, or name a skill: agent-apps run <skill>`);
      }
      throw err;
    }
    const fromJson = await readArgsJson(opts.argsJson, io.stdin);
    const args: JsonObject = { ...(fromJson ?? {}), ...parseSkillArgs(tokens, params) };
    const result = await Promise.race([runtime.invoke(skill, args), stop.interrupted]);
    const out = formatResult(result, !!g.json);
    if (out !== undefined) await write(io.stdout, out.endsWith('\n') ? out : out + '\n');
    return EXIT.ok;
  } catch (err) {
    if (stop.signal) return stop.signal === 'SIGINT' ? EXIT.interrupted : EXIT.terminated;
    const paint = await painter(io.stderr, g.color !== false);
    io.stderr.write(formatError(err, { debug: !!g.debug, paint }) + '\n');
    return exitCodeFor(err);
  } finally {
    stop.dispose();
    await runtime.close();
  }
}

interface SignalState {
  signal: 'SIGINT' | 'SIGTERM' | undefined;
  interrupted: Promise<never>;
  dispose(): void;
}

/** SIGINT / SIGTERM abort the root context; a second SIGINT exits at once (SPEC §8). */
function installSignals(controller: AbortController, runtime: Runtime, io: CliIO): SignalState {
  let reject!: (err: unknown) => void;
  const state: SignalState = {
    signal: undefined,
    interrupted: new Promise<never>((_, r) => (reject = r)),
    dispose() {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
    },
  };
  state.interrupted.catch(() => {});
  const handle = (sig: 'SIGINT' | 'SIGTERM') => {
    if (state.signal) {
      if (sig === 'SIGINT') process.exit(EXIT.interrupted);
      return;
    }
    state.signal = sig;
    io.stderr.write(`\n${sig === 'SIGINT' ? 'interrupted' : 'terminated'} — stopping (press Ctrl-C again to exit at once)\n`);
    controller.abort(sig);
    reject(Object.assign(new Error(sig), { code: 'E_ABORTED' }));
    void runtime;
  };
  const onInt = () => handle('SIGINT');
  const onTerm = () => handle('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return state;
}

function write(stream: NodeJS.WriteStream, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (!stream.write(text)) stream.once('drain', resolve);
    else resolve();
  });
}
