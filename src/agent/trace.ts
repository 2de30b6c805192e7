// The agent trace and its events (docs/agents.md): every hook event a provider reports is
// a timestamped entry on the served skill's `locals.agent.trace`, where middleware after the agent
// reads it; token usage is summed on `locals.agent.usage`. With an events topic, the run is also
// told on the bus as it happens: agent-start, turn-start, agent-message, tool-call, tool-result /
// tool-error, turn-end, agent-error and agent-complete.
import { publishEvent } from '../events/runtime.ts';
import type { Context } from '../core/types.ts';
import type { TokenUsage } from './provider.ts';
import type { Denial } from '../policy/approval.ts';
import { costUsd, priceFor, type Price } from './prices.ts';
import { AgentSpans } from './otel-spans.ts';

/** What a provider reported to the hook (a `HookEvent`, or a type of its own), as received. */
export interface ReportedEvent {
  type: string;
  [key: string]: unknown;
}

export type TraceEntry = ReportedEvent & { timestamp: number };

/** The bus event of each hook event type; usage and the other types are trace-only. */
const EVENT_NAMES: Record<string, string> = {
  'turn-start': 'turn-start',
  'turn-end': 'turn-end',
  'tool-call': 'tool-call',
  'tool-result': 'tool-result',
  message: 'agent-message',
  error: 'agent-error',
};

export interface TraceOptions {
  /** The agent skill's own context (the bus, the run's root context). */
  ctx: Context;
  /** The skill being served: the trace goes on its `locals.agent`. */
  served: Context;
  /** The events topic, if any. */
  topic: string | undefined;
  /** The bus events' `source`. */
  skillName: string;
  /** How the agent is shown in logs and by the progress reporter. */
  display: string;
  /** The run's model config: its `modelId` and `prices` price each call's usage (docs/ci.md). */
  model?: { modelId?: unknown; prices?: unknown };
}

export class AgentTrace {
  readonly entries: TraceEntry[] = [];
  readonly usage: TokenUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  /** Calls of this agent's code that were refused (docs/agents.md): allowed-tools, trust, a person's deny, no person to ask. */
  readonly denials: Denial[] = [];
  readonly #o: TraceOptions;
  readonly #started = Date.now();
  readonly #progress: ((e: ReportedEvent & { skill: string }) => void) | undefined;
  /** Which agent run an event is from, for a reporter that shows nested agents (the agent scope's ids). */
  readonly #ids: { agentId?: string; parentAgentId?: string };
  readonly #price: Price | undefined;
  #cost: number | undefined;
  /** The run's spans, when tracing is on (docs/ci.md, "Tracing"). */
  readonly #spans: AgentSpans | undefined;

  constructor(o: TraceOptions) {
    this.#o = o;
    // costUsd as it stands (docs/ci.md): what the `session` middleware records after the run.
    const cost = () => this.#cost;
    o.served.locals.agent = Object.defineProperty({ trace: this.entries, usage: this.usage, denials: this.denials }, 'costUsd', { get: cost, enumerable: true });
    this.#progress = o.ctx.globals.internals.progress;
    const scope = o.ctx.nonlocals.agent;
    this.#ids = { ...(scope?.contextId ? { agentId: scope.contextId } : {}), ...(scope?.ancestorContextId ? { parentAgentId: scope.ancestorContextId } : {}) };
    // Read before the model is asked anything: a malformed price is the config's error (E_CONFIG).
    this.#price = priceFor(o.model?.modelId, o.model?.prices);
    const tracer = o.ctx.globals.internals.tracer;
    if (tracer !== undefined) this.#spans = new AgentSpans(tracer, { ctx: o.ctx, served: o.served, skillName: o.skillName, model: o.model as { modelId?: unknown; provider?: unknown } });
  }

  /** USD of this run's model calls, when its model has a price (`model.prices`). */
  get costUsd(): number | undefined {
    return this.#cost;
  }

  /** A hook event: a trace entry, a line for the progress reporter, and its bus event (or its tokens). */
  record(e: ReportedEvent): void {
    this.entries.push({ ...e, timestamp: Date.now() });
    if (e.type === 'usage') {
      for (const k of ['inputTokens', 'outputTokens', 'totalTokens'] as const) this.usage[k] += Number(e[k] ?? 0) || 0;
      const cost = this.#callCost(e);
      if (cost !== undefined) this.#cost = (this.#cost ?? 0) + cost;
      this.#spans?.record(e, cost);
      this.#progress?.({ ...e, skill: this.#o.display, ...this.#ids, ...(cost !== undefined ? { costUsd: cost } : {}) });
      return;
    }
    this.#progress?.({ ...e, skill: this.#o.display, ...this.#ids });
    this.#spans?.record(e);
    const name = e.type === 'tool-result' && e.error ? 'tool-error' : EVENT_NAMES[e.type];
    if (name) this.emit(name, e);
  }

  /** One call's cost: at the price of the model the provider names (a fallback model), else the config's. */
  #callCost(e: ReportedEvent): number | undefined {
    let price = this.#price;
    if (typeof e.modelId === 'string' && e.modelId !== this.#o.model?.modelId) {
      try {
        price = priceFor(e.modelId, this.#o.model?.prices);
      } catch {
        price = undefined;
      }
    }
    const usage = { inputTokens: Number(e.inputTokens ?? 0) || 0, outputTokens: Number(e.outputTokens ?? 0) || 0 };
    return price ? costUsd(usage, price) : undefined;
  }

  /** Model turns so far (turn-start entries). */
  get turns(): number {
    let n = 0;
    for (const e of this.entries) if (e.type === 'turn-start') n++;
    return n;
  }

  emit(type: string, data: unknown): void {
    const { topic, ctx, skillName } = this.#o;
    if (topic === undefined) return;
    publishEvent(ctx, { topic, type, data, source: skillName, rootContextId: ctx.nonlocals.rootContextId });
  }

  /** The run succeeded: the agent-usage log event and agent-complete. */
  complete(result: unknown, steps: number): void {
    const { ctx, display, skillName } = this.#o;
    const usage = this.usage;
    ctx.manager.log({ type: 'agent-usage', tag: 'agent', level: 'info', tool: display, text: `${this.turns} turns, ${steps} invoke calls, ${usage.totalTokens} tokens`, usage, steps });
    this.emit('agent-complete', { skill: skillName, result, usage, steps, durationMs: Date.now() - this.#started });
    this.#spans?.end({ result, usage, ...(this.#cost !== undefined ? { costUsd: this.#cost } : {}), steps });
  }

  /** The run failed with `error`: agent-error. */
  fail(error: { message: string; code?: string }, steps: number): void {
    this.emit('agent-error', { skill: this.#o.skillName, error: { message: error.message, code: error.code }, usage: this.usage, steps });
    this.#spans?.end({ error, usage: this.usage, ...(this.#cost !== undefined ? { costUsd: this.#cost } : {}), steps });
  }
}

/** Where an agent reports its lifecycle as it runs: the CLI's printer, the terminal view, mcp serve. */
export interface ProgressSink {
  (event: { type: string; skill: string; [key: string]: unknown }): void;
  /** The sink shows model text as it streams (the provider then sends deltas). */
  deltas?: boolean;
}

declare module '../core/types.ts' {
  interface RuntimeState {
    /** The agent progress reporter, when something shows runs live. */
    progress?: ProgressSink;
  }
}
