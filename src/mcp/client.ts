// One connection to one MCP server, on the official v2 SDK (`@modelcontextprotocol/client`).
// This is the only module that imports the SDK, and it is imported (dynamically, by hub.ts) only
// when a server is actually used: a plain `run` never loads it.
//
// - Era: the client negotiates (`server/discover` probe, falling back to the 2025-11-25
//   handshake, in place on the server's own pipes); `protocol: '2026-07-28'` pins the stateless
//   era, `'2025-11-25'` skips the probe. A stdio server that exits on the probe is started again
//   with the handshake.
// - stdio servers are spawned by client-stdio.ts (tracked, stderr read), HTTP ones reached with
//   the SDK's Streamable HTTP transport.
// - Calls: the idle timeout is reset by progress (the SDK resets it only when `onprogress` is
//   passed), an aborted context cancels the request, and results are mapped by SPEC §16.
import { Client, ReadBuffer, StreamableHTTPClientTransport, serializeMessage, type CallToolResult, type Tool, type Transport } from '@modelcontextprotocol/client';
import fs from 'node:fs';
import { AbortError, AgentAppsError } from '../core/errors.ts';
import type { LogInput } from '../core/types.ts';
import { VERSION } from '../cli/version.ts';
import { describeServer, whereConfigured, type ServerConfig } from './config.ts';
import { SpawnedTransport, spawnServer, type ProcessInfo, type SpawnedServer } from './client-stdio.ts';

/** A server's error text in an E_MCP_TOOL message is cut here. */
const MAX_ERROR_TEXT = 8192;
/** Tools per server beyond this are ignored (with a warning). */
const MAX_TOOLS = 1000;
/** `close()` gives up waiting for the SDK's close after this long (the transport kills the server). */
const CLOSE_GRACE_MS = 2000;
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
  #transport: Transport;
  #closed = false;

  private constructor(server: ServerConfig, client: Client, transport: Transport, tools: Tool[], protocol: string, startMs: number, info: ProcessInfo | undefined) {
    this.#transport = transport;
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

  /**
   * Connects (and lists the tools). `spawned`: a stdio server already started by the caller,
   * while the SDK loaded.
   */
  static async open(server: ServerConfig, hooks: ConnectionHooks, spawned?: SpawnedServer): Promise<Connection> {
    const mode = server.protocol === '2026-07-28' ? { pin: '2026-07-28' } : server.protocol === '2025-11-25' ? ('legacy' as const) : ('auto' as const);
    try {
      return await Connection.#open(server, hooks, mode, spawned);
    } catch (err) {
      // A stdio server that exits on a request before `initialize` (some SDKs' servers do) is a
      // legacy server: start it again with the plain 2025-11-25 handshake.
      const code = (err as { cause?: { code?: unknown } }).cause?.code;
      if (mode !== 'auto' || server.transport !== 'stdio' || code === 'ENOENT' || code === 'EACCES' || code === 'REQUEST_TIMEOUT') throw err;
      hooks.log({ type: 'retry', tag: 'mcp', level: 'debug', server: server.name, text: `MCP server '${server.name}' closed on the protocol probe: starting it again with the 2025-11-25 handshake` });
      return Connection.#open(server, hooks, 'legacy');
    }
  }

  static async #open(server: ServerConfig, hooks: ConnectionHooks, mode: 'auto' | 'legacy' | { pin: string }, spawned?: SpawnedServer): Promise<Connection> {
    const t0 = performance.now();
    const startTimeout = Math.max(server.timeoutMs, START_TIMEOUT_MS);
    const client = new Client({ name: 'agent-apps', version: VERSION }, { versionNegotiation: { mode, probe: { timeoutMs: 5000 } } });
    let info: ProcessInfo | undefined;
    let transport: Transport;
    if (server.transport === 'stdio') {
      const proc = spawned ?? spawnServer(server, hooks.log);
      info = proc.info;
      transport = new SpawnedTransport(proc, { buffer: new ReadBuffer(), serialize: serializeMessage });
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
      return new Connection(server, client, transport, tools, protocol, startMs, info);
    } catch (err) {
      await closeQuietly(client, transport);
      throw connectError(server, info?.error ?? err, info, startTimeout);
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
    await closeQuietly(this.#client, this.#transport);
  }
}

async function closeQuietly(client: Client, transport: Transport | undefined): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([client.close().catch(() => {}), new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_GRACE_MS)))]);
  clearTimeout(timer);
  // The SDK closes its transport; a connect that failed early may not have: close ours for sure.
  await transport?.close().catch(() => {});
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
  if (server.transport === 'stdio' && e.code === 'ENOENT' && !fs.existsSync(server.cwd)) {
    why = `its working directory ${server.cwd} does not exist`;
    check = `check ${where} (cwd)`;
  } else if (server.transport === 'stdio' && (e.code === 'ENOENT' || e.code === 'EACCES')) {
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
