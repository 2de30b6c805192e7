// Process isolation (docs/sandbox.md, "Isolation modes"): the isolates of every `ProcessSandbox` of this
// process live in ONE long-lived child process (child.ts), started on first use with
// `--no-node-snapshot`. A V8 abort that isolated-vm cannot catch (isolated-vm #457, #527, #107)
// then ends the child, not this process: the runs in flight on it fail with E_SANDBOX, and the
// next run starts a new child, `memory` restored from the snapshot held here.
//
// The channel is a pipe on the child's fd 3 carrying newline-delimited JSON frames (JSON text
// never contains a raw newline). Frames, parent → child:
//   {t:'create', s, o}  {t:'run', s, r, mw, args, code}  {t:'abort', r}  {t:'dispose', s}  {t:'reply', c, ok, j}
// child → parent:
//   {t:'created', s, ok, error?}  {t:'call', r, c, m, p}  {t:'result', r, res, mem?}
// `s` numbers a sandbox, `r` a run, `c` a host call (numbered by the child); `p` and `j` are the
// JSON texts the isolate sent and receives, passed through as strings.
//
// The child never keeps this process alive: its process handle is unref'd, and its pipes are
// ref'd only while a create or a run waits on them. It is killed when this process exits, and it
// exits by itself when the pipe closes. Its stdout is ignored; its stderr is kept (the tail) to
// say why it died.
//
// Speed: the child resumes code after a host call synchronously (EngineOptions.syncDeliver), and
// both ends poll briefly for an answer before sleeping (Spinner): a host call costs less than in
// inline mode, where it needs two thread hand-offs.

import { spawn, type ChildProcess } from 'node:child_process';
import module from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { AbortError, AgentAppsError } from '../core/errors.ts';
import { answerHostCall, failure, limitsOf, messageOf, SPIN_MS, Spinner, type Limits } from './common.ts';
import type { RunOptions, SandboxEngine, SandboxHost, SandboxOptions, SandboxResult } from './types.ts';

/** The child's entry: child.ts next to this file (child.js in a build). */
const CHILD_ENTRY = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? './child.ts' : './child.js', import.meta.url));
/** How long past its own timeout a run may stay unanswered before the child is deemed hung. */
const HUNG_GRACE_MS = 2000;
/** How long an aborted run waits for the child to report it (with its logs) before it ends anyway. */
const ABORT_GRACE_MS = 500;
/** Starting the child and an isolate in it. */
const CREATE_TIMEOUT_MS = 30_000;
const STDERR_TAIL_CHARS = 8192;

interface Frame {
  t: string;
  [key: string]: unknown;
}

/** A run sent to the child and not yet settled. */
interface RemoteRun {
  host: SandboxHost;
  owner: ProcessSandbox;
  /** Set once the run's signal fired: the E_ABORTED message, from the reason as given here. */
  abortMessage?: string;
  done: boolean;
  settle(result: SandboxResult): void;
}

interface PendingCreate {
  resolve(): void;
  reject(error: Error): void;
}

let ids = 0;
let current: Child | null = null;
let exitHook = false;

/** The pid of the live sandbox process, if one is running (for tests and diagnostics). */
export function sandboxProcessPid(): number | undefined {
  return current && current.dead === null ? current.proc.pid : undefined;
}

/**
 * Starts the sandbox process now if there is none, for a sandbox about to be created: Node and
 * isolated-vm take ~200 ms to start there, which then overlap with whatever this process does
 * meanwhile (an agent's provider loading its model) instead of following it.
 */
export function prestartSandboxProcess(): void {
  liveChild();
}

/** The live child, started if there is none. */
function liveChild(): Child {
  if (!current || current.dead !== null) current = new Child();
  return current;
}

