// `--output-format stream-json` (docs/ci.md): a run as NDJSON on stdout, for scripts and CI.
//
//   {"type":"start","run":ID,"skill":…,"args":…}          once the skill is resolved and its args parsed
//   {"type":"turn-start"|"message"|"tool-call"|…, …}       one line per agent event, nested agents included (depth)
//   {"type":"log","level":"warn"|"error", …}                log events at warn and above
//   {"type":"result","ok":…,"exitCode":…, …}                exactly one, always the last line
//
// A run that fails before it starts (a usage error, an unknown skill, args that do not parse) is
// the result line alone. Every line is one JSON value (BigInt, Map, Set and cycles printed by the
// safe replacer, anything else unprintable replaced by a note), and nothing else reaches stdout.
import type { ProgressSink } from '../../agent/trace.ts';
import type { LogEvent, Reporter } from '../../core/types.ts';
import { safeJsonReplacer } from '../../core/json.ts';
import { redact } from '../../core/redact.ts';
import { describeError, EXIT } from './output.ts';
import type { RunDenial, RunReport } from './run-report.ts';

type ProgressEvent = Parameters<ProgressSink>[0];

/** The agent events that become lines; `error` (a failed model call) is `agent-error`, as on the bus. */
const EVENT_TYPES: Record<string, string> = {
  'turn-start': 'turn-start',
  message: 'message',
  'tool-call': 'tool-call',
  'tool-result': 'tool-result',
  'turn-end': 'turn-end',
  denied: 'denied',
  'skill-call': 'skill-call',
  'skill-result': 'skill-result',
  retry: 'retry',
  error: 'agent-error',
};

const LOG_LEVELS = new Set(['warn', 'error']);

export interface ResultFields {
  run: string | undefined;
  /** The run's exit code (docs/cli.md); ok is `exitCode === 0`. */
  exitCode: number;
  result?: unknown;
  error?: unknown;
  durationMs: number;
  report?: RunReport;
}

export class StreamJson {
  readonly #out: NodeJS.WritableStream;
  #ended = false;
  /** Each agent run's nesting depth (0: started by the skill run itself), by agent id. */
  readonly #depth = new Map<string, number>();

  constructor(out: NodeJS.WritableStream) {
    this.#out = out;
  }

  /** The result line was written: nothing more is. */
  get ended(): boolean {
    return this.#ended;
  }

  /** `resumedFrom`: the run this one continues (docs/runs.md). */
  start(run: string | undefined, skill: string, args: unknown, resumedFrom?: string): void {
    this.#line({ type: 'start', run: run ?? null, skill, args, ...(resumedFrom ? { resumedFrom } : {}) });
  }

  /** The progress sink: agent events as lines. Asks for streamed text (`message` lines with `delta: true`). */
  sink(): ProgressSink {
    const sink: ProgressSink = (e) => this.event(e);
    sink.deltas = true;
    return sink;
  }

  /** The log reporter: events at warn and above as `log` lines (the run's own `cli` records are its result). */
  reporter(): Reporter {
    return { name: 'stream-json', report: (e) => this.log(e) };
  }

  event(e: ProgressEvent): void {
    const type = EVENT_TYPES[e.type];
    if (!type) return;
    const { type: _type, skill, agentId, parentAgentId, timestamp: _timestamp, ...fields } = e;
    const depth = this.#depthOf(agentId, parentAgentId);
    const head = { type, skill, depth, ...(typeof agentId === 'string' ? { agent: agentId } : {}) };
    // A message says whether it is a streamed piece (delta) or the turn's whole text.
    const line: Record<string, unknown> = type === 'message' ? { ...head, text: e.text, delta: e.delta === true, ...fields } : { ...head, ...fields };
    // The code a result belongs to is on its tool-call line (the same toolUseId).
    if (type === 'tool-result') delete line.args;
    // A failed tool call: its error as the result line states one, { code, message }.
    if ((type === 'tool-result' || type === 'skill-result' || type === 'agent-error') && e.error !== undefined) {
      const { code: _code, ...rest } = line;
      const error = e.error as { code?: unknown; message?: unknown } | string;
      const code = typeof error === 'object' && typeof error?.code === 'string' ? error.code : typeof e.code === 'string' ? e.code : undefined;
      const message = typeof error === 'object' && error !== null ? String(error.message ?? '') : String(error);
      this.#line({ ...rest, error: { ...(code ? { code } : {}), message } });
      return;
    }
    this.#line(line);
  }

  log(e: LogEvent): void {
    if (!LOG_LEVELS.has(e.level) || e.tag === 'cli') return;
    const { level, type, tool, code, text, tag, contextId } = e;
    this.#line({ type: 'log', level, event: type, tool, ...(code ? { code } : {}), ...(tag ? { tag } : {}), text: text ?? type, ...(contextId ? { context: contextId } : {}) });
  }

  /** The last line; later calls write nothing. */
  result(f: ResultFields): void {
    if (this.#ended) return;
    const ok = f.exitCode === EXIT.ok;
    let outcome: Record<string, unknown>;
    if (ok) outcome = { result: f.result ?? null };
    else {
      const { code, message } = describeError(f.error);
      outcome = { error: { code: code ?? fallbackCode(f.exitCode), message } };
    }
    const usage = f.report?.usage ?? { inputTokens: 0, outputTokens: 0 };
    const cost = f.report?.costUsd;
    const denials: RunDenial[] = f.report?.denials ?? [];
    this.#line({
      type: 'result',
      ok,
      ...outcome,
      exitCode: f.exitCode,
      durationMs: f.durationMs,
      usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens },
      ...(cost !== undefined ? { costUsd: round(cost) } : {}),
      denials,
      run: f.run ?? null,
    });
    this.#ended = true;
  }

  #depthOf(agentId: unknown, parentAgentId: unknown): number {
    if (typeof agentId !== 'string') return 0;
    let depth = this.#depth.get(agentId);
    if (depth === undefined) {
      depth = typeof parentAgentId === 'string' ? (this.#depth.get(parentAgentId) ?? 0) + 1 : 0;
      this.#depth.set(agentId, depth);
    }
    return depth;
  }

  #line(value: Record<string, unknown>): void {
    if (this.#ended) return;
    let text: string;
    try {
      // Secrets are redacted on every line (docs/security.md, "Secrets") — args, agent events,
      // error messages — except the skill's own result, which is what the run was asked for.
      text = JSON.stringify(value.type === 'result' && 'result' in value ? redactOutcome(value) : redact(value), safeJsonReplacer());
    } catch (err) {
      // A value whose toJSON or getter throws: the line still says what it was.
      text = JSON.stringify({ type: value.type, unprintable: (err as Error)?.message ?? String(err) });
    }
    // stdout to a pipe or a file is written synchronously (Node on POSIX): lines never interleave.
    this.#out.write(text + '\n');
  }
}

/** A successful result line redacted but for its result, which stays where it was (after `ok`). */
function redactOutcome(line: Record<string, unknown>): Record<string, unknown> {
  const { type, ok, result, ...rest } = line;
  return { type, ok, result, ...(redact(rest) as Record<string, unknown>) };
}

/** An error without a code of its own, by the exit code it gives. */
function fallbackCode(exitCode: number): string {
  switch (exitCode) {
    case EXIT.usage:
      return 'E_USAGE';
    case EXIT.refused:
      return 'E_ABORTED';
    case EXIT.interrupted:
      return 'E_INTERRUPTED';
    case EXIT.terminated:
      return 'E_TERMINATED';
    default:
      return 'E_SKILL';
  }
}

/** Cost to a millionth of a dollar: no float noise like 0.0030000000000000005. */
function round(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}
