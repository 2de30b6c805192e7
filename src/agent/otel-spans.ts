// An agent run's spans (docs/ci.md, "Tracing"), after the OpenTelemetry GenAI conventions, made from
// the hook events its provider reports (trace.ts): `invoke_agent <skill>` for the run, `chat
// <model>` for each model call (turn-start or retry → usage or error), `execute_tool <tool>` for
// each tool call of the model. While a tool call runs it is the parent of what the agent's code
// invokes (the tracer's `attach`): those invocations are `execute_tool <skill>` spans under it.
// Made only when a tracer is on: AgentTrace holds none otherwise.
import type { Context, JsonObject } from '../core/types.ts';
import type { Attributes, TraceSpan, Tracer } from '../core/tracing.ts';
import { userMessage } from './prompt.ts';

/** A hook event as trace.ts received it (its ReportedEvent). */
type ReportedEvent = { type: string; [key: string]: unknown };

/** Content attributes are cut here. */
const MAX_CONTENT = 16_384;

function text(value: unknown): string {
  let s: string;
  try {
    s = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
  } catch {
    s = String(value);
  }
  return s.length > MAX_CONTENT ? `${s.slice(0, MAX_CONTENT)}…` : s;
}

/** GenAI's message shape (gen_ai.input.messages / gen_ai.output.messages), one text part. */
const messages = (role: string, content: string) => JSON.stringify([{ role, parts: [{ type: 'text', content }] }]);

export interface AgentSpanOptions {
  /** The agent skill's context: the run's spans are its descendants' parents. */
  ctx: Context;
  served: Context;
  skillName: string;
  model?: { modelId?: unknown; provider?: unknown };
}

export class AgentSpans {
  readonly #tracer: Tracer;
  readonly #ctx: Context;
  readonly #agent: TraceSpan;
  readonly #model: string | undefined;
  readonly #provider: string | undefined;
  #chat: TraceSpan | undefined;
  /** The model's tool calls in flight, by toolUseId. */
  readonly #tools = new Map<string, TraceSpan>();
  #calls = 0;