/** One child process and the channel to it. */
class Child {
  readonly proc: ChildProcess;
  readonly #pipe: Socket;
  /** Why the child is gone (the E_SANDBOX message), once it is. */
  dead: string | null = null;
  readonly runs = new Map<number, RemoteRun>();
  readonly creates = new Map<number, PendingCreate>();
  #holds = 0;
  readonly #spinner = new Spinner(SPIN_MS);
  #killedFor: string | undefined;
  /** Whether the child has sent anything yet: dying before that is a failed start, not a crash. */
  #started = false;
  #rest = '';
  #stderr = '';

  constructor() {
    const env = { ...process.env };
    // The child is not a test process, whatever ran this one.
    delete env.NODE_TEST_CONTEXT;
    // Node's compile cache halves the child's start (TypeScript stripping and code caches).
    if (!env.NODE_DISABLE_COMPILE_CACHE) env.NODE_COMPILE_CACHE ??= module.getCompileCacheDir?.() ?? path.join(os.tmpdir(), 'node-compile-cache');
    this.proc = spawn(process.execPath, ['--no-node-snapshot', CHILD_ENTRY], {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
      env,
      windowsHide: true,
    });
    this.#pipe = this.proc.stdio[3] as Socket;
    this.#pipe.setEncoding('utf8');
    this.#pipe.on('data', (chunk: string) => this.#read(chunk));
    this.#pipe.on('error', () => undefined); // EPIPE once the child is gone: 'close' reports it
    const stderr = this.proc.stderr!;
    stderr.setEncoding('utf8');
    stderr.on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-STDERR_TAIL_CHARS);
    });
    stderr.on('error', () => undefined);
    this.proc.on('error', (error) => this.#gone(error.message));
    this.proc.on('close', (code, signal) => this.#gone(signal ?? `exit code ${code}`));
    this.proc.unref();
    this.#pipe.unref();
    (stderr as Socket).unref();
    if (!exitHook) {
      exitHook = true;
      process.once('exit', () => current?.kill());
    }
  }

  send(frame: string): void {
    if (this.dead === null) this.#pipe.write(frame + '\n');
  }

  /** Sends a frame the child answers at once (a run, a host call's answer), and polls for the answer before sleeping. */
  sendAwaiting(frame: string): void {
    if (this.dead !== null) return;
    this.#pipe.write(frame + '\n');
    this.#spinner.spin();
  }

  /** Keeps this process alive while something waits on the child. */
  hold(): void {
    if (this.#holds++ === 0) this.#pipe.ref();
  }

  release(): void {
    if (--this.#holds === 0) this.#pipe.unref();
  }

  /** Ends the child; `why` says what the runs in flight on it report. */
  kill(why?: string): void {
    try {
      this.proc.kill('SIGKILL');
    } catch {
      // already gone
    }
    // Gone from now on: the next create or run starts a new child without waiting for 'close'.
    if (why !== undefined && this.dead === null) {
      this.#killedFor = why;
      this.#gone('SIGKILL');
    }
  }

  #read(chunk: string): void {
    let start = 0;
    let nl: number;
    while ((nl = chunk.indexOf('\n', start)) !== -1) {
      const line = this.#rest + chunk.slice(start, nl);
      this.#rest = '';
      start = nl + 1;
      this.#spinner.received();
      this.#started = true;
      let frame: Frame;
      try {
        frame = JSON.parse(line) as Frame;
      } catch {
        continue;
      }
      this.#onFrame(frame);
    }
    this.#rest += chunk.slice(start);
  }

  #onFrame(frame: Frame): void {
    switch (frame.t) {
      case 'call': {
        const run = this.runs.get(frame.r as number);
        if (!run || run.done) return;
        const id = frame.c as number;
        void answerHostCall(run.host, String(frame.m), String(frame.p)).then((answer) => {
          if (!run.done) this.sendAwaiting(`{"t":"reply","c":${id},"ok":${answer.ok},"j":${JSON.stringify(answer.json)}}`);
        });
        return;
      }
      case 'result': {
        const run = this.runs.get(frame.r as number);
        if (!run || run.done) return;
        if (frame.mem !== undefined) run.owner.restoreFrom(frame.mem as Record<string, unknown>);
        const result = frame.res as SandboxResult;
        if (!result.ok && result.error.code === 'E_ABORTED' && run.abortMessage !== undefined) result.error.message = run.abortMessage;
        run.settle(result);
        return;
      }
      case 'created': {
        const pending = this.creates.get(frame.s as number);
        if (!pending) return;
        this.creates.delete(frame.s as number);
        if (frame.ok === true) pending.resolve();
        else pending.reject(new AgentAppsError('E_SANDBOX', String(frame.error)));
        return;
      }
    }
  }

  #gone(how: string): void {
    if (this.dead !== null) return;
    const fatal = /(?:Fatal|FATAL|CALL_AND_RETRY_LAST|invalid table size|out of memory)[^\n]*/.exec(this.#stderr)?.[0].trim().slice(0, 200);
    const next = 'the next run starts a fresh sandbox with `memory` restored from its last snapshot';
    if (this.#killedFor !== undefined) {
      this.dead = `the sandbox process was stopped (${this.#killedFor}); ${next}`;
    } else if (!this.#started) {
      const error = /^\w*Error\b.*$/m.exec(this.#stderr)?.[0].slice(0, 300);
      this.dead = `the sandbox process failed to start (${error ? `${how}: ${error}` : how})`;
    } else {
      this.dead = `the sandbox process crashed (${fatal ? `${how}: ${fatal}` : how}): memory or an engine limit was exceeded; ${next} (model.sandbox.memoryMb)`;
    }
    if (current === this) current = null;
    this.#spinner.stop();
    for (const run of this.runs.values()) run.settle({ ok: false, error: { code: 'E_SANDBOX', message: this.dead }, logs: [] });
    this.runs.clear();
    for (const pending of this.creates.values()) pending.reject(new AgentAppsError('E_SANDBOX', this.dead));
    this.creates.clear();
    this.#pipe.destroy();
  }
}

/** A sandbox whose isolate lives in the shared child process. */
export class ProcessSandbox implements SandboxEngine {
  readonly #id = ++ids;
  readonly #limits: Limits;
  #snapshot: Record<string, unknown>;
  /** The child that holds this sandbox's isolate; a dead one means: create it again first. */
  #child: Child | null = null;
  #run: RemoteRun | null = null;
  #queue: Promise<unknown> = Promise.resolve();
  #disposed = false;

  private constructor(limits: Limits) {
    this.#limits = limits;
    this.#snapshot = limits.memory;
  }

  static async create(opts: SandboxOptions = {}): Promise<ProcessSandbox> {
    const sandbox = new ProcessSandbox(limitsOf(opts));
    try {
      await sandbox.#attach();
    } catch (error) {
      throw new AgentAppsError('E_SANDBOX', `could not start the sandbox: ${messageOf(error)}`, { cause: error });
    }
    return sandbox;
  }

  get disposed(): boolean {
    return this.#disposed;
  }

  memorySnapshot(): Record<string, unknown> {
    return structuredClone(this.#snapshot);
  }

  /** @internal The child's snapshot of `memory` after a run. */
  restoreFrom(memory: Record<string, unknown>): void {
    if (memory !== null && typeof memory === 'object' && !Array.isArray(memory)) this.#snapshot = memory;
  }

  run(code: string, host: SandboxHost, opts: RunOptions = {}): Promise<SandboxResult> {
    if (typeof code !== 'string') return Promise.reject(new AgentAppsError('E_SANDBOX', 'Sandbox.run: code must be a string'));
    const result = this.#queue.then(() => this.#execute(code, host, opts));
    this.#queue = result.catch(() => undefined);
    return result;
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#run?.settle(failure('E_SANDBOX', 'the sandbox was disposed during the execution'));
    if (this.#child && this.#child.dead === null) this.#child.send(`{"t":"dispose","s":${this.#id}}`);
    this.#child = null;
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  /** Creates this sandbox's isolate in the live child (starting it if need be), seeded with the snapshot; one retry if that child dies meanwhile. */
  async #attach(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const child = liveChild();
      try {
        await this.#createIn(child);
        this.#child = child;
        return;
      } catch (error) {
        if (attempt >= 2 || child.dead === null) throw error;
      }
    }
  }

  async #createIn(child: Child): Promise<void> {
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    child.creates.set(this.#id, { resolve, reject });
    child.hold();
    const timer = setTimeout(() => {
      child.creates.delete(this.#id);
      reject(new AgentAppsError('E_SANDBOX', `the sandbox process did not answer within ${CREATE_TIMEOUT_MS / 1000} s`));
    }, CREATE_TIMEOUT_MS);
    const { timeoutMs, memoryMb, maxPendingCalls } = this.#limits;
    child.send(JSON.stringify({ t: 'create', s: this.#id, o: { timeoutMs, memoryMb, maxPendingCalls, memory: this.#snapshot } }));
    try {
      await promise;
    } finally {
      clearTimeout(timer);
      child.release();
    }
  }

  async #execute(code: string, host: SandboxHost, opts: RunOptions): Promise<SandboxResult> {
    if (this.#disposed) return failure('E_SANDBOX', 'the sandbox has been disposed');
    const signal = opts.signal;
    if (signal?.aborted) return failure('E_ABORTED', new AbortError(signal.reason).message);
    let argsJson: string;
    try {
      argsJson = JSON.stringify(opts.args ?? null) ?? 'null';
    } catch (error) {
      return failure('E_SANDBOX', `ctx.args must be JSON data: ${messageOf(error)}`);
    }
    if (!this.#child || this.#child.dead !== null) {
      // The child died (or never had this isolate): a fresh isolate, `memory` from the snapshot.
      try {
        await this.#attach();
      } catch (error) {
        return failure('E_SANDBOX', `could not restart the sandbox: ${messageOf(error)}`);
      }
      if (this.#disposed) {
        this.#child?.send(`{"t":"dispose","s":${this.#id}}`);
        this.#child = null;
        return failure('E_SANDBOX', 'the sandbox has been disposed');
      }
      if (signal?.aborted) return failure('E_ABORTED', new AbortError(signal.reason).message);
    }
    const child = this.#child!;
    const id = ++ids;
    const { promise, resolve } = Promise.withResolvers<SandboxResult>();
    const run: RemoteRun = {
      host,
      owner: this,
      done: false,
      settle(result) {
        if (run.done) return;
        run.done = true;
        resolve(result);
      },
    };
    this.#run = run;
    child.runs.set(id, run);
    child.hold();
    child.sendAwaiting(`{"t":"run","s":${this.#id},"r":${id},"mw":${opts.middleware === true},"args":${argsJson},"code":${JSON.stringify(code)}}`);
    // The child enforces the time limit; this only catches a child that stopped answering.
    const hung = setTimeout(() => {
      run.settle(failure('E_SANDBOX', `execution timed out after ${this.#limits.timeoutMs} ms (model.sandbox.timeoutMs)`));
      child.kill('a run did not end within its time limit');
    }, this.#limits.timeoutMs + HUNG_GRACE_MS);
    let abortTimer: ReturnType<typeof setTimeout> | undefined;
    const onAbort = (): void => {
      const message = new AbortError(signal?.reason).message;
      run.abortMessage = message;
      child.send(`{"t":"abort","r":${id}}`);
      // The child answers at once unless code holds its thread (code resumed after a host call
      // runs on it): then stopping the child is the only way to stop that code now.
      abortTimer = setTimeout(() => {
        run.settle(failure('E_ABORTED', message));
        child.kill('an aborted run did not stop');
      }, ABORT_GRACE_MS);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await promise;
    } finally {
      clearTimeout(hung);
      clearTimeout(abortTimer);
      signal?.removeEventListener('abort', onAbort);
      child.runs.delete(id);
      child.release();
      if (this.#run === run) this.#run = null;
    }
  }
}
