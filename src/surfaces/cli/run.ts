// `agent-apps run [skill] [--PARAM VALUE …]` (docs/cli.md), in the output format asked for (docs/ci.md):
// text (the result raw or as JSON), json (one JSON line), stream-json (NDJSON events and one result
// line, stream-json.ts). Every format reports denied tool calls (run-report.ts) and may fail on them.
import path from 'node:path';
import type { Command } from 'commander';
import { createRuntime, type Runtime } from '../../runtime.ts';
import { AgentAppsError, ToolNotFoundError } from '../../core/errors.ts';
import type { JsonObject, LogEvent, Reporter, ToolDecl } from '../../core/types.ts';
import { setAsker } from '../../kernel/asking.ts';
import { EXIT, exitCodeFor, formatError, formatResult, painter, type Painter } from '../shared/output.ts';
import { consoleReporter, jsonlReporter, recordsRuns } from '../shared/reporters.ts';
import { settle } from '../../events/runtime.ts';
import { cliTerminal } from '../shared/terminal.ts';
import { mergeOverrides } from '../shared/overrides.ts';
import { mentionsRunOption, parseSkillArgs, readArgsJson, splitRunTokens, type RunTokens } from '../shared/skill-args.ts';
import { skillHelp } from '../shared/skill-help.ts';
import { splitRemote, type RemoteRun } from './run-remote.ts';
import { globalsOf, mergeGlobals, outputFormat, runtimeOptions, type GlobalOptions } from '../shared/runtime-options.ts';
import { RunReport } from '../shared/run-report.ts';
import { StreamJson } from '../shared/stream-json.ts';
import type { CliIO } from '../shared/io.ts';
import { LineAsker } from '../../core/line-asker.ts';
import { DEFAULT_SERVE_URL, serveApprovalsAsker } from '../shared/serve-approvals.ts';
import type { Asker } from '../../core/ask.ts';
import { RunJournal } from '../../agent/journal.ts';
import { resumePlan, runsDirOf, type ResumePlan } from '../shared/resume.ts';

