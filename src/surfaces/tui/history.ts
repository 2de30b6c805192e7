// The repl's history across sessions (docs/terminal.md): one line per command in `~/.agent-apps/history`
// (the folder is `$AGENT_APPS_HOME` when set, as for the user's skills in search-paths.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Lines kept: reading trims the file to this many when it grew past twice as many. */
export const HISTORY_MAX = 500;

export function historyFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.AGENT_APPS_HOME || path.join(os.homedir(), '.agent-apps'), 'history');
}

/** The saved lines, oldest first; [] when there is no file or it cannot be read. */
export function readHistory(file: string): string[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const lines = text.split('\n').filter((l) => l.trim());
  if (lines.length > 2 * HISTORY_MAX) {
    const kept = lines.slice(-HISTORY_MAX);
    try {
      fs.writeFileSync(file, kept.join('\n') + '\n', { mode: 0o600 });
    } catch {
      // A history that cannot be trimmed is still read.
    }
    return kept;
  }
  return lines.slice(-HISTORY_MAX);
}

/** Appends one line (never a blank one); a history that cannot be written is not an error. */
export function appendHistory(file: string, line: string): void {
  const one = line.replace(/[\r\n]+/g, ' ').trim();
  if (!one) return;
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.appendFileSync(file, one + '\n', { mode: 0o600 });
  } catch {
    // Read-only home, full disk: the session goes on without saving.
  }
}
