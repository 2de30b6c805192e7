// Recorded runs (docs/ci.md, "Past runs: agent-apps runs"): the run files a CLI run or a schedule's fire writes
// (<workspace>/.agent-apps/runs/<run-id>.jsonl, reporters.ts) read back — a run's summary (what
// `agent-apps runs` lists), its transcript (what `runs show` prints: the `agent-run` records the
// `session` middleware writes — model text, code, tool calls and results, errors, usage) — for
// the CLI's `runs` and `tail` and for serve's web view (docs/serve.md, "The web view").
import fs from 'node:fs';
import path from 'node:path';
import { AgentAppsError } from '../../core/errors.ts';
import type { LogEvent } from '../../core/types.ts';
import { redactString } from '../../core/redact.ts';
import { EXIT, exitCodeFor, type Painter } from './output.ts';
import { escapeControl } from './escape.ts';

export type RunStatus = 'ok' | 'failed' | 'refused' | 'interrupted' | 'running';

/** One past run, as `runs --json` lists it. */
export interface RunSummary {
  id: string;
  skill: string | null;
  status: RunStatus;
  /** null while it runs, and for a run that was killed before it could say. */
  exitCode: number | null;
  durationMs: number | null;
  /** ISO 8601. */
  startedAt: string;
  /** How a failed or refused run ended. */
  error?: { code?: string; message: string };
  /** What started it, when not a person or a script: `schedule` (docs/serve.md). */
  trigger?: string;
  /** The schedule that fired it (trigger: schedule). */
  schedule?: string;
}

/** A run file read back: its events, and the lines that were not events. */
export interface RunFile {
  id: string;
  file: string;
  events: LogEvent[];
  /** 1-based numbers of the lines that are not JSON objects (skipped). */
  malformed: number[];
  /** The bytes of the file the events were read from (up to its last whole line): where following it goes on. */
  bytes: number;
}

// ── finding and reading run files ─────────────────────────────────────────────────────────────

/** The ids of the run files in `dir` (none when it does not exist). */
export function runIds(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.jsonl'))
      .map((f) => f.slice(0, -'.jsonl'.length));
  } catch {
    return [];
  }
}

/** The run `id` names — a whole id or a unique prefix of one, as `runs` lists them. */
export function findRun(dir: string, id: string): string {
  const ids = runIds(dir);
  if (!ids.length) throw new AgentAppsError('E_USAGE', `no recorded runs in ${dir} — run a skill first (agent-apps run …)`);
  if (ids.includes(id)) return id;
  const matches = ids.filter((r) => r.startsWith(id));
  if (matches.length === 1) return matches[0]!;
  if (!matches.length) throw new AgentAppsError('E_USAGE', `no run '${id}' in ${dir} — agent-apps runs lists them`);
  throw new AgentAppsError('E_USAGE', `'${id}' matches ${matches.length} runs — give more of the id`);
}

/** Reads a run file; a line that is not a JSON object is skipped, and its number kept. A last line without its newline is still being written, and is left out. */
export function readRun(dir: string, id: string): RunFile {
  const file = path.join(dir, `${id}.jsonl`);
  const buf = fs.readFileSync(file);
  const end = buf.lastIndexOf(0x0a) + 1;
  const events: LogEvent[] = [];
  const malformed: number[] = [];
  buf
    .subarray(0, end)
    .toString('utf8')
    .split('\n')
    .forEach((line, i) => {
      if (!line.trim()) return;
      try {
        const e = JSON.parse(line) as unknown;
        if (e !== null && typeof e === 'object' && !Array.isArray(e) && typeof (e as LogEvent).type === 'string') events.push(e as LogEvent);
        else malformed.push(i + 1);
      } catch {
        malformed.push(i + 1);
      }
    });
  return { id, file, events, malformed, bytes: end };
}

/** `run ID: lines 2, 5 are not JSON events — skipped`, or undefined when every line is one. */
export function malformedText(run: RunFile): string | undefined {
  if (!run.malformed.length) return undefined;
  const n = run.malformed.length;
  const shown = n > 5 ? `${run.malformed.slice(0, 5).join(', ')} …` : run.malformed.join(', ');
  return `run ${run.id}: line${n === 1 ? '' : 's'} ${shown} ${n === 1 ? 'is not a JSON event' : `(${n}) are not JSON events`} — skipped`;
}