export function registerRun(program: Command, io: CliIO): void {
  program
    .command('run')
    .description('invoke a skill (default: the workspace’s main) and print its result')
    .argument('[skill]', 'skill name, or a path to a skill file', 'main')
    .argument('[args...]', 'the skill’s args as --NAME VALUE (coerced by its params schema)')
    .option('--args-json <json>', "args as a JSON object, or '-' to read it from stdin")
    .option('--record <path>', 'record the model’s side of the run as a cassette (= --set model.record=PATH, PATH relative to here)')
    .option('--resume <id>', 'continue run ID, which died before its end, from its journal (docs/runs.md; = agent-apps runs resume ID)')
    .option('--rerun-unverified', 'with --resume: run again, without asking, the calls that started and left no result')
    // Everything after the skill name is the skill's (splitRunTokens picks out global options).
    .passThroughOptions()
    .allowUnknownOption()
    .allowExcessArguments()
    .addHelpText(
      'after',
      `
Args: --flag alone is true, a repeated flag is an array, --obj.key v nests, and values are
coerced by the skill's params schema. The result goes to stdout (a string raw, anything else as
JSON; --json always one JSON line); everything else goes to stderr. --output-format stream-json
writes NDJSON instead: a start line, one line per agent event, and one result line with ok,
result or error, exitCode, durationMs, usage, costUsd and denials. Tool calls of agent code that
were refused are reported in every format; --fail-on-denial makes such a run fail (exit 1).

Examples:
  $ agent-apps run                                   main, which hands its args on to hello
  $ agent-apps run hello --name Ada                  main, hello: the skills agent-apps init writes
  $ echo '{"name":"Ada"}' | agent-apps run hello --args-json -
  $ agent-apps run ./skills/hello.md --name Ada --json | jq .
  $ agent-apps run ask --question "Deploy?" --choices yes --choices no   a repeated flag: an array
  $ agent-apps run event-emit --topic jobs --type done --data.id 7       --data.id nests
  $ agent-apps run hello --output-format stream-json --fail-on-denial
  $ agent-apps run hello --name Ada --record ada.cassette.yaml           the model's side, to replay
  $ agent-apps run hello --name Ada --remote --remote-timeout 10000      a worker runs it
  $ agent-apps run hello --resume 6af2d444           go on with a run that died, from its journal`,
    )
    .action(async (skill: string, tokens: string[], opts: { argsJson?: string; record?: string; resume?: string; rerunUnverified?: boolean }, cmd: Command) => {
      // `run --name Ada` runs main with args; commander took the first flag for the skill name.
      if (skill.startsWith('-')) [skill, tokens] = ['main', [skill, ...tokens]];
      const pre = globalsOf(cmd);
      const split = await splitAfterSkill(skill, tokens, pre, io);
      if (split.helpText) {
        io.stdout.write(split.helpText);
        return;
      }
      const g = mergeGlobals(pre, split.globals);
      const { remote, tokens: own } = splitRemote(split.tokens);
      // --resume ID (docs/runs.md): the run must be one of this skill's.
      const resumeId = split.resume ?? opts.resume;
      let resume: ResumePlan | undefined;
      if (resumeId !== undefined) {
        try {
          if (remote) throw new AgentAppsError('E_USAGE', '--resume runs here, from the run file: it does not go with --remote');
          resume = resumePlan(runsDirOf(g), resumeId);
          if (resume.skill !== skill) throw new AgentAppsError('E_USAGE', `run ${resume.id.slice(0, 8)} was a run of '${resume.skill}', not '${skill}' — agent-apps run ${resume.skill} --resume ${resumeId}, or agent-apps runs resume ${resumeId}`);
        } catch (err) {
          await split.prepared?.runtime.close();
          throw err;
        }
      } else if (split.rerunUnverified || opts.rerunUnverified) {
        await split.prepared?.runtime.close();
        throw new AgentAppsError('E_USAGE', '--rerun-unverified goes with --resume ID (or agent-apps runs resume ID)');
      }
      const code = await runSkill(skill, own, { argsJson: split.argsJson ?? opts.argsJson, record: split.record ?? opts.record, ...(resume ? { resume, rerunUnverified: split.rerunUnverified ?? opts.rerunUnverified ?? false } : {}) }, g, io, { ...(remote ? { remote } : {}), ...(split.prepared ? { prepared: split.prepared } : {}) });
      (program as Command & { exitCodeOverride?: number }).exitCodeOverride = code;
    });
}

/**
 * `run greet --name Ada --json`: global options and `--help` may follow the skill name. Which
 * flags are the skill's own depends on its params, so the skill is resolved first — only when
 * some token could be a global option, to keep the common path to one resolution. The runtime
 * that resolved it is the run's own (docs/cli.md, "run"): runSkill takes it over unless an option
 * after the skill name (`--cwd`, `--set`, `--record` …) asks for another one.
 */
async function splitAfterSkill(skill: string, tokens: string[], g: GlobalOptions, io: CliIO): Promise<RunTokens & { helpText?: string; prepared?: PreparedRuntime }> {
  if (!mentionsRunOption(tokens)) return { globals: {}, help: false, tokens };
  const options = runtimeOptions(g);
  const interactive = isInteractive(io);
  const controller = new AbortController();
  const held = heldReporter();
  // Created as runSkill would create it; its reporters and asker come when the run's are known.
  const runtime = await createRuntime({ ...options, interactive, signal: controller.signal, reporters: [held] });
  runtime.root.globals.internals.interactive = interactive;
  if (options.logLevel) runtime.root.manager.configure({ level: options.logLevel, global: true });
  let decl: ToolDecl | undefined;
  let argumentHint: string | undefined;
  try {
    const config = runtime.root.locals.config;
    const tool = await runtime.root.globals.internals.kernel.resolve(skill, config.paths, config.cwd);
    decl = tool.decl;
    argumentHint = tool.skill?.argumentHint;
  } catch {
    // runSkill reports an unknown or broken skill with its own words, from a runtime of its own.
  }
  const split = splitRunTokens(tokens, decl?.params);
  if (!decl || split.help) {
    await runtime.close();
    return split.help && decl ? { ...split, helpText: skillHelp(decl, { argumentHint }) } : split;
  }
  return { ...split, prepared: { runtime, controller, held, options: JSON.stringify(options) } };
}