  constructor(tracer: Tracer, o: AgentSpanOptions) {
    this.#tracer = tracer;
    this.#ctx = o.ctx;
    this.#model = typeof o.model?.modelId === 'string' ? o.model.modelId : undefined;
    this.#provider = typeof o.model?.provider === 'string' ? o.model.provider : undefined;
    const attributes: Attributes = { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': o.skillName, 'gen_ai.provider.name': this.#provider, 'gen_ai.request.model': this.#model };
    if (tracer.content) {
      const args = o.ctx.args as { prompt?: unknown; userMessage?: unknown } | undefined;
      if (typeof args?.prompt === 'string') attributes['gen_ai.system_instructions'] = text(args.prompt);
      const message = typeof args?.userMessage === 'string' ? args.userMessage : userMessage(o.served.args, o.served.run.tool.params as JsonObject | undefined);
      attributes['gen_ai.input.messages'] = text(messages('user', message));
    }
    this.#agent = tracer.span(`invoke_agent ${o.skillName}`, { parent: o.ctx, attributes });
    tracer.attach(o.ctx, this.#agent);
  }

  /** One hook event; `costUsd` is a usage event's price (trace.ts). */
  record(e: ReportedEvent, costUsd?: number): void {
    switch (e.type) {
      case 'turn-start':
      case 'retry':
        this.#endChat();
        // `chat <model>` (GenAI): the model asked for, else — named when it answers — the one that did.
        this.#chat = this.#tracer.span(this.#model ? `chat ${this.#model}` : 'chat', {
          parent: this.#agent,
          kind: 'client',
          attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': this.#provider, 'gen_ai.request.model': this.#model, 'agent_apps.turn': num(e.turnNumber) },
        });
        return;
      case 'message':
        if (this.#chat && this.#tracer.content && e.delta !== true && typeof e.text === 'string') this.#chat.set({ 'gen_ai.output.messages': text(messages('assistant', e.text)) });
        return;
      case 'usage': {
        const chat = this.#chat;
        if (!chat) return;
        const answered = typeof e.modelId === 'string' && e.modelId ? e.modelId : this.#model;
        if (!this.#model && answered) chat.rename(`chat ${answered}`);
        chat.set({
          'gen_ai.response.model': answered,
          'gen_ai.usage.input_tokens': num(e.inputTokens) ?? 0,
          'gen_ai.usage.output_tokens': num(e.outputTokens) ?? 0,
          'agent_apps.cost_usd': costUsd,
        });
        this.#endChat();
        return;
      }
      case 'error':
        this.#endChat({ code: 'E_MODEL', message: typeof e.error === 'string' ? e.error : 'the model call failed' });
        return;
      case 'tool-call': {
        this.#endChat();
        const id = typeof e.toolUseId === 'string' && e.toolUseId ? e.toolUseId : `call_${++this.#calls}`;
        const tool = typeof e.tool === 'string' ? e.tool : 'tool';
        const span = this.#tracer.span(`execute_tool ${tool}`, {
          parent: this.#agent,
          toolCall: id,
          attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool, 'gen_ai.tool.type': 'function', ...(this.#tracer.content ? { 'gen_ai.tool.call.arguments': text(e.args) } : {}) },
        });
        this.#tools.set(id, span);
        // What the agent's code invokes from now on runs under this call (the loop runs tools one at a time).
        this.#tracer.attach(this.#ctx, span);
        return;
      }
      case 'tool-result': {
        const id = typeof e.toolUseId === 'string' && this.#tools.has(e.toolUseId) ? e.toolUseId : [...this.#tools.keys()].pop();
        const span = id === undefined ? undefined : this.#tools.get(id);
        if (!span) return;
        this.#tools.delete(id!);
        if (this.#tracer.content && e.result !== undefined) span.set({ 'gen_ai.tool.call.result': text(e.result) });
        span.end(typeof e.error === 'string' ? { code: typeof e.code === 'string' ? e.code : e.denied === true ? 'E_ALLOWED_TOOLS' : 'E_TOOL', message: e.error } : undefined);
        this.#tracer.attach(this.#ctx, [...this.#tools.values()].pop() ?? this.#agent);
        return;
      }
      case 'turn-end':
        this.#endChat();
        return;
      case 'denied':
      case 'approval':
        this.#agent.event(`agent_apps.${e.type}`, { 'gen_ai.tool.name': typeof e.tool === 'string' ? e.tool : undefined, 'agent_apps.decision': typeof e.decision === 'string' ? e.decision : undefined, 'error.type': typeof e.code === 'string' ? e.code : undefined });
        return;
      default:
    }
  }

  /** The run ended: with its result, or failed with `error`; `usage` and `costUsd` are its totals. */
  end(o: { result?: unknown; error?: { message: string; code?: string }; usage: { inputTokens: number; outputTokens: number }; costUsd?: number; steps: number }): void {
    this.#endChat();
    for (const span of this.#tools.values()) span.end();
    this.#tools.clear();
    this.#agent.set({
      'gen_ai.usage.input_tokens': o.usage.inputTokens,
      'gen_ai.usage.output_tokens': o.usage.outputTokens,
      'agent_apps.cost_usd': o.costUsd,
      'agent_apps.steps': o.steps,
      ...(this.#tracer.content && o.error === undefined ? { 'gen_ai.output.messages': text(messages('assistant', text(o.result))) } : {}),
    });
    this.#agent.end(o.error);
    this.#tracer.attach(this.#ctx, undefined);
  }

  #endChat(error?: { code: string; message: string }): void {
    const chat = this.#chat;
    this.#chat = undefined;
    chat?.end(error);
  }
}

function num(v: unknown): number | undefined {
  const n = Number(v);
  return v === undefined || !Number.isFinite(n) ? undefined : n;
}
