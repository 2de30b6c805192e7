// The public API of agent-apps (SPEC §13). Skills import from the bare specifier `agent-apps`,
// which the runtime resolves to this module wherever the skill lives.
import { setEntryUrl } from './runtime.ts';
import { managerOf } from './kernel/manager.ts';
import type { Kernel } from './kernel/orchestrator.ts';
import type { Context } from './core/types.ts';
import { check } from './kernel/schema.ts';
import { copyData } from './core/path.ts';
import { checkConfig, configError } from './kernel/plan.ts';
import { eventBus, eventBusReady } from './events/runtime.ts';
import type { Sandbox, SandboxOptions } from './sandbox/sandbox.ts';
import { systemPrompt, userMessage } from './agent/prompt.ts';
import { isCallable } from './agent/visible-tools.ts';
import { createBridge, jsonSafe, scrub, subAgentConfig, subAgentWithin, DEFAULT_HOST_MB, type AgentPolicy } from './agent/bridge.ts';
import { realPath } from './kernel/allowed-tools.ts';
import { readLimits, findProvider, LimitCounter } from './agent/limits.ts';
import { providerError } from './agent/provider.ts';
import { AgentTrace } from './agent/trace.ts';
import { Returns } from './agent/returns.ts';
import { AgentCode } from './agent/code.ts';
import { ApprovalState } from './agent/approval.ts';
import { terminalFor } from './tui/load.ts';

setEntryUrl(import.meta.url);

export { createRuntime, type Runtime, type RuntimeOptions } from './runtime.ts';
export { ctxTarget, defineSkill } from './kernel/target.ts';
export { serializeContext } from './kernel/serialize.ts';
export { AgentAppsError, ConfigurationError, ToolNotFoundError, ValidationError, AbortError, formatSchemaErrors } from './core/errors.ts';
export { isPathRef } from './loader/names.ts';
export { findTool } from './loader/find-tool.ts';
export { parseAllowedTools, type AllowedTools } from './kernel/allowed-tools.ts';
export { createCallbackRef, type CallbackRef } from './agent/callback-ref.ts';
export { resolveVisibleTools, type VisibleTools, type ToolDoc } from './agent/visible-tools.ts';
export type { AgentPolicy, ExecutionHandle, HostBudget } from './agent/bridge.ts';
export { DEFAULT_AGENT_PROVIDER } from './agent/provider.ts';
// Asking a person (SPEC §17): the asker contract the terminal UI implements, and a plain one.
export { APPROVAL_CHOICES, type Answer, type ApprovalQuestion, type Asker, type AskOptions, type Choice, type PlainQuestion, type Question } from './core/ask.ts';
export { LineAsker, lineAsker, printable, renderApproval, type LineAskerOptions } from './kernel/line-asker.ts';
export type { Decision, Denial, Trust, TrustLevel } from './agent/approval.ts';
export type {
  AgentArgs,
  AllowDirective,
  ContinueDirective,
  DenyDirective,
  HookDirective,
  HookEvent,
  HookEventMap,
  HookEventType,
  InvokeArgs,
  StopDirective,
  TokenUsage,
} from './agent/provider.ts';
export type {
  RuntimeState,
  Context,
  ContextManager,
  ContextSeed,
  ChainEntryInput,
  Envelope,
  Event,
  EventHandler,
  Frontmatter,
  Globals,
  HistoryFrame,
  InvokeOptions,
  JsonObject,
  JsonValue,
  LoadedTool,
  LocalConfig,
  Locals,
  LogEvent,
  LogInput,
  LogLevel,
  Nonlocals,
  Reporter,
  RunState,
  ToolDecl,
  ToolDef,
  ToolDescription,
  ToolSummary,
} from './core/types.ts';

/**
 * What built-in skills need from the kernel beyond the context: running the served tool's own
 * function (the `execute` middleware) and reaching the runtime (registry, planner, logger).
 * Stable for skills in this repository; not part of the documented user API.
 */
export const internals = {
  /** Runs `target`'s tool function once; returns its value (undefined if it has none). */
  runFunction(target: Context): Promise<unknown> {
    return managerOf(target).runFunction();
  },
  hasFunction(target: Context): boolean {
    return typeof managerOf(target).tool.fn === 'function';
  },
  kernel(ctx: Context): Kernel {
    return ctx.globals.internals.kernel;
  },
  tool(ctx: Context) {
    return managerOf(ctx).tool;
  },
  /** JSON Schema check with ajv (loaded on first use); returns ajv's error list. */
  check,
  /** A deep copy of plain objects and arrays: a context's own copy of shared, frozen cascade data. */
  copyData,
  /** For a middleware: an E_CONFIG about its value, naming the file and key of the cascade level that set it. */
  configError,
  /** For a middleware that turns validate-args off: checks its value against its params, failing with `configError`. */
  checkConfig,
  /** The runtime's event bus (SPEC §8), created on first use. */
  eventBus,
  /** The bus with the routes of the projects' root mains registered (async, once). */
  eventBusReady,
  /** A fresh isolated-vm sandbox for agent code (SPEC §11); isolated-vm loads on first use. */
  async createSandbox(opts: SandboxOptions): Promise<Sandbox> {
    const { Sandbox } = await import('./sandbox/sandbox.ts');
    return Sandbox.create(opts);
  },
  systemPrompt,
  userMessage,
  isCallable,
  /**
   * When `ctx` was invoked by agent code (its caller has `locals.internals.untrustedRef`), the
   * policy of that agent (src/agent/bridge.ts). Otherwise undefined.
   */
  agentPolicy(ctx: Context): AgentPolicy | undefined {
    const internals = ctx.envelope.parent?.locals.internals;
    if (internals?.untrustedRef !== true) return undefined;
    return internals.agent as AgentPolicy;
  },
  /**
   * When `ctx` was invoked by agent code, the discovery filter of that agent: `(name, hidden) =>
   * boolean` (its own allowed-tools and every calling agent's). Otherwise undefined.
   */
  agentFilter(ctx: Context): ((name: string, hidden: boolean) => boolean) | undefined {
    const policy = internals.agentPolicy(ctx);
    if (!policy) return undefined;
    return (name, hidden) => isCallable(name, hidden, policy).ok;
  },
  /** The `agent` skill's parts (src/agent/): limits, the trace and its events, returns, the invoke tool's code. */
  readLimits,
  findProvider,
  LimitCounter,
  providerError,
  AgentTrace,
  Returns,
  AgentCode,
  /** The host-call policy for agent code (src/agent/bridge.ts). */
  createBridge,
  subAgentConfig,
  subAgentWithin,
  /** One agent run's approvals and denials (src/agent/approval.ts). */
  ApprovalState,
  /** A JSON copy without internals, config or secrets: what agent code may see of host data. */
  scrub,
  jsonSafe,
  realPath,
  DEFAULT_HOST_MB,
  /** The terminal UI for a skill that draws (repl, tutor): loads ink only now; `owned` screens the skill closes. */
  terminal(ctx: Context) {
    return terminalFor(ctx.globals.internals);
  },
};
