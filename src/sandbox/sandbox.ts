// The agent's sandbox: one isolated-vm isolate that runs agent code with `ctx`, `target`, `memory`
// and a captured `console`, and reaches the host only through `SandboxHost.call` (docs/agents.md, docs/security.md).
// What it blocks, its isolation modes and its figures: docs/sandbox.md.
//
// `Sandbox` is the API; it runs on one of two engines with the same behaviour:
// - `InlineSandbox` (this file): the isolate lives in this process;
// - `ProcessSandbox` (process.ts): the isolate lives in a shared child process (child.ts), which
//   runs an `InlineSandbox` and forwards its host calls here. V8 aborts that isolated-vm cannot
//   catch then end the child, not this process.

import type ivm from 'isolated-vm';
import { AbortError, AgentAppsError, ConfigurationError } from '../core/errors.ts';
import { BOOTSTRAP_SOURCE, type BootConfig, type Bridge } from './bootstrap.ts';
import { answerHostCall, failure, limitsOf, messageOf, MAX_PAYLOAD_CHARS, RAW_CALL, type HostAnswer, type RawHost } from './common.ts';
import { DEFAULT_ISOLATION, type Isolation, type RunOptions, type SandboxEngine, type SandboxError, type SandboxHost, type SandboxOptions, type SandboxResult } from './types.ts';

export { DEFAULT_ISOLATION } from './types.ts';
export type { Isolation, RunOptions, SandboxEngine, SandboxError, SandboxHost, SandboxOptions, SandboxResult } from './types.ts';

// Loaded when first needed (docs/cli.md, "Start-up"): isolated-vm's addon by the first inline
// isolate — the agent-apps process of a process-mode run never makes one — and process.ts (with
// node:child_process) by the first process-mode sandbox — the sandbox process never makes one.
let ivmAddon: typeof ivm | undefined;

const MAX_LOG_LINES = 1000;
const MAX_LOG_CHARS = 1 << 20;
const HOST_METHODS = new Set(['invoke', 'finish', 'fail', 'abort', 'next', 'get', 'set', 'log']);
const CODE_FILENAME = 'file:///agent.js';

type Ms = number;
type Kill = 'timeout' | 'memory' | 'cap' | 'abort' | 'disposed';

interface Envelope {
  calls: number;
  /** Absent when the message was malformed: the last snapshot stays. */
  memory?: Record<string, unknown>;
  ok: boolean;
  value?: unknown;
  error?: SandboxError;
}

/** One `run`: everything the host tracks until the result is settled. */
interface Execution {
  epoch: number;
  host: SandboxHost;
  middleware: boolean;
  deadline: Ms;
  logs: string[];
  /** Messages received from this execution ($done excluded); `$done` says how many were sent. */
  received: number;
  /** Host calls and timers not yet answered. */
  inFlight: number;
  /** Host → isolate calls (exec, deliver) still running. */
  applies: number;
  timers: Map<number, ReturnType<typeof setTimeout>>;
  envelope: Envelope | null;
  result: SandboxResult | null;
  resolve(result: SandboxResult): void;
}

/**
 * Option objects handed to isolated-vm are built once, without a prototype and frozen, so that
 * nothing (in any realm) can add `reference: true` or `copy: true` to them (docs/sandbox.md).
 */
function frozen<T extends object>(value: T): Readonly<T> {
  return Object.freeze(Object.assign(Object.create(null) as T, value));
}

const BOOT_OPTIONS = frozen({
  filename: 'agent-apps:bootstrap',
  timeout: 5000,
  result: frozen({ reference: true as const }),
});

let epochs = 0;

/** How an `InlineSandbox` runs; not user options. */
export interface EngineOptions {
  /**
   * Answer host calls and fire timers with `applySync`: the code that resumes runs on this thread,
   * which saves two thread hand-offs per host call (7 µs instead of 30–70 µs here) but blocks this
   * thread's event loop until the code awaits again (at most the time limit). Only the child of
   * process mode uses it; inline mode must keep the host's event loop free.
   */
  syncDeliver?: boolean;
}