// ── a run's summary ───────────────────────────────────────────────────────────────────────────

/** Is process `pid` alive (ours to signal or not)? */
function alive(pid: unknown): boolean {
  if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid in a run's `.live` marker, which the CLI removes when the run ends (reporters.ts). */
function livePid(dir: string, id: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path.join(dir, `${id}.live`), 'utf8'));
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether run `id`, whose run-end is not (yet) written, still goes on: its `.live` marker is there
 * and its process (`pid`, from its run-start; else the marker's) is alive.
 */
export function stillGoing(dir: string, id: string, pid?: number): boolean {
  const marker = livePid(dir, id);
  return marker !== undefined && alive(pid ?? marker);
}

/** The exit code a run-end states, or — in a run file written before it said — the one its fields imply. */
function exitCodeOf(end: LogEvent): number {
  if (typeof end.exitCode === 'number') return end.exitCode;
  const text = typeof end.text === 'string' ? end.text : '';
  if (/: SIGINT\b/.test(text)) return EXIT.interrupted;
  if (/: SIGTERM\b/.test(text)) return EXIT.terminated;
  if (end.code === undefined && end.level === 'info') return EXIT.ok;
  return exitCodeFor({ code: end.code });
}

export function statusOf(exitCode: number): RunStatus {
  if (exitCode === EXIT.ok) return 'ok';
  if (exitCode === EXIT.refused) return 'refused';
  if (exitCode === EXIT.interrupted || exitCode === EXIT.terminated) return 'interrupted';
  return 'failed';
}

/**
 * What a run file says about its run. A run with no run-end is `running` while its process is
 * alive (the pid in run-start, or its `.live` marker) and `interrupted` otherwise (killed outright).
 */
export function summarize(dir: string, run: RunFile, now = Date.now()): RunSummary {
  const start = run.events.find((e) => e.type === 'run-start' && e.tag === 'cli');
  let end: LogEvent | undefined;
  for (let i = run.events.length - 1; i >= 0 && !end; i--) if (run.events[i]!.type === 'run-end' && run.events[i]!.tag === 'cli') end = run.events[i];
  const first = start ?? run.events[0];
  let started = typeof first?.timestamp === 'number' ? first.timestamp : undefined;
  if (started === undefined) {
    try {
      started = fs.statSync(run.file).mtimeMs;
    } catch {
      started = now;
    }
  }
  const skill = typeof start?.skill === 'string' ? start.skill : typeof end?.skill === 'string' ? end.skill : null;
  const startedAt = new Date(started).toISOString();
  // In the order docs/ci.md lists the fields.
  const trigger = typeof start?.trigger === 'string' ? { trigger: start.trigger, ...(typeof start.schedule === 'string' ? { schedule: start.schedule } : {}) } : {};
  const summary = (status: RunStatus, exitCode: number | null, durationMs: number | null): RunSummary => ({ id: run.id, skill, status, exitCode, durationMs, startedAt, ...trigger });
  if (end) {
    const exitCode = exitCodeOf(end);
    const durationMs = typeof end.durationMs === 'number' ? end.durationMs : Math.max(0, end.timestamp - started);
    const status = statusOf(exitCode);
    const ended = summary(status, exitCode, durationMs);
    if (status === 'failed' || status === 'refused') {
      const message = typeof end.text === 'string' ? redactString(end.text.replace(/^run \S+: /, '')) : '';
      ended.error = { ...(typeof end.code === 'string' ? { code: end.code } : {}), message };
    }
    return ended;
  }
  if (stillGoing(dir, run.id, typeof start?.pid === 'number' ? start.pid : undefined)) return summary('running', null, Math.max(0, now - started));
  // Killed outright: how long it ran is not known.
  return summary('interrupted', null, null);
}

/** A run that cannot be read or has lines that are not events: one line saying so (no level, no colour). */
export type RunWarning = (text: string) => void;

/** Every run in `dir` with its file read back, newest first (by when it started; the id breaks ties). */
export function readRuns(dir: string, warn: RunWarning = () => {}): { run: RunFile; summary: RunSummary }[] {
  const out: { run: RunFile; summary: RunSummary }[] = [];
  for (const id of runIds(dir)) {
    let run: RunFile;
    try {
      run = readRun(dir, id);
    } catch (err) {
      // Pruned or unreadable between the listing and the read.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') warn(`run ${id}: cannot read it (${(err as Error).message}) — skipped`);
      continue;
    }
    const bad = malformedText(run);
    if (bad) warn(bad);
    out.push({ run, summary: summarize(dir, run) });
  }
  const a = (x: { summary: RunSummary }) => x.summary;
  return out.sort((x, y) => (a(x).startedAt === a(y).startedAt ? (a(x).id < a(y).id ? 1 : -1) : a(x).startedAt < a(y).startedAt ? 1 : -1));
}

/** Every run in `dir`, newest first (by when it started; the id breaks ties). */
export function listRuns(dir: string, warn?: RunWarning): RunSummary[] {
  return readRuns(dir, warn).map((x) => x.summary);
}

// ── text ───────────────────────────────────────────────────────────────────────────────────

/** For each id, its shortest start (at least 8 characters) that no other id shares. */
export function shortestIds(ids: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const id of ids) {
    let n = Math.min(8, id.length);
    while (n < id.length && ids.some((o) => o !== id && o.startsWith(id.slice(0, n)))) n++;
    out.set(id, id.slice(0, n));
  }
  return out;
}

