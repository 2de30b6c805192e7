// One connection to one MCP server, on the official v2 SDK (`@modelcontextprotocol/client`).
// This is the only module that imports the SDK, and it is imported (dynamically, by hub.ts) only
// when a server is actually used: a plain `run` never loads it.
//
// - Era: the client negotiates (`server/discover` probe, falling back to the 2025-11-25
//   handshake); `protocol: '2026-07-28'` pins the stateless era, `'2025-11-25'` skips the probe.
// - stdio servers: their stderr is read, not inherited (its tail goes into error messages; lines
//   are `debug` log events), and every server process is tracked so that none outlives this
//   process (client-processes.ts).
// - Calls: the idle timeout is reset by progress (the SDK resets it only when `onprogress` is
//   passed), an aborted context cancels the request, and results are mapped by SPEC §16.
import type { ChildProcess } from 'node:child_process';
import { Client, StreamableHTTPClientTransport, type CallToolResult, type Tool } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { AbortError, AgentAppsError } from '../kernel/errors.ts';
import type { LogInput } from '../kernel/types.ts';
import { VERSION } from '../cli/version.ts';
import { describeServer, whereConfigured, type ServerConfig } from './config.ts';
import { processTree, killAll, trackPid, untrackPid } from './client-processes.ts';

/** How much of a server's stderr is kept for error messages. */
const STDERR_TAIL = 4096;
/** At most this many stderr lines become log events per server (a server that floods stderr). */
const STDERR_LOG_LINES = 200;
/** A server's error text in an E_MCP_TOOL message is cut here. */
const MAX_ERROR_TEXT = 8192;
/** Tools per server beyond this are ignored (with a warning). */
const MAX_TOOLS = 1000;
/** `close()` waits this long for a server to exit on its own before killing it. */
const CLOSE_GRACE_MS = 1500;
/** Starting a server (spawn, handshake, tools/list) may take this long, or timeoutMs if longer: an `npx -y` server downloads first. */
const START_TIMEOUT_MS = 60_000;

export interface ConnectionHooks {
  /** Log events of the connection itself (stderr lines, start, exit): the runtime's root context. */
  log(event: LogInput): void;
}

export interface CallHooks {
  signal?: AbortSignal;
  onProgress?(p: { progress: number; total?: number; message?: string }): void;
}

export class Connection {
  readonly server: ServerConfig;
  readonly tools: Tool[];
  /** The protocol revision in use: `2026-07-28` or `2025-11-25`. */
  readonly protocol: string;
  /** Spawn (or connect) to tools listed, in ms. */
  readonly startMs: number;
  #client: Client;
  #process: ProcessInfo | undefined;
  #closed = false;

  private constructor(server: ServerConfig, client: Client, tools: Tool[], protocol: string, startMs: number, info: ProcessInfo | undefined) {
    this.server = server;
    this.#client = client;
    this.tools = tools;
    this.protocol = protocol;
    this.startMs = startMs;
    this.#process = info;
  }

  /** False once the server went away (crashed, exited, closed): the next use starts it again. */
  get alive(): boolean {
    return !this.#closed && (this.#process === undefined || this.#process.exit === undefined);
  }

  get pid(): number | undefined {
    return this.#process?.pid;
  }

  static async open(server: ServerConfig, hooks: ConnectionHooks): Promise<Connection> {
    const mode = server.protocol === '2026-07-28' ? { pin: '2026-07-28' } : server.protocol === '2025-11-25' ? ('legacy' as const) : ('auto' as const);
    try {
      return await Connection.#open(server, hooks, mode);
    } catch (err) {
      // A stdio server that exits on a request before `initialize` (some SDKs' servers do) is a
      // legacy server: start it again with the plain 2025-11-25 handshake.
      const code = (err as { cause?: { code?: unknown } }).cause?.code;
      if (mode !== 'auto' || server.transport !== 'stdio' || code === 'ENOENT' || code === 'EACCES' || code === 'REQUEST_TIMEOUT') throw err;
      hooks.log({ type: 'retry', tag: 'mcp', level: 'debug', server: server.name, text: `MCP server '${server.name}' closed on the protocol probe: starting it again with the 2025-11-25 handshake` });
      return Connection.#open(server, hooks, 'legacy');
    }
  }

