// Progress of a `tools/call` (docs/mcp.md): while the skill runs, its log events at `info` and
// above and its agent events become `notifications/progress` when the client sent a progress
// token. One runtime serves every call at once, so an event is routed to the call it belongs to
// by the async context it was emitted in (AsyncLocalStorage): the reporter and the agent's
// progress hook run synchronously inside the invocation that logged or emitted.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { LogEvent, Reporter } from '../../core/types.ts';
import type { Runtime } from '../../runtime.ts';
import { escapeControl } from '../shared/reporters.ts';

export interface ProgressSink {
  /** One line for the client; the sink numbers and sends it. */
  (message: string): void;
}

const calls = new AsyncLocalStorage<ProgressSink>();
const SHOWN = new Set(['info', 'warn', 'error']);
const MAX_MESSAGE = 300;

/** Runs `fn` with `sink` receiving the progress lines of everything `fn` starts. */
export function withProgress<T>(sink: ProgressSink, fn: () => Promise<T>): Promise<T> {
  return calls.run(sink, fn);
}

/** The reporter to hand createRuntime: log events of a call with a sink, at info and above. */
export const progressReporter: Reporter = {
  name: 'mcp-progress',
  report(e: LogEvent) {
    const sink = calls.getStore();
    if (!sink || !SHOWN.has(e.level)) return;
    sink(oneLine(`${e.level === 'info' ? '' : `${e.level} `}${e.code ? `[${e.code}] ` : ''}${e.tool}: ${e.text ?? e.type}`));
  },
};

/**
 * The agent skill reports every lifecycle event of a run to `globals.internals.progress` (the
 * CLI prints them on a terminal); here they go to the calling client, named as docs/agents.md names
 * them on an events topic (`turn-start`, `tool-call`, `agent-message` …).
 */
export function installAgentProgress(runtime: Runtime): void {
  runtime.root.globals.internals.progress = (e: AgentHookEvent) => {
    const sink = calls.getStore();
    if (!sink) return;
    const line = agentLine(e);
    if (line) sink(oneLine(line));
  };
}

interface AgentHookEvent {
  type: string;
  skill: string;
  [key: string]: unknown;
}

function agentLine(e: AgentHookEvent): string | undefined {
  switch (e.type) {
    case 'turn-start':
      return `turn-start ${e.skill}: turn ${String(e.turnNumber ?? '?')}`;
    case 'tool-call': {
      const code = String((e.args as { code?: unknown } | undefined)?.code ?? '');
      return `tool-call ${e.skill}: ${code.split('\n').find((l) => l.trim())?.trim() ?? ''}`;
    }
    case 'tool-result':
      if (e.error || e.denied) return `tool-error ${e.skill}: ${String((e.error as { message?: string } | undefined)?.message ?? e.error ?? 'denied')}`;
      return `tool-result ${e.skill}: ${typeof e.result === 'string' ? e.result : JSON.stringify(e.result)}`;
    case 'message':
      // Streamed deltas would be one notification per token: the whole message comes after them.
      if (e.delta || typeof e.text !== 'string' || !e.text.trim()) return undefined;
      return `agent-message ${e.skill}: ${e.text}`;
    case 'error':
      return `agent-error ${e.skill}: ${String((e.error as { message?: string } | undefined)?.message ?? e.error)}`;
    default:
      return undefined;
  }
}

/** One line, no control characters (model and skill text is untrusted), bounded. */
function oneLine(text: string): string {
  const flat = escapeControl(text.replace(/\s*\n\s*/g, ' ').trim());
  return flat.length > MAX_MESSAGE ? flat.slice(0, MAX_MESSAGE - 1) + '…' : flat;
}
