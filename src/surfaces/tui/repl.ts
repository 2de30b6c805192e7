// `agent-apps repl` (docs/terminal.md): a prompt that runs `SKILL --param value …` lines through the kernel.
// Each line runs in the session's runtime — the CLI's options plus the session's `:set` overrides
// (a `:set` makes a fresh runtime for the next line) — with this screen as its person to ask, its
// agent view and its breakpoints. The session's log events go to the CLI run's logger, so they are
// recorded for `agent-apps tail` and its warnings are printed.
// Keys: see line-edit.ts; Ctrl-C cancels the running command (its context is aborted, so `finally`
// blocks run) and returns to the prompt; on an empty line Ctrl-C twice, or Ctrl-D, leaves.
import { Box, Text, useInput } from 'ink';
import React from 'react';
import { Spinner } from '@inkjs/ui';
import { AgentAppsError } from '../../core/errors.ts';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../runtime.ts';
import type { Context, JsonObject, LogLevel, Reporter } from '../../core/types.ts';
import type { Asker } from '../../core/ask.ts';
import { parseSkillArgs } from '../shared/skill-args.ts';
import { skillHelp } from '../shared/skill-help.ts';
import { mergeOverrides, parseOverrides } from '../shared/overrides.ts';
import { escapeControl } from '../shared/escape.ts';
import { complete, flagsOf, type CompletionSource } from './complete.ts';
import { appendHistory, historyFile, readHistory } from './history.ts';
import { LineEditor } from './line-editor.ts';
import type { Screen } from './screen.ts';
import { oneLine } from './text.ts';
import { ErrorLine, FocusContext, Json, Line, Result, h, useTheme, type Element } from './ui.ts';

/** The CLI's runtime options (src/surfaces/shared/terminal.ts puts them on globals.internals.cliOptions). */
export type CliOptions = RuntimeOptions & { logLevel?: LogLevel };

export const COMMANDS = [':help', ':describe', ':set', ':list', ':quit'] as const;

export const HELP: [string, string][] = [
  ['SKILL --name value …', "run a skill (args as on the command line; --args-json '{…}' too)"],
  ['SKILL --help', "a skill's params"],
  [':describe SKILL', "a skill's declaration and middleware chain"],
  [':set KEY.PATH=VALUE', 'a cascade override for this session (VALUE is YAML); :set alone lists them'],
  [':list', 'the skills on the search paths'],
  [':help', 'this text'],
  [':quit', 'leave (Ctrl-D, or Ctrl-C twice on an empty line)'],
  ['Tab', 'complete a skill name, a --param, a :command'],
  ['↑ ↓', 'history (kept across sessions)'],
  ['Ctrl-C', 'cancel the running command, or clear the line'],
];

/** How long a cancelled command gets to settle (its finally blocks) before the prompt returns anyway. */
const CANCEL_GRACE_MS = 3000;

export interface ReplHost {
  screen: Screen;
  cliOptions?: CliOptions;
  prompt?: string;
  /** The history file (default: ~/.agent-apps/history, or $AGENT_APPS_HOME/history). */
  historyFile?: string;
}

/** Runs the repl until the person leaves; resolves with the number of commands run. */
export async function runRepl(ctx: Context, host: ReplHost): Promise<number> {
  const session = new ReplSession(ctx, host);
  const { screen } = host;
  screen.print(
    h(
      Box,
      { flexDirection: 'column' },
      h(Line, { bold: true }, `agent-apps repl — ${escapeControl(session.workspace)}`),
      h(Line, { dim: true }, 'SKILL --param value runs a skill · Tab completes · :help · Ctrl-D leaves'),
    ),
  );
  try {
    await new Promise<void>((resolve) => {
      screen.setMain(h(ReplPrompt, { session, prompt: host.prompt ?? 'agent-apps› ', onExit: resolve }));
    });
  } finally {
    screen.setMain(undefined);
    await session.close();
  }
  return session.ran;
}

