// The invoke tool's code (docs/agents.md): the model's JavaScript runs
// as an anonymous skill through the full pipeline, inside one isolated-vm sandbox per agent run,
// reused across its turns. Every host call the code makes goes through the bridge (bridge.ts,
// the security boundary). What the model gets back is one string: the result or `finished:`
// value, then the console output; a failure is the tool's error, with its line.
import { AgentAppsError, ValidationError } from '../core/errors.ts';
import type { Kernel } from '../kernel/orchestrator.ts';
import type { Context, ToolDef } from '../core/types.ts';
import type { Sandbox } from '../sandbox/sandbox.ts';
import { prestartSandboxProcess } from '../sandbox/process.ts';
import { DEFAULT_ISOLATION } from '../sandbox/types.ts';
import { createBridge, jsonSafe, type AgentPolicy, type ExecutionHandle, type HostCall } from './bridge.ts';
import type { SandboxLimits } from './limits.ts';
import type { Returns } from './returns.ts';
import type { AgentJournal } from './journal.ts';

export interface AgentCodeOptions {
  kernel: Kernel;
  /** The skill being served: its args are the code's `ctx.args`. */
  served: Context;
  policy: AgentPolicy;
  skillName: string;
  display: string;
  /** The served skill is middleware: the code has `target.manager.next()`. */
  middleware: boolean;
  /** The allowed-tools of the anonymous skill (validate-allowed-tools checks its calls too). */
  allowedTools: string | undefined;
  /** The agent's ask-tools: admitted by that second check too (the bridge gates them). */
  askTools?: string | undefined;
  /** Seeds the sandbox's `memory` global before the first execution. */
  memory: Record<string, unknown> | undefined;
  /** `model.sandbox` as set. */
  sandbox: Partial<SandboxLimits>;
  returns: Returns;
  /** `ctx.manager.abort(reason)` from the code: refusal, not failure. */
  abort(reason: unknown): void;
  /** The run's journal of this agent, when the run keeps one (docs/runs.md). */
  journal?: AgentJournal;
}

/** Tool errors a run can end on: the caller sees them when nothing happened after them (docs/agents.md). */
const ENDS_ON = new Set(['E_SANDBOX', 'E_ALLOWED_TOOLS', 'E_UNTRUSTED_REF', 'E_DENIED']);

export class AgentCode {
  /** The anonymous skill each piece of code runs as. */
  readonly def: ToolDef;
  /**
   * The last execution's error, when it is one a run can end on (a sandbox failure, a refused
   * call, a finish() value that broke `returns`); cleared by an execution that succeeds.
   */
  lastError: AgentAppsError | undefined;
  /** The last execution's error, whatever it was (a plain throw too); cleared by one that succeeds. */
  #lastFailed: AgentAppsError | undefined;
  readonly #o: AgentCodeOptions;
  readonly #bridge: HostCall;
  #sandbox: Sandbox | undefined;