/**
 * The agent's sandbox. `Sandbox.create({ isolation })` starts the isolate in a shared child
 * process ('process') or in this process ('inline'); everything else behaves the same.
 */
export class Sandbox {
  readonly #engine: SandboxEngine;
  readonly isolation: Isolation;

  private constructor(engine: SandboxEngine, isolation: Isolation) {
    this.#engine = engine;
    this.isolation = isolation;
  }

  /** A sandbox with its isolate started and ready for `run`. */
  static async create(opts: SandboxOptions = {}): Promise<Sandbox> {
    const isolation: unknown = opts.isolation ?? DEFAULT_ISOLATION;
    if (isolation !== 'process' && isolation !== 'inline') {
      throw new ConfigurationError(`model.sandbox.isolation must be 'process' or 'inline' (got ${JSON.stringify(isolation)})`);
    }
    const engine = isolation === 'process' ? await (await import('./process.ts')).ProcessSandbox.create(opts) : await InlineSandbox.create(opts);
    return new Sandbox(engine, isolation);
  }

  get disposed(): boolean {
    return this.#engine.disposed;
  }

  /** The last JSON snapshot of `memory`, taken whenever an execution's code has completed. */
  memorySnapshot(): Record<string, unknown> {
    return this.#engine.memorySnapshot();
  }

  /**
   * Runs `code` as the body of an async function. Executions on one sandbox run one at a time, in
   * call order. Resolves with `ok: false` for every problem of the code or the sandbox; rejects
   * only when called with something other than a string of code.
   */
  run(code: string, host: SandboxHost, opts: RunOptions = {}): Promise<SandboxResult> {
    return this.#engine.run(code, host, opts);
  }

