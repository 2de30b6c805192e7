// The terminal side of a CLI run (docs/terminal.md). With stderr a terminal, an agent's progress is drawn
// live by the ink UI (src/surfaces/tui) — loaded on the first event, so a run that shows nothing never loads
// ink or React; with --json it stays quiet as before, and TERM=dumb (no cursor movement) gets the
// plain progress lines. When the run is interactive (TTY stdin and stdout), the same screen is the
// person to ask at a gate (createRuntime's asker) and draws `debug --break` pauses. Without a
// terminal on stderr there is nothing of this: no ANSI codes, nothing loaded.
import type { Answer, Asker, Question } from '../../core/ask.ts';
import type { Context } from '../../core/types.ts';
import { loadTui, terminalFor, type TerminalHost } from '../tui/load.ts';
import type { Screen } from '../tui/screen.ts';
import type { PauseRequest } from '../tui/types.ts';
import type { CliOptions } from '../tui/repl.ts';
import { progressPrinter } from './progress.ts';
import type { Painter } from './output.ts';
import type { CliIO } from './io.ts';

export interface CliTerminal {
  /** For createRuntime / runSkill: set when the run is interactive. */
  asker?: Asker;
  /** Puts the progress view, the breakpoint view and the host for repl / tutor on the runtime's globals. */
  attach(root: Context, cliOptions: CliOptions): void;
  /** Removes the UI (before the result is written to stdout). */
  close(): Promise<void>;
  /**
   * The interrupt notice (SIGINT / SIGTERM). With the UI shown, what it shows live is written
   * first and the notice after it, not between an agent's text and its running code; resolves
   * once the notice is on the screen.
   */
  interrupted(notice: string): Promise<void>;
}

export interface CliTerminalOptions {
  interactive: boolean;
  json: boolean;
  color: boolean;
  paint: Painter;
}

type ProgressEvent = { type: string; skill?: string; [key: string]: unknown };

export function cliTerminal(io: CliIO, o: CliTerminalOptions): CliTerminal | undefined {
  if (!io.stderr.isTTY) return undefined;
  if (process.env.TERM === 'dumb') {
    return {
      attach(root) {
        if (!o.json) root.globals.internals.progress = progressPrinter(io.stderr, o.paint);
      },
      async close() {},
      async interrupted(notice) {
        io.stderr.write(notice);
      },
    };
  }
  let loading: Promise<Screen> | undefined;
  const screen = (): Promise<Screen> => (loading ??= loadTui().then((tui) => tui.screen({ color: o.color, stdin: io.stdin, stderr: io.stderr, stdout: io.stdout })));
  // Events that come while the UI loads wait for it, in order.
  let shown: Screen | undefined;
  const queue: ProgressEvent[] = [];
  const progress = (e: ProgressEvent): void => {
    if (shown) return shown.progress(e);
    queue.push(e);
    if (queue.length > 1) return;
    void screen().then(
      (s) => {
        for (const q of queue.splice(0)) s.progress(q);
        shown = s;
      },
      () => {
        // No UI (a broken install): the run goes on without its progress.
        queue.length = 0;
      },
    );
  };
  // The view shows the model's text as it streams (the Strands provider reads this when model.deltas is unset).
  progress.deltas = true;
  return {
    ...(o.interactive ? { asker: { ask: async (q: Question, signal: AbortSignal): Promise<Answer> => (await screen()).ask(q, signal) } } : {}),
    attach(root, cliOptions) {
      const internals = root.globals.internals;
      if (!o.json) internals.progress = progress;
      if (o.interactive) internals.breakpoint = async (request: PauseRequest, signal?: AbortSignal) => (await screen()).pause(request, signal);
      internals.terminal = { screen, cliOptions } satisfies TerminalHost;
      // What `terminalOf` (the public API) hands the skills that draw: the public API never
      // imports a surface (docs/architecture.md, "The rules"), the surface that owns the terminal
      // puts it here.
      internals.openTerminal = () => terminalFor(internals);
    },
    async close() {
      if (!loading) return;
      try {
        await (await loading).close();
      } catch {
        // The result matters more than the UI's last frame.
      }
    },
    async interrupted(notice) {
      let shown = false;
      try {
        // Nothing drawn yet (no agent, no gate): nothing to keep in order, and no UI to load.
        if (loading) shown = await (await loading).interrupted(notice);
      } catch {
        // The notice matters more than the UI.
      }
      if (!shown) io.stderr.write(notice);
    },
  };
}

declare module '../../core/types.ts' {
  interface RuntimeState {
    /** The root of a CLI run in a terminal (TTY stdin and stdout). */
    interactive?: boolean;
    /** Draws a paused pipeline for `debug --break` and returns the person's choice. */
    breakpoint?: (request: PauseRequest, signal?: AbortSignal) => Promise<'continue' | 'step'>;
    /** The CLI's screen and options, for skills that draw (repl, tutor). */
    terminal?: TerminalHost;
    /** The terminal UI for a skill that draws, as `terminalOf(ctx)` returns it (loads ink when called). */
    openTerminal?: () => ReturnType<typeof terminalFor>;
  }
}
