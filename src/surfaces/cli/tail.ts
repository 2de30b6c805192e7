// `agent-apps tail` (docs/events.md, docs/cli.md): the log events of the latest run, or `--run ID`, read from
// <workspace>/.agent-apps/runs/<rootContextId>.jsonl; `--follow` while the run is live.
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { AgentAppsError } from '../../core/errors.ts';
import { LEVELS } from '../../kernel/log.ts';
import { redact } from '../../core/redact.ts';
import { escapeControl } from '../shared/reporters.ts';
import { runsDirOf } from './runs.ts';
import { findRun, runIds } from '../shared/runs.ts';
import type { LogEvent, LogLevel } from '../../core/types.ts';
import { painter, type Painter } from '../shared/output.ts';
import { globalsOf } from '../shared/runtime-options.ts';
import type { CliIO } from '../shared/io.ts';

interface TailOptions {
  run?: string;
  follow?: boolean;
  last?: string;
  tag?: string;
  type?: string;
  level?: string;
}

export function registerTail(program: Command, io: CliIO): void {
  program
    .command('tail')
    .description('show the log events of the latest run (or --run ID), optionally following it live')
    .option('--run <id>', 'a run id as agent-apps runs lists it (or any unique prefix of one)')
    .option('-f, --follow', 'keep printing events while the run is still going')
    .option('-n, --last <n>', 'only the last N events')
    .option('--tag <tag>', 'only events with this tag (user, pipeline, debug, events, agent, cli …)')
    .option('--type <type>', 'only events of this type (pipeline-enter, abort, message …)')
    .option('--level <level>', 'only events at or above this level (trace, debug, info, warn, error)')
    .addHelpText(
      'after',
      `
Every \`agent-apps run\` and \`debug\` records its events to .agent-apps/runs/<run-id>.jsonl in the
workspace (the last 50 runs are kept). --json prints one event per line as JSON.

Examples:
  $ agent-apps tail
  $ agent-apps tail --level warn --last 20
  $ agent-apps tail --tag debug --json | jq -r .type
  $ agent-apps tail --run 6af2d444      a run from agent-apps runs
  $ agent-apps tail --follow            # in a second terminal while a run is going`,
    )
    .action(async (opts: TailOptions, cmd: Command) => {
      const g = globalsOf(cmd);
      const dir = runsDirOf(g);
      const file = pickRun(dir, opts.run);
      if (opts.level !== undefined && !(opts.level in LEVELS)) throw new AgentAppsError('E_USAGE', `--level must be one of ${Object.keys(LEVELS).join(', ')}`);
      const last = opts.last === undefined ? undefined : Number(opts.last);
      if (last !== undefined && (!Number.isInteger(last) || last < 0)) throw new AgentAppsError('E_USAGE', `--last expects a whole number, got '${opts.last}'`);
      const paint = await painter(io.stdout, g.color !== false);
      const keep = (e: LogEvent) =>
        (!opts.tag || e.tag === opts.tag) && (!opts.type || e.type === opts.type) && (!opts.level || LEVELS[e.level] >= LEVELS[opts.level as LogLevel]);
      // Redacted as shown too: a run file from an older version may hold secrets (docs/security.md, "Secrets").
      const print = (event: LogEvent) => {
        const e = redact(event) as LogEvent;
        io.stdout.write((g.json ? JSON.stringify(e) : formatEvent(e, paint)) + '\n');
      };
      let offset = 0;
      const read = (): LogEvent[] => {
        const text = fs.readFileSync(file, 'utf8');
        const end = text.lastIndexOf('\n') + 1;
        const chunk = text.slice(offset, end);
        offset = end;
        return chunk.split('\n').filter(Boolean).flatMap((line) => {
          try {
            return [JSON.parse(line) as LogEvent];
          } catch {
            return [];
          }
        });
      };
      let events = read().filter(keep);
      if (last !== undefined) events = events.slice(Math.max(0, events.length - last));
      for (const e of events) print(e);
      if (!opts.follow) return;
      const live = file.replace(/\.jsonl$/, '.live');
      await new Promise<void>((resolve) => {
        const timer = setInterval(() => {
          for (const e of read().filter(keep)) print(e);
          if (!isLive(live)) {
            clearInterval(timer);
            for (const e of read().filter(keep)) print(e);
            resolve();
          }
        }, 150);
        process.once('SIGINT', () => {
          clearInterval(timer);
          resolve();
        });
      });
    });
}

/** `--run ID`: any id `agent-apps runs` lists, or a unique prefix of one; else the run written to last. */
function pickRun(dir: string, id: string | undefined): string {
  if (id) return path.join(dir, `${findRun(dir, id)}.jsonl`);
  const files = runIds(dir).map((r) => `${r}.jsonl`);
  if (!files.length) throw new AgentAppsError('E_USAGE', `no recorded runs in ${dir} — run a skill first (agent-apps run …)`);
  const latest = files.map((f) => ({ f, t: fs.statSync(path.join(dir, f)).mtimeMs })).sort((a, b) => b.t - a.t)[0]!;
  return path.join(dir, latest.f);
}

function isLive(marker: string): boolean {
  try {
    const pid = Number(fs.readFileSync(marker, 'utf8'));
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function formatEvent(e: LogEvent, paint: Painter): string {
  const time = new Date(e.timestamp).toISOString().slice(11, 23);
  const level = e.level === 'error' ? paint.red(e.level.padEnd(5)) : e.level === 'warn' ? paint.yellow(e.level.padEnd(5)) : paint.dim(e.level.padEnd(5));
  const extra = [e.entry ? `› ${e.entry}` : '', e.duration !== undefined ? `${e.duration} ms` : '', e.code ? `[${e.code}]` : ''].filter(Boolean).join(' ');
  // The run file holds text exactly as logged; on the terminal it is one line with no control characters (docs/security.md).
  return `${paint.dim(time)} ${level} ${paint.dim(escapeControl(e.tag).padEnd(8))} ${escapeControl(e.type).padEnd(14)} ${paint.cyan(escapeControl(e.tool))}${extra ? ' ' + escapeControl(extra) : ''}${e.text ? ': ' + escapeControl(e.text) : ''}`;
}
