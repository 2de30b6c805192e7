// The agent loop: the real Strands `Agent` with exactly one tool, `invoke`, whose code runs
// through `onCode`; the SDK's hooks are mapped onto the provider contract's hook callback types (docs/agents.md,
// "Writing a custom provider"), and the hook's directives steer the loop.
// A model call that fails transiently (429, 5xx, a reset: retry.ts) is tried again after an
// exponential backoff or the server's Retry-After, `model.retries` times; then the next model of
// `model.fallback` takes over (docs/ci.md). Each is an `error` and a `retry` hook event (the trace)
// and an `onRetry` call (the log). The SDK's own retry strategy is off, so the count is exact.

import {
  Agent,
  AfterModelCallEvent,
  AfterToolCallEvent,
  AfterToolsEvent,
  BeforeModelCallEvent,
  BeforeToolCallEvent,
  FunctionTool,
  ModelStreamUpdateEvent,
  NullConversationManager,
  SlidingWindowConversationManager,
} from './sdk.ts';
import type { AgentResult, BaseModelConfig, Message, Model } from '@strands-agents/sdk';
import { AbortError, AgentAppsError, type HookDirective, type HookEvent, type TokenUsage } from 'agent-apps';
import { describeModel, explainModelError } from './models.ts';
import type { FallbackModel } from './fallback.ts';
import { DEFAULT_RETRIES, DEFAULT_RETRY_DELAY_MS, MAX_RETRY_AFTER_MS, backoffMs, isTransient, retryAfterMs, statusOf } from './retry.ts';
import { withStrandsLog } from './logging.ts';
import type { StrandsLogSink } from './logging.ts';

/** A hook's answer as the loop reads it: any of the contract's directives (`HookDirective`), or nothing. */
type Answer = { stop?: boolean; result?: unknown; continue?: boolean; message?: unknown; deny?: unknown };

export interface AgentLoopOptions {
  /** From `createModel`. */
  model: Model<BaseModelConfig>;
  systemPrompt: string;
  userMessage: string;
  /** Model round-trips (retries excluded); exhausted → `E_AGENT_LIMIT`. Default 30; `Infinity` = no limit. */
  maxTurns?: number;
  signal?: AbortSignal;
  /** Runs the `invoke` tool's code. Its value (a string, or JSON) goes back to the model; a throw becomes the tool's error result. */
  onCode(code: string): Promise<unknown>;
  /** Lifecycle events; the answer is a directive. Omit to run without hooks. */
  onHook?(event: HookEvent): Promise<HookDirective | unknown>;
  /** Also report streamed text/reasoning chunks as `{ type: 'message', delta: true }`. Default false. */
  deltas?: boolean;
  /** Where the SDK's own log lines go (default: nowhere). */
  onLog?: StrandsLogSink;
  /** Overrides the `invoke` tool's description. */
  toolDescription?: string;
  /** Each retry of a failed model call, and each move to a fallback model, as it is decided (for the log). */
  onRetry?(retry: RetryInfo): void;
  /**
   * contextEdit (docs/agents.md): when set, the provider trims its own conversation — a sliding window
   * of `windowSize` messages (default 40) that keeps tool-use pairs intact and the first user
   * message pinned, truncating oversized tool results. Off (the default): the conversation is
   * never edited, and a context overflow is the model's error.
   */
  contextEdit?: boolean | { windowSize?: number };
}

/** One retry of a model call (the `retry` hook event carries the same fields). */
export interface RetryInfo {
  /** The attempt about to be made at this turn's model call (2 = the first retry). */
  attempt: number;
  turnNumber: number;
  /** The wait before it: the backoff, or what the server asked for (Retry-After). */
  delayMs: number;
  /** The failure being retried, one line. */
  reason: string;
  /** Its HTTP status, if it had one. */
  status?: number;
  /** The server's Retry-After, when it sent one. */
  retryAfterMs?: number;
  /** The retry is on the next model of model.fallback: which (1 = the first fallback) and its model id. */
  fallback?: number;
  modelId?: string;
  /** This retry's number on its model, and how many the model gets (model.retries). */
  retry?: number;
  retries?: number;
}

