// The shapes of the context (docs/concepts.md) and of tools (docs/writing-skills.md), as types.
// Runtime checks happen where data enters (loader, CLI, RPC); everything else trusts these.

import type { AskOptions } from './ask.ts';
import type { Place } from './errors.ts';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: unknown };

/** `run.tool` — a closed declaration built from the frontmatter. */
export interface ToolDecl {
  name: string;
  description?: string;
  params?: JsonObject;
  returns?: JsonObject;
  visibility: 'public' | 'hidden';
  allowedTools?: string;
  /** `ask-tools` (docs/agents.md): tools its agent may call with a person's approval (allowed-tools syntax). */
  askTools?: string;
  role: 'skill' | 'middleware';
  tags: string[];
}

export interface Frontmatter {
  name?: string;
  description?: string;
  metadata?: JsonObject;
  'allowed-tools'?: string;
  'ask-tools'?: string;
  [key: string]: unknown;
}

export type ToolFn = (ctx: Context, args: any) => unknown;

/** What users hand to `register`, `invoke` or `defineSkill`. */
export interface ToolDef {
  name?: string;
  frontmatter?: Frontmatter;
  prompt?: string;
  fn?: ToolFn;
}

// `registered`: a skill skill-register made for the lifetime of the runtime (a programmatic tool, listed as such).
export type ToolKind = 'markdown' | 'skill-folder' | 'code' | 'programmatic' | 'builtin' | 'inline' | 'mcp' | 'mcp-skill' | 'registered';

/** A tool as the loader produced it: everything the orchestrator needs, resolved once. */
export interface LoadedTool {
  name: string;
  kind: ToolKind;
  /** `file:///…`, `inline://…`, `mcp://…`, or null for builtins and programmatic tools. */
  uri: string | null;
  /** Absolute file path for file-backed tools. */
  file?: string;
  /** The search root the file was found in (for the cascade's authority walk). */
  root?: string;
  frontmatter: Frontmatter;
  /** Markdown body after frontmatter extraction. */
  prompt?: string;
  fn?: ToolFn;
  decl: ToolDecl;
  /** The metadata level this tool contributes to the cascade (its own `metadata`). */
  metadata: JsonObject;
  /** Identity for caches: changes whenever the file changes. */
  version: number;
  /** Problems that did not stop the tool from loading (docs/writing-skills.md: lenient SKILL.md loading). */
  diagnostics?: Diagnostic[];
  /**
   * Agent Skills / Claude Code extensions of a SKILL.md skill: `argument-hint`, and
   * `user-invocable: false` (left out of `list`, not of agents' discovery).
   */
  skill?: { argumentHint?: string; userInvocable?: boolean; modelInvocable?: boolean; dir?: string };
}

/** A problem in a skill file, placed (docs/writing-skills.md, `agent-apps validate`). */
// One message model, as vfile-message's (place, rule, source): a Diagnostic is placed with the
// same Place fields an AgentAppsError uses, only line and column — its file is the skill's, known
// to whoever holds the list (`agent-apps validate` adds it), and it is reported, not thrown.
export interface Diagnostic extends Pick<Place, 'line' | 'column'> {
  severity: 'error' | 'warning';
  message: string;
  /** A short name of the check (`name-folder`, `description-length` …). */
  rule: string;
}

export interface HistoryFrame {
  tool: string;
  args: unknown;
  timestamp: number;
}

export interface PromptState {
  raw: string;
  expanded?: string;
  replacements?: Record<number, string>;
}

export interface LocalConfig {
  cwd: string;
  library: string;
  runtime: string;
  workspace: string;
  paths: string[];
  model?: JsonObject;
  [key: string]: unknown;
}

export interface MiddlewareSpec {
  args?: unknown;
  before?: string[];
  after?: string[];
  remove?: boolean;
  fn?: (ctx: Context, args: unknown) => unknown;
}
/** `name → args` or `name → { args, before, after, remove, fn }` (docs/middleware.md). */
export type ExtraMiddleware = Record<string, unknown>;

export interface Locals {
  history: HistoryFrame[];
  result: unknown;
  error: unknown;
  config: LocalConfig;
  prompt?: PromptState;
  middleware?: ExtraMiddleware;
  internals?: { untrustedRef?: boolean; [key: string]: unknown };
  [key: string]: unknown;
}

export interface Nonlocals {
  rootContextId?: string;
  middleware?: ExtraMiddleware;
  debug?: boolean;
  agent?: { events?: string; contextId?: string; ancestorContextId?: string; [key: string]: unknown };
  [key: string]: unknown;
}

export interface Globals {
  config: JsonObject;
  tools: Map<string, LoadedTool>;
  cache: Map<string, unknown>;
  internals: Internals;
  [key: string]: unknown;
}

