// Log reporters (docs/events.md): `console` writes to stderr, coloured by level, and stays quiet for
// internal tags below warn; `jsonl` records every event of one CLI run to
// <workspace>/.agent-apps/runs/<rootContextId>.jsonl, which `agent-apps tail` reads.
import fs from 'node:fs';
import path from 'node:path';
import type { LogEvent, Reporter } from '../../core/types.ts';
import type { Painter } from './output.ts';
import { escapeControl } from './escape.ts';
import { isWorkspace } from '../../loader/search-paths.ts';

export { escapeControl } from './escape.ts';

export const RUNS_DIR = path.join('.agent-apps', 'runs');
export const KEEP_RUNS = 50;

/**
 * Runs are recorded only in a workspace — a folder that holds skills/, .agents/skills/,
 * .claude/skills/ or .agent-apps/ (findWorkspace's answer when it found one): a run anywhere
 * else, failed or not, leaves no .agent-apps/ behind.
 */
export function recordsRuns(workspace: string): boolean {
  return isWorkspace(workspace);
}

export function consoleReporter(stream: NodeJS.WritableStream, paint: Painter, opts: { verbose?: boolean } = {}): Reporter {
  return {
    name: 'console',
    report(e: LogEvent) {
      const user = e.tag === 'user' && e.type === 'message';
      if (!opts.verbose && !user && e.level !== 'warn' && e.level !== 'error') return;
      // docs/security.md: what a skill or agent code logged is text, never terminal control — every
      // control character is escaped, so one event is one line and no escape sequence runs.
      if (user) {
        stream.write(`${escapeControl(e.text ?? '')}\n`);
        return;
      }
      const level = e.level === 'error' ? paint.red(e.level) : e.level === 'warn' ? paint.yellow(e.level) : paint.dim(e.level);
      const code = e.code ? ` ${paint.dim(`[${escapeControl(e.code)}]`)}` : '';
      stream.write(`${level}${code} ${paint.cyan(escapeControl(e.tool))}: ${escapeControl(e.text ?? e.type)}\n`);
    },
  };
}

export interface JsonlReporter extends Reporter {
  file: string;
}

/** One file per run; a `.live` marker (holding the pid) tells `tail --follow` the run is still going. */
export function jsonlReporter(workspace: string, rootContextId: string, keep = KEEP_RUNS): JsonlReporter {
  const dir = path.join(workspace, RUNS_DIR);
  fs.mkdirSync(dir, { recursive: true });
  prune(dir, keep - 1);
  const file = path.join(dir, `${rootContextId}.jsonl`);
  const live = path.join(dir, `${rootContextId}.live`);
  const fd = fs.openSync(file, 'a');
  fs.writeFileSync(live, String(process.pid));
  let open = true;
  return {
    name: 'jsonl',
    file,
    report(e: LogEvent) {
      if (!open) return;
      let line: string;
      try {
        line = JSON.stringify(e, safe()) + '\n';
      } catch {
        line = JSON.stringify({ ...e, data: '[unserializable]' }) + '\n';
      }
      fs.writeSync(fd, line);
    },
    close() {
      if (!open) return;
      open = false;
      fs.closeSync(fd);
      fs.rmSync(live, { force: true });
    },
  };
}

function prune(dir: string, keep: number): void {
  let files: { name: string; mtime: number }[];
  try {
    files = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.jsonl'))
      .map((name) => ({ name, mtime: fs.statSync(path.join(dir, name)).mtimeMs }));
  } catch {
    return;
  }
  if (files.length <= keep) return;
  files.sort((a, b) => b.mtime - a.mtime);
  for (const f of files.slice(keep)) {
    fs.rmSync(path.join(dir, f.name), { force: true });
    // A run killed outright leaves its marker behind; a stale pid must not look live to `tail --follow`.
    fs.rmSync(path.join(dir, f.name.replace(/\.jsonl$/, '.live')), { force: true });
  }
}

/** A JSON.stringify replacer: bigints as strings, functions dropped, only true cycles cut (an object seen twice side by side is kept). */
function safe() {
  const ancestors: unknown[] = [];
  return function (this: unknown, _key: string, value: unknown) {
    if (typeof value === 'bigint') return String(value);
    if (typeof value === 'function') return undefined;
    if (value === null || typeof value !== 'object') return value;
    // `this` is the object holding `value`: unwind to it, so `ancestors` is the path from the root.
    while (ancestors.length > 0 && ancestors[ancestors.length - 1] !== this) ancestors.pop();
    if (ancestors.includes(value)) return '[Circular]';
    ancestors.push(value);
    return value;
  };
}
