// `agent-apps acp` streams a run to its ACP client (docs/agents.md): the agent progress events a run
// reports (src/agent/trace.ts's ProgressSink — the same events the terminal view, stream-json and
// `mcp serve` show) become `session/update`s.
//
//   message (streamed, or whole when nothing streamed) → agent_message_chunk (a nested agent's: agent_thought_chunk)
//   reasoning                                           → agent_thought_chunk
//   tool-call / tool-result (the agent's `invoke` code) → tool_call (its code) / tool_call_update (its result)
//   skill-call / skill-result (a skill the code calls)  → tool_call / tool_call_update
//   plan (an ACP agent's plan, agent-acp)               → plan
// Everything else (turns, usage, approvals) is not shown: the prompt's answer ends the turn.
import type { SessionUpdate, ToolKind } from '@agentclientprotocol/sdk';

export interface ProgressEvent {
  type: string;
  skill: string;
  agentId?: string;
  parentAgentId?: string;
  [key: string]: unknown;
}

/** Skills whose ACP tool kind is not `other` (the client picks an icon by kind). */
const KINDS: Record<string, ToolKind> = { 'file-read': 'read', 'file-write': 'edit', shell: 'execute', 'skill-list': 'search', 'skill-describe': 'read' };
const MAX_TEXT = 64 * 1024;

export class UpdateMapper {
  #n = 0;
  /** Agents whose text streamed since their last whole message: the whole one is not sent again. */
  readonly #streamed = new Set<string>();
  /** Open skill calls by agent and tool, oldest first (a result ends the oldest: calls may overlap). */
  readonly #skillCalls = new Map<string, string[]>();

  /** The updates one event becomes (none, one, or — never more than — a few). */
  map(e: ProgressEvent): SessionUpdate[] {
    const agent = e.agentId ?? '';
    const nested = e.parentAgentId !== undefined;
    switch (e.type) {
      case 'message':
      case 'reasoning': {
        if (typeof e.text !== 'string' || !e.text) return [];
        const key = `${e.type}\0${agent}`;
        if (e.delta === true) this.#streamed.add(key);
        else if (this.#streamed.delete(key)) return [];
        const thought = e.type === 'reasoning' || nested;
        return [{ sessionUpdate: thought ? 'agent_thought_chunk' : 'agent_message_chunk', content: { type: 'text', text: e.text } }];
      }
      case 'tool-call': {
        const code = (e.args as { code?: unknown } | undefined)?.code;
        const source = typeof code === 'string' ? code : JSON.stringify(e.args ?? {});
        const first = source.split('\n').find((l) => l.trim())?.trim() ?? '';
        return [
          {
            sessionUpdate: 'tool_call',
            toolCallId: this.#id(agent, e.toolUseId),
            title: `${String(e.tool ?? 'invoke')}: ${first.length > 80 ? first.slice(0, 79) + '…' : first}${nested ? ` (${e.skill})` : ''}`,
            kind: 'other',
            status: 'in_progress',
            rawInput: e.args ?? {},
            content: [text(typeof code === 'string' ? '```js\n' + code + '\n```' : source)],
          },
        ];
      }
      case 'tool-result': {
        const failed = e.error !== undefined || e.denied === true;
        return [
          {
            sessionUpdate: 'tool_call_update',
            toolCallId: this.#id(agent, e.toolUseId),
            status: failed ? 'failed' : 'completed',
            rawOutput: failed ? { error: errorText(e.error), ...(e.code ? { code: e.code } : {}) } : (e.result ?? null),
            content: [text(failed ? errorText(e.error) : show(e.result))],
          },
        ];
      }
      case 'skill-call': {
        const tool = String(e.tool ?? '');
        const id = `skill-${++this.#n}`;
        const key = `${agent}\0${tool}`;
        this.#skillCalls.set(key, [...(this.#skillCalls.get(key) ?? []), id]);
        return [{ sessionUpdate: 'tool_call', toolCallId: id, title: tool, kind: KINDS[tool] ?? 'other', status: 'in_progress', rawInput: e.args ?? {} }];
      }
      case 'skill-result': {
        const key = `${agent}\0${String(e.tool ?? '')}`;
        const open = this.#skillCalls.get(key);
        const id = open?.shift();
        if (!id) return [];
        if (!open!.length) this.#skillCalls.delete(key);
        const error = e.error as { message?: unknown; code?: unknown } | undefined;
        return [
          {
            sessionUpdate: 'tool_call_update',
            toolCallId: id,
            status: error ? 'failed' : 'completed',
            rawOutput: error ? { error: String(error.message ?? ''), ...(typeof error.code === 'string' ? { code: error.code } : {}) } : (e.result ?? null),
            content: [text(error ? `${typeof error.code === 'string' ? `${error.code}: ` : ''}${String(error.message ?? '')}` : show(e.result))],
          },
        ];
      }
      case 'plan': {
        if (!Array.isArray(e.entries)) return [];
        const entries = e.entries.filter((x): x is { content: string; priority: 'high' | 'medium' | 'low'; status: 'pending' | 'in_progress' | 'completed' } => typeof (x as { content?: unknown })?.content === 'string');
        return [{ sessionUpdate: 'plan', entries: entries.map((x) => ({ content: x.content, priority: x.priority ?? 'medium', status: x.status ?? 'pending' })) }];
      }
      default:
        return [];
    }
  }

  #id(agent: string, toolUseId: unknown): string {
    return `${agent || 'agent'}:${typeof toolUseId === 'string' && toolUseId ? toolUseId : `call-${++this.#n}`}`;
  }
}

function text(t: string): { type: 'content'; content: { type: 'text'; text: string } } {
  return { type: 'content', content: { type: 'text', text: t.length > MAX_TEXT ? t.slice(0, MAX_TEXT) + '…' : t } };
}

function show(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value, null, 2) ?? 'undefined';
  } catch {
    return String(value);
  }
}

function errorText(error: unknown): string {
  if (typeof error === 'string') return error;
  const m = (error as { message?: unknown } | null | undefined)?.message;
  return typeof m === 'string' ? m : show(error);
}