export class ReplSession {
  readonly ctx: Context;
  readonly screen: Screen;
  readonly history: string[];
  readonly historyFile: string;
  ran = 0;
  #cli: CliOptions;
  #session: JsonObject = {};
  #runtime: Runtime | undefined;
  #stale = true;
  #running: AbortController | undefined;
  #skills: { at: number; names: string[] } | undefined;

  constructor(ctx: Context, host: ReplHost) {
    this.ctx = ctx;
    this.screen = host.screen;
    this.#cli = host.cliOptions ?? { cwd: ctx.locals.config.cwd };
    this.historyFile = host.historyFile ?? historyFile();
    this.history = readHistory(this.historyFile);
  }

  get workspace(): string {
    return this.ctx.locals.config.workspace;
  }

  get running(): boolean {
    return this.#running !== undefined;
  }

  /** The session's runtime, made afresh after a `:set`. */
  async runtime(): Promise<Runtime> {
    if (this.#runtime && !this.#stale) return this.#runtime;
    const old = this.#runtime;
    this.#runtime = undefined;
    await old?.close();
    const screen = this.screen;
    const outer = this.ctx.globals.internals.log;
    // Every event of the session, recorded where the CLI run's events are (tail, the console's warnings).
    const forward: Reporter = { name: 'repl-session', report: (e) => outer.emit(e) };
    const asker: Asker = { ask: (q, signal) => screen.ask(q, signal) };
    const { logLevel, ...opts } = this.#cli;
    const rt = await createRuntime({
      ...opts,
      overrides: mergeOverrides(this.#cli.overrides ?? {}, this.#session),
      interactive: true,
      asker,
      reporters: [forward],
    } as RuntimeOptions);
    if (logLevel) rt.root.manager.configure({ level: logLevel, global: true });
    const internals = rt.root.globals.internals;
    internals.interactive = true;
    internals.progress = screen.progress;
    internals.breakpoint = (request: Parameters<Screen['pause']>[0], signal?: AbortSignal) => screen.pause(request, signal);
    this.#runtime = rt;
    this.#stale = false;
    return rt;
  }

  async close(): Promise<void> {
    this.#running?.abort(new AgentAppsError('E_ABORTED', 'the repl closed'));
    const rt = this.#runtime;
    this.#runtime = undefined;
    await rt?.close();
  }

  /** Ctrl-C while a command runs: its context is aborted. */
  cancel(): boolean {
    const running = this.#running;
    if (!running) return false;
    // What its agents showed goes above first: the warnings of the cancelled skills follow it.
    const abort = () => running.abort(new AgentAppsError('E_ABORTED', 'cancelled (Ctrl-C)'));
    void this.screen.agentsInterrupted().then(abort, abort);
    return true;
  }

  remember(line: string): void {
    if (!line.trim() || this.history[this.history.length - 1] === line) return;
    this.history.push(line);
    appendHistory(this.historyFile, line);
  }

  readonly completion: CompletionSource = {
    commands: COMMANDS,
    skills: async () => {
      if (this.#skills && Date.now() - this.#skills.at < 5000) return this.#skills.names;
      const rt = await this.runtime();
      const kernel = rt.root.globals.internals.kernel;
      const names = (await kernel.list(rt.root.locals.config.paths)).filter((s) => !s.error).map((s) => s.name);
      this.#skills = { at: Date.now(), names };
      return names;
    },
    params: async (skill) => {
      try {
        const rt = await this.runtime();
        const cfg = rt.root.locals.config;
        return flagsOf((await rt.root.globals.internals.kernel.resolve(skill, cfg.paths, cfg.cwd)).decl.params);
      } catch {
        return [];
      }
    },
  };

  complete = (line: string, cursor: number) => complete(line, cursor, this.completion);

  /** Runs one line; resolves with 'exit' for `:quit`. Errors are printed, never thrown. */
  async execute(line: string): Promise<'exit' | undefined> {
    const text = line.trim();
    try {
      if (text.startsWith(':')) return await this.#command(text);
      await this.#invoke(text);
    } catch (err) {
      this.screen.print(h(ErrorLine, { error: err }));
    }
    return undefined;
  }

  async #command(text: string): Promise<'exit' | undefined> {
    const [cmd, ...rest] = text.split(/\s+/);
    switch (cmd) {
      case ':quit':
      case ':q':
      case ':exit':
        return 'exit';
      case ':help':
        this.screen.print(h(HelpView));
        return undefined;
      case ':list': {
        const rt = await this.runtime();
        const list = await rt.root.globals.internals.kernel.list(rt.root.locals.config.paths);
        const w = Math.min(24, Math.max(4, ...list.map((s) => s.name.length)));
        this.screen.print(h(Box, { flexDirection: 'column' }, ...list.map((s) => h(Line, { key: s.name, color: s.error ? 'red' : undefined }, `${s.name.padEnd(w)}  ${s.kind.padEnd(8)}  ${oneLine(s.error ? `ERROR ${s.error}` : (s.description ?? ''))}`))));
        return undefined;
      }
      case ':describe': {
        const name = rest[0];
        if (!name) throw new AgentAppsError('E_USAGE', ':describe needs a skill name, e.g. :describe greet');
        const rt = await this.runtime();
        const d = await rt.describe(name);
        this.screen.print(h(DescribeView, { help: skillHelp(d.tool), origin: d.origin.uri ?? '(inline)', chain: d.chain.map((e) => e.name) }));
        return undefined;
      }
      case ':set': {
        const kv = text.slice(cmd.length).trim();
        if (!kv) {
          this.screen.print(Object.keys(this.#session).length ? h(Json, { value: this.#session }) : h(Line, { dim: true }, 'no overrides in this session — :set KEY.PATH=VALUE adds one'));
          return undefined;
        }
        let parsed: JsonObject;
        try {
          parsed = parseOverrides([kv]);
        } catch (err) {
          throw new AgentAppsError('E_USAGE', (err as Error).message.replace(/--set/g, ':set'));
        }
        this.#session = mergeOverrides(this.#session, parsed);
        this.#stale = true;
        this.#skills = undefined;
        this.screen.print(h(Line, { dim: true }, `set ${oneLine(kv)} for this session`));
        return undefined;
      }
      default:
        throw new AgentAppsError('E_USAGE', `unknown command ${cmd} — :help lists them`);
    }
  }

  async #invoke(text: string): Promise<void> {
    const [name, ...rest] = splitWords(text);
    if (!name) return;
    const rt = await this.runtime();
    const cfg = rt.root.locals.config;
    const tool = await rt.root.globals.internals.kernel.resolve(name, cfg.paths, cfg.cwd);
    if (rest.includes('--help') || rest.includes('-h')) {
      this.screen.print(h(Text, null, skillHelp(tool.decl).replace(/\n+$/, '').replace(/agent-apps run /, '')));
      return;
    }
    let args: JsonObject = {};
    const json = rest.indexOf('--args-json');
    if (json !== -1) {
      try {
        args = JSON.parse(rest[json + 1] ?? '{}') as JsonObject;
      } catch (err) {
        throw new AgentAppsError('E_USAGE', `--args-json: ${(err as Error).message}`);
      }
      rest.splice(json, 2);
    }
    args = { ...args, ...parseSkillArgs(rest, tool.decl.params) };
    const controller = new AbortController();
    this.#running = controller;
    const run = rt.invoke(name, args, { context: { signal: controller.signal } });
    // A cancelled command gets a moment to finish (its finally blocks run); the prompt returns
    // then even if the skill ignores its signal.
    const cancelled = new Promise<'cancelled'>((resolve) =>
      controller.signal.addEventListener('abort', () => setTimeout(() => resolve('cancelled'), CANCEL_GRACE_MS).unref(), { once: true }),
    );
    try {
      const outcome = await Promise.race([run.then((value) => ({ value })), cancelled]);
      this.screen.agentsDone();
      if (outcome === 'cancelled') {
        this.screen.print(h(Line, { color: themeColor(this.screen, 'warn') }, `✗ ${name}: cancelled — it is still finishing in the background`));
        run.catch(() => undefined);
      } else {
        this.ran++;
        if (controller.signal.aborted) this.screen.print(h(Line, { color: themeColor(this.screen, 'warn') }, `✗ ${name}: cancelled`));
        else if (outcome.value === undefined) this.screen.print(h(Line, { dim: true }, '(no result)'));
        else this.screen.print(h(Result, { value: outcome.value }));
      }
    } catch (err) {
      this.screen.agentsDone();
      this.ran++;
      if (controller.signal.aborted) this.screen.print(h(Line, { color: themeColor(this.screen, 'warn') }, `✗ ${name}: cancelled`));
      else throw err;
    } finally {
      this.#running = undefined;
    }
  }
}

function themeColor(screen: Screen, which: 'warn' | 'error' | 'ok'): string | undefined {
  return screen.theme[which];
}

/** Shell-like words: spaces separate, single or double quotes group. */
export function splitWords(line: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(line))) out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : (m[2] ?? m[3]!));
  return out;
}

