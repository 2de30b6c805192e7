// The agent-provider contract (docs/agents.md): the `agent` skill is
// policy, a provider skill is the LLM loop. The agent hands its provider only serializable args
// (`AgentArgs`); the provider runs agent code through `invokeRef`, reports each lifecycle event
// to `hookRef` (`HookEvent`) and follows the directive the hook answers (`HookDirective`). This
// file is the whole of that contract: a provider written against it runs under any agent-apps.
import { AgentAppsError } from '../core/errors.ts';
import type { JsonObject } from '../core/types.ts';

/**
 * The provider used when `model.agent` names none, the policy skill that starts a provider, and the
 * two that agent code never calls unless allowed-tools names them: defined with the rest of the
 * call policy (src/policy/callable.ts).
 */
export { AGENT_SKILL, ALWAYS_EXCLUDED, DEFAULT_AGENT_PROVIDER } from '../policy/callable.ts';

/** What a provider skill is invoked with (docs/agents.md: `AgentArgs`). Everything but `agentSignal` is JSON. */
export interface AgentArgs {
  /** The system prompt: the skill's expanded prompt and the tool documentation. */
  prompt: string;
  /** The cascade's model configuration, with the limits resolved (`maxTurns`: a number or Infinity). */
  config: JsonObject;
  /** Runs agent code: `ctx.manager.invoke(invokeRef, { code })` (`InvokeArgs`) → a string for the model. */
  invokeRef: string;
  /** Lifecycle events: `ctx.manager.invoke(hookRef, event)` (`HookEvent`) → a `HookDirective`. */
  hookRef: string;
  /** The first user message. */
  userMessage: string;
  /** The skill whose pipeline started this agent. */
  skillName: string;
  /** Aborted on fail(), refusal or cancellation: the provider stops its model. In-process callers only. */
  agentSignal?: AbortSignal;
  /**
   * Set when the run keeps a journal (docs/runs.md): the provider reports each model response as a
   * `response` hook event, and plays `turns` back — the responses a resumed run's journal holds, in
   * order — instead of asking its model, which it asks from the turn after them on. A provider
   * that ignores it still runs; a resume then asks its model again.
   */
  journal?: { turns: JournalTurn[] };
}

/** A model response as a journal holds it (docs/runs.md), the shape of a cassette entry. */
export interface JournalTurn {
  text?: string;
  /** The code of its `invoke` tool use, or of each when it had several. */
  invoke?: string | string[];
  usage?: TokenUsage;
}

/** The args of `invokeRef`: the code the model wrote for its one tool, `invoke`. */
export interface InvokeArgs {
  code: string;
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

/** The lifecycle events a provider reports, by type. `turnNumber` counts model turns from 1. */
export interface HookEventMap {
  /** Before each model call (not before a retry of it). */
  'turn-start': { turnNumber: number };
  /** Model text: the turn's whole text, or a streamed chunk (`delta: true`). */
  message: { text: string; delta?: boolean; turnNumber?: number };
  /** Chain-of-thought text, where the model has it. */
  reasoning: { text: string; delta?: boolean; turnNumber?: number };
  /** Before a tool runs: a `{ deny }` answer blocks it. */
  'tool-call': { tool: string; args: unknown; toolUseId?: string; turnNumber?: number };
  /** After a tool ran (or was denied): its result, or its error and the error's code. */
  'tool-result': { tool: string; args: unknown; result?: unknown; error?: string; code?: string; denied?: boolean; toolUseId?: string; turnNumber?: number };
  /** The end of a model turn, with its text: the answer says whether the loop goes on. */
  'turn-end': { result?: unknown; turnNumber?: number };
  /** A failed model call; `final`: no retry can succeed (a replay cassette that ran out). */
  error: { error: string; attempt?: number; final?: boolean; turnNumber?: number };
  /** The same turn again after an error. */
  retry: { attempt: number; turnNumber?: number };
  /** Tokens of one model call; `total`: of the run so far. */
  usage: TokenUsage & { total?: TokenUsage; turnNumber?: number };
  /**
   * A whole model response, before any of its tools run (only with `AgentArgs.journal`); `replayed`:
   * played back from the journal, not asked of the model. The agent journals it; it is not traced.
   */
  response: JournalTurn & { turnNumber?: number; replayed?: boolean };
}

export type HookEventType = keyof HookEventMap;

/** One lifecycle event: `{ type, ...fields }`. */
export type HookEvent<T extends HookEventType = HookEventType> = { [K in T]: { type: K } & HookEventMap[K] }[T];

/** End the run: with `result`, else the model's latest text. */
export interface StopDirective {
  stop: true;
  result?: unknown;
}
/** Go on with another model turn: `message` is the next user message (default `Continue.`). */
export interface ContinueDirective {
  continue: true;
  message?: string;
}
/** Do not run this tool call (answer to `tool-call`); the model is told why. */
export interface DenyDirective {
  deny: string;
}
/** Run this tool call (answer to `tool-call`). */
export interface AllowDirective {
  allow: true;
}
/** What the hook answers; `undefined` is the default behaviour (a provider's own choice: usually, end at turn-end). */
export type HookDirective = StopDirective | ContinueDirective | DenyDirective | AllowDirective | undefined;

/** A runtime error code (E_AGENT_LIMIT, E_ABORTED, E_SANDBOX, E_CONFIG …), as opposed to a library's (ECONNREFUSED). */
const RUNTIME_CODE = /^E_[A-Z0-9_]+$/;

/**
 * What the caller sees when the provider throws `err` (docs/agents.md): E_MODEL, the provider failed,
 * with `err` as the cause and its message in the text. An error that already carries a runtime
 * code keeps it — a limit, an abort, a sandbox failure or a configuration error is not a model
 * failure — except E_SKILL, which only says that a skill threw something without a code (the
 * kernel's wrapping of a thrown string). Read by code, not class: a provider may bring its own
 * copy of the error classes.
 */
export function providerError(err: unknown, provider: string): Error & { code?: string } {
  const code = (err as { code?: unknown } | null)?.code;
  if (err instanceof Error && typeof code === 'string' && code !== 'E_SKILL' && RUNTIME_CODE.test(code)) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new AgentAppsError('E_MODEL', `the agent provider '${provider}' failed: ${message}`, { cause: err });
}