export interface AgentLoopResult {
  /** The model's text in its final turn. */
  text: string;
  /** Set when a hook answered `{ stop: true, result }`. */
  stopped?: { result: unknown };
  usage: TokenUsage;
  /** Model round-trips made. */
  turns: number;
}

export const INVOKE_TOOL_DESCRIPTION =
  'Run JavaScript with `ctx` in scope. Call tools with `await ctx.manager.invoke(name, args)` ' +
  '(the tools and their params are listed in the system prompt), and return the final result with ' +
  '`ctx.manager.finish(value)`; throw an Error to fail. Put all the steps you can into one code ' +
  'block per call. The code\'s return value and its console output come back as the tool result.';

export const INVOKE_INPUT_SCHEMA = {
  type: 'object',
  properties: {
    code: { type: 'string', description: 'JavaScript to run (top-level await allowed); `ctx` is in scope.' },
  },
  required: ['code'],
} as const;

const DEFAULT_MAX_TURNS = 30;

export async function runAgentLoop(opts: AgentLoopOptions): Promise<AgentLoopResult> {
  return withStrandsLog(opts.onLog, () => loop(opts));
}

async function loop(opts: AgentLoopOptions): Promise<AgentLoopResult> {
  const { model, signal } = opts;
  const maxTurns = opts.maxTurns ?? DEFAULT_MAX_TURNS;
  if (!(maxTurns > 0)) throw limitError(maxTurns);
  if (signal?.aborted) throw new AbortError(signal.reason);

  const chain = fallbackOf(model);
  const state = {
    turn: 0,
    retrying: false,
    /** The retry decided after the last failure (the `retry` event to report before the next call). */
    pending: undefined as RetryInfo | undefined,
    /** Failed calls at this turn on the model in use (reset by a success, a new turn or a fallback). */
    failures: 0,
    /** Set when a model was given up on: the final error says so. */
    gaveUp: undefined as string | undefined,
    /** The attempt count of the model call that failed last. */
    attempt: 0,
    lastText: '',
    stop: undefined as undefined | { result: unknown },
    /** An error thrown by a hook: it ends the loop as it is, never reworded as a model error. */
    fatal: undefined as unknown,
    /** toolUseIds whose tool-result the `invoke` callback already reported. */
    reported: new Set<string>(),
  };

  const hook = async (event: HookEvent): Promise<Answer | undefined> => {
    if (!opts.onHook) return undefined;
    try {
      const answer = await opts.onHook(event);
      return isRecord(answer) ? (answer as Answer) : undefined;
    } catch (err) {
      state.fatal ??= err;
      throw err;
    }
  };
  /** `{ stop: true, result? }`: the loop ends at the next step with `result`, else the model's latest text (docs/agents.md). */
  const takeStop = (d: Answer | undefined): boolean => {
    if (!d?.stop) return false;
    state.stop ??= { result: d.result !== undefined ? d.result : state.lastText };
    return true;
  };

  /**
   * After a failed call: another attempt on this model (a transient failure with retries left,
   * after the backoff or the server's Retry-After), else the next fallback model at once (any
   * model failure), else nothing — the hook decides (persistent mode) or the run fails.
   */
  const planRetry = (error: Error, explained: AgentAppsError, attemptCount: number): RetryInfo | undefined => {
    const info = describeModel(model);
    const retries = info?.retry?.retries ?? DEFAULT_RETRIES;
    const delay = info?.retry?.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS;
    const status = statusOf(error);
    const base = { attempt: attemptCount + 1, turnNumber: state.turn, reason: explained.message, ...(status !== undefined ? { status } : {}) };
    state.failures++;
    const ours = explained.code !== 'E_MODEL';
    if (!ours && isTransient(error)) {
      const after = retryAfterMs(error);
      if (state.failures <= retries && (after === undefined || after <= MAX_RETRY_AFTER_MS)) {
        return { ...base, delayMs: after ?? backoffMs(state.failures, delay), ...(after !== undefined ? { retryAfterMs: after } : {}), retry: state.failures, retries };
      }
      const on = info?.where && info.where !== 'model' ? ` on ${info.where}` : '';
      state.gaveUp =
        after !== undefined && after > MAX_RETRY_AFTER_MS
          ? `the server asked${on} to wait ${Math.round(after / 1000)} s (Retry-After), longer than the ${MAX_RETRY_AFTER_MS / 1000} s agent-apps waits`
          : `gave up${on} after ${state.failures} attempt${state.failures === 1 ? '' : 's'} (model.retries: ${retries})`;
    }
    if (ours || !chain?.advance()) return undefined;
    state.failures = 0;
    state.gaveUp = undefined;
    const next = describeModel(model);
    const modelId = model.getConfig().modelId;
    return { ...base, delayMs: 0, fallback: chain.index, ...(typeof modelId === 'string' ? { modelId } : next?.modelId ? { modelId: next.modelId } : {}) };
  };

  const invokeTool = new FunctionTool({
    name: 'invoke',
    description: opts.toolDescription ?? INVOKE_TOOL_DESCRIPTION,
    inputSchema: INVOKE_INPUT_SCHEMA as unknown as Record<string, never>,
    callback: async (input, toolContext) => {
      const toolUseId = toolContext.toolUse.toolUseId;
      // FunctionTool does not check the input against the schema: we do.
      const code = isRecord(input) ? input.code : undefined;
      if (typeof code !== 'string') {
        throw new Error('invoke needs { "code": "<JavaScript>" } — the code argument is missing or not a string');
      }
      let value: unknown;
      let failure: unknown;
      try {
        value = await opts.onCode(code);
      } catch (err) {
        failure = err;
      }
      state.reported.add(toolUseId);
      const d = await hook(
        failure === undefined
          ? { type: 'tool-result', tool: 'invoke', args: { code }, result: value, toolUseId, turnNumber: state.turn }
          : { type: 'tool-result', tool: 'invoke', args: { code }, error: errorText(failure), ...errorCode(failure), toolUseId, turnNumber: state.turn },
      );
      takeStop(d);
      if (failure !== undefined) throw failure instanceof Error ? failure : new Error(errorText(failure));
      return toToolText(value);
    },
  });

  const window = opts.contextEdit ? (typeof opts.contextEdit === 'object' && opts.contextEdit.windowSize ? opts.contextEdit.windowSize : 40) : undefined;
  const conversationManager =
    window !== undefined ? new SlidingWindowConversationManager({ windowSize: window, shouldTruncateResults: true, pinFirst: 1 }) : new NullConversationManager();
  const agent = new Agent({
    model,
    systemPrompt: opts.systemPrompt,
    tools: [invokeTool],
    printer: false,
    toolExecutor: 'sequential',
    conversationManager,
    // No SDK retries: ours below count exactly (model.retries) and honour Retry-After.
    retryStrategy: null,
  });
  if (window !== undefined) {
    // The SDK slides its window only between invocations and on overflow; a long single run
    // (one task, many turns) is kept inside the window before every model call as well.
    agent.addHook(BeforeModelCallEvent, (ev) => {
      const messages = (ev as { agent: { messages: Message[] } }).agent.messages;
      if (messages.length > window) (conversationManager as SlidingWindowConversationManager).reduce({ agent: (ev as unknown as { agent: never }).agent } as never);
    });
  }

  agent.addHook(BeforeModelCallEvent, async (ev) => {
    if (state.stop) {
      ev.cancel = 'stopped';
      return;
    }
    if (state.retrying) {
      // The same turn again after a failed model call (docs/agents.md: the trace's `retry`).
      state.retrying = false;
      const pending = state.pending;
      state.pending = undefined;
      const event = pending ? { type: 'retry' as const, ...pending } : { type: 'retry' as const, attempt: state.attempt + 1, turnNumber: state.turn };
      if (takeStop(await hook(event))) ev.cancel = 'stopped';
      return;
    }
    state.turn++;
    state.failures = 0;
    if (takeStop(await hook({ type: 'turn-start', turnNumber: state.turn }))) ev.cancel = 'stopped';
  });

  if (opts.deltas) {
    agent.addHook(ModelStreamUpdateEvent, async (ev) => {
      const e = ev.event;
      if (e.type !== 'modelContentBlockDeltaEvent') return;
      if (e.delta.type === 'textDelta' && e.delta.text) {
        takeStop(await hook({ type: 'message', text: e.delta.text, delta: true, turnNumber: state.turn }));
      } else if (e.delta.type === 'reasoningContentDelta' && e.delta.text) {
        takeStop(await hook({ type: 'reasoning', text: e.delta.text, delta: true, turnNumber: state.turn }));
      }
    });
  }

  agent.addHook(AfterModelCallEvent, async (ev) => {
    if (state.stop) return;
    if (ev.error) {
      state.retrying = true; // the next model call, if any, is a retry of this turn
      state.attempt = ev.attemptCount;
      if (ev.error.name === 'CancelledError' || signal?.aborted) return;
      const explained = explainModelError(ev.error, model);
      // `final` (a replay cassette that ran out, or drifted): no retry can succeed, whatever the hook says.
      const final = (explained as { final?: unknown }).final === true;
      const plan = final ? undefined : planRetry(ev.error, explained, ev.attemptCount);
      const d = await hook({
        type: 'error',
        error: explained.message,
        attempt: ev.attemptCount,
        turnNumber: state.turn,
        ...(final ? { final } : {}),
        ...(plan ? { retrying: true } : {}),
        ...(plan?.status !== undefined ? { status: plan.status } : {}),
      });
      if (takeStop(d)) return;
      if (plan) {
        state.pending = plan;
        opts.onRetry?.(plan);
        if (plan.delayMs > 0) await sleep(plan.delayMs, signal);
        if (signal?.aborted) return;
        ev.retry = true;
        return;
      }
      if (d?.continue && !final) ev.retry = true;
      return;
    }
    state.failures = 0;
    state.gaveUp = undefined;
    const message = ev.stopData?.message;
    if (!message) return;
    const reasoning = reasoningOf(message);
    state.lastText = textOf(message);
    if (reasoning) takeStop(await hook({ type: 'reasoning', text: reasoning, turnNumber: state.turn }));
    if (state.lastText) takeStop(await hook({ type: 'message', text: state.lastText, turnNumber: state.turn }));
    const usage = message.metadata?.usage;
    if (usage) {
      const total = agent.metrics.accumulatedUsage;
      const modelId = model.getConfig().modelId;
      const d = await hook({
        type: 'usage',
        ...(typeof modelId === 'string' && modelId ? { modelId } : {}),
        turnNumber: state.turn,
        inputTokens: usage.inputTokens,
        outputTokens: usage.outputTokens,
        totalTokens: usage.totalTokens,
        total: { inputTokens: total.inputTokens, outputTokens: total.outputTokens, totalTokens: total.totalTokens },
      });
      takeStop(d);
    }
  });

  agent.addHook(BeforeToolCallEvent, async (ev) => {
    if (state.stop) {
      ev.cancel = 'the run has already ended; this tool call was not executed';
      return;
    }
    const { name, input, toolUseId } = ev.toolUse;
    const d = await hook({ type: 'tool-call', tool: name, args: input, toolUseId, turnNumber: state.turn });
    if (takeStop(d)) {
      ev.cancel = 'the run has ended; this tool call was not executed';
    } else {
      const deny: unknown = d?.deny;
      if (deny !== undefined && deny !== null && deny !== false) {
        ev.cancel = typeof deny === 'string' && deny ? `tool call denied: ${deny}` : 'tool call denied';
      }
    }
  });

  // Tool calls the `invoke` callback never saw (denied, unknown tool): report them too, so
  // every tool-call has its tool-result.
  agent.addHook(AfterToolCallEvent, async (ev) => {
    const { name, input, toolUseId } = ev.toolUse;
    if (state.reported.delete(toolUseId) || state.stop) return;
    const text = ev.result.content.map((c) => (c.type === 'textBlock' ? c.text : '')).join('');
    const d = await hook({
      type: 'tool-result',
      tool: name,
      args: input,
      error: text || ev.error?.message || 'tool call failed',
      ...(ev.result.status === 'error' && text.startsWith('tool call denied') ? { denied: true } : {}),
      toolUseId,
      turnNumber: state.turn,
    });
    takeStop(d);
  });

  // A turn whose response used tools ends when its tools have run: it gets its turn-end (seed
  // 004: every turn has its boundaries) — also when a tool call finished the run. The model
  // must see the tool results, so `continue` is implied here; `stop` ends the loop without
  // another model round-trip. The final turn (no tools) gets its turn-end after the loop below.
  agent.addHook(AfterToolsEvent, async (ev) => {
    if (!signal?.aborted) takeStop(await hook({ type: 'turn-end', result: state.lastText, turnNumber: state.turn }));
    if (state.stop) ev.endTurn = true;
  });

  const finish = (text: string): AgentLoopResult => {
    const u = agent.metrics.accumulatedUsage;
    const result: AgentLoopResult = {
      text,
      usage: { inputTokens: u.inputTokens, outputTokens: u.outputTokens, totalTokens: u.totalTokens },
      turns: state.turn,
    };
    if (state.stop) result.stopped = state.stop;
    return result;
  };

  let input = opts.userMessage;
  for (;;) {
    const remaining = maxTurns - state.turn;
    if (remaining <= 0) throw limitError(maxTurns);
    let result: AgentResult;
    try {
      result = await agent.invoke(input, {
        ...(signal ? { cancelSignal: signal } : {}),
        ...(Number.isFinite(remaining) ? { limits: { turns: remaining } } : {}),
      });
    } catch (err) {
      if (state.fatal !== undefined) throw state.fatal;
      if (state.stop) return finish(state.lastText);
      if (signal?.aborted) throw new AbortError(signal.reason);
      const explained = explainModelError(err, model);
      if (state.gaveUp && explained.code === 'E_MODEL') explained.message += ` — ${state.gaveUp}`;
      throw explained;
    }
    if (state.stop) return finish(state.lastText);
    if (result.stopReason === 'cancelled' || signal?.aborted) throw new AbortError(signal?.reason);
    if (result.stopReason === 'limitTurns') throw limitError(maxTurns);
    const text = textOf(result.lastMessage);
    state.lastText = text;
    const d = await hook({ type: 'turn-end', result: text, turnNumber: state.turn });
    if (takeStop(d)) return finish(text);
    if (d?.continue) {
      input = typeof d.message === 'string' && d.message ? d.message : 'Continue.';
      continue;
    }
    return finish(text);
  }
}

