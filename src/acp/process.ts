// The ACP agent as a child process (docs/agents.md): started in its own process group so that ending
// it ends whatever it started too (a language server, a shell), ended with the run — its stdin
// closed, then SIGTERM, then SIGKILL — and never outliving agent-apps. A command that cannot be
// started is one E_CONFIG line naming it and how to install it.
import { spawn, type ChildProcess } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { ConfigurationError } from '../core/errors.ts';

export interface AgentCommand {
  command: string;
  args: string[];
  /** Added to agent-apps' own environment (the agent needs its credentials, HOME and PATH). */
  env: Record<string, string>;
  cwd: string;
  /** Said after "not found": how to install the command. */
  install?: string;
  /** The config key that names the command, for messages (`model.acp.command`). */
  key: string;
}

export interface AgentProcess {
  pid: number;
  /** The agent's stdin and stdout as web streams, for the SDK's ndJsonStream. */
  input: WritableStream<Uint8Array>;
  output: ReadableStream<Uint8Array>;
  /** Settles when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Its last lines on stderr (for a message when it dies). */
  stderrTail(): string;
  /** Ends it (and its process group): stdin closed, then SIGTERM after `graceMs`, then SIGKILL. */
  stop(graceMs?: number): Promise<void>;
}

const TAIL_LINES = 5;
const running = new Set<ChildProcess>();
let exitHook = false;

/** Starts the agent; rejects with E_CONFIG when the command cannot be started. */
export async function startAgentProcess(cmd: AgentCommand, onStderrLine?: (line: string) => void): Promise<AgentProcess> {
  const child = spawn(cmd.command, cmd.args, {
    cwd: cmd.cwd,
    env: { ...process.env, ...cmd.env },
    stdio: ['pipe', 'pipe', 'pipe'],
    // Its own process group: a signal to the group reaches what the agent started.
    detached: true,
    windowsHide: true,
  });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (err: NodeJS.ErrnoException) => reject(startError(cmd, err)));
  });
  running.add(child);
  if (!exitHook) {
    exitHook = true;
    // Last resort: agent-apps itself ending (an uncaught error, process.exit) takes the agents with it.
    process.once('exit', () => {
      for (const c of running) killGroup(c, 'SIGKILL');
    });
  }
  // A write after the agent died is an EPIPE on stdin: the connection closes, nothing crashes.
  child.stdin!.on('error', () => {});
  const tail: string[] = [];
  let partial = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.trim()) continue;
      tail.push(line);
      if (tail.length > TAIL_LINES) tail.shift();
      onStderrLine?.(line);
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    });
  });
  let stopping: Promise<void> | undefined;
  return {
    pid: child.pid!,
    input: Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
    output: Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>,
    exited,
    stderrTail: () => [...tail, ...(partial.trim() ? [partial] : [])].join('\n'),
    stop(graceMs = 1000) {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.stdin!.end();
          if (!(await within(exited, graceMs))) {
            killGroup(child, 'SIGTERM');
            if (!(await within(exited, 2000))) killGroup(child, 'SIGKILL');
          }
          await exited;
        }
        // The agent is gone; anything it left in its group goes with it.
        killGroup(child, 'SIGKILL');
      })();
      return stopping;
    },
  };
}

function startError(cmd: AgentCommand, err: NodeJS.ErrnoException): ConfigurationError {
  const what = `the ACP agent command '${cmd.command}' (${cmd.key})`;
  if (err.code === 'ENOENT') {
    return new ConfigurationError(`${what} was not found on PATH — ${cmd.install ?? `install it, or set ${cmd.key} to its path`}`, { cause: err });
  }
  if (err.code === 'EACCES') return new ConfigurationError(`${what} cannot be run (permission denied) — check ${cmd.key}`, { cause: err });
  return new ConfigurationError(`${what} could not be started: ${err.message}`, { cause: err });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // The group is gone already.
  }
}

async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const done = await Promise.race([p.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]);
  clearTimeout(timer);
  return done;
}
