// `agent-apps runs` (docs/ci.md): the workspace's past runs, read from the run files the CLI records
// (<workspace>/.agent-apps/runs/<run-id>.jsonl, reporters.ts) — listed newest first, one shown as
// a readable transcript (the `agent-run` records the `session` middleware writes: model text,
// code, tool calls and results, errors, usage), and pruned. Reading, summing up and the
// transcript are src/surfaces/shared/runs.ts's, which serve's web view shares.
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { AgentAppsError } from '../../core/errors.ts';
import type { LogEvent } from '../../core/types.ts';
import { redact } from '../../core/redact.ts';
import { painter, type Painter } from '../shared/output.ts';
import { KEEP_RUNS, escapeControl } from '../shared/reporters.ts';
import { findRun, formatDuration, formatTime, listRuns, malformedText, paintStatus, readRun, readRuns, shortestIds, summarize, transcript, triggerText, type RunFile, type RunSummary } from '../shared/runs.ts';
import { journalBlock, listWithResume, resumePlan, runsDirOf } from '../shared/resume.ts';
import { addGlobalOptions, globalsOf } from '../shared/runtime-options.ts';
import type { CliIO } from '../shared/io.ts';
import { runSkill } from './run.ts';

// ── finding run files ─────────────────────────────────────────────────────────────────────────

/** The runs folder of the workspace `g` points into; outside a workspace, E_USAGE (exit 2). */
export { runsDirOf } from '../shared/resume.ts';

/** `warn: run ID: lines 2, 5 are not JSON events — skipped`, once per file. */
export function warnMalformed(run: RunFile, io: CliIO, paint: Painter): void {
  const text = malformedText(run);
  if (text) io.stderr.write(`${paint.yellow('warn')}: ${text}\n`);
}

/** listRuns' warnings, as `warn: …` lines on stderr. */
const warnTo = (io: CliIO, paint: Painter) => (text: string) => io.stderr.write(`${paint.yellow('warn')}: ${text}\n`);

// ── the command ───────────────────────────────────────────────────────────────────────────────

