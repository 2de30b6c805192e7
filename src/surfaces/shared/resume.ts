// Resuming a run (docs/runs.md): which recorded runs can be resumed, the plan a resume runs from
// (the skill, its args, the options and the journal of the run that died), and the journal of a
// run shown as `runs show` marks it — played back, unverified, run again.
import path from 'node:path';
import { AgentAppsError } from '../../core/errors.ts';
import type { JsonObject, LogEvent } from '../../core/types.ts';
import { findWorkspace } from '../../loader/search-paths.ts';
import { RUNS_DIR, recordsRuns } from './reporters.ts';
import type { GlobalOptions } from './runtime-options.ts';
import { callText, hasLiveLines, readJournal, type CallLine, type Journal, type TurnLine } from '../../agent/journal.ts';
import { escapeControl } from './escape.ts';
import type { Painter } from './output.ts';
import { findRun, readRuns, type RunFile, type RunSummary } from './runs.ts';

type Entry = { run: RunFile; summary: RunSummary };

/** The runs folder of the workspace `g` points into; outside a workspace, E_USAGE (exit 2). */
export function runsDirOf(g: GlobalOptions): string {
  const workspace = findWorkspace(path.resolve(g.cwd ?? process.cwd()));
  if (!recordsRuns(workspace)) {
    throw new AgentAppsError('E_USAGE', `no workspace at or above ${workspace} (no skills/ folder), so no recorded runs: runs are recorded inside a workspace — agent-apps init makes one`);
  }
  return path.join(workspace, RUNS_DIR);
}

/** What a run's run-start says of how it was started (src/surfaces/cli/run.ts). */
interface RunStart extends LogEvent {
  skill?: string;
  args?: JsonObject;
  pid?: number;
  resumedFrom?: string;
  options?: { cwd?: string; paths?: string[]; overrides?: JsonObject };
}

function runStart(run: RunFile): RunStart | undefined {
  return run.events.find((e) => e.type === 'run-start' && e.tag === 'cli') as RunStart | undefined;
}

/** The run `run` resumed, when it is a resume. */
export function resumedFrom(run: RunFile): string | undefined {
  const from = runStart(run)?.resumedFrom;
  return typeof from === 'string' ? from : undefined;
}

/**
 * Whether `entry` can be resumed, and if not why not (one line). A run can be when it did not
 * finish (no run-end) and its process is gone, it has a journal, and no other run resumed it
 * already — a resume that did nothing of its own (it stopped at an unverified call, E_RESUME, or
 * before its agent ran) does not count.
 */
export function resumability(entry: Entry, all: readonly Entry[]): { ok: true } | { ok: false; why: string } {
  const { run, summary } = entry;
  const id = run.id.slice(0, 8);
  if (summary.status === 'running') return { ok: false, why: `run ${id} is still running${typeof runStart(run)?.pid === 'number' ? ` (pid ${runStart(run)!.pid})` : ''}: only a run whose process died can be resumed` };
  if (summary.exitCode !== null || summary.status !== 'interrupted') {
    return { ok: false, why: `run ${id} finished (${summary.status}${summary.exitCode === null ? '' : `, exit ${summary.exitCode}`}): there is nothing to resume — only a run that died before its end (killed, crashed) can be; run the skill again instead` };
  }
  const start = runStart(run);
  if (!start || typeof start.skill !== 'string') return { ok: false, why: `run ${id} has no run-start: what it ran is not known` };
  if (readJournal(run.events).lines === 0) return { ok: false, why: `run ${id} has no journal to resume from (no agent ran in it before it died) — run it again: agent-apps run ${start.skill}` };
  for (const other of all) {
    if (resumedFrom(other.run) !== run.id) continue;
    const oid = other.run.id.slice(0, 8);
    if (other.summary.status === 'running') return { ok: false, why: `run ${id} is being resumed by run ${oid}, which is still running` };
    if (hasLiveLines(readJournal(other.run.events))) {
      const next = resumability(other, all).ok ? ` — resume that one instead: agent-apps runs resume ${oid}` : ` (${other.summary.status}): agent-apps runs show ${oid}`;
      return { ok: false, why: `run ${id} was resumed already, by run ${oid}${next}` };
    }
  }
  return { ok: true };
}

/** Every run in `dir`, newest first, with `resumable` / `resumedFrom` on the runs they concern (`runs --json`). */
export function listWithResume(dir: string, warn?: (text: string) => void): RunSummary[] {
  const all = readRuns(dir, warn);
  return all.map((entry) => {
    const from = resumedFrom(entry.run);
    const resumable = entry.summary.status === 'interrupted' && entry.summary.exitCode === null && resumability(entry, all).ok;
    return { ...entry.summary, ...(resumable ? { resumable: true } : {}), ...(from ? { resumedFrom: from } : {}) };
  });
}

declare module './runs.ts' {
  interface RunSummary {
    /** It died before its end and has a journal: `agent-apps runs resume ID` continues it (docs/runs.md). */
    resumable?: true;
    /** The run it resumed. */
    resumedFrom?: string;
  }
}

/** What a resume runs: the run it continues, and how that run was started. */
export interface ResumePlan {
  /** The run being resumed (its whole id). */
  id: string;
  skill: string;
  args: JsonObject;
  /** The original run's --cwd, --path and --set / --record (as overrides). */
  cwd?: string;
  paths?: string[];
  overrides?: JsonObject;
  journal: Journal;
}

