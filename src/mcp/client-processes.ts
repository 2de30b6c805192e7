// The MCP servers this process started, so that none outlives it (docs/mcp.md): `runtime.close()`
// closes them gracefully; whatever is left when the process exits — a crash, an uncaught error in
// a skill, process.exit() — is killed with its descendants (an `npx …` server is a wrapper around
// the real one) from the 'exit' handler, synchronously; and a SIGINT / SIGTERM / SIGHUP that
// nobody else handles kills them before the signal takes its default course.
import fs from 'node:fs';

interface Tracked {
  /** The process's start time (Linux, /proc/PID/stat field 22): a reused pid is not ours. */
  start: string | undefined;
}

const tracked = new Map<number, Tracked>();
let installed = false;
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export function trackPid(pid: number): void {
  tracked.set(pid, { start: startTime(pid) });
  install();
}

export function untrackPid(pid: number): void {
  tracked.delete(pid);
}

/** Tracked pids still alive (for tests and `close()`). */
export function trackedPids(): number[] {
  return [...tracked.keys()].filter((pid) => isOurs(pid));
}

/**
 * The process and its descendants, children first in the list's tail order (Linux: /proc). On
 * other systems, the process alone.
 */
export function processTree(pid: number): number[] {
  const out = [pid];
  if (process.platform !== 'linux') return out;
  let children: Map<number, number[]>;
  try {
    children = childrenByParent();
  } catch {
    return out;
  }
  for (let i = 0; i < out.length; i++) for (const c of children.get(out[i]!) ?? []) out.push(c);
  return out;
}

function childrenByParent(): Map<number, number[]> {
  const map = new Map<number, number[]>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue;
    }
    // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ppid = Number(rest[1]);
    const list = map.get(ppid);
    if (list) list.push(Number(name));
    else map.set(ppid, [Number(name)]);
  }
  return map;
}

function startTime(pid: number): string | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Alive, and the same process we started (not a later one that got its pid). */
function isOurs(pid: number): boolean {
  if (!isAlive(pid)) return false;
  const t = tracked.get(pid);
  if (t?.start === undefined) return true;
  return startTime(pid) === t.start;
}

/** Sends `signal` to every process in the list that is still alive; never throws. */
export function killAll(pids: Iterable<number>, signal: NodeJS.Signals = 'SIGKILL'): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {}
  }
}

/** Kills every tracked server and its descendants, now (synchronous: safe in an 'exit' handler). */
export function killTracked(): void {
  const victims: number[] = [];
  for (const pid of tracked.keys()) if (isOurs(pid)) victims.push(...processTree(pid));
  tracked.clear();
  killAll(victims);
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on('exit', killTracked);
  for (const sig of SIGNALS) {
    const onSignal = () => {
      // Someone else handles it (the CLI's graceful shutdown closes the runtime, and with it the
      // servers): leave it to them. Alone, we are what stands between the signal and its default
      // action, which kills this process without an 'exit' event: kill the servers, then let it.
      if (process.listenerCount(sig) > 1) return;
      killTracked();
      process.off(sig, onSignal);
      process.kill(process.pid, sig);
    };
    process.on(sig, onSignal);
  }
}
