// The stdio side of an MCP server: the process, started *before* the SDK is loaded so that the
// server boots while the SDK's modules do (both take a few hundred milliseconds: first use costs
// the longer of the two, not their sum), and a Transport over its pipes for the SDK's Client.
//
// No runtime import of the SDK here (types only): hub.ts spawns with this module, then imports
// client.ts, which hands the SDK's ReadBuffer and serializeMessage to the transport.
//
// - The server sees HOME, LOGNAME, PATH, SHELL, TERM and USER of this process and its own `env`
//   (what the SDK's StdioClientTransport passes: the rest of the environment may hold secrets).
// - Its pid is tracked (client-processes.ts): no server outlives this process.
// - Its stderr is read, not inherited: the tail goes into error messages, lines become `debug`
//   log events (bounded: a server that floods stderr costs a few KiB).
// - Being our own transport, not the SDK's StdioClientTransport, makes the SDK probe the protocol
//   era in place, on this one process, rather than on a throw-away second server process.
// - One message (a line of its stdout) is at most the server's maxBytes: a longer one fails the
//   calls in flight and the server is stopped, so memory stays bounded (docs/mcp.md, maxBytes).
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import type { JSONRPCMessage, ReadBuffer, Transport } from '@modelcontextprotocol/client';
import type { LogInput } from '../core/types.ts';
import { fingerprint, type StdioServer } from './config.ts';
import { processTree, killAll, trackPid, untrackPid } from './client-processes.ts';

/** How much of a server's stderr is kept for error messages. */
const STDERR_TAIL = 4096;
/** At most this many stderr lines become log events per server. */
const STDERR_LOG_LINES = 200;
/** close(): how long a server gets to exit after its stdin closes, then after SIGTERM. */
const CLOSE_STEP_MS = 750;
const INHERITED_ENV = process.platform === 'win32' ? ['APPDATA', 'HOMEDRIVE', 'HOMEPATH', 'LOCALAPPDATA', 'PATH', 'PATHEXT', 'PROCESSOR_ARCHITECTURE', 'SYSTEMDRIVE', 'SYSTEMROOT', 'TEMP', 'USERNAME', 'USERPROFILE', 'WINDIR'] : ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'];

export interface ProcessInfo {
  pid: number | undefined;
  /** The last few KiB of its stderr. */
  stderr: string;
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** Its pipes are closed too (after exit): nothing more will be read. */
  closed: boolean;
  /** A spawn failure (ENOENT, EACCES …). */
  error: (Error & { code?: string }) | undefined;
}

export interface SpawnedServer {
  /** Undefined when spawn() itself threw (info.error says why). */
  child: ChildProcess | undefined;
  info: ProcessInfo;
  /** Settles once the process exists (or failed to). */
  spawned: Promise<void>;
}

/**
 * The servers that started this process, outermost first (`AGENT_APPS_MCP_CHAIN`, set for every
 * server we spawn): an agent-apps served over MCP by another agent-apps, whose own configuration
 * names the first one, would otherwise start it again, and so on without end.
 */
const CHAIN_VAR = 'AGENT_APPS_MCP_CHAIN';
const MAX_DEPTH = 4;

function chain(): string[] {
  return (process.env[CHAIN_VAR] ?? '').split(',').filter(Boolean);
}

function identity(server: StdioServer): string {
  return createHash('sha256').update(fingerprint(server)).digest('hex').slice(0, 16);
}

/** Why starting `server` here would close a loop (or go too deep), or undefined. */
export function startCycle(server: StdioServer): string | undefined {
  const seen = chain();
  if (seen.includes(identity(server))) return 'this process was started, through MCP, by the same server entry (an agent-apps that serves a workspace naming it again): starting it once more would loop';
  if (seen.length >= MAX_DEPTH) return `this process is already ${seen.length} MCP servers deep (agent-apps serving agent-apps …)`;
  return undefined;
}

export function serverEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of INHERITED_ENV) {
    const value = process.env[key];
    // A value starting with "()" is an exported shell function: never passed on.
    if (value !== undefined && !value.startsWith('()')) env[key] = value;
  }
  return { ...env, ...extra };
}