/** A runtime that already resolved the skill (splitAfterSkill), for runSkill to run it in. */
interface PreparedRuntime {
  runtime: Runtime;
  controller: AbortController;
  held: ReturnType<typeof heldReporter>;
  /** The runtimeOptions it was created with, as JSON: runSkill's must be the same to take it over. */
  options: string;
}

/** Keeps a prepared runtime's events (a skill's load warning) until the run's reporters exist. */
function heldReporter(): Reporter & { release(to: Reporter[]): void } {
  let held: LogEvent[] | undefined = [];
  return {
    name: 'cli-held',
    report: (event) => void held?.push(event),
    release(to) {
      const events = held ?? [];
      held = undefined;
      for (const event of events) for (const r of to) r.report(event);
    },
  };
}

function isInteractive(io: CliIO): boolean {
  return !!(io.stdin.isTTY && io.stdout.isTTY);
}

export interface RunExtras {
  /** Extra cascade overrides (the `debug` command's hook settings). */
  overrides?: JsonObject;
  /** Called after the run settles, before the runtime closes (the `debug` tree, `--profile`). */
  after?: (runtime: Runtime) => void | Promise<void>;
  /**
   * The person to ask (docs/terminal.md: `ctx.manager.ask`, approval gates) — the terminal UI's asker.
   * Without one, an interactive run (TTY stdin and stdout) asks in plain lines on stderr / stdin;
   * any other run has nobody to ask.
   */
  asker?: Asker;
  /** `--remote [--remote-timeout MS] [--queue NAME]`: a worker runs the skill; exit codes as if local. */
  remote?: RemoteRun;
  /** The runtime splitAfterSkill resolved the skill in: taken over when its options are the run's. */
  prepared?: PreparedRuntime;
}

/** How `run` is asked to run: its args as JSON, `--record`, and `--resume` (docs/runs.md). */
export interface RunOptions {
  argsJson?: string;
  record?: string;
  /** Continue this run from its journal: its skill, args and options unless given again. */
  resume?: ResumePlan;
  /** With `resume`: calls that started and left no result run again without asking. */
  rerunUnverified?: boolean;
}

