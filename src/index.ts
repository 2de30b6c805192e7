// The public API of agent-apps (docs/architecture.md). Skills import from the bare specifier `agent-apps`,
// which the runtime resolves to this module wherever the skill lives.
import { setEntryUrl } from './runtime.ts';
import { managerOf } from './kernel/manager.ts';
import { ContextRun } from './kernel/context.ts';
import type { Kernel } from './kernel/orchestrator.ts';
import type { Context, LoadedTool, RuntimeState } from './core/types.ts';
import { notInteractive } from './core/errors.ts';
import { check } from './kernel/schema.ts';
import { copyData } from './core/path.ts';
import { checkConfig, configError } from './kernel/plan.ts';
import { eventBus, eventBusReady } from './events/runtime.ts';

setEntryUrl(import.meta.url);

export { createRuntime, type Runtime, type RuntimeOptions } from './runtime.ts';
export { ctxTarget, defineSkill } from './kernel/target.ts';
export { serializeContext } from './kernel/serialize.ts';
export { AgentAppsError, ConfigurationError, ToolNotFoundError, ValidationError, AbortError, formatSchemaErrors } from './core/errors.ts';
export { isPathRef } from './loader/names.ts';
// Schedules (docs/serve.md): the store schedule-create / -list / -delete keep and `serve` fires.
export { cronReady, makeSchedule, readSchedules, updateSchedules, nextFire, scheduleStore, type Schedule, type ScheduleInput, type ScheduleStore } from './events/schedules-store.ts';
export { findTool } from './runtime.ts';
// The registry's `mcp` tool source, for `registry.source<McpHub>('mcp')` (the mcp middleware skill).
export type { McpHub } from './mcp/hub.ts';
export { parseAllowedTools, type AllowedTools } from './kernel/allowed-tools.ts';
export { createCallbackRef, type CallbackRef } from './agent/callback-ref.ts';
export { resolveVisibleTools, type VisibleTools, type ToolDoc } from './agent/visible-tools.ts';
export type { AgentPolicy, ExecutionHandle, HostBudget } from './agent/bridge.ts';
export { DEFAULT_AGENT_PROVIDER } from './agent/provider.ts';
// Asking a person (docs/agents.md): the asker contract the terminal UI implements, and a plain one.
export { APPROVAL_CHOICES, type Answer, type ApprovalQuestion, type Asker, type AskOptions, type Choice, type PlainQuestion, type Question } from './core/ask.ts';
export { LineAsker, lineAsker, printable, renderApproval, type LineAskerOptions } from './core/line-asker.ts';
export type { Decision, Denial, Trust, TrustLevel } from './policy/approval.ts';
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
 * The runtime behind a context (registry, planner, logger): for middleware that plan, list or
 * resolve tools. Its state is typed: `ctx.globals.internals` is the `RuntimeState` interface.
 */
export function kernelOf(ctx: Context): Kernel {
  return ctx.globals.internals.kernel;
}

/** The tool a target context serves: its declaration, whether it has a function, and running that function once (the `execute` middleware). */
export interface ServedTool {
  readonly decl: LoadedTool;
  readonly hasFunction: boolean;
  /** Runs the tool's own function once; resolves to its value (undefined when it has none). */
  run(): Promise<unknown>;
}

class Served implements ServedTool {
  readonly #manager: ReturnType<typeof managerOf>;
  constructor(manager: ReturnType<typeof managerOf>) {
    this.#manager = manager;
  }
  get decl(): LoadedTool {
    return this.#manager.tool;
  }
  get hasFunction(): boolean {
    return typeof this.#manager.tool.fn === 'function';
  }
  run(): Promise<unknown> {
    return this.#manager.runFunction();
  }
}

export function servedTool(target: Context): ServedTool {
  return new Served(managerOf(target));
}

/**
 * One key of `ctx.run.middleware` (the resolved cascade) for reading: no copy is made, so the
 * value may be the cascade's own, frozen and shared — read it, do not change it. What a middleware
 * that only looks at one key should use on a hot path; `run.middleware` gives a writable copy.
 */
export function middlewareKey(ctx: Context, key: string): unknown {
  return ctx.run instanceof ContextRun ? ContextRun.middlewareKey(ctx.run, key) : ctx.run.middleware[key];
}

/**
 * The terminal UI for a skill that draws (repl, tutor): the one the CLI put on the runtime state
 * when it owns a terminal (loads ink only now; `owned` screens the skill closes). A runtime made in
 * code has none: such a skill is refused, as it would be without a terminal.
 */
export async function terminalOf(ctx: Context): Promise<Awaited<ReturnType<NonNullable<RuntimeState['openTerminal']>>>> {
  const open = ctx.globals.internals.openTerminal;
  if (!open) throw notInteractive(`'${ctx.run.tool.name}' draws on the agent-apps terminal (run it with agent-apps run ${ctx.run.tool.name})`);
  return open();
}

/** JSON Schema check with ajv (loaded on first use); returns ajv's error list. */
export { check as checkSchema, copyData, checkConfig, configError, eventBus, eventBusReady };