/** Starts the server process now; the transport attaches to it later. */
export function spawnServer(server: StdioServer, log: (event: LogInput) => void): SpawnedServer {
  const info: ProcessInfo = { pid: undefined, stderr: '', exit: undefined, closed: false, error: undefined };
  let child: ChildProcess;
  try {
    const env = { ...serverEnv(server.env), [CHAIN_VAR]: [...chain(), identity(server)].join(',') };
    child = spawn(server.command, server.args, { cwd: server.cwd, env, stdio: ['pipe', 'pipe', 'pipe'], shell: false, windowsHide: true });
  } catch (err) {
    info.error = err as Error & { code?: string };
    return { child: undefined, info, spawned: Promise.resolve() };
  }
  const pid = child.pid;
  if (pid !== undefined) {
    info.pid = pid;
    trackPid(pid);
  }
  const spawned = new Promise<void>((resolve) => {
    child.once('spawn', () => resolve());
    child.once('error', (err: Error & { code?: string }) => {
      info.error ??= err;
      resolve();
    });
  });
  child.once('exit', (code, signal) => {
    if (pid !== undefined) untrackPid(pid);
    info.exit = { code, signal };
    log({ type: 'server-exit', tag: 'mcp', level: 'debug', server: server.name, code, signal, text: `MCP server '${server.name}' exited (${signal ?? `code ${code}`})` });
  });
  child.once('close', () => {
    info.closed = true;
  });
  // EPIPE on a server that went away is reported by the transport's send, not thrown here.
  child.stdin?.on('error', () => {});
  let partial = '';
  let logged = 0;
  child.stderr?.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    info.stderr = (info.stderr + text).slice(-STDERR_TAIL);
    partial += text;
    const lines = partial.split('\n');
    partial = lines.pop()!.slice(-STDERR_TAIL);
    for (const line of lines) {
      if (!line.trim() || logged > STDERR_LOG_LINES) continue;
      logged++;
      const more = logged > STDERR_LOG_LINES;
      log({ type: 'stderr', tag: 'mcp', level: 'debug', server: server.name, text: more ? `MCP server '${server.name}': more stderr, not logged` : line.length > 1000 ? line.slice(0, 1000) + '…' : line });
    }
  });
  return { child, info, spawned };
}

/** The SDK's Transport over a spawned server's pipes. */
export class SpawnedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  /** A line longer than maxBytes arrived: the transport stops reading and closes. */
  ontoolarge?: (maxBytes: number) => void;
  readonly #proc: SpawnedServer;
  readonly #buffer: ReadBuffer;
  readonly #serialize: (message: JSONRPCMessage) => string;
  readonly #maxBytes: number;
  /** Bytes of the line being read (since the last newline). */
  #line = 0;
  #tooLarge = false;
  #started = false;
  #closed = false;

  /** `buffer` must not cap by itself (its cap counts a whole chunk of many lines): maxBytes is checked per line here. */
  constructor(proc: SpawnedServer, codec: { buffer: ReadBuffer; serialize: (message: JSONRPCMessage) => string; maxBytes: number }) {
    this.#proc = proc;
    this.#buffer = codec.buffer;
    this.#serialize = codec.serialize;
    this.#maxBytes = codec.maxBytes;
  }

  /** False once a line in `chunk` (with what came before it) is longer than maxBytes. */
  #withinBound(chunk: Buffer): boolean {
    for (let at = 0; ; ) {
      const nl = chunk.indexOf(0x0a, at);
      this.#line += (nl < 0 ? chunk.length : nl) - at;
      if (this.#line > this.#maxBytes) return false;
      if (nl < 0) return true;
      this.#line = 0;
      at = nl + 1;
    }
  }

  /** What the SDK looks at to tell a stdio transport (its probe verdicts differ from HTTP's). */
  get pid(): number | null {
    return this.#proc.info.pid ?? null;
  }

  get stderr(): null {
    return null;
  }

  async start(): Promise<void> {
    if (this.#started) throw new Error('SpawnedTransport already started');
    this.#started = true;
    const { child, info, spawned } = this.#proc;
    await spawned;
    if (info.error || !child) throw info.error ?? new Error('the server process did not start');
    const finish = () => {
      if (this.#closed) return;
      this.#closed = true;
      this.#buffer.clear();
      this.onclose?.();
    };
    // A server that exited before we attached: closed at once (the stdout it wrote still counts).
    child.stdout?.on('data', (chunk: Buffer) => {
      if (this.#tooLarge) return;
      if (!this.#withinBound(chunk)) {
        this.#tooLarge = true;
        this.#buffer.clear();
        this.ontoolarge?.(this.#maxBytes);
        void this.close().catch(() => {});
        return;
      }
      try {
        this.#buffer.append(chunk);
        for (let message = this.#buffer.readMessage(); message !== null; message = this.#buffer.readMessage()) this.onmessage?.(message);
      } catch (err) {
        this.onerror?.(err as Error);
      }
    });
    child.stdout?.on('error', (err) => this.onerror?.(err));
    if (info.closed) queueMicrotask(finish);
    else child.once('close', finish);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.#proc.child?.stdin;
      if (this.#closed || !stdin || stdin.destroyed) {
        reject(Object.assign(new Error('Not connected'), { code: 'NOT_CONNECTED' }));
        return;
      }
      if (stdin.write(this.#serialize(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /**
   * stdin closed (a well-behaved server exits), then SIGTERM, then SIGKILL — to the server and
   * what it started (an `npx …` wrapper's real server), seen while the tree still holds.
   */
  async close(): Promise<void> {
    const { child, info } = this.#proc;
    if (!child || info.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const tree = processTree(info.pid);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const wait = (ms: number) => Promise.race([exited.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref())]);
    try {
      child.stdin?.end();
    } catch {}
    if (!(await wait(CLOSE_STEP_MS))) {
      killAll([info.pid], 'SIGTERM');
      if (!(await wait(CLOSE_STEP_MS))) killAll([info.pid], 'SIGKILL');
    }
    // Descendants still there (the wrapper went, its child did not): killed.
    killAll(
      tree.slice(1).filter((pid) => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      }),
      'SIGKILL',
    );
  }
}
