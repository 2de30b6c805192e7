// Driving the real binary in a pseudo-terminal (SPEC §17; shared notes "Driving the terminal in
// tests"): @lydell/node-pty runs `bin/agent-apps.js` on a PTY, @xterm/headless turns its bytes
// into the screen a person would see, and tests type keys and wait for text. Keys go one at a
// time, each after the screen shows the one before (an Enter in the same chunk as the last letter
// can be lost by a line editor). Every terminal kills its child when the test ends or times out.
import { createRequire } from 'node:module';
import path from 'node:path';
import type { TestContext } from 'node:test';
import type { IPty } from '@lydell/node-pty';
import { REPO } from './helpers.ts';

const require = createRequire(import.meta.url);
const pty = require('@lydell/node-pty') as typeof import('@lydell/node-pty');
const { Terminal } = require('@xterm/headless') as typeof import('@xterm/headless');

export const BIN = path.join(REPO, 'bin', 'agent-apps.js');

export const KEYS = {
  enter: '\r',
  tab: '\t',
  ctrlC: '\x03',
  ctrlD: '\x04',
  up: '\x1b[A',
  down: '\x1b[B',
  escape: '\x1b',
  backspace: '\x7f',
} as const;

export interface PtyOptions {
  cwd: string;
  env?: Record<string, string | undefined>;
  cols?: number;
  rows?: number;
  /** The child's stdout is a second PTY, read apart (so a test sees what went to stdout alone). */
  separateStdout?: boolean;
  /** Kills the child after this long (default 30 s). */
  timeoutMs?: number;
}

export interface Term {
  readonly pty: IPty;
  /** Everything the terminal shows, scrollback included, one string per line (trailing spaces cut). */
  lines(): string[];
  text(): string;
  /** Lines the terminal had to wrap (a line wider than the terminal), as text. */
  wrapped(): string[];
  /** Raw bytes written to the terminal so far (ANSI codes included). */
  raw(): string;
  /** What went to the separate stdout PTY (with `separateStdout`). */
  stdout(): string;
  write(data: string): void;
  /** Types `text` one key at a time, each after the screen shows it. */
  type(text: string): Promise<void>;
  /** Waits until the screen has not changed for `quietMs` (a prompt that is drawn is also reading keys by then). */
  idle(quietMs?: number): Promise<void>;
  /** Waits until the screen matches; fails with the screen in the message. */
  waitFor(match: string | RegExp, timeoutMs?: number): Promise<void>;
  /** Resolves with the exit code (and signal) when the child ends and the screen shows all it wrote. */
  exited: Promise<{ exitCode: number; signal?: number }>;
  kill(): void;
}