  static async #open(server: ServerConfig, hooks: ConnectionHooks, mode: 'auto' | 'legacy' | { pin: string }): Promise<Connection> {
    const t0 = performance.now();
    const startTimeout = Math.max(server.timeoutMs, START_TIMEOUT_MS);
    const client = new Client({ name: 'agent-apps', version: VERSION }, { versionNegotiation: { mode, probe: { timeoutMs: 5000 } } });
    let info: ProcessInfo | undefined;
    let transport;
    if (server.transport === 'stdio') {
      info = { pid: undefined, stderr: '', lines: 0, exit: undefined };
      transport = new TrackedStdioTransport(server, info, hooks);
    } else {
      transport = new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers } });
    }
    try {
      await client.connect(transport, { timeout: startTimeout });
      const tools: Tool[] = [];
      const listed = await client.listTools(undefined, { timeout: startTimeout });
      for (const t of listed.tools) {
        if (tools.length >= MAX_TOOLS) {
          hooks.log({ type: 'warn', tag: 'mcp', level: 'warn', server: server.name, text: `MCP server '${server.name}' lists more than ${MAX_TOOLS} tools: the rest are ignored` });
          break;
        }
        tools.push(t);
      }
      const protocol = client.getNegotiatedProtocolVersion() ?? 'unknown';
      const startMs = performance.now() - t0;
      hooks.log({ type: 'server-start', tag: 'mcp', level: 'debug', server: server.name, protocol, tools: tools.length, ms: Math.round(startMs), text: `MCP server '${server.name}' ready in ${Math.round(startMs)} ms (protocol ${protocol}, ${tools.length} tools)` });
      return new Connection(server, client, tools, protocol, startMs, info);
    } catch (err) {
      await closeQuietly(client, info);
      throw connectError(server, err, info, startTimeout);
    }
  }

  /** `tools/call`, mapped: structuredContent, else joined text, else the content array. */
  async call(tool: string, args: unknown, hooks: CallHooks = {}): Promise<unknown> {
    const server = this.server;
    if (hooks.signal?.aborted) throw new AbortError(hooks.signal.reason);
    let result: CallToolResult;
    try {
      result = (await this.#client.callTool(
        { name: tool, arguments: (args ?? {}) as Record<string, unknown> },
        {
          timeout: server.timeoutMs,
          // The SDK asks for progress (and resets its timeout on it) only with a callback.
          onprogress: (p) => hooks.onProgress?.({ progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}), ...(p.message !== undefined ? { message: p.message } : {}) }),
          resetTimeoutOnProgress: true,
          signal: hooks.signal,
        },
      )) as CallToolResult;
    } catch (err) {
      if (hooks.signal?.aborted) throw new AbortError(hooks.signal.reason);
      throw callError(server, tool, err, this.#process);
    }
    if (result.isError) {
      const text = textOf(result) || JSON.stringify(result.content ?? []);
      throw new AgentAppsError('E_MCP_TOOL', `${server.name}/${tool}: ${cut(text, MAX_ERROR_TEXT)}`);
    }
    return resultValue(result);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await closeQuietly(this.#client, this.#process);
  }
}

interface ProcessInfo {
  pid: number | undefined;
  stderr: string;
  lines: number;
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
}

/**
 * The SDK's stdio transport with every process it spawns tracked (so that none outlives this
 * process) and its stderr read. Being a subclass also makes the SDK probe the era in place, on
 * this one process — a legacy server answers `server/discover` with an error and the handshake
 * follows on the same pipe — instead of on a second, throw-away server process (which costs a
 * whole server start: ~1 s for the reference servers). A server that exits on the probe is
 * started again with the legacy handshake (`open`).
 */
