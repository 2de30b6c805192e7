// The one ink app of a process (docs/terminal.md), drawn on stderr: the UI never writes to stdout. What it
// shows, top to bottom: the transcript (finished lines, written once, ink's <Static>), the live
// part of each running agent, a paused breakpoint, the question at a gate, and the app's own part
// (the repl's prompt, the tutor's step). run, repl, debug and tutor all draw through it, so an
// agent started in the repl, or a gate opened in a debug run, appears in the same screen.
//
// While it is shown, anything else written to stderr (warnings, the interrupt notice) — or to
// stdout when stdout is the terminal too (a skill's console.log) — is written above the live part,
// so it never tears the drawing. Keys are read (raw mode) only while something asks for them; a
// plain agent run leaves the terminal's Ctrl-C alone, and the CLI's SIGINT handling stands.
import React from 'react';
import chalk from 'chalk';
import { Box, Static, Text, render, useInput, useStderr, useWindowSize, type Instance } from 'ink';
import { ThemeProvider, defaultTheme, extendTheme } from '@inkjs/ui';
import { AbortError } from '../../core/errors.ts';
import type { Answer, Question } from '../../core/ask.ts';
import { AgentTracker, type AgentLive, type Block, type ProgressEvent } from './agent-state.ts';
import { AgentLiveView, BlockView, FocusContext, ThemeContext, h, themeFor, type Element, type Theme } from './ui.ts';
import { QuestionView } from './prompt.ts';
import { PauseView } from './debug-view.ts';
import type { Focus, PauseRequest, PendingPause, PendingQuestion } from './types.ts';

export type { Focus, PauseRequest } from './types.ts';

export interface ScreenOptions {
  /** Colour (false with --no-color; NO_COLOR and FORCE_COLOR=0 turn it off too). */
  color?: boolean;
  stdin?: NodeJS.ReadStream;
  stderr?: NodeJS.WriteStream;
  stdout?: NodeJS.WriteStream;
}

type Item = { id: number; block?: Block; el?: Element };


export interface ScreenState {
  transcript: Item[];
  agents: AgentLive[];
  questions: PendingQuestion[];
  pause?: PendingPause;
  main?: Element;
  focus: Focus;
}

let current: Screen | undefined;

/** The process's screen, mounted on first use. */
export function screen(opts: ScreenOptions = {}): Screen {
  if (!current || current.closed) current = new Screen(opts);
  return current;
}

/** The screen if one is mounted (nothing is loaded or drawn otherwise). */
export function currentScreen(): Screen | undefined {
  return current && !current.closed ? current : undefined;
}

/** Whether colour is on for the UI: --no-color, NO_COLOR (non-empty) and FORCE_COLOR=0 / false turn it off. */
export function uiColor(enabled: boolean | undefined, env: NodeJS.ProcessEnv = process.env): boolean {
  if (enabled === false || env.NO_COLOR) return false;
  return !(env.FORCE_COLOR === '0' || env.FORCE_COLOR === 'false');
}

export class Screen {
  closed = false;
  readonly theme: Theme;
  #state: ScreenState = { transcript: [], agents: [], questions: [], focus: 'none' };
  #listeners = new Set<() => void>();
  #nextId = 1;
  #tracker: AgentTracker;
  #instance: Instance;
  #writeAbove: ((data: string) => void) | undefined;
  #restore: (() => void)[] = [];
  #interrupts: (() => void)[] = [];
  #target: 'stderr' | 'stdout' = 'stderr';
  #pending = { stderr: '', stdout: '' };
  #changedQueued = false;
  #closing: Promise<void> | undefined;

