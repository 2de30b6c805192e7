// What a CLI run reports besides its result (docs/ci.md), in every output format: the tool calls of
// agent code that were refused (allowed-tools, an approval gate, trust), and the model tokens of
// every agent run in it, nested agents included. Both are read from the agent progress events
// (src/agent/trace.ts), which the report sees by wrapping the run's progress sink.
import type { ProgressSink } from '../../agent/trace.ts';
import type { Context } from '../../core/types.ts';
import { escapeControl } from './escape.ts';

export interface RunDenial {
  /** The tool agent code called. */
  tool: string;
  /** Why it was refused, as agent code was told. */
  reason: string;
  /** E_ALLOWED_TOOLS, E_DENIED, E_UNTRUSTED_REF or E_ABORTED. */
  code: string;
  /** The agent whose code made the call (its display name). */
  agent: string;
  /** A remote approval's deny (docs/serve.md): who answered, through what gateway, when. */
  answeredBy?: string;
  answeredVia?: string;
  answeredAt?: string;
}

export interface RunUsage {
  inputTokens: number;
  outputTokens: number;
}

type ProgressEvent = Parameters<ProgressSink>[0];

export class RunReport {
  readonly denials: RunDenial[] = [];
  readonly usage: RunUsage = { inputTokens: 0, outputTokens: 0 };
  /** USD of the calls whose model has a price; undefined while no call had one. */
  costUsd: number | undefined;

  /** Reads one progress event. */
  observe(e: ProgressEvent): void {
    if (e.type === 'denied') {
      const answered = typeof e.answeredBy === 'string' ? { answeredBy: e.answeredBy, answeredVia: String(e.answeredVia ?? ''), answeredAt: String(e.answeredAt ?? '') } : {};
      this.denials.push({ tool: String(e.tool ?? ''), reason: String(e.reason ?? ''), code: String(e.code ?? ''), agent: e.skill, ...answered });
    } else if (e.type === 'usage') {
      this.usage.inputTokens += count(e.inputTokens);
      this.usage.outputTokens += count(e.outputTokens);
      if (typeof e.costUsd === 'number' && Number.isFinite(e.costUsd)) this.costUsd = (this.costUsd ?? 0) + e.costUsd;
    }
  }

  /**
   * Puts the report in front of the run's progress sink (the terminal view's, stream-json's, or
   * none): every event is read here, then handed on. The sink's wish for streamed text is kept,
   * so a run without a view is not made to stream.
   */
  attach(root: Context, next?: ProgressSink): void {
    const inner = next ?? root.globals.internals.progress;
    const sink: ProgressSink = (e) => {
      this.observe(e);
      inner?.(e);
    };
    if (inner?.deltas !== undefined) sink.deltas = inner.deltas;
    root.globals.internals.progress = sink;
  }

  /** `2 tool calls were denied: shell (E_DENIED: …); locked (E_ALLOWED_TOOLS: …)` — one line, for stderr. */
  summary(): string {
    const n = this.denials.length;
    const list = this.denials.map((d) => `${d.tool} (${d.code ? `${d.code}: ` : ''}${firstLine(d.reason)})`).join('; ');
    return escapeControl(`${n} tool call${n === 1 ? ' was' : 's were'} denied: ${list}`);
  }
}

function count(v: unknown): number {
  const n = Number(v ?? 0);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

function firstLine(text: string): string {
  const line = text.split('\n')[0]!.trim();
  return line.length > 200 ? line.slice(0, 199) + '…' : line;
}