  constructor(o: AgentCodeOptions) {
    this.#o = o;
    this.def = {
      name: 'agent-code',
      frontmatter: {
        name: 'agent-code',
        description: `Code written by the agent of '${o.skillName}'.`,
        metadata: o.allowedTools !== undefined ? { 'allowed-tools': o.askTools ? `${o.allowedTools} ${o.askTools}` : o.allowedTools } : {},
      },
      fn: (codeCtx: Context, a: { code: string }) => this.run(codeCtx, a.code),
    };
    this.#bridge = createBridge({
      kernel: o.kernel,
      served: o.served,
      policy: o.policy,
      skillName: o.skillName,
      display: o.display,
      middleware: o.middleware,
      finish: (exec, value) => o.returns.finish(exec.ctx, value),
      abort: o.abort,
      ...(o.journal ? { journal: o.journal } : {}),
    });
    // The code comes after the provider has prepared its model: the sandbox process starts now,
    // in parallel with that, not after it (if the `model` middleware has not started it already).
    prestartSandbox(o.sandbox);
  }

  async run(codeCtx: Context, code: string): Promise<string> {
    const { returns, served } = this.#o;
    const limits = this.#o.sandbox;
    this.#sandbox ??= await (await import('../sandbox/sandbox.ts')).Sandbox.create({ timeoutMs: limits.timeoutMs, memoryMb: limits.memoryMb, isolation: limits.isolation, memory: this.#o.memory });
    // One signal per execution: when it ends — completed, failed, timed out, killed — every host
    // call it started is aborted with it (docs/security.md), and a kill by the bridge ends it early.
    const ended = new AbortController();
    const onCodeAbort = () => ended.abort(codeCtx.run.signal.reason);
    codeCtx.run.signal.addEventListener('abort', onCodeAbort, { once: true });
    let killed: string | undefined;
    const exec: ExecutionHandle = {
      ctx: codeCtx,
      signal: ended.signal,
      code,
      kill(message) {
        killed ??= message;
        ended.abort(message);
      },
    };
    const host = { call: this.#reported((method: string, a: unknown[], size: number) => this.#bridge(exec, method, a, size)) };
    returns.beginExecution();
    let result;
    try {
      result = await this.#sandbox.run(code, host, { args: jsonSafe(served.args), middleware: this.#o.middleware, signal: ended.signal });
    } finally {
      codeCtx.run.signal.removeEventListener('abort', onCodeAbort);
      ended.abort("the agent code's execution ended");
    }
    if (killed !== undefined) result = { ok: false as const, error: { code: 'E_SANDBOX', message: killed }, logs: result.logs };
    // The seed's idiom is `ctx.manager.finish(value)` without await: the code may complete while
    // its finish() is still being checked. Wait for it; a value that broke `returns` is then this
    // call's error, not a silent success.
    if (returns.pending) await returns.pending;
    const refused = returns.refused;
    if (result.ok && refused && !returns.finished) result = { ok: false, error: { code: 'E_VALIDATION', message: refused.message }, logs: result.logs };
    const logs = result.logs.length ? `\nconsole:\n${result.logs.join('\n')}` : '';
    if (!result.ok) {
      const where = result.error.line !== undefined ? ` (line ${result.error.line})` : '';
      const err = new AgentAppsError(result.error.code, `${result.error.message}${where}${logs}`);
      this.lastError = ENDS_ON.has(result.error.code) ? err : result.error.code === 'E_VALIDATION' && refused ? refused : undefined;
      this.#lastFailed = this.lastError ?? err;
      throw err;
    }
    this.lastError = undefined;
    this.#lastFailed = undefined;
    if (returns.finished) return `finished: ${preview(returns.finished.value)}${logs}`;
    return `result: ${preview(result.value)}${logs}`;
  }

  /**
   * With a progress reporter (the CLI's live agent view, docs/terminal.md), each skill the code invokes is
   * reported as it starts and as it ends: `skill-call` { tool, args }, `skill-result` { tool,
   * result | error }. Reporting only: nothing here changes what the call does or returns.
   */
  #reported(call: (method: string, a: unknown[], size: number) => Promise<unknown>): (method: string, a: unknown[], size: number) => Promise<unknown> {
    const progress = this.#o.served.globals.internals.progress;
    if (typeof progress !== 'function') return call;
    const skill = this.#o.display;
    // The agent run the call belongs to, as its trace's events name it (trace.ts).
    const agentId = this.#o.served.nonlocals.agent?.contextId;
    const report = (e: { type: string; [key: string]: unknown }) => {
      try {
        progress({ ...e, skill, ...(agentId ? { agentId } : {}) });
      } catch {
        // A view failing never fails the agent's code.
      }
    };
    return async (method, a, size) => {
      if (method !== 'invoke' || typeof a[0] !== 'string') return call(method, a, size);
      const tool = a[0];
      report({ type: 'skill-call', tool, args: a[1] ?? {} });
      try {
        const result = await call(method, a, size);
        report({ type: 'skill-result', tool, result });
        return result;
      } catch (err) {
        report({ type: 'skill-result', tool, error: { message: (err as Error)?.message ?? String(err), code: (err as { code?: string })?.code } });
        throw err;
      }
    };
  }

  /**
   * The error the caller sees when the run fails with `error`. E_SANDBOX reaches the caller only
   * when the run ends on it (docs/agents.md): the limits ran out right after it, or the model never came
   * back (a replay cassette that ended there). A refused call or a refused finish() value that
   * the run ends on is reported the same way, with what came after it in the message. A replay
   * cassette that ends right after any failed execution — a plain throw in the code too — reports
   * that execution's error: it is what went wrong, and the cassette's end only why the run
   * stopped there (docs/agents.md, "Errors"). A drifted cassette is its own error (its diff).
   */
  endedOn(error: Error & { code?: string; final?: unknown }): Error & { code?: string } {
    const cassetteEnded = error.final === true && error.code !== 'E_CASSETTE_DRIFT';
    const last = this.lastError ?? (cassetteEnded ? this.#lastFailed : undefined);
    if (!last || !(error.code === 'E_AGENT_LIMIT' ? last.code === 'E_SANDBOX' : error.final === true)) return error;
    const then = ` — and then: ${error.message}`;
    if (last instanceof ValidationError) {
      const returns = new ValidationError('finish() value does not match the returns schema', last.errors, 'returns');
      returns.message += then;
      return returns;
    }
    return new AgentAppsError(last.code, `${last.message.split('\n')[0]}${then}`);
  }

  dispose(): void {
    this.#sandbox?.dispose();
  }
}

/**
 * Starts the sandbox process that agent code with these `model.sandbox` settings will run in, if
 * it runs in one (process isolation, the default) and there is none yet: Node and isolated-vm take
 * ~200 ms to start there, in parallel with whatever comes before the first code (docs/decisions.md,
 * cli.agent). Only a start: a bad setting is reported where the sandbox is created.
 */
export function prestartSandbox(sandbox: { isolation?: unknown } | undefined): void {
  if ((sandbox?.isolation ?? DEFAULT_ISOLATION) === 'process') prestartSandboxProcess();
}

function preview(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value ?? null);
  return text.length > 20_000 ? text.slice(0, 20_000) + `… (${text.length} characters)` : text;
}
