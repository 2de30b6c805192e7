// The sandbox's data types, shared by the API (sandbox.ts), both engines (sandbox.ts, process.ts)
// and their helpers (common.ts): a leaf module, so that none of them imports another in a circle.

export interface SandboxHost {
  /**
   * Called for every RPC from sandbox code. `method` is one of 'invoke' ([ref, args?, options?]),
   * 'finish' ([value]), 'fail' ([error]), 'abort' ([reason]), 'next' ([]; middleware mode only),
   * 'get' ([path]), 'set' ([path, value]), 'log' ([event]). Trailing `undefined` arguments are
   * dropped; an Error passed to `fail` arrives as `{ message, code? }`. Return JSON data or throw:
   * sandbox code sees an Error with the same `message` (and `code`), never a host stack.
   * `size` is the length of the call's JSON text, already measured: a host can budget the
   * payloads it accepts in O(1).
   */
  call(method: string, args: unknown[], size: number): Promise<unknown>;
}

/** Where the isolate lives: 'process' (a shared child process, crash-contained) or 'inline' (this process). */
export type Isolation = 'process' | 'inline';

/** The default of `model.sandbox.isolation` (docs/sandbox.md says why). */
export const DEFAULT_ISOLATION: Isolation = 'process';

export interface SandboxOptions {
  /** Where the isolate lives (model.sandbox.isolation). Default `DEFAULT_ISOLATION`. */
  isolation?: Isolation;
  /** Wall-clock limit of one `run`, host calls included (model.sandbox.timeoutMs). Default 30000. */
  timeoutMs?: number;
  /** Heap limit of the isolate in MB, minimum 8 (model.sandbox.memoryMb). Default 128. */
  memoryMb?: number;
  /** Host calls and timers in flight at once. Default 1000. */
  maxPendingCalls?: number;
  /** JSON seed merged into `memory` (Object.assign) before the first run. */
  memory?: Record<string, unknown>;
}

export interface RunOptions {
  /** JSON data, deep-frozen inside as `ctx.args`. */
  args?: unknown;
  /** When true, `target.manager.next()` is available (middleware mode). */
  middleware?: boolean;
  signal?: AbortSignal;
}

export interface SandboxError {
  /** `err.code` of what the code threw (default 'E_SKILL'); 'E_SANDBOX' for timeout, memory, pending-call cap, disposal; 'E_ABORTED'. */
  code: string;
  message: string;
  /** Where in the agent code the error was thrown, when known (1-based, like the code's own lines). */
  line?: number;
  column?: number;
}

export type SandboxResult =
  | { ok: true; value: unknown; logs: string[] }
  | { ok: false; error: SandboxError; logs: string[] };

/** What `Sandbox` delegates to: `InlineSandbox` or `ProcessSandbox`. */
export interface SandboxEngine {
  readonly disposed: boolean;
  memorySnapshot(): Record<string, unknown>;
  run(code: string, host: SandboxHost, opts?: RunOptions): Promise<SandboxResult>;
  dispose(): void;
}