class TrackedStdioTransport extends StdioClientTransport {
  readonly #info: ProcessInfo;
  readonly #hooks: ConnectionHooks;
  readonly #server: string;

  constructor(server: Extract<ServerConfig, { transport: 'stdio' }>, info: ProcessInfo, hooks: ConnectionHooks) {
    super({ command: server.command, args: server.args, env: server.env, cwd: server.cwd, stderr: 'pipe' });
    this.#info = info;
    this.#hooks = hooks;
    this.#server = server.name;
    let partial = '';
    this.stderr?.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      info.stderr = (info.stderr + text).slice(-STDERR_TAIL);
      partial += text;
      const lines = partial.split('\n');
      partial = lines.pop()!.slice(-STDERR_TAIL);
      for (const line of lines) {
        if (!line.trim() || info.lines >= STDERR_LOG_LINES) continue;
        if (++info.lines === STDERR_LOG_LINES) hooks.log({ type: 'stderr', tag: 'mcp', level: 'debug', server: server.name, text: `MCP server '${server.name}': stderr goes on; not logged from here` });
        else hooks.log({ type: 'stderr', tag: 'mcp', level: 'debug', server: server.name, text: cut(line, 1000) });
      }
    });
  }

  override start(): Promise<void> {
    const started = super.start();
    // spawn() ran synchronously inside start(): the child exists now.
    const child = (this as unknown as { _process?: ChildProcess })._process;
    const pid = child?.pid;
    if (child && pid !== undefined) {
      const info = this.#info;
      trackPid(pid);
      info.pid = pid;
      child.once('exit', (code, signal) => {
        untrackPid(pid);
        info.exit = { code, signal };
        this.#hooks.log({ type: 'server-exit', tag: 'mcp', level: 'debug', server: this.#server, code, signal, text: `MCP server '${this.#server}' exited (${signal ?? `code ${code}`})` });
      });
    }
    return started;
  }
}

async function closeQuietly(client: Client, info: ProcessInfo | undefined): Promise<void> {
  // The server and what it started (an `npx` wrapper's real server): seen now, while the tree holds.
  const tree = info?.pid !== undefined && info.exit === undefined ? processTree(info.pid) : [];
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([client.close().catch(() => {}), new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_GRACE_MS)))]);
  clearTimeout(timer);
  // stdin closed and (if it did not exit) SIGTERM sent: whatever is still there now is killed.
  const left = tree.filter((pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  });
  killAll(left, 'SIGKILL');
  for (const pid of tree) untrackPid(pid);
}

// ── results ───────────────────────────────────────────────────────────────────────────────

function textOf(result: CallToolResult): string {
  const texts = (result.content ?? []).filter((c): c is { type: 'text'; text: string } => c?.type === 'text' && typeof (c as { text?: unknown }).text === 'string').map((c) => c.text);
  return texts.join('\n');
}

/** SPEC §16: structuredContent when present, else the text content joined, else the content array. */
export function resultValue(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined && result.structuredContent !== null) return clean(result.structuredContent);
  const content = result.content ?? [];
  if (content.some((c) => c?.type === 'text')) return textOf(result);
  return clean(content);
}

/**
 * MCP tool output is untrusted (SPEC §15): a `__proto__` key that JSON can carry is dropped, so
 * that no later copy of the result (Object.assign, a merge) can set a prototype.
 */
function clean(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value), (key, v) => (key === '__proto__' ? undefined : v));
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text;
}

// ── errors ────────────────────────────────────────────────────────────────────────────────

function stderrTail(info: ProcessInfo | undefined): string {
  const tail = info?.stderr.trim();
  if (!tail) return '';
  const lines = tail.split('\n').slice(-5).join(' | ');
  return ` Its stderr ended with: ${cut(lines, 600)}.`;
}