/**
 * The fallback chain inside `model` (under a recorder or other wrappers), if model.fallback made
 * one. Recognised by shape, so this file does not load fallback.ts for runs without fallbacks.
 */
function fallbackOf(model: object): FallbackModel | undefined {
  for (let m: unknown = model, i = 0; m && typeof m === 'object' && i < 8; m = (m as { inner?: unknown }).inner, i++) {
    if ((m as { fallbackChain?: unknown }).fallbackChain === true) return m as FallbackModel;
  }
  return undefined;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

function limitError(maxTurns: number): AgentAppsError {
  return new AgentAppsError(
    'E_AGENT_LIMIT',
    `the agent used its ${maxTurns} model turn${maxTurns === 1 ? '' : 's'} (model.maxTurns) without finishing`,
  );
}

function textOf(message: Message | undefined): string {
  if (!message) return '';
  let text = '';
  for (const block of message.content) if (block.type === 'textBlock') text += block.text;
  return text;
}

function reasoningOf(message: Message): string {
  let text = '';
  for (const block of message.content) if (block.type === 'reasoningBlock' && block.text) text += block.text;
  return text;
}

/** The tool result the model sees: strings as they are, anything else as JSON. */
function toToolText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return 'null';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return typeof err === 'string' ? err : toToolText(err);
}

/** `{ code }` of a failure that has one (E_SANDBOX, E_ALLOWED_TOOLS …), for the tool-result event. */
function errorCode(err: unknown): { code?: string } {
  const code = isRecord(err) || err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? { code } : {};
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