export function registerRuns(program: Command, io: CliIO): void {
  const runs = program
    .command('runs')
    .description('list past runs of this workspace, newest first (show one as a transcript, prune old ones)')
    .option('-n, --limit <n>', 'only the newest N runs')
    .addHelpText(
      'after',
      `
Every \`agent-apps run\` (and \`debug\`) in a workspace is recorded in .agent-apps/runs/<id>.jsonl.
Status is ok (exit 0), failed (1, 2), refused (3), interrupted (SIGINT 130, SIGTERM 143, or a
process that died without finishing its record) or running. An interrupted run that died with a
journal is "interrupted (resumable)": \`agent-apps runs resume ID\` continues it (docs/runs.md).
The ID column is the shortest unique start of each id: \`runs show\`, \`tail --run\` take it, or any
unique prefix. A run a schedule fired under \`agent-apps serve\` shows in a TRIGGER column (schedule NAME).
--json prints [{ id, skill, status, exitCode, durationMs, startedAt, error?, trigger?, schedule?, resumable?, resumedFrom? }].

Examples:
  $ agent-apps runs
  $ agent-apps runs --limit 5
  $ agent-apps runs --json | jq -r '.[] | select(.status == "failed") | .id'
  $ agent-apps runs show 6af2d444
  $ agent-apps runs resume 6af2d444
  $ agent-apps tail --run 6af2d444
  $ agent-apps runs prune --keep 10`,
    )
    .action(async (opts: { limit?: string }, cmd: Command) => {
      const g = globalsOf(cmd);
      const limit = opts.limit === undefined ? undefined : Number(opts.limit);
      if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) throw new AgentAppsError('E_USAGE', `--limit expects a whole number, got '${opts.limit}'`);
      const dir = runsDirOf(g);
      const paint = await painter(io.stderr, g.color !== false);
      let list = listWithResume(dir, warnTo(io, paint));
      const shortIds = shortestIds(list.map((r) => r.id));
      if (limit !== undefined) list = list.slice(0, limit);
      if (g.json) {
        io.stdout.write(JSON.stringify(list) + '\n');
        return;
      }
      if (!list.length) {
        io.stderr.write(`no recorded runs in ${dir} yet — agent-apps run … records one\n`);
        return;
      }
      io.stdout.write(runsTable(list, shortIds, await painter(io.stdout, g.color !== false)));
    });

  const show = runs
    .command('show')
    .description('print a past run as a transcript: model text, code, tool calls and results, errors, usage')
    .argument('<id>', 'a run id, or a unique prefix of one')
    .addHelpText(
      'after',
      `
Each agent run of the run (nested ones indented where they were called) is shown from the
record the session middleware keeps: the model's text, the code it ran, what that code
returned or threw, denied calls, retries, and the tokens used. --json prints the run file's
events as they were recorded, one JSON object a line.

Examples:
  $ agent-apps runs show 6af2d444
  $ agent-apps runs show 6af2d444 --json | jq -c 'select(.type == "agent-run") | .usage'
  $ agent-apps runs show "$(agent-apps runs --json | jq -r '.[0].id')"`,
    )
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const g = globalsOf(cmd);
      const dir = runsDirOf(g);
      const read = readRun(dir, findRun(dir, id));
      // A run file is redacted as it is written; one from an older version, or written by other
      // means, is redacted as it is shown (docs/security.md, "Secrets").
      const run = { ...read, events: read.events.map((e) => redact(e) as LogEvent) };
      warnMalformed(run, io, await painter(io.stderr, g.color !== false));
      if (g.json) {
        for (const e of run.events) io.stdout.write(JSON.stringify(e) + '\n');
        return;
      }
      const paint = await painter(io.stdout, g.color !== false);
      const summary = summarize(dir, run);
      // A resumed or unfinished run: its journal, with what was replayed, re-run or left unverified (docs/runs.md).
      const journal = summary.exitCode === null || run.events.some((e) => e.type === 'run-start' && e.tag === 'cli' && typeof e.resumedFrom === 'string') ? journalBlock(run, summary, readRuns(dir), paint) : '';
      io.stdout.write(transcript(run, summary, paint) + journal);
    });
  addGlobalOptions(show, true);

  const resume = runs
    .command('resume')
    .description('continue a run that died before its end (killed, crashed) from its journal, without asking the model or running the tools again for what it journaled')
    .argument('<id>', 'a run id, or a unique prefix of one')
    .option('--rerun-unverified', 'run again, without asking, the calls that started and left no result')
    .addHelpText(
      'after',
      `
The run goes on as a new run (its run-start says resumedFrom: ID) with the skill, the args and
the --cwd / --path / --set of the run it continues. Its agents' model turns are played back from
the journal and its journaled calls return their recorded results; after the journal, the run
goes on live. A call that started and left no result may have run: it runs again for a skill
with idempotent: true in its metadata, with --rerun-unverified, or when you say so in a terminal;
headless, the run fails with E_RESUME (exit 1) naming it. A run that finished, is still running
or has no journal is a usage error (exit 2). See docs/runs.md.

Examples:
  $ agent-apps runs resume 6af2d444
  $ agent-apps runs resume 6af2d444 --rerun-unverified --output-format stream-json
  $ agent-apps runs --json | jq -r '.[] | select(.resumable) | .id'`,
    )
    .action(async (id: string, opts: { rerunUnverified?: boolean }, cmd: Command) => {
      const g = globalsOf(cmd);
      const plan = resumePlan(runsDirOf(g), id);
      const code = await runSkill(plan.skill, [], { resume: plan, rerunUnverified: opts.rerunUnverified === true }, g, io);
      (program as Command & { exitCodeOverride?: number }).exitCodeOverride = code;
    });
  addGlobalOptions(resume, true);

  const prune = runs
    .command('prune')
    .description(`delete the run files of all but the newest runs (default: keep ${KEEP_RUNS})`)
    .option('--keep <n>', `how many of the newest runs to keep (default ${KEEP_RUNS})`)
    .addHelpText(
      'after',
      `
A run that is still going is never deleted. --json prints { removed: [ids], kept: N }.

Examples:
  $ agent-apps runs prune
  $ agent-apps runs prune --keep 0       delete every finished run`,
    )
    .action(async (opts: { keep?: string }, cmd: Command) => {
      const g = globalsOf(cmd);
      const keep = opts.keep === undefined ? KEEP_RUNS : Number(opts.keep);
      if (!Number.isInteger(keep) || keep < 0) throw new AgentAppsError('E_USAGE', `--keep expects a whole number, got '${opts.keep}'`);
      const dir = runsDirOf(g);
      const list = listRuns(dir, warnTo(io, await painter(io.stderr, g.color !== false)));
      const removed: string[] = [];
      list.forEach((r, i) => {
        if (i < keep || r.status === 'running') return;
        fs.rmSync(path.join(dir, `${r.id}.jsonl`), { force: true });
        fs.rmSync(path.join(dir, `${r.id}.live`), { force: true });
        removed.push(r.id);
      });
      const kept = list.length - removed.length;
      if (g.json) io.stdout.write(JSON.stringify({ removed, kept }) + '\n');
      else io.stdout.write(`removed ${removed.length} run${removed.length === 1 ? '' : 's'}, kept ${kept}\n`);
    });
  addGlobalOptions(prune, true);
}

// ── text output ───────────────────────────────────────────────────────────────────────────────

function runsTable(list: RunSummary[], ids: Map<string, string>, paint: Painter): string {
  // The TRIGGER column appears once a listed run was started by something else (a schedule).
  const triggers = list.some((r) => r.trigger !== undefined);
  const rows = list.map((r) => [ids.get(r.id) ?? r.id, escapeControl(r.skill ?? '?'), r.resumable ? `${r.status} (resumable)` : r.status, r.exitCode === null ? '-' : String(r.exitCode), formatDuration(r.durationMs), formatTime(r.startedAt), ...(triggers ? [triggerText(r)] : [])]);
  const head = ['ID', 'SKILL', 'STATUS', 'EXIT', 'DURATION', 'STARTED', ...(triggers ? ['TRIGGER'] : [])];
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const right = new Set([3, 4]);
  const cell = (s: string, i: number) => (right.has(i) ? s.padStart(w[i]!) : s.padEnd(w[i]!));
  let out = paint.bold(head.map(cell).join('  ').trimEnd()) + '\n';
  list.forEach((r, k) => {
    const row = rows[k]!;
    out += row.map((s, i) => (i === 2 ? paintStatus(r.status, paint, cell(s, i)) : cell(s, i))).join('  ').trimEnd() + '\n';
  });
  return out;
}