function exitText(info: ProcessInfo | undefined): string {
  const exit = info?.exit;
  if (!exit) return '';
  return exit.signal ? ` (its process was killed by ${exit.signal})` : ` (its process exited with code ${exit.code})`;
}

/** The system error under an SDK or fetch error (ECONNREFUSED, ENOTFOUND …), if any. */
function systemCode(err: unknown): string | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 6; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code)) return e.code;
  }
  return undefined;
}

function connectError(server: ServerConfig, err: unknown, info: ProcessInfo | undefined, timeout: number): AgentAppsError {
  const e = err as { code?: unknown; message?: string; cause?: { code?: unknown; message?: string } };
  const where = whereConfigured(server);
  let why: string;
  let check: string;
  if (server.transport === 'stdio' && (e.code === 'ENOENT' || e.code === 'EACCES')) {
    why = e.code === 'ENOENT' ? `its command '${server.command}' was not found` : `its command '${server.command}' is not executable`;
    check = `check ${where}: is '${server.command}' installed and on PATH${server.cwd ? ` (cwd ${server.cwd})` : ''}?`;
  } else if (e.code === 'REQUEST_TIMEOUT') {
    why = `it did not answer within ${timeout} ms`;
    check = server.transport === 'stdio' ? `check that ${[server.command, ...server.args].join(' ')} starts an MCP server on stdio (run it by hand), or raise ${server.source.key}.timeoutMs` : `check that ${server.url} is an MCP endpoint and answers, or raise ${server.source.key}.timeoutMs`;
  } else if (e.code === 'CONNECTION_CLOSED' || e.code === 'SEND_FAILED' || e.code === 'NOT_CONNECTED') {
    why = `it closed the connection while starting${exitText(info)}`;
    check = server.transport === 'stdio' ? `check its command and args in ${where} (run '${[server.command, ...server.args].join(' ')}' by hand)` : `check ${server.url}`;
  } else {
    const root = systemCode(err);
    why = `${e.message ?? String(err)}${root ? ` (${root})` : ''}`;
    check = server.transport === 'http' ? `check that ${server.url} is reachable and its headers (${where})` : `check ${where}`;
  }
  return new AgentAppsError('E_MCP', `MCP server ${describeServer(server)} could not ${server.transport === 'stdio' ? 'start' : 'connect'}: ${why.replace(/\.$/, '')}.${stderrTail(info)} — ${check}`, { cause: err });
}

function callError(server: ServerConfig, tool: string, err: unknown, info: ProcessInfo | undefined): AgentAppsError {
  const e = err as { code?: unknown; message?: string };
  const what = `tools/call '${tool}'`;
  if (e.code === 'REQUEST_TIMEOUT') {
    return new AgentAppsError('E_MCP', `MCP server '${server.name}' did not answer ${what} within ${server.timeoutMs} ms (no progress meanwhile) — check the server, or raise ${server.source.key}.timeoutMs`, { cause: err });
  }
  if (e.code === 'CONNECTION_CLOSED' || e.code === 'NOT_CONNECTED' || e.code === 'SEND_FAILED') {
    return new AgentAppsError('E_MCP', `MCP server '${server.name}' went away during ${what}${exitText(info)}.${stderrTail(info)} — check the server (${whereConfigured(server)}); it is started again on next use`, { cause: err });
  }
  if (typeof e.code === 'number') {
    // A JSON-RPC error: the server's answer to this call (unknown tool, invalid params …).
    return new AgentAppsError('E_MCP_TOOL', `${server.name}/${tool}: ${cut(e.message ?? String(err), MAX_ERROR_TEXT)}`, { cause: err });
  }
  return new AgentAppsError('E_MCP', `MCP server '${server.name}' failed ${what}: ${e.message ?? String(err)} — check the server (${whereConfigured(server)})`, { cause: err });
}