/** The plan to resume run `idOrPrefix` of `dir`; E_USAGE (exit 2) when it cannot be resumed, saying why. */
export function resumePlan(dir: string, idOrPrefix: string): ResumePlan {
  const id = findRun(dir, idOrPrefix);
  const all = readRuns(dir);
  const entry = all.find((e) => e.run.id === id);
  if (!entry) throw new AgentAppsError('E_USAGE', `run ${id.slice(0, 8)} cannot be read`);
  const can = resumability(entry, all);
  if (!can.ok) throw new AgentAppsError('E_USAGE', can.why);
  const start = runStart(entry.run)!;
  const o = start.options ?? {};
  return {
    id,
    skill: start.skill!,
    args: start.args && typeof start.args === 'object' && !Array.isArray(start.args) ? start.args : {},
    ...(typeof o.cwd === 'string' ? { cwd: o.cwd } : {}),
    ...(Array.isArray(o.paths) && o.paths.every((p) => typeof p === 'string') ? { paths: o.paths } : {}),
    ...(o.overrides && typeof o.overrides === 'object' && !Array.isArray(o.overrides) ? { overrides: o.overrides } : {}),
    journal: readJournal(entry.run.events),
  };
}

// ── runs show ────────────────────────────────────────────────────────────────────────────────

/**
 * The journal of a run as `runs show` prints it after the transcript — for a run that was resumed
 * or did not finish (a finished run's agents are in the transcript already): each agent's model
 * turns and its calls, marked `replayed` (played back from the run it resumed), `re-run` (an
 * unverified call run again) or `unverified` (it started and left no result). Empty otherwise.
 */
export function journalBlock(run: RunFile, summary: RunSummary, all: readonly Entry[], paint: Painter): string {
  const journal = readJournal(run.events);
  if (!journal.lines) return '';
  const from = resumedFrom(run);
  const unfinished = summary.exitCode === null;
  if (!from && !unfinished) return '';
  const out: string[] = [''];
  const head = `journal${from ? ` — resumed from run ${from.slice(0, 8)}` : ''}`;
  out.push(paint.bold(head));
  for (const [key, agent] of journal.agents) {
    out.push(`  ${paint.bold(`agent ${escapeControl(agent.skill ?? '?')}`)} ${paint.dim(`(${key})`)}`);
    const byTurn = new Map<number, { turn?: TurnLine; calls: { start?: CallLine; end?: CallLine }[] }>();
    const at = (n: number) => {
      let t = byTurn.get(n);
      if (!t) byTurn.set(n, (t = { calls: [] }));
      return t;
    };
    for (const [n, t] of agent.turns) at(n).turn = t;
    for (const c of agent.calls.values()) {
      const line = c.start ?? c.end!;
      at(line.turn).calls.push(c);
    }
    for (const n of [...byTurn.keys()].sort((a, b) => a - b)) {
      const { turn, calls } = byTurn.get(n)!;
      const what = turn ? (turn.invoke !== undefined ? 'code' : 'text') : 'no response journaled';
      const text = turn?.text ? `: ${oneLine(turn.text)}` : '';
      out.push(`    ${paint.dim(`turn ${n}`)} ${what}${escapeControl(text)}${turn?.replayed ? ` ${paint.cyan('(replayed)')}` : ''}`);
      calls.sort((a, b) => (a.start ?? a.end!).index - (b.start ?? b.end!).index);
      for (const c of calls) out.push(`      ${callLine(c, paint)}`);
    }
  }
  if (unfinished) {
    const entry = all.find((e) => e.run.id === run.id) ?? { run, summary };
    const can = resumability(entry, all);
    out.push('');
    out.push(can.ok ? paint.yellow(`resumable: agent-apps runs resume ${run.id.slice(0, 8)}`) : paint.dim(`not resumable: ${escapeControl(can.why)}`));
  }
  return out.join('\n') + '\n';
}

function callLine(c: { start?: CallLine; end?: CallLine }, paint: Painter): string {
  const line = c.start ?? c.end!;
  const call = escapeControl(callText(line.tool, line.args ?? c.end?.args));
  const head = `call ${line.call} ${call}`;
  const marks: string[] = [];
  if (c.start?.replayed || c.end?.replayed) marks.push(paint.cyan('replayed'));
  if (c.start?.rerun) marks.push(paint.yellow(`re-run (it was unverified; ${escapeControl(c.start.rerun)})`));
  if (!c.end) return `${head}  ${paint.yellow('unverified: it started and left no result')}${marks.length ? ` ${marks.join(', ')}` : ''}`;
  const outcome = c.end.error ? paint.red(`✗ ${escapeControl(c.end.error.code)}${c.end.denied ? ' (denied)' : ''}`) : `→ ${escapeControl(oneLine(json(c.end.result)))}`;
  return `${head} ${outcome}${marks.length ? `  ${marks.join(', ')}` : ''}`;
}

function json(v: unknown): string {
  try {
    return JSON.stringify(v ?? null) ?? 'null';
  } catch {
    return String(v);
  }
}

function oneLine(s: string): string {
  const line = s.replace(/\s+/g, ' ').trim();
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
}