export async function runSkill(skill: string, tokens: string[], opts: RunOptions, g: GlobalOptions, io: CliIO, extras: RunExtras = {}): Promise<number> {
  const started = Date.now();
  let prepared = extras.prepared;
  let format: ReturnType<typeof outputFormat>;
  let rtOpts: ReturnType<typeof runtimeOptions>;
  const resume = opts.resume;
  try {
    format = outputFormat(g);
    // A resume runs where the run it continues ran, with its --path and --set (given again, they add).
    if (resume) g = { ...g, ...(g.cwd === undefined && resume.cwd !== undefined ? { cwd: resume.cwd } : {}), ...(g.path === undefined && resume.paths?.length ? { path: resume.paths } : {}) };
    rtOpts = runtimeOptions(g);
    if (resume?.overrides) rtOpts.overrides = mergeOverrides(resume.overrides, rtOpts.overrides ?? {});
    if (extras.overrides) rtOpts.overrides = mergeOverrides(rtOpts.overrides ?? {}, extras.overrides);
    // `--record PATH` (docs/ci.md): a path as typed, relative to where the command runs — not, as a
    // `model.record` from a file would be, to the skill's folder.
    if (opts.record !== undefined) rtOpts.overrides = mergeOverrides(rtOpts.overrides ?? {}, { model: { record: path.resolve(rtOpts.cwd ?? process.cwd(), opts.record) } });
  } catch (err) {
    await prepared?.runtime.close();
    throw err;
  }
  if (prepared && prepared.options !== JSON.stringify(rtOpts)) {
    await prepared.runtime.close();
    prepared = undefined;
  }
  const interactive = isInteractive(io);
  const controller = prepared?.controller ?? new AbortController();
  const paint = await painter(io.stderr, g.color !== false);
  // stream-json owns stdout; the events it writes there are the agent's progress.
  const stream = format === 'stream-json' ? new StreamJson(io.stdout) : undefined;
  const report = new RunReport();
  // With stderr a terminal: the live agent view, and when interactive the gates and breakpoints (src/surfaces/tui).
  const terminal = cliTerminal(io, { interactive, json: format !== 'text', color: g.color !== false, paint });
  // --approvals-via NAME: the gates go to the workspace's serve, whichever terminal there is.
  const remote = g.approvalsVia ? serveApprovalsAsker({ via: g.approvalsVia, url: process.env.AGENT_APPS_SERVE_URL || DEFAULT_SERVE_URL, ...(process.env.AGENT_APPS_SERVE_TOKEN ? { token: process.env.AGENT_APPS_SERVE_TOKEN } : {}), run: { skill } }) : undefined;
  const lines = !extras.asker && !remote && !terminal?.asker && interactive ? new LineAsker({ input: io.stdin, output: io.stderr }) : undefined;
  const asker = extras.asker ?? remote ?? terminal?.asker ?? lines;
  const reporters = [withoutCliEvents(consoleReporter(io.stderr, paint)), ...(stream ? [stream.reporter()] : [])];
  const runtime = prepared?.runtime ?? (await createRuntime({ ...rtOpts, interactive, signal: controller.signal, reporters, ...(asker ? { asker } : {}) }));
  const root = runtime.root;
  if (prepared) {
    for (const r of reporters) root.globals.internals.log.addReporter(r);
    if (asker) setAsker(root.globals, asker);
  }
  const runId = root.nonlocals.rootContextId;
  root.globals.internals.interactive = interactive;
  terminal?.attach(root, rtOpts);
  report.attach(root, stream?.sink());
  const config = root.locals.config;
  if (rtOpts.logLevel) root.manager.configure({ level: rtOpts.logLevel, global: true });
  // Every CLI run in a workspace is recorded for `agent-apps tail` (docs/events.md).
  let jsonl: Reporter | undefined;
  if (recordsRuns(config.workspace)) {
    try {
      jsonl = jsonlReporter(config.workspace, runId!);
      root.manager.configure({ reporter: jsonl, global: true });
    } catch (err) {
      io.stderr.write(`${paint.yellow('warn')}: cannot record this run under ${config.workspace}/.agent-apps (${(err as Error).message})\n`);
    }
  }
  // The run's journal (docs/runs.md): its agents' model responses and host calls, in the run file
  // as they happen; a resume plays back the journal of the run it continues.
  const journal = jsonl || resume ? new RunJournal({ write: (line) => root.manager.log(line), ...(resume ? { resume: { from: resume.id, journal: resume.journal }, rerunUnverified: opts.rerunUnverified === true } : {}) }) : undefined;
  if (journal) root.globals.internals.journal = journal;
  // The run's last record: written once, by whichever way the run ends.
  let ended = false;
  // Its exitCode and durationMs are what `agent-apps runs` lists (docs/ci.md).
  const runEnd = (fields: { level: 'info' | 'warn' | 'error'; text: string; code?: string; exitCode: number }) => {
    if (ended) return;
    ended = true;
    root.manager.log({ type: 'run-end', tag: 'cli', skill, ...fields, durationMs: Date.now() - started, record: true });
  };
  // stream-json's last line (docs/ci.md): the outcome with its exit code, written once.
  const result = (exitCode: number, outcome: { result?: unknown; error?: unknown }) => stream?.result({ run: runId, exitCode, ...outcome, durationMs: Date.now() - started, report });
  // The notice goes through the UI when one is shown, so it follows what the UI showed so far.
  const notify = (text: string): Promise<void> => (terminal ? terminal.interrupted(text) : Promise.resolve(void io.stderr.write(text)));
  const stop = installSignals(controller, runtime, notify, graceMs(g), (sig) => {
    // A second SIGINT exits at once (docs/events.md), but the run file still gets its run-end and the
    // `.live` marker goes: both synchronously, before process.exit.
    runEnd({ level: 'warn', text: `run ${skill}: ${sig} (again: exited at once)`, exitCode: EXIT.interrupted });
    jsonl?.close?.();
    result(EXIT.interrupted, { error: signalError(sig, ' (again: exited at once)') });
  });
  // What the prepared runtime logged while it resolved the skill, now that every reporter exists.
  prepared?.held.release([...reporters, ...(jsonl ? [jsonl] : [])]);
  try {
    const kernel = root.globals.internals.kernel;
    let params: unknown;
    try {
      params = (await kernel.resolve(skill, config.paths, config.cwd)).decl.params;
    } catch (err) {
      // --remote: the worker's workspace decides what the skill is; here it only shapes the args.
      if (extras.remote && err instanceof ToolNotFoundError) params = undefined;
      else if (skill === 'main' && err instanceof ToolNotFoundError) {
        throw new ToolNotFoundError('main', [], `this workspace (${config.workspace}) has no main skill — create skills/main.md, or name a skill: agent-apps run <skill>`);
      } else throw err;
    }
    const fromJson = await readArgsJson(opts.argsJson, io.stdin);
    // A resume runs with the args of the run it continues, unless others are given.
    const given = fromJson !== undefined || tokens.length > 0;
    const args: JsonObject = resume && !given ? resume.args : { ...(fromJson ?? {}), ...parseSkillArgs(tokens, params) };
    // The pid tells `agent-apps runs` whether a run that never wrote run-end is still going; the
    // options (where it ran, --path, --set) are what a resume of it runs with (docs/runs.md).
    const options = { cwd: config.cwd, ...(rtOpts.paths?.length ? { paths: rtOpts.paths } : {}), ...(rtOpts.overrides && Object.keys(rtOpts.overrides).length ? { overrides: rtOpts.overrides } : {}) };
    root.manager.log({ type: 'run-start', tag: 'cli', level: 'info', text: `run ${skill}${resume ? ` (resuming run ${resume.id.slice(0, 8)})` : ''}`, skill, args, pid: process.pid, options, ...(resume ? { resumedFrom: resume.id } : {}), record: true });
    stream?.start(runId, skill, args, resume?.id);
    // A skill awaiting something with no timer or socket behind it (an event-wait without a
    // timeout, a promise that never settles) must not let Node exit mid-run (exit 13): hold a
    // handle until the invocation settles, so SIGINT / SIGTERM can end it.
    const keepAlive = setInterval(() => {}, 1 << 30);
    let value: unknown;
    try {
      value = await Promise.race([runtime.invoke(skill, args, extras.remote ? { remote: extras.remote } : undefined), stop.interrupted]);
      // A skill that computed synchronously kept a SIGINT / SIGTERM that came meanwhile from
      // being handled: let it be delivered now, so the run counts as interrupted (exit 130),
      // not as done (docs/security.md: SIGINT at any point).
      await signalsDelivered();
    } finally {
      clearInterval(keepAlive);
    }
    if (stop.signal) throw new Error(stop.signal);
    // A resume that could not go on (E_RESUME) fails the run, whatever the skill made of it.
    if (journal?.fatal) throw journal.fatal;
    // --fail-on-denial (docs/ci.md): a run in which agent code was refused a call did not succeed.
    if (g.failOnDenial && report.denials.length) throw new AgentAppsError('E_DENIED', `${report.summary()} (--fail-on-denial)`);
    runEnd({ level: 'info', text: `run ${skill}: ok`, exitCode: EXIT.ok });
    // The UI goes before anything else is printed: the result alone on stdout, after it.
    await terminal?.close();
    await extras.after?.(runtime);
    if (g.profile) io.stderr.write(profileTable(root.globals.internals.profile, paint));
    warnOfDenials(io, paint, report);
    if (stream) result(EXIT.ok, { result: value });
    else {
      const out = formatResult(value, format === 'json');
      if (out !== undefined) await write(io.stdout, out.endsWith('\n') ? out : out + '\n');
    }
    return EXIT.ok;
  } catch (caught) {
    // The agents stopped on E_RESUME: that is what the run ends on, whatever reached here.
    const err = journal?.fatal ?? caught;
    if (stop.signal) {
      await stop.settled;
      await terminal?.close();
      const code = stop.signal === 'SIGINT' ? EXIT.interrupted : EXIT.terminated;
      runEnd({ level: 'warn', text: `run ${skill}: ${stop.signal}`, exitCode: code });
      warnOfDenials(io, paint, report);
      result(code, { error: signalError(stop.signal) });
      return code;
    }
    // A refusal (exit 3) is not a failure (docs/middleware.md): it is recorded below error level.
    const level = exitCodeFor(err) === EXIT.refused ? 'info' : 'error';
    runEnd({ level, code: (err as { code?: string })?.code, text: `run ${skill}: ${(err as Error)?.message ?? err}`, exitCode: exitCodeFor(err) });
    await terminal?.close();
    await extras.after?.(runtime);
    io.stderr.write(formatError(err, { debug: !!g.debug, paint }) + '\n');
    // The --fail-on-denial error lists the denials itself.
    if ((err as { code?: string })?.code !== 'E_DENIED' || !g.failOnDenial) warnOfDenials(io, paint, report);
    result(exitCodeFor(err), { error: err });
    return exitCodeFor(err);
  } finally {
    stop.dispose();
    await terminal?.close();
    lines?.close();
    await runtime.close();
  }
}