export function spawnPty(t: TestContext, args: string[], o: PtyOptions): Term {
  const cols = o.cols ?? 100;
  const rows = o.rows ?? 30;
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, TERM: 'xterm-256color', ...o.env })) {
    // CI=true makes ink and chalk act as in a CI log; the terminal here is a real one.
    if (v !== undefined && k !== 'CI') env[k] = v;
  }
  const term = new Terminal({ cols, rows, scrollback: 2000, allowProposedApi: true });
  let raw = '';
  let out = '';
  let file = process.execPath;
  let argv = [BIN, ...args];
  // Not an IPty with a process: never call its kill() or destroy() (with no pid, they signal -1: every process).
  let second: { _pty: string; _master: NodeJS.ReadStream; _slave: NodeJS.ReadStream } | undefined;
  if (o.separateStdout) {
    second = (pty as unknown as { open(o: { cols: number; rows: number }): NonNullable<typeof second> }).open({ cols, rows });
    second._master.on('data', (d: string) => (out += d));
    file = '/bin/sh';
    argv = ['-c', `exec "$0" "$@" > ${second._pty}`, process.execPath, BIN, ...args];
  }
  const child = pty.spawn(file, argv, { name: 'xterm-256color', cols, rows, cwd: o.cwd, env });
  child.onData((d) => {
    raw += d;
    term.write(d);
  });
  let done = false;
  // node-pty reports the exit once the PTY is closed, after its last data; but xterm parses what
  // it is given later (a timer): `exited` resolves once the screen shows everything the child
  // wrote, so a test reading the screen after the exit sees the last frame, not one before it.
  const exited = new Promise<{ exitCode: number; signal?: number }>((resolve) =>
    child.onExit((e) => {
      done = true;
      term.write('', () => resolve(e));
    }),
  );
  const kill = () => {
    if (!done) {
      try {
        child.kill('SIGKILL');
      } catch {
        // Already gone.
      }
    }
    if (second) {
      second._master.destroy();
      second._slave.destroy();
    }
  };
  const timer = setTimeout(kill, o.timeoutMs ?? 30_000);
  timer.unref();
  t.after(() => {
    clearTimeout(timer);
    kill();
    term.dispose();
  });
  const lines = () => {
    const buf = term.buffer.active;
    const outLines: string[] = [];
    for (let i = 0; i < buf.length; i++) outLines.push(buf.getLine(i)?.translateToString(true) ?? '');
    while (outLines.length && !outLines[outLines.length - 1]) outLines.pop();
    return outLines;
  };
  // xterm parses asynchronously: a write is on screen after its callback.
  const settled = () => new Promise<void>((r) => term.write('', r));
  const waitFor = async (match: string | RegExp, timeoutMs = 15_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await settled();
      const text = lines().join('\n');
      if (typeof match === 'string' ? text.includes(match) : match.test(text)) return;
      if (done || Date.now() > deadline) {
        await settled();
        const again = lines().join('\n');
        if (typeof match === 'string' ? again.includes(match) : match.test(again)) return;
        throw new Error(`${done ? 'the program ended' : `timed out after ${timeoutMs} ms`} waiting for ${match} — the screen:\n${again}\n--- end of screen`);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  return {
    pty: child,
    lines,
    text: () => lines().join('\n'),
    wrapped() {
      const buf = term.buffer.active;
      const out: string[] = [];
      for (let i = 1; i < buf.length; i++) if (buf.getLine(i)?.isWrapped) out.push(`${buf.getLine(i - 1)?.translateToString(true)}⏎${buf.getLine(i)?.translateToString(true)}`);
      return out;
    },
    raw: () => raw,
    stdout: () => out,
    write: (d) => child.write(d),
    async type(text) {
      for (const ch of Array.from(text)) {
        await settled();
        const before = lines().join('\n');
        child.write(ch);
        const deadline = Date.now() + 5000;
        // The echo: the screen changed (the editor redrew its line with the new key).
        for (;;) {
          await settled();
          if (lines().join('\n') !== before || Date.now() > deadline) break;
          await new Promise((r) => setTimeout(r, 10));
        }
      }
    },
    waitFor,
    async idle(quietMs = 150) {
      let last = '';
      let since = Date.now();
      const deadline = Date.now() + 5000;
      for (;;) {
        await settled();
        const now = raw;
        if (now !== last) {
          last = now;
          since = Date.now();
        } else if (Date.now() - since >= quietMs || Date.now() > deadline) return;
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    exited,
    kill,
  };
}

/** A code skill that waits until it is cancelled; its finally block logs a warning and leaves a marker file. */
export const SLOW_SKILL = `import fs from 'node:fs';
export const frontmatter = {
  name: 'slow',
  description: 'Waits for ms milliseconds, or until cancelled.',
  metadata: { params: { type: 'object', properties: { ms: { type: 'integer', default: 60000 }, marker: { type: 'string' } } } },
};
export default async function slow(ctx, args) {
  try {
    await new Promise((resolve, reject) => {
      const t = setTimeout(resolve, args.ms);
      ctx.run.signal.addEventListener('abort', () => { clearTimeout(t); reject(new Error('stopped')); }, { once: true });
    });
    return 'slept';
  } finally {
    if (args.marker) fs.writeFileSync(args.marker, 'finally ran');
    ctx.manager.log({ level: 'warn', text: 'slow: finally ran' });
  }
}
`;

export const WORDCOUNT_SKILL = `export const frontmatter = {
  name: 'wordcount',
  description: 'Count the words in a text.',
  metadata: { params: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false }, returns: { type: 'integer' } },
};
export default async function wordcount(_ctx, args) {
  return args.text.split(/\\s+/).filter(Boolean).length;
}
`;