function HelpView(): Element {
  const theme = useTheme();
  const w = Math.max(...HELP.map(([k]) => k.length));
  return h(Box, { flexDirection: 'column' }, ...HELP.map(([k, v]) => h(Text, { key: k, wrap: 'truncate-end' }, h(Text, { color: theme.key }, `  ${k.padEnd(w)}  `), v)));
}

function DescribeView(props: { help: string; origin: string; chain: string[] }): Element {
  const theme = useTheme();
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, null, props.help.replace(/\n+$/, '').replace(/^Usage: agent-apps run /, 'Usage: ').replace(/\nRun options:.*$/s, '')),
    h(Line, { dim: true }, `origin ${props.origin}`),
    h(Text, null, h(Text, { color: theme.accent }, 'chain '), props.chain.join(' → ')),
  );
}

interface PromptProps {
  session: ReplSession;
  prompt: string;
  onExit(): void;
}

function ReplPrompt(props: PromptProps): Element {
  const theme = useTheme();
  const focus = React.useContext(FocusContext);
  const { session } = props;
  const [running, setRunning] = React.useState<string | undefined>(undefined);
  const [armed, setArmed] = React.useState(false);
  const active = focus === 'main';
  React.useEffect(() => session.screen.onInterrupt(() => void session.cancel()), [session]);
  // While a command runs, the keys are still read (raw mode): Ctrl-C cancels it rather than
  // reaching the process as SIGINT, which would end the session.
  useInput(
    (input, key) => {
      if (key.ctrl && input === 'c') session.cancel();
    },
    { isActive: active && running !== undefined },
  );
  const submit = (line: string) => {
    setArmed(false);
    if (!line.trim()) return;
    session.remember(line);
    session.screen.print(h(Text, { wrap: 'truncate-end' }, h(Text, { color: theme.accent, bold: true }, props.prompt), line));
    setRunning(line.trim());
    void session.execute(line).then((outcome) => {
      setRunning(undefined);
      if (outcome === 'exit') props.onExit();
    });
  };
  if (running !== undefined) {
    return h(Box, null, h(Spinner, { label: `${oneLine(running, 60)} — Ctrl-C cancels` }));
  }
  return h(LineEditor, {
    prompt: props.prompt,
    active,
    history: session.history,
    complete: session.complete,
    onSubmit: submit,
    onChange: () => armed && setArmed(false),
    onCancel: (line: string) => {
      if (line) return setArmed(false);
      if (armed) return props.onExit();
      setArmed(true);
    },
    onEof: props.onExit,
    hint: armed ? 'Ctrl-C again (or Ctrl-D) leaves the repl' : undefined,
  });
}