/** docs/ci.md: a run that ended after a denied call says so on stderr, whatever the output format. */
function warnOfDenials(io: CliIO, paint: Painter, report: RunReport): void {
  if (report.denials.length) io.stderr.write(`${paint.yellow('warn')}: ${report.summary()}\n`);
}

function signalError(sig: 'SIGINT' | 'SIGTERM', more = ''): AgentAppsError {
  return new AgentAppsError(sig === 'SIGINT' ? 'E_INTERRUPTED' : 'E_TERMINATED', `${sig === 'SIGINT' ? 'interrupted' : 'terminated'} (${sig})${more}`);
}

/**
 * The CLI states a run's outcome on stderr itself (one line, output.ts); its `cli` events are
 * for the jsonl record and `tail`, so the console must not print them a second time.
 */
function withoutCliEvents(reporter: Reporter): Reporter {
  return { ...reporter, report: (e) => (e.tag === 'cli' ? undefined : reporter.report(e)) };
}

function graceMs(g: GlobalOptions): number {
  const v = g.shutdownGrace === undefined ? 3000 : Number(g.shutdownGrace);
  return Number.isFinite(v) && v >= 0 ? v : 3000;
}

export function profileTable(profile: Profile | undefined, paint: Painter): string {
  if (!profile) return '';
  const rows = [
    ...Object.entries(profile.pipelines).map(([k, s]) => ['pipeline', k, s] as const),
    ...Object.entries(profile.entries).map(([k, s]) => ['entry', k, s] as const),
  ];
  if (!rows.length) return '';
  const w = Math.max(...rows.map((r) => r[1].length), 4);
  let out = paint.bold(`\n${'KIND'.padEnd(8)}  ${'NAME'.padEnd(w)}  ${'COUNT'.padStart(6)}  ${'TOTAL ms'.padStart(10)}  ${'MEAN ms'.padStart(9)}  ${'MAX ms'.padStart(9)}`) + '\n';
  for (const [kind, name, s] of rows) {
    out += `${kind.padEnd(8)}  ${name.padEnd(w)}  ${String(s.count).padStart(6)}  ${s.total.toFixed(3).padStart(10)}  ${(s.total / s.count).toFixed(3).padStart(9)}  ${s.max.toFixed(3).padStart(9)}\n`;
  }
  return out + paint.dim('entry times are inclusive: each contains everything downstream of it\n');
}