export function formatDuration(ms: number | null): string {
  if (ms === null) return '-';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** Local time, `2026-05-01 14:03:12`. */
export function formatTime(iso: string | number): string {
  const d = new Date(iso);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

export function paintStatus(status: RunStatus, paint: Painter, text: string = status): string {
  if (status === 'ok') return paint.green(text);
  if (status === 'failed') return paint.red(text);
  if (status === 'running') return paint.cyan(text);
  return paint.yellow(text);
}

/** How a run was started, for the table: `schedule NAME`, or `run` for a person's or a script's. */
export function triggerText(r: RunSummary): string {
  if (r.trigger === undefined) return 'run';
  return escapeControl(r.schedule !== undefined ? `${r.trigger} ${r.schedule}` : r.trigger);
}

// ── the transcript ────────────────────────────────────────────────────────────────────────────

interface TraceEntry {
  type: string;
  timestamp: number;
  [key: string]: unknown;
}

/** An `agent-run` record (skills/session.skill.ts). */
interface AgentRun extends LogEvent {
  skill?: string;
  agentId?: string;
  parentAgentId?: string;
  ok?: boolean;
  result?: unknown;
  error?: { code?: string; message?: string };
  startedAt?: number;
  durationMs?: number;
  turns?: number;
  usage?: { inputTokens?: number; outputTokens?: number; totalTokens?: number };
  costUsd?: number;
  trace?: TraceEntry[];
}

/** Text shown on a terminal: no control characters (docs/security.md), line breaks kept as lines. */
function lines(text: unknown): string[] {
  // A value as JSON: on one line when it is short, else indented over several.
  let s = typeof text === 'string' ? text : json(text);
  if (typeof text !== 'string' && s.length > 100) s = json(text, 2);
  return s.replace(/\n+$/, '').split('\n').map((l) => escapeControl(l));
}

function json(value: unknown, indent?: number): string {
  if (value === undefined) return 'undefined';
  try {
    return JSON.stringify(value, null, indent) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Dollars as a transcript shows them: `$0.0042`, `$1.20`. */
export function formatCost(usd: number): string {
  return `$${usd < 0.01 ? usd.toPrecision(2) : usd.toFixed(2)}`;
}

const tokensOf = (u: AgentRun['usage']) => ({ i: Number(u?.inputTokens ?? 0) || 0, o: Number(u?.outputTokens ?? 0) || 0 });

function usageText(u: AgentRun['usage'], cost: unknown): string {
  const { i, o } = tokensOf(u);
  const usd = typeof cost === 'number' ? `, about ${formatCost(cost)}` : '';
  return `${i + o} tokens (${i} in, ${o} out)${usd}`;
}

/**
 * What a run's models used: the tokens (in and out) and the cost of its agent runs, added up —
 * each `agent-run` record counts its own model calls, a nested agent's are in its own record.
 * Undefined when no agent ran; `costUsd` only when a record has a cost.
 */
export function runUsage(run: RunFile): { tokens: number; costUsd?: number } | undefined {
  let tokens = 0;
  let costUsd: number | undefined;
  let any = false;
  for (const e of run.events) {
    if (e.type !== 'agent-run') continue;
    any = true;
    const a = e as AgentRun;
    const { i, o } = tokensOf(a.usage);
    tokens += i + o;
    if (typeof a.costUsd === 'number' && Number.isFinite(a.costUsd)) costUsd = (costUsd ?? 0) + a.costUsd;
  }
  return any ? { tokens, ...(costUsd !== undefined ? { costUsd } : {}) } : undefined;
}

/** An event other than an agent's record that a transcript shows: what a skill logged for the user, a warning, an error. */
function shownEvent(e: LogEvent): boolean {
  if (e.tag === 'cli' || e.type === 'agent-run' || e.type === 'agent-usage') return false;
  return (e.tag === 'user' && e.type === 'message') || e.level === 'warn' || e.level === 'error';
}

/**
 * The lines one record of a run file adds to its transcript as it comes (the web view's live
 * run page): an agent's record as its block (a nested agent's on its own: its caller's record
 * comes after it), a shown event as its line, anything else nothing.
 */
export function transcriptEntry(e: LogEvent, paint: Painter): string[] {
  const out: string[] = [];
  if (e.type === 'agent-run' && Array.isArray((e as AgentRun).trace)) {
    out.push('');
    agentBlock(e as AgentRun, new Map(), '', paint, out);
  } else if (shownEvent(e)) out.push('', logLine(e, paint));
  return out;
}

export function transcript(run: RunFile, summary: RunSummary, paint: Painter): string {
  const out: string[] = [];
  const start = run.events.find((e) => e.type === 'run-start' && e.tag === 'cli');
  const field = (k: string, v: string) => out.push(`${paint.dim(k.padEnd(9))}${v}`);
  out.push(paint.bold(`run ${run.id}`));
  field('skill', escapeControl(summary.skill ?? '?'));
  if (summary.trigger !== undefined) field('trigger', triggerText(summary) + (typeof start?.dueAt === 'string' ? paint.dim(` (due ${formatTime(start.dueAt)})`) : ''));
  if (start && start.args !== undefined) field('args', escapeControl(json(start.args)));
  field('started', formatTime(summary.startedAt));
  field('status', paintStatus(summary.status, paint, `${summary.status}${summary.exitCode === null ? '' : ` (exit ${summary.exitCode})`}`) + (summary.durationMs === null ? '' : ` in ${formatDuration(summary.durationMs)}`));
  if (summary.error) field('error', escapeControl(`${summary.error.code ? `[${summary.error.code}] ` : ''}${summary.error.message}`));

  // Agent runs as a tree (a nested agent under the one whose code called it), and the events a
  // person would look for: what skills logged for the user, warnings and errors.
  const agents = run.events.filter((e): e is AgentRun => e.type === 'agent-run' && Array.isArray((e as AgentRun).trace));
  const ids = new Set(agents.map((a) => a.agentId).filter(Boolean));
  const children = new Map<string, AgentRun[]>();
  const top: { at: number; agent?: AgentRun; event?: LogEvent }[] = [];
  for (const a of agents) {
    if (a.parentAgentId && ids.has(a.parentAgentId)) {
      const list = children.get(a.parentAgentId) ?? [];
      list.push(a);
      children.set(a.parentAgentId, list);
    } else top.push({ at: a.startedAt ?? a.timestamp, agent: a });
  }
  for (const e of run.events) if (shownEvent(e)) top.push({ at: e.timestamp, event: e });
  top.sort((a, b) => a.at - b.at);
  for (const item of top) {
    out.push('');
    if (item.agent) agentBlock(item.agent, children, '', paint, out);
    else out.push(logLine(item.event!, paint));
  }
  if (!agents.length && summary.status !== 'running') {
    out.push('');
    // A refused or interrupted agent run stops its chain before `session` (docs/middleware.md).
    const why = summary.status === 'refused' || summary.status === 'interrupted' ? 'no agent ran, or it was stopped before its record' : 'no agent ran in this run';
    out.push(paint.dim(`(${why}: agent-apps tail --run ${run.id.slice(0, 8)} has its events)`));
  }
  return out.join('\n') + '\n';
}

function logLine(e: LogEvent, paint: Painter): string {
  const level = e.level === 'error' ? paint.red(e.level) : e.level === 'warn' ? paint.yellow(e.level) : paint.dim(e.level);
  const code = typeof e.code === 'string' ? ` [${escapeControl(e.code)}]` : '';
  return `${level}${code} ${paint.cyan(escapeControl(e.tool))}: ${escapeControl(e.text ?? e.type)}`;
}

function agentBlock(a: AgentRun, children: Map<string, AgentRun[]>, indent: string, paint: Painter, out: string[]): void {
  const name = escapeControl(a.skill ?? a.tool);
  const turns = a.turns ?? (a.trace ?? []).filter((e) => e.type === 'turn-start').length;
  out.push(`${indent}${paint.bold(`agent ${name}`)} ${paint.dim(`— ${turns} turn${turns === 1 ? '' : 's'}, ${usageText(a.usage, a.costUsd)}${a.durationMs === undefined ? '' : `, ${formatDuration(a.durationMs)}`}`)}`);
  const inner = indent + '  ';
  const block = (label: string, text: unknown, colour: (s: string) => string = (s) => s) => {
    const ls = lines(text);
    if (ls.length <= 1) out.push(`${inner}${colour(label)} ${ls[0] ?? ''}`);
    else {
      out.push(`${inner}${colour(label)}`);
      for (const l of ls) out.push(`${inner}  ${paint.dim('│')} ${l}`);
    }
  };
  // Nested agents go where they ran: among this agent's entries, by when they started.
  const items: { at: number; entry?: TraceEntry; child?: AgentRun }[] = [
    ...(a.trace ?? []).map((entry) => ({ at: entry.timestamp, entry })),
    ...(a.agentId ? (children.get(a.agentId) ?? []) : []).map((child) => ({ at: child.startedAt ?? child.timestamp, child })),
  ];
  items.sort((x, y) => x.at - y.at);
  for (const item of items) {
    if (item.child) {
      agentBlock(item.child, children, inner + '  ', paint, out);
      continue;
    }
    const e = item.entry!;
    switch (e.type) {
      case 'turn-start':
        out.push(`${inner}${paint.dim(`── turn ${e.turnNumber ?? '?'}`)}`);
        break;
      case 'message':
        block('model:', e.text);
        break;
      case 'reasoning':
        block('thinking:', e.text, paint.dim);
        break;
      case 'tool-call': {
        const args = (e.args ?? {}) as Record<string, unknown>;
        const only = Object.keys(args);
        if (only.length === 1 && only[0] === 'code' && typeof args.code === 'string') block(`tool call ${escapeControl(e.tool ?? 'invoke')}:`, args.code, paint.cyan);
        else block(`tool call ${escapeControl(e.tool ?? '?')}:`, args, paint.cyan);
        break;
      }
      case 'tool-result':
        if (e.error !== undefined && e.error !== null && e.error !== false) block(`tool error${typeof e.code === 'string' ? ` [${escapeControl(e.code)}]` : ''}:`, e.error, paint.red);
        else block('tool result:', e.result);
        break;
      case 'denied':
        block(`denied ${escapeControl(e.tool ?? '')}${typeof e.code === 'string' ? ` [${escapeControl(e.code)}]` : ''}:`, e.reason ?? '', paint.yellow);
        break;
      case 'error':
        block(`model error${e.attempt !== undefined ? ` (attempt ${e.attempt}${e.retrying ? ', retrying' : ''})` : ''}:`, e.error ?? e.message ?? '', paint.red);
        break;
      case 'retry':
        out.push(`${inner}${paint.yellow('retry')} attempt ${escapeControl(e.attempt ?? '?')}${typeof e.delayMs === 'number' ? ` after ${formatDuration(e.delayMs)}` : ''}${e.status !== undefined ? ` (status ${escapeControl(e.status)})` : ''}`);
        break;
      case 'usage':
      case 'turn-end':
        // Usage is summed in the heading; a turn's end repeats its message.
        break;
      default:
        block(`${escapeControl(e.type)}:`, Object.fromEntries(Object.entries(e).filter(([k]) => k !== 'type' && k !== 'timestamp')), paint.dim);
    }
  }
  if (a.ok === false) block(`failed${a.error?.code ? ` [${escapeControl(a.error.code)}]` : ''}:`, a.error?.message ?? '', paint.red);
  else block('result:', a.result, paint.green);
}
