// The live agent view's state (docs/terminal.md), with no ink in it: the agent's progress events (the hook
// events src/agent/trace.ts hands to `globals.internals.progress`) become finished blocks — model
// text, reasoning, each `invoke` code block with the skills it called and its result or error —
// and a small live part per agent (the text still streaming, the code still running, the turn and
// the token usage). Finished blocks are written once, above the live part (ink's <Static>), so a
// long run never makes the live part taller than the terminal.
import { oneLine } from './text.ts';

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

/** A skill that agent code called, as the live view shows it. */
export interface SkillCall {
  tool: string;
  args: string;
  result?: string;
  error?: string;
  done: boolean;
}

export type Block =
  | { kind: 'turn'; skill: string; turn: number }
  | { kind: 'text'; skill: string; text: string; reasoning?: boolean }
  | { kind: 'code'; skill: string; tool: string; code: string; calls: SkillCall[]; result?: string; error?: string; interrupted?: boolean }
  | { kind: 'error'; skill: string; text: string }
  | { kind: 'done'; skill: string; turns: number; usage: Usage; interrupted?: boolean };

export interface AgentLive {
  skill: string;
  turn: number;
  usage: Usage;
  /** Model text of this turn not yet written above (the line still streaming). */
  text: string;
  reasoning: string;
  /** The `invoke` call running now. */
  code?: { tool: string; code: string; calls: SkillCall[] };
  started: number;
  /** Interrupted (Ctrl-C, SIGTERM): what it showed is written; it is only waited for now. */
  stopping?: boolean;
}

export interface ProgressEvent {
  type: string;
  skill?: string;
  [key: string]: unknown;
}

interface Agent extends AgentLive {
  sawDelta: boolean;
  sawReasoningDelta: boolean;
  turns: number;
  /** The agent runs (agentId) shown under this name since it was last finished. */
  ids: Set<string>;
}

export class AgentTracker {
  readonly #agents = new Map<string, Agent>();
  /**
   * Agent runs already summed up: an aborted run goes on reporting as it unwinds (its call's
   * error, the turn's end) after the command that ran it is over; those events must not bring
   * back a live part — a spinner left under the summary (docs/terminal.md, The live agent view).
   */
  readonly #over = new Set<string>();
  readonly #commit: (b: Block) => void;
  readonly #changed: () => void;

  constructor(commit: (b: Block) => void, changed: () => void) {
    this.#commit = commit;
    this.#changed = changed;
  }