/**
 * The runtime's own long-lived state on `globals.internals` (docs/concepts.md), typed. Each subsystem
 * declares the keys it owns where it owns them, by declaration merging — as Hono's
 * `ContextVariableMap` —
 *
 *     declare module '../core/types.ts' { interface RuntimeState { eventBus?: EventBus } }
 *
 * (a skill: `declare module 'agent-apps' { interface RuntimeState { profile?: Profile } }`), and
 * reads them as `ctx.globals.internals.KEY`: typed, no cast. A key nobody declared is a type error.
 * Who owns what: src/runtime.ts (kernel, root, log, approve), src/events/ (the bus, its maps,
 * dispatched handlers, shutdown), src/agent/trace.ts (progress), src/surfaces/shared/terminal.ts (interactive,
 * breakpoint, terminal), skills/profile and skills/debug (profile, debugStep).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface RuntimeState {}

/** `globals.internals`: the runtime state (the name docs/concepts.md gives it). */
export type Internals = RuntimeState;

export interface Envelope {
  readonly id: string;
  readonly parent: Context | null;
  readonly target: Context;
  readonly hasOtherTarget: boolean;
}

export interface RunState {
  origin: { uri: string | null; frontmatter: Frontmatter };
  middleware: JsonObject;
  tool: ToolDecl;
  readonly signal: AbortSignal;
  readonly interactive: boolean;
}

export interface Context {
  readonly envelope: Envelope;
  readonly args: any;
  run: RunState;
  locals: Locals;
  nonlocals: Nonlocals;
  globals: Globals;
  readonly manager: ContextManager;
}

export interface InvokeOptions {
  /** A partial context seed (docs/concepts.md). */
  context?: ContextSeed;
  /** Fire and forget: resolves at once, errors are swallowed (and logged). */
  detached?: boolean;
  /**
   * `runtime.invoke` only (docs/scale.md): submit the invocation to a NATS work queue and wait for a
   * worker's result — `true`, or the queue and the longest wait (E_TIMEOUT past it).
   */
  remote?: boolean | { queue?: string; timeoutMs?: number };
}

export interface ContextSeed {
  target?: Context;
  locals?: Partial<Locals>;
  nonlocals?: Nonlocals;
  run?: Partial<Pick<RunState, 'interactive' | 'signal'>> & { [key: string]: unknown };
  signal?: AbortSignal;
  middleware?: ExtraMiddleware;
  [key: string]: unknown;
}

export interface ChainEntryInput {
  name: string;
  args?: unknown;
  before?: string[];
  after?: string[];
  fn?: (ctx: Context, args: unknown) => unknown;
}

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

export interface LogEvent {
  type: string;
  tag: string;
  level: LogLevel;
  text?: string;
  timestamp: number;
  rootContextId?: string;
  contextId: string;
  tool: string;
  code?: string;
  [key: string]: unknown;
}

export interface LogInput {
  type?: string;
  tag?: string;
  level?: LogLevel;
  text?: string;
  /** Part of the run's record (run-start, run-end, agent-run): reported whatever the log level and scope. */
  record?: boolean;
  [key: string]: unknown;
}

export interface TailOptions {
  tag?: string;
  type?: string | string[];
  last?: number;
  level?: LogLevel;
}

export interface Reporter {
  name: string;
  /** Called for every event at or above the configured level that passes the scope. */
  report(event: LogEvent): void;
  close?(): void | Promise<void>;
}

export interface LogSettings {
  level: LogLevel;
  scope: string[] | null;
  reporters: string[];
}

export interface ConfigureOptions {
  level?: LogLevel;
  scope?: string[] | null;
  reporter?: string | Reporter;
  global?: boolean;
}

export interface ContextManager {
  next(): Promise<unknown>;
  invoke(ref: string | ToolDef, args?: unknown, options?: InvokeOptions): Promise<unknown>;
  refresh(): Promise<void>;
  inject(entries: ChainEntryInput[] | ChainEntryInput): void;
  finish(value?: unknown): unknown;
  fail(error: unknown): never;
  abort(reason?: unknown): void;
  get(path: string): unknown;
  set(path: string, value: unknown): void;
  log(event: string | LogInput): void;
  tail(opts?: TailOptions): LogEvent[];
  configure(opts?: ConfigureOptions): LogSettings;
  /**
   * Asks the person running agent-apps (docs/agents.md): resolves with the chosen choice's value, or the
   * text typed when there are no choices. E_NOT_INTERACTIVE when there is nobody to ask (no
   * terminal, no asker given to createRuntime); E_ABORTED when this context is aborted meanwhile.
   */
  ask(question: string, options?: AskOptions): Promise<string>;
}

export interface Event {
  id: string;
  topic: string;
  type: string;
  source?: string;
  data?: unknown;
  timestamp: number;
  rootContextId?: string;
}

export type EventHandler = ((event: Event) => unknown) | { ref: string; args?: unknown };

export interface ToolSummary {
  name: string;
  kind: string;
  description?: string;
  origin: string | null;
  visibility: string;
  error?: string;
  /** Problems that did not stop it from loading (docs/writing-skills.md). */
  warnings?: string[];
  /** The origin of the skill of the same name that this one shadows (a later search root's, or an MCP tool). */
  shadows?: string;
  /** An MCP server of an untrusted workspace: not started, and why (docs/security.md). */
  untrusted?: string;
}

export interface ToolDescription {
  tool: ToolDecl;
  origin: { uri: string | null };
  metadata: JsonObject;
  chain: { name: string; args: unknown; from?: string }[];
}