  dispose(): void {
    this.#engine.dispose();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}

/** The isolate in this process. Process mode runs one of these in its child too. */
export class InlineSandbox implements SandboxEngine {
  readonly #timeoutMs: number;
  readonly #memoryMb: number;
  readonly #maxPendingCalls: number;
  #snapshot: Record<string, unknown>;
  #snapshotVersion = 0;
  #isolate: ivm.Isolate | null = null;
  #context: ivm.Context | null = null;
  #bridge: ivm.Reference<Bridge> | null = null;
  #run: Execution | null = null;
  #queue: Promise<unknown> = Promise.resolve();
  #disposed = false;
  readonly #syncDeliver: boolean;

  private constructor(opts: SandboxOptions, engine: EngineOptions) {
    this.#syncDeliver = engine.syncDeliver === true;
    const limits = limitsOf(opts);
    this.#timeoutMs = limits.timeoutMs;
    this.#memoryMb = limits.memoryMb;
    this.#maxPendingCalls = limits.maxPendingCalls;
    this.#snapshot = limits.memory;
  }

  /** A sandbox with its isolate started and ready for `run`. */
  static async create(opts: SandboxOptions = {}, engine: EngineOptions = {}): Promise<InlineSandbox> {
    const sandbox = new InlineSandbox(opts, engine);
    try {
      await sandbox.#boot();
    } catch (error) {
      throw new AgentAppsError('E_SANDBOX', `could not start the sandbox: ${messageOf(error)}`, { cause: error });
    }
    return sandbox;
  }

  get disposed(): boolean {
    return this.#disposed;
  }

  /** The last JSON snapshot of `memory`, taken whenever an execution's code has completed. */
  memorySnapshot(): Record<string, unknown> {
    return structuredClone(this.#snapshot);
  }

  /** Changes whenever the snapshot does (process mode sends it to the parent only then). */
  get snapshotVersion(): number {
    return this.#snapshotVersion;
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
    if (this.#run) this.#kill(this.#run, 'disposed');
    this.#disposeIsolate();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  // ---- lifecycle -----------------------------------------------------------------------------

  async #boot(): Promise<void> {
    ivmAddon ??= (await import('isolated-vm')).default;
    const isolate = new ivmAddon.Isolate({ memoryLimit: this.#memoryMb });
    try {
      const context = await isolate.createContext();
      const config: BootConfig = {
        maxPendingCalls: this.#maxPendingCalls,
        maxLogLines: MAX_LOG_LINES,
        maxLogChars: MAX_LOG_CHARS,
        memory: this.#snapshot,
      };
      const send = new ivmAddon.Callback(this.#dispatch, { ignored: true });
      const bridge = await context.evalClosure(BOOTSTRAP_SOURCE, [send, JSON.stringify(config)], BOOT_OPTIONS);
      this.#isolate = isolate;
      this.#context = context;
      this.#bridge = bridge as ivm.Reference<Bridge>;
    } catch (error) {
      isolate.dispose();
      throw error;
    }
  }

  #disposeIsolate(): void {
    const isolate = this.#isolate;
    this.#isolate = null;
    this.#context = null;
    this.#bridge = null;
    if (isolate && !isolate.isDisposed) {
      try {
        isolate.dispose();
      } catch {
        // already gone
      }
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
    if (!this.#isolate || this.#isolate.isDisposed) {
      // A previous execution was killed: start afresh, `memory` restored from its snapshot.
      this.#disposeIsolate();
      try {
        await this.#boot();
      } catch (error) {
        return failure('E_SANDBOX', `could not restart the sandbox: ${messageOf(error)}`);
      }
    }

    const { promise, resolve } = Promise.withResolvers<SandboxResult>();
    const exec: Execution = {
      epoch: ++epochs,
      host,
      middleware: opts.middleware === true,
      deadline: performance.now() + this.#timeoutMs,
      logs: [],
      received: 0,
      inFlight: 0,
      applies: 0,
      timers: new Map(),
      envelope: null,
      result: null,
      resolve,
    };
    this.#run = exec;
    // The isolate's own timeouts stop covering code once it has awaited a host call, and a
    // promise that never settles would otherwise hang the run: one host timer bounds it all.
    const timer = setTimeout(() => this.#kill(exec, 'timeout'), this.#timeoutMs);
    const onAbort = (): void => this.#kill(exec, 'abort', signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    void this.#start(exec, code, argsJson);
    try {
      return await promise;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (this.#run === exec) this.#run = null;
    }
  }

  async #start(exec: Execution, code: string, argsJson: string): Promise<void> {
    const context = this.#context!;
    let fn: ivm.Reference<unknown>;
    try {
      // Line 1 of the code is line 1 of agent.js: the wrapper's first line is at offset -1.
      fn = await context.eval(`(async () => {\n${code}\n})`, frozen({
        filename: CODE_FILENAME,
        lineOffset: -1,
        timeout: remaining(exec),
        reference: true as const,
      }));
    } catch (error) {
      this.#fault(exec, error, undefined, true);
      return;
    }
    if (exec.result) {
      fn.release();
      return;
    }
    this.#apply(exec, ['exec', exec.epoch, argsJson, exec.middleware, fn.derefInto({ release: true })]);
  }

  /**
   * Calls into the isolate, bounded by what is left of the execution's time. `delivered` is the
   * host error this call hands to the code, if any: should the code leave it unhandled, it comes
   * back as this call's failure without its `code`, which is restored from here.
   */
  #apply(exec: Execution, args: unknown[], delivered?: SandboxError): void {
    const bridge = this.#bridge;
    if (!bridge) return;
    exec.applies++;
    if (this.#syncDeliver && args[0] === 'deliver') {
      try {
        bridge.applySync(undefined, args as never, frozen({ timeout: remaining(exec) }));
      } catch (error) {
        exec.applies--;
        this.#fault(exec, error, delivered);
        return;
      }
      exec.applies--;
      this.#settleIfDone(exec);
      return;
    }
    bridge
      .apply(undefined, args as never, frozen({ timeout: remaining(exec) }))
      .then(
        () => {
          exec.applies--;
          this.#settleIfDone(exec);
        },
        (error: unknown) => {
          exec.applies--;
          this.#fault(exec, error, delivered);
        },
      );
  }

  /**
   * An isolated-vm call failed. The isolate gone means the memory limit (we clear `#isolate` when
   * we dispose it ourselves); otherwise a timeout, or an error of the code: a compile error, or a
   * promise rejection nobody handled, which isolated-vm reports as the failure of the call that
   * ran the microtasks — it fails the execution, as it would end a Node process.
   */
  #fault(exec: Execution, error: unknown, delivered?: SandboxError, compiling = false): void {
    if (exec.result) return;
    if (!this.#isolate || this.#isolate.isDisposed) return this.#kill(exec, 'memory');
    if (error instanceof Error && error.message === 'Script execution timed out.') return this.#kill(exec, 'timeout');
    const reported = codeError(error);
    if (delivered && delivered.message === messageOf(error)) reported.code = delivered.code;
    if (!compiling) reported.message += ' (unhandled promise rejection)';
    this.#finish(exec, { ok: false, error: reported, logs: exec.logs });
  }

  /** Ends an execution for a reason of the sandbox itself; the isolate is disposed and rebuilt on the next run. */
  #kill(exec: Execution, why: Kill, detail?: unknown): void {
    if (exec.result) return;
    // The memory limit disposes the isolate without telling anyone; seen here as a timeout.
    if (why === 'timeout' && this.#isolate?.isDisposed) why = 'memory';
    const error: SandboxError = { code: 'E_SANDBOX', message: '' };
    switch (why) {
      case 'timeout': error.message = `execution timed out after ${this.#timeoutMs} ms (model.sandbox.timeoutMs)`; break;
      case 'memory': error.message = `out of memory: the code exceeded the sandbox's ${this.#memoryMb} MB heap limit (model.sandbox.memoryMb)`; break;
      case 'cap': error.message = `too many pending host calls and timers (limit ${this.#maxPendingCalls}): await them, or batch the work`; break;
      case 'disposed': error.message = 'the sandbox was disposed during the execution'; break;
      case 'abort': error.code = 'E_ABORTED'; error.message = new AbortError(detail).message; break;
    }
    this.#finish(exec, { ok: false, error, logs: exec.logs });
    this.#disposeIsolate();
  }

  #finish(exec: Execution, result: SandboxResult): void {
    if (exec.result) return;
    exec.result = result;
    for (const handle of exec.timers.values()) clearTimeout(handle);
    exec.timers.clear();
    exec.resolve(result);
  }

  /** Done when the code has completed, every message it sent has arrived and the isolate is idle. */
  #settleIfDone(exec: Execution): void {
    const envelope = exec.envelope;
    if (exec.result || !envelope || exec.received < envelope.calls || exec.applies > 0) return;
    if (envelope.memory) {
      this.#snapshot = envelope.memory;
      this.#snapshotVersion++;
    }
    if (envelope.ok) this.#finish(exec, { ok: true, value: envelope.value ?? null, logs: exec.logs });
    else this.#finish(exec, { ok: false, error: envelope.error!, logs: exec.logs });
  }

  // ---- messages from the isolate -------------------------------------------------------------

  /**
   * The host end of `send`. It runs as an ignored callback, which swallows exceptions, so it
   * checks everything and never throws: the sandbox controls every argument.
   */
  #dispatch = (epoch: unknown, id: unknown, method: unknown, payload: unknown): void => {
    try {
      const exec = this.#run;
      if (!exec || exec.result || epoch !== exec.epoch) return;
      if (typeof id !== 'number' || typeof method !== 'string' || typeof payload !== 'string') return;
      if (method === '$done') {
        exec.envelope = parseEnvelope(payload);
        this.#settleIfDone(exec);
        return;
      }
      exec.received++;
      switch (method) {
        case '$log':
          if (exec.logs.length <= MAX_LOG_LINES) exec.logs.push(payload.length > MAX_LOG_CHARS ? payload.slice(0, MAX_LOG_CHARS) : payload);
          break;
        case '$cap':
          this.#kill(exec, 'cap');
          break;
        case '$timer':
          this.#startTimer(exec, id, Number(payload));
          break;
        case '$clear':
          this.#clearTimer(exec, id);
          break;
        default:
          this.#hostCall(exec, id, method, payload);
      }
    } catch {
      // nothing may escape an ignored callback
    }
  };

  #hostCall(exec: Execution, id: number, method: string, payload: string): void {
    if (!HOST_METHODS.has(method) || (method === 'next' && !exec.middleware)) {
      this.#deliver(exec, id, false, JSON.stringify({ message: `unknown host method '${method}'`, code: 'E_SANDBOX' }));
      return;
    }
    if (payload.length > MAX_PAYLOAD_CHARS) {
      this.#deliver(exec, id, false, JSON.stringify({ message: `ctx.manager.${method}: arguments exceed ${MAX_PAYLOAD_CHARS} characters of JSON`, code: 'E_SANDBOX' }));
      return;
    }
    if (++exec.inFlight > this.#maxPendingCalls) return this.#kill(exec, 'cap');
    const raw = (exec.host as Partial<RawHost>)[RAW_CALL];
    const pending: Promise<HostAnswer> = raw ? raw.call(exec.host, method, payload) : answerHostCall(exec.host, method, payload);
    pending.then((answer) => {
      exec.inFlight--;
      this.#deliver(exec, id, answer.ok, answer.json);
    }, () => {
      exec.inFlight--;
      this.#deliver(exec, id, false, JSON.stringify({ message: `ctx.manager.${method}: the host call failed`, code: 'E_SANDBOX' }));
    });
  }

  /** Answers a host call or fires a timer — only into the live isolate of the running execution. */
  #deliver(exec: Execution, id: number, ok: boolean, json: string): void {
    if (exec.result || exec.envelope || this.#run !== exec || !this.#isolate || this.#isolate.isDisposed) return;
    if (exec.deadline - performance.now() <= 0) return this.#kill(exec, 'timeout');
    let delivered: SandboxError | undefined;
    if (!ok) {
      const data = JSON.parse(json) as { message: string; code?: string };
      delivered = { code: data.code ?? 'E_SKILL', message: data.message };
    }
    this.#apply(exec, ['deliver', id, ok, json], delivered);
  }

  #startTimer(exec: Execution, id: number, delay: number): void {
    if (++exec.inFlight > this.#maxPendingCalls) return this.#kill(exec, 'cap');
    const ms = Math.min(Number.isFinite(delay) && delay > 0 ? delay : 0, this.#timeoutMs);
    exec.timers.set(id, setTimeout(() => {
      exec.timers.delete(id);
      exec.inFlight--;
      this.#deliver(exec, id, true, '');
    }, ms));
  }

  #clearTimer(exec: Execution, id: number): void {
    const handle = exec.timers.get(id);
    if (handle === undefined) return;
    clearTimeout(handle);
    exec.timers.delete(id);
    exec.inFlight--;
  }
}

// ---- helpers -------------------------------------------------------------------------------

function remaining(exec: Execution): number {
  return Math.max(1, Math.ceil(exec.deadline - performance.now()));
}

/** A compile-time error of the code (a SyntaxError, usually): its name, message and line. */
function codeError(error: unknown): SandboxError {
  const out: SandboxError = { code: 'E_SKILL', message: messageOf(error) };
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code) out.code = code;
    if (error.name && error.name !== 'Error') out.message = `${error.name}: ${out.message}`;
    const at = /agent\.js:(\d+):(\d+)/.exec(`${error.message}\n${error.stack ?? ''}`);
    if (at) {
      out.line = Number(at[1]);
      out.column = Number(at[2]);
    }
  }
  return out;
}

function parseEnvelope(payload: string): Envelope {
  try {
    const data = JSON.parse(payload) as Partial<Envelope>;
    const memory = data.memory !== null && typeof data.memory === 'object' && !Array.isArray(data.memory) ? data.memory : {};
    const calls = typeof data.calls === 'number' ? data.calls : 0;
    if (data.ok === true) return { calls, memory, ok: true, value: data.value ?? null };
    const e = data.error;
    const error: SandboxError = {
      code: typeof e?.code === 'string' ? e.code : 'E_SKILL',
      message: typeof e?.message === 'string' ? e.message : 'the code failed',
    };
    if (typeof e?.line === 'number') error.line = e.line;
    if (typeof e?.column === 'number') error.column = e.column;
    return { calls, memory, ok: false, error };
  } catch {
    return { calls: 0, ok: false, error: { code: 'E_SANDBOX', message: 'the sandbox sent a malformed completion message' } };
  }
}