/** What the `profile` hook (skills/profile.skill.ts) records and `--profile` prints. */
export interface Profile {
  pipelines: Record<string, { count: number; total: number; max: number }>;
  entries: Record<string, { count: number; total: number; max: number }>;
}

declare module '../../core/types.ts' {
  interface RuntimeState {
    /** Durations recorded by the `profile` hook (docs/events.md), printed by `--profile`. */
    profile?: Profile;
  }
}

interface SignalState {
  signal: 'SIGINT' | 'SIGTERM' | undefined;
  interrupted: Promise<never>;
  /** Resolves once shutdown handlers had their grace period and the root was aborted. */
  settled: Promise<void>;
  dispose(): void;
}

/**
 * SIGINT / SIGTERM (docs/events.md): emit `shutdown`, await event-emit, give the handlers it dispatched
 * up to the grace period to settle, abort the root context, exit 130 / 143. A second SIGINT
 * exits at once.
 */
function installSignals(controller: AbortController, runtime: Runtime, notify: (text: string) => Promise<void>, grace: number, beforeForcedExit: (sig: 'SIGINT') => void): SignalState {
  let reject!: (err: unknown) => void;
  let markSettled!: () => void;
  const state: SignalState = {
    signal: undefined,
    interrupted: new Promise<never>((_, r) => (reject = r)),
    settled: new Promise<void>((r) => (markSettled = r)),
    dispose() {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
    },
  };
  state.interrupted.catch(() => {});
  const handle = async (sig: 'SIGINT' | 'SIGTERM') => {
    if (state.signal) {
      if (sig === 'SIGINT') {
        try {
          beforeForcedExit(sig);
        } catch {
          // Exiting at once matters more than the record.
        }
        process.exit(EXIT.interrupted);
      }
      return;
    }
    state.signal = sig;
    // Not held up by a UI that does not draw: the shutdown starts within a second either way.
    await Promise.race([notify(shutdownNotice(sig)).catch(() => undefined), new Promise<void>((r) => setTimeout(r, 1000).unref())]);
    try {
      const before = runtime.root.globals.internals.dispatched?.length ?? 0;
      await runtime.invoke('event-emit', { topic: 'shutdown', type: sig === 'SIGINT' ? 'sigint' : 'sigterm', data: { signal: sig }, source: 'cli' });
      const dispatched = (runtime.root.globals.internals.dispatched ?? []).slice(before);
      if (dispatched.length) await settle(Promise.all(dispatched).then(() => undefined), grace);
    } catch {
      // Shutdown must proceed even if emitting fails.
    }
    controller.abort(sig);
    reject(Object.assign(new Error(sig), { code: 'E_ABORTED' }));
    markSettled();
  };
  const onInt = () => void handle('SIGINT');
  const onTerm = () => void handle('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return state;
}

/**
 * The first signal's notice (docs/cli.md, Signals). A SIGINT is mostly Ctrl-C at a terminal, which
 * echoes `^C`: the notice starts on a line of its own. A SIGTERM comes from another process (a
 * supervisor, `kill`, CI) — nobody pressed Ctrl-C, so "again" would be wrong; what ends the
 * shutdown at once is still a SIGINT.
 */
export function shutdownNotice(sig: 'SIGINT' | 'SIGTERM'): string {
  return sig === 'SIGINT' ? '\ninterrupted — shutting down (Ctrl-C again to exit at once)\n' : 'terminated (SIGTERM) — shutting down (a SIGINT exits at once)\n';
}

/**
 * Two turns of the event loop: the first may run inside the poll phase that was busy while a
 * skill computed, so a signal that arrived meanwhile is read by the next poll, before the second.
 */
async function signalsDelivered(): Promise<void> {
  for (let i = 0; i < 2; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

function write(stream: NodeJS.WriteStream, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (!stream.write(text)) stream.once('drain', resolve);
    else resolve();
  });
}
