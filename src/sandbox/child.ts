// The child process of process mode (process.ts): runs `InlineSandbox`es for the parent over the
// newline-delimited JSON pipe on fd 3, and forwards their host calls to it. Nothing here writes to
// stdout (the parent ignores it anyway). It exits when the parent closes the pipe.

import net from 'node:net';
import { RAW_CALL, messageOf, SPIN_MS, Spinner, type HostAnswer, type RawHost } from './common.ts';
import { InlineSandbox, type SandboxHost } from './sandbox.ts';

interface Frame {
  t: string;
  [key: string]: unknown;
}

interface Run {
  controller: AbortController;
  /** Host calls sent to the parent and not answered yet. */
  calls: Set<number>;
}

interface Entry {
  sandbox: InlineSandbox;
  /** The snapshot version last sent to the parent. */
  sent: number;
  memoryMb: number;
}

/**
 * The child's memory budget: a base for Node and the addon, plus three times each isolate's heap
 * limit (isolated-vm's limit is a guideline: code can use 2–3 times it before it is stopped).
 * Past it, something grows outside every isolate's limit — a disposed isolate still running a
 * builtin such as `Array.prototype.fill`, which termination does not interrupt, grows until V8
 * aborts the process gigabytes later. The child ends itself at once instead.
 */
const BASE_BUDGET_MB = 192;
const BUDGET_CHECK_MS = 100;

// A terminal's Ctrl-C reaches the whole process group: the parent decides what it means.
process.on('SIGINT', () => undefined);

const pipe = new net.Socket({ fd: 3, readable: true, writable: true });
const sandboxes = new Map<number, Entry>();
const runs = new Map<number, Run>();
const calls = new Map<number, { resolve: (answer: HostAnswer) => void; run: Run }>();
let callIds = 0;
const spinner = new Spinner(SPIN_MS);

// The budget follows the largest total of heap limits of the last 30 s: memory freed with a
// disposed isolate may take a while to leave the process.
let peakMb = 0;
let peakAt = 0;
setInterval(() => {
  let total = 0;
  for (const entry of sandboxes.values()) total += entry.memoryMb;
  const now = performance.now();
  if (total >= peakMb || now - peakAt > 30_000) {
    peakMb = total;
    peakAt = now;
  }
  const budget = BASE_BUDGET_MB + 3 * peakMb;
  const rss = process.memoryUsage.rss() / 2 ** 20;
  if (rss > budget) {
    process.stderr.write(`Fatal: the sandbox process uses ${Math.round(rss)} MB, over its budget of ${budget} MB\n`);
    process.kill(process.pid, 'SIGKILL');
  }
}, BUDGET_CHECK_MS).unref();

pipe.setEncoding('utf8');
// The parent is gone. SIGKILL rather than process.exit(): an isolate still running a builtin
// could hold up a normal exit.
const die = (): void => void process.kill(process.pid, 'SIGKILL');
pipe.on('end', die);
pipe.on('close', die);
pipe.on('error', die);

let rest = '';
pipe.on('data', (chunk: string) => {
  let start = 0;
  let nl: number;
  while ((nl = chunk.indexOf('\n', start)) !== -1) {
    const line = rest + chunk.slice(start, nl);
    rest = '';
    start = nl + 1;
    spinner.received();
    let frame: Frame;
    try {
      frame = JSON.parse(line) as Frame;
    } catch {
      continue;
    }
    onFrame(frame);
  }
  rest += chunk.slice(start);
});

function send(frame: string): void {
  pipe.write(frame + '\n');
}

function onFrame(frame: Frame): void {
  switch (frame.t) {
    case 'reply': {
      const id = frame.c as number;
      const call = calls.get(id);
      if (!call) return;
      calls.delete(id);
      call.run.calls.delete(id);
      call.resolve({ ok: frame.ok === true, json: String(frame.j) });
      return;
    }
    case 'run':
      return run(frame.s as number, frame.r as number, String(frame.code), frame.args, frame.mw === true);
    case 'abort':
      runs.get(frame.r as number)?.controller.abort();
      return;
    case 'create':
      return create(frame.s as number, frame.o as Record<string, unknown>);
    case 'dispose': {
      const id = frame.s as number;
      sandboxes.get(id)?.sandbox.dispose();
      sandboxes.delete(id);
      return;
    }
  }
}

function create(id: number, opts: Record<string, unknown>): void {
  InlineSandbox.create(opts, { syncDeliver: true }).then(
    (sandbox) => {
      sandboxes.get(id)?.sandbox.dispose();
      sandboxes.set(id, { sandbox, sent: sandbox.snapshotVersion, memoryMb: Number(opts.memoryMb) || 128 });
      send(`{"t":"created","s":${id},"ok":true}`);
    },
    (error: unknown) => {
      const cause = error instanceof Error && error.cause !== undefined ? error.cause : error;
      send(JSON.stringify({ t: 'created', s: id, ok: false, error: messageOf(cause) }));
    },
  );
}

function run(sandboxId: number, runId: number, code: string, args: unknown, middleware: boolean): void {
  const entry = sandboxes.get(sandboxId);
  if (!entry) {
    send(JSON.stringify({ t: 'result', r: runId, res: { ok: false, error: { code: 'E_SANDBOX', message: 'the sandbox has been disposed' }, logs: [] } }));
    return;
  }
  const state: Run = { controller: new AbortController(), calls: new Set() };
  runs.set(runId, state);
  const host: SandboxHost & RawHost = {
    call: () => Promise.reject(new Error('unreachable: host calls go through RAW_CALL')),
    [RAW_CALL]: (method, payload) =>
      new Promise<HostAnswer>((resolve) => {
        const id = ++callIds;
        calls.set(id, { resolve, run: state });
        state.calls.add(id);
        send(`{"t":"call","r":${runId},"c":${id},"m":${JSON.stringify(method)},"p":${JSON.stringify(payload)}}`);
        spinner.spin();
      }),
  };
  void entry.sandbox.run(code, host, { args, middleware, signal: state.controller.signal }).then((result) => {
    runs.delete(runId);
    // Calls the parent will no longer answer: their promises are dropped with the execution.
    for (const id of state.calls) calls.delete(id);
    let mem = '';
    if (entry.sandbox.snapshotVersion !== entry.sent) {
      entry.sent = entry.sandbox.snapshotVersion;
      mem = `,"mem":${JSON.stringify(entry.sandbox.memorySnapshot())}`;
    }
    send(`{"t":"result","r":${runId}${mem},"res":${JSON.stringify(result)}}`);
  });
}