  /** The agents running now, for the live part. */
  live(): AgentLive[] {
    return [...this.#agents.values()].map((a) => ({ skill: a.skill, turn: a.turn, usage: { ...a.usage }, text: a.text, reasoning: a.reasoning, ...(a.code ? { code: { ...a.code, calls: a.code.calls.map((c) => ({ ...c })) } } : {}), started: a.started, ...(a.stopping ? { stopping: true } : {}) }));
  }

  get running(): boolean {
    return this.#agents.size > 0;
  }

  event(e: ProgressEvent): void {
    const skill = typeof e.skill === 'string' && e.skill ? e.skill : 'agent';
    const id = typeof e.agentId === 'string' ? e.agentId : undefined;
    if (id && this.#over.has(id)) return;
    let a = this.#agents.get(skill);
    if (!a) {
      a = { skill, turn: 0, usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 }, text: '', reasoning: '', started: Date.now(), sawDelta: false, sawReasoningDelta: false, turns: 0, ids: new Set() };
      this.#agents.set(skill, a);
    }
    if (id) a.ids.add(id);
    // An interrupted agent's output was written as it stood; only its token count still counts.
    if (a.stopping && e.type !== 'usage') return;
    switch (e.type) {
      case 'turn-start': {
        this.#flush(a);
        a.turn = typeof e.turnNumber === 'number' ? e.turnNumber : a.turn + 1;
        a.turns = Math.max(a.turns, a.turn);
        a.sawDelta = false;
        a.sawReasoningDelta = false;
        this.#commit({ kind: 'turn', skill, turn: a.turn });
        break;
      }
      case 'message':
      case 'reasoning': {
        const reasoning = e.type === 'reasoning';
        if (typeof e.text !== 'string') break;
        if (e.delta === true) {
          if (reasoning) {
            a.sawReasoningDelta = true;
            a.reasoning += e.text;
          } else {
            a.sawDelta = true;
            a.text += e.text;
          }
          this.#flushLines(a, reasoning);
        } else if (reasoning ? a.sawReasoningDelta : a.sawDelta) {
          // The whole text after its deltas: what is left of it is complete now.
          this.#flushRest(a, reasoning);
        } else if (e.text.trim()) {
          this.#flushRest(a, reasoning);
          this.#commit({ kind: 'text', skill, text: e.text.replace(/\s+$/, ''), ...(reasoning ? { reasoning } : {}) });
        }
        break;
      }
      case 'tool-call': {
        this.#flush(a);
        const args = e.args as { code?: unknown } | undefined;
        const tool = typeof e.tool === 'string' ? e.tool : 'invoke';
        a.code = { tool, code: typeof args?.code === 'string' ? args.code : oneLine(args ?? ''), calls: [] };
        break;
      }
      case 'skill-call': {
        if (!a.code) break;
        a.code.calls.push({ tool: String(e.tool ?? '?'), args: oneLine(e.args ?? {}), done: false });
        break;
      }
      case 'skill-result': {
        const call = a.code?.calls.findLast((c) => !c.done && c.tool === String(e.tool ?? '?'));
        if (!call) break;
        call.done = true;
        if (e.error !== undefined) call.error = errorText(e.error);
        else call.result = oneLine(e.result);
        break;
      }
      case 'tool-result': {
        const code = a.code ?? { tool: typeof e.tool === 'string' ? e.tool : 'invoke', code: String((e.args as { code?: unknown } | undefined)?.code ?? ''), calls: [] };
        a.code = undefined;
        const failed = e.error !== undefined || e.denied !== undefined;
        this.#commit({
          kind: 'code',
          skill,
          tool: code.tool,
          code: code.code,
          calls: code.calls,
          ...(failed ? { error: errorText(e.error ?? e.denied ?? 'denied') } : { result: resultLine(e.result) }),
        });
        break;
      }
      case 'turn-end':
        this.#flush(a);
        break;
      case 'usage': {
        const total = e.total as Partial<Usage> | undefined;
        if (total && typeof total === 'object') {
          a.usage = { inputTokens: num(total.inputTokens), outputTokens: num(total.outputTokens), totalTokens: num(total.totalTokens) };
        } else {
          a.usage = { inputTokens: a.usage.inputTokens + num(e.inputTokens), outputTokens: a.usage.outputTokens + num(e.outputTokens), totalTokens: a.usage.totalTokens + num(e.totalTokens) };
        }
        break;
      }
      case 'error':
        this.#flush(a);
        this.#commit({ kind: 'error', skill, text: `model error: ${errorText(e.error)}` });
        break;
      case 'retry':
        this.#commit({ kind: 'error', skill, text: `retrying the turn (attempt ${num(e.attempt)})` });
        break;
      default:
        return;
    }
    this.#changed();
  }

  /** The runs are over (the command returned or failed): write what is left and a summary per agent. */
  finish(): void {
    if (!this.#agents.size) return;
    for (const a of this.#agents.values()) {
      this.#writeOut(a);
      this.#commit({ kind: 'done', skill: a.skill, turns: a.turns, usage: a.usage, ...(a.stopping ? { interrupted: true } : {}) });
      for (const id of a.ids) this.#over.add(id);
    }
    this.#agents.clear();
    this.#changed();
  }

  /**
   * The run is interrupted (Ctrl-C, SIGTERM): what each agent showed live is written above now,
   * its running code marked interrupted, so that what comes next — the interrupt notice, the
   * warnings of the shutdown — follows it instead of landing between its text and its code. The
   * agents stay until finish() writes their summaries.
   */
  interrupt(): void {
    if (!this.#agents.size) return;
    for (const a of this.#agents.values()) {
      this.#writeOut(a);
      a.stopping = true;
    }
    this.#changed();
  }

  /** The text still streaming, and the code still running (as interrupted), go above. */
  #writeOut(a: Agent): void {
    this.#flush(a);
    if (a.code) this.#commit({ kind: 'code', skill: a.skill, tool: a.code.tool, code: a.code.code, calls: a.code.calls, interrupted: true });
    a.code = undefined;
  }

  #flush(a: Agent): void {
    this.#flushRest(a, true);
    this.#flushRest(a, false);
  }

  /** Streamed text: every complete line goes above; the line still being written stays live. */
  #flushLines(a: Agent, reasoning: boolean): void {
    const text = reasoning ? a.reasoning : a.text;
    const nl = text.lastIndexOf('\n');
    if (nl < 0) return;
    const done = text.slice(0, nl);
    if (reasoning) a.reasoning = text.slice(nl + 1);
    else a.text = text.slice(nl + 1);
    if (done.trim()) this.#commit({ kind: 'text', skill: a.skill, text: done.replace(/\s+$/, ''), ...(reasoning ? { reasoning } : {}) });
  }

  #flushRest(a: Agent, reasoning: boolean): void {
    const text = reasoning ? a.reasoning : a.text;
    if (reasoning) a.reasoning = '';
    else a.text = '';
    if (text.trim()) this.#commit({ kind: 'text', skill: a.skill, text: text.replace(/\s+$/, ''), ...(reasoning ? { reasoning } : {}) });
  }
}

function num(v: unknown): number {
  const n = Number(v ?? 0);
  return Number.isFinite(n) ? n : 0;
}

function errorText(err: unknown): string {
  if (typeof err === 'string') return oneLine(err);
  const e = err as { code?: unknown; message?: unknown } | undefined;
  const msg = typeof e?.message === 'string' ? e.message : oneLine(err);
  return oneLine(typeof e?.code === 'string' && !msg.startsWith(e.code) ? `[${e.code}] ${msg}` : msg);
}

/** The invoke tool's result is "result: …" or "finished: …", then maybe "console:" lines: its first line. */
function resultLine(result: unknown): string {
  if (typeof result !== 'string') return oneLine(result);
  return oneLine(result.split('\n')[0] ?? '');
}