  constructor(o: ScreenOptions) {
    const stderr = o.stderr ?? process.stderr;
    const stdout = o.stdout ?? process.stdout;
    const stdin = o.stdin ?? process.stdin;
    this.theme = themeFor(uiColor(o.color));
    // Styles (bold, dim, the cursor's inverse) stay on without colour; chalk's own guess looks at
    // stdout and CI, not at the terminal this is drawn on.
    const depth = typeof stderr.getColorDepth === 'function' ? stderr.getColorDepth() : 4;
    chalk.level = this.theme.color ? (depth >= 24 ? 3 : depth >= 8 ? 2 : 1) : 1;
    this.#tracker = new AgentTracker(
      (block) => this.#append({ block }),
      () => this.#update({ agents: this.#tracker.live() }),
    );
    const rawErr = stderr.write.bind(stderr) as (chunk: unknown, ...rest: unknown[]) => boolean;
    const rawOut = stdout.write.bind(stdout) as (chunk: unknown, ...rest: unknown[]) => boolean;
    // Ink draws on stderr through this stream; its "stderr" is where lines written above go.
    const drawn = {
      get columns() {
        return stderr.columns || 80;
      },
      get rows() {
        return stderr.rows || 24;
      },
      isTTY: true,
      write: (data: unknown, ...rest: unknown[]) => rawErr(data, ...rest),
      on: (event: string, fn: (...a: unknown[]) => void) => (stderr.on(event, fn), drawn),
      off: (event: string, fn: (...a: unknown[]) => void) => (stderr.off(event, fn), drawn),
      removeListener: (event: string, fn: (...a: unknown[]) => void) => (stderr.off(event, fn), drawn),
    };
    const above = { write: (data: unknown) => (this.#target === 'stdout' ? rawOut(data) : rawErr(data)) };
    const Bridge = () => {
      this.#writeAbove = useStderr().write;
      return null;
    };
    this.#instance = render(h(App, { screen: this, bridge: h(Bridge) }), {
      stdout: drawn as NodeJS.WriteStream,
      stderr: above as NodeJS.WriteStream,
      stdin,
      exitOnCtrlC: false,
      patchConsole: false,
      interactive: true,
      kittyKeyboard: { mode: 'disabled' },
      maxFps: 30,
    });
    this.#intercept(stderr, 'stderr', rawErr);
    if (stdout.isTTY) this.#intercept(stdout, 'stdout', rawOut);
  }

  /** Writes from elsewhere land above the live part, a whole line at a time. */
  #intercept(stream: NodeJS.WriteStream, name: 'stderr' | 'stdout', raw: (chunk: unknown, ...rest: unknown[]) => boolean): void {
    const original = stream.write;
    stream.write = ((chunk: unknown, encoding?: unknown, cb?: unknown) => {
      const done = typeof encoding === 'function' ? encoding : cb;
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString(typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
      const buffered = this.#pending[name] + text;
      const nl = buffered.lastIndexOf('\n');
      this.#pending[name] = nl < 0 ? buffered : buffered.slice(nl + 1);
      if (nl >= 0) this.#above(name, buffered.slice(0, nl + 1), raw);
      if (typeof done === 'function') queueMicrotask(done as () => void);
      return true;
    }) as typeof stream.write;
    this.#restore.push(() => {
      stream.write = original;
      const rest = this.#pending[name];
      this.#pending[name] = '';
      if (rest) raw(rest);
    });
  }

  #above(name: 'stderr' | 'stdout', text: string, raw: (chunk: unknown) => boolean): void {
    if (!this.#writeAbove) {
      raw(text);
      return;
    }
    this.#target = name;
    try {
      this.#writeAbove(text);
    } finally {
      this.#target = 'stderr';
    }
  }

  // ── the store React reads ────────────────────────────────────────────────────────────────────
  subscribe = (fn: () => void): (() => void) => {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  };

  snapshot = (): ScreenState => this.#state;

  #update(patch: Partial<ScreenState>): void {
    const next = { ...this.#state, ...patch };
    next.focus = next.questions.length ? 'question' : next.pause ? 'pause' : next.main ? 'main' : 'none';
    this.#state = next;
    // Many events in one tick (a burst of deltas) make one render.
    if (this.#changedQueued) return;
    this.#changedQueued = true;
    queueMicrotask(() => {
      this.#changedQueued = false;
      for (const fn of this.#listeners) fn();
    });
  }

  #append(item: Omit<Item, 'id'>): void {
    this.#update({ transcript: [...this.#state.transcript, { id: this.#nextId++, ...item }] });
  }

  // ── what the apps call ───────────────────────────────────────────────────────────────────────
  /** Writes an element (or a line of text) to the transcript, above the live part. */
  print(el: Element | string): void {
    // ink draws text only inside <Text>.
    this.#append({ el: typeof el === 'string' ? h(Text, null, el) : el });
  }

  /** An agent's progress event (globals.internals.progress); `deltas`: the text is shown as it streams. */
  progress = Object.assign(
    (e: ProgressEvent): void => {
      // Closing, the agents' summaries are written: an event still coming is of a run torn down.
      if (!this.closed && !this.#closing) this.#tracker.event(e);
    },
    { deltas: true },
  );

  /** The agent runs are over: their live parts become a summary line. */
  agentsDone(): void {
    this.#tracker.finish();
  }

  /**
   * The run is interrupted (the CLI's SIGINT / SIGTERM handling): the agents' live parts are
   * written above as they stand, then `notice`; resolves once that is on the screen, so whatever
   * the shutdown writes next comes after it. The summaries follow when the screen closes — the
   * screen ends with the agent's output in order, the notice, the summary (docs/terminal.md).
   * False when the screen is closing or closed: the caller writes the notice itself.
   */
  async interrupted(notice: string): Promise<boolean> {
    if (this.closed || this.#closing) return false;
    this.#tracker.interrupt();
    // The terminal's ^C echo is inside the live part, which is redrawn: no newline to step past it.
    this.print(notice.replace(/^\n+|\n+$/g, ''));
    await this.#flushed();
    return true;
  }

  /**
   * A command is cancelled (the repl's Ctrl-C): the agents' live parts are written as they stand,
   * before the cancellation makes their skills' finally blocks write warnings; their summaries
   * follow with agentsDone().
   */
  async agentsInterrupted(): Promise<void> {
    if (this.closed || this.#closing) return;
    this.#tracker.interrupt();
    await this.#flushed();
  }

  /** Resolves once what the store holds is on the screen. */
  async #flushed(): Promise<void> {
    await new Promise<void>((r) => setImmediate(r));
    try {
      await this.#instance.waitUntilRenderFlush();
    } catch {
      // What comes next goes on without the last frame.
    }
  }

  /** Sets the app's own part (the repl's prompt), or removes it. */
  setMain(el: Element | undefined): void {
    this.#update({ main: el });
  }

  /**
   * What Ctrl-C does while the screen reads keys: the innermost handler registered (the repl
   * cancels its command), else the run is interrupted as by SIGINT (the CLI exits 130).
   */
  onInterrupt(fn: () => void): () => void {
    this.#interrupts.push(fn);
    return () => {
      const i = this.#interrupts.lastIndexOf(fn);
      if (i >= 0) this.#interrupts.splice(i, 1);
    };
  }

  interrupt = (): void => {
    const fn = this.#interrupts[this.#interrupts.length - 1];
    if (fn) fn();
    else process.kill(process.pid, 'SIGINT');
  };

  /** A question for the person (the Asker contract, src/core/ask.ts): one shown at a time, in order. */
  ask(question: Question, signal: AbortSignal): Promise<Answer> {
    if (signal.aborted) return Promise.reject(abortReason(signal));
    return new Promise<Answer>((resolve, reject) => {
      const id = this.#nextId++;
      const finish = () => {
        signal.removeEventListener('abort', onAbort);
        this.#update({ questions: this.#state.questions.filter((q) => q.id !== id) });
      };
      const onAbort = () => {
        finish();
        reject(abortReason(signal));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const item: PendingQuestion = {
        id,
        question,
        answer: (a) => {
          finish();
          resolve(a);
        },
      };
      this.#update({ questions: [...this.#state.questions, item] });
    });
  }

  /** A breakpoint (debug --break): resolves with how to go on; an abort continues. */
  pause(request: PauseRequest, signal?: AbortSignal): Promise<'continue' | 'step'> {
    if (signal?.aborted) return Promise.resolve('continue');
    return new Promise((resolve) => {
      const id = this.#nextId++;
      const done = (how: 'continue' | 'step') => {
        signal?.removeEventListener('abort', onAbort);
        if (this.#state.pause?.id === id) this.#update({ pause: undefined });
        resolve(how);
      };
      const onAbort = () => done('continue');
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#update({ pause: { id, request, resume: done } });
    });
  }

  /** Removes the UI: the live parts go, the transcript stays in the terminal's scrollback. */
  close(): Promise<void> {
    // Called again while closing (the CLI closes the UI on every way out): the same close.
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    if (this.closed) return;
    this.#tracker.finish();
    this.#update({ main: undefined, pause: undefined });
    await new Promise<void>((r) => setImmediate(r));
    try {
      await this.#instance.waitUntilRenderFlush();
    } catch {
      // Unmounting matters more than the last frame.
    }
    this.closed = true;
    this.#instance.unmount();
    try {
      await this.#instance.waitUntilExit();
    } catch {
      // An app that failed still unmounted.
    }
    for (const restore of this.#restore.splice(0).reverse()) restore();
    if (current === this) current = undefined;
  }
}

function abortReason(signal: AbortSignal): Error {
  const r = signal.reason;
  return r instanceof Error ? r : new AbortError(r ?? 'the question was withdrawn');
}

const NO_COLOR_UI = extendTheme(defaultTheme, {
  components: {
    Spinner: { styles: { frame: () => ({}) } },
  },
});

function App(props: { screen: Screen; bridge: Element }): Element {
  const s = React.useSyncExternalStore(props.screen.subscribe, props.screen.snapshot);
  const { columns, rows } = useWindowSize();
  // While an app shows its own part, the keys stay in raw mode as that part changes (the repl's
  // prompt becoming a spinner, the tutor's steps): a key typed in between is read, not echoed by
  // the terminal.
  useInput(() => undefined, { isActive: s.main !== undefined });
  const theme = props.screen.theme;
  const q = s.questions[0];
  const body = h(
    Box,
    { flexDirection: 'column', width: columns },
    props.bridge,
    h(Static<Item>, { items: s.transcript, children: (item: Item) => h(Box, { key: item.id, flexDirection: 'column', width: columns }, item.block ? h(BlockView, { block: item.block, narrow: columns < 60 }) : item.el) }),
    // One element however many agents run: the parts after it keep their place, so an agent
    // starting does not remount the app's own part (the repl's prompt would lose its state).
    h(Box, { key: 'agents', flexDirection: 'column' }, ...s.agents.map((a) => h(AgentLiveView, { key: `agent:${a.skill}`, agent: a, columns }))),
    s.pause ? h(PauseView, { key: `pause:${s.pause.id}`, pending: s.pause, active: s.focus === 'pause', print: (el: Element) => props.screen.print(el), onInterrupt: props.screen.interrupt, columns, rows }) : null,
    q ? h(QuestionView, { key: `q:${q.id}`, pending: q, more: s.questions.length - 1, active: s.focus === 'question', onInterrupt: props.screen.interrupt, columns }) : null,
    s.main ?? null,
  );
  const content = h(FocusContext.Provider, { value: s.focus }, body);
  return h(ThemeContext.Provider, { value: theme }, theme.color ? content : h(ThemeProvider, { theme: NO_COLOR_UI, children: content }));
}
