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
//   passed), an aborted context cancels the request, and results are mapped as docs/mcp.md says.
// - Bounds (docs/mcp.md, maxBytes and maxCallMs): a response larger than the server's maxBytes
//   fails the call and its stream is cancelled — over HTTP through the fetch handed to the SDK's
//   transport (a JSON body in total, an SSE stream event by event), over stdio per line
//   (client-stdio.ts); and a call lasts at most maxCallMs, however much progress it reports.
// - Elicitation (docs/mcp.md, "When a server asks"): the client declares form elicitation; a
//   server's `elicitation/create` (2025-11-25), or an input_required round the SDK's driver
//   fulfils through the same handler (2026-07-28), is asked through the asker of the run whose
//   call is in flight (elicitation.ts), and declined when there is nobody to ask.
import { Client, ReadBuffer, StreamableHTTPClientTransport, serializeMessage, type CallToolResult, type FetchLike, type Tool, type Transport } from '@modelcontextprotocol/client';
import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import { AbortError, AgentAppsError } from '../core/errors.ts';
import type { LogInput } from '../core/types.ts';
import { VERSION } from '../core/version.ts';
import { describeServer, whereConfigured, type HttpServer, type ServerConfig } from './config.ts';
import { SpawnedTransport, spawnServer, type ProcessInfo, type SpawnedServer } from './client-stdio.ts';
import type { Asker } from '../core/ask.ts';
import { askForm, type FormRequest } from './elicitation.ts';
import type { Skill, SkillsClient } from '@modelcontextprotocol/client/ext/skills';

export type { Skill as McpSkillEntry } from '@modelcontextprotocol/client/ext/skills';

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

/** Why a call (or the connect) was aborted: a response over maxBytes. */
class TooLarge extends Error {
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(`a response exceeded maxBytes (${maxBytes} bytes)`);
    this.maxBytes = maxBytes;
  }
}

/** Why a call was aborted: maxCallMs passed. */
class CallExpired extends Error {
  readonly ms: number;
  constructor(ms: number) {
    super(`the call did not finish within ${ms} ms`);
    this.ms = ms;
  }
}

/**
 * The call (or connect) a fetch of the HTTP transport serves, found through the async context
 * the SDK's send runs in: a response over maxBytes aborts that one call, not its neighbours.
 * `link`: the call's own requests are aborted with it, so a server that ignores the
 * cancellation cannot keep its stream open. `settled`: what it guarded is over (the connect's
 * context lives on in the long-lived GET stream).
 */
interface Guard {
  ctl: AbortController;
  link: boolean;
  settled: boolean;
}
const guards = new AsyncLocalStorage<Guard>();

/** What a stdio transport's overflow aborts: everything in flight (a line names no request until it is parsed). */
interface Flight {
  inflight: Set<AbortController>;
  broken: boolean;
}

export interface CallHooks {
  signal?: AbortSignal;
  onProgress?(p: { progress: number; total?: number; message?: string }): void;
  /** Who answers the server's questions during this call: the run's asker; none when headless. */
  asker?: Asker;
  /** The tool's name as the run knows it (its bare name), for the questions. */
  name?: string;
  /** The request's `_meta` (a `traceparent`: docs/ci.md, "Tracing"). */
  meta?: Record<string, unknown>;
}

/**
 * The calls in flight on one connection, with their runs' askers. A server's elicitation names
 * no call (on stdio it cannot), so it goes to the asker they share; with none, or with calls
 * from runs that ask different people, it is declined — a question never reaches the wrong person.
 */
class CallAskers {
  readonly #calls = new Map<AbortController, { asker: Asker | undefined; name: string }>();
  readonly #server: string;
  readonly #log: (event: LogInput) => void;

  constructor(server: string, log: (event: LogInput) => void) {
    this.#server = server;
    this.#log = log;
  }

  add(ctl: AbortController, asker: Asker | undefined, name: string): void {
    this.#calls.set(ctl, { asker, name });
  }

  delete(ctl: AbortController): void {
    this.#calls.delete(ctl);
  }

  async answer(params: { mode?: unknown; message?: unknown; requestedSchema?: unknown }, signal: AbortSignal): Promise<{ action: 'accept'; content: Record<string, string | number | boolean | string[]> } | { action: 'decline' } | { action: 'cancel' }> {
    const calls = [...this.#calls.entries()];
    const askers = new Set(calls.map(([, c]) => c.asker));
    const [only] = askers;
    const why =
      params.mode === 'url' ? 'a URL-mode request (agent-apps answers forms only)'
      : !calls.length ? 'no call of a run is in flight'
      : askers.size > 1 ? 'calls from runs that ask different people are in flight, and the request names none of them'
      : !only ? 'nobody to ask (not a terminal; no asker)'
      : undefined;
    if (why || !only) {
      this.#log({ type: 'elicitation', tag: 'mcp', level: 'warn', server: this.#server, action: 'decline', text: `MCP server '${this.#server}' asked for input: declined — ${why}` });
      return { action: 'decline' };
    }
    const one = calls.length === 1 ? calls[0] : undefined;
    const sig = one ? AbortSignal.any([signal, one[0].signal]) : signal;
    const result = await askForm(only, one?.[1].name ?? this.#server, params as FormRequest, sig);
    this.#log({ type: 'elicitation', tag: 'mcp', level: 'info', server: this.#server, action: result.action, text: `MCP server '${this.#server}' asked for input: ${result.action === 'accept' ? 'answered' : `${result.action}d`}` });
    return result;
  }
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
  #flight: Flight;
  #askers: CallAskers;
  #closed = false;

  private constructor(server: ServerConfig, client: Client, transport: Transport, tools: Tool[], protocol: string, startMs: number, info: ProcessInfo | undefined, flight: Flight, askers: CallAskers) {
    this.#transport = transport;
    this.#flight = flight;
    this.#askers = askers;
    this.server = server;
    this.#client = client;
    this.tools = tools;
    this.protocol = protocol;
    this.startMs = startMs;
    this.#process = info;
  }

  /** False once the server went away (crashed, exited, closed): the next use starts it again. */
  get alive(): boolean {
    return !this.#closed && !this.#flight.broken && (this.#process === undefined || this.#process.exit === undefined);
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
      const cause = (err as { cause?: { code?: unknown } }).cause;
      const code = cause?.code;
      if (cause instanceof TooLarge || mode !== 'auto' || server.transport !== 'stdio' || code === 'ENOENT' || code === 'EACCES' || code === 'REQUEST_TIMEOUT') throw err;
      hooks.log({ type: 'retry', tag: 'mcp', level: 'debug', server: server.name, text: `MCP server '${server.name}' closed on the protocol probe: starting it again with the 2025-11-25 handshake` });
      return Connection.#open(server, hooks, 'legacy');
    }
  }

  static async #open(server: ServerConfig, hooks: ConnectionHooks, mode: 'auto' | 'legacy' | { pin: string }, spawned?: SpawnedServer): Promise<Connection> {
    const t0 = performance.now();
    const startTimeout = Math.max(server.timeoutMs, START_TIMEOUT_MS);
    // Form elicitation is declared on every connection (docs/decisions.md): one connection serves
    // runs with and without someone to ask, and a 2025-11-25 session fixes its capabilities.
    const client = new Client({ name: 'agent-apps', version: VERSION }, { versionNegotiation: { mode, probe: { timeoutMs: 5000 } }, capabilities: { elicitation: { form: {} } } });
    const askers = new CallAskers(server.name, hooks.log);
    client.setRequestHandler('elicitation/create', (request, ctx) => askers.answer(request.params, ctx.mcpReq.signal));
    let info: ProcessInfo | undefined;
    let transport: Transport;
    const opening = new AbortController();
    const flight: Flight = { inflight: new Set([opening]), broken: false };
    if (server.transport === 'stdio') {
      const proc = spawned ?? spawnServer(server, hooks.log);
      info = proc.info;
      // The SDK's buffer caps a whole chunk (many lines at once): the transport bounds each line instead.
      const spawnedTransport = new SpawnedTransport(proc, { buffer: new ReadBuffer({ maxBufferSize: Number.POSITIVE_INFINITY }), serialize: serializeMessage, maxBytes: server.maxBytes });
      spawnedTransport.ontoolarge = (max) => {
        flight.broken = true;
        hooks.log({ type: 'warn', tag: 'mcp', level: 'warn', server: server.name, text: `MCP server '${server.name}' wrote a message over maxBytes (${max} bytes): the calls in flight fail and the server is stopped` });
        for (const ctl of flight.inflight) ctl.abort(new TooLarge(max));
      };
      transport = spawnedTransport;
    } else {
      transport = new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers }, fetch: boundedFetch(server, hooks.log) });
    }
    const guard: Guard = { ctl: opening, link: false, settled: false };
    try {
      await guards.run(guard, () => client.connect(transport, { timeout: startTimeout, signal: opening.signal }));
      const tools: Tool[] = [];
      const listed = await guards.run(guard, () => client.listTools(undefined, { timeout: startTimeout, signal: opening.signal }));
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
      flight.inflight.delete(opening);
      guard.settled = true;
      return new Connection(server, client, transport, tools, protocol, startMs, info, flight, askers);
    } catch (err) {
      await closeQuietly(client, transport);
      const reason: unknown = opening.signal.reason;
      if (reason instanceof TooLarge) throw tooLargeError(server, 'the connect', reason);
      throw connectError(server, info?.error ?? err, info, startTimeout);
    }
  }

  /** `tools/call`, mapped: structuredContent, else joined text, else the content array. */
  async call(tool: string, args: unknown, hooks: CallHooks = {}): Promise<unknown> {
    const server = this.server;
    if (hooks.signal?.aborted) throw new AbortError(hooks.signal.reason);
    if (this.#flight.broken) throw new AgentAppsError('E_MCP', `MCP server '${server.name}' is being stopped (it wrote a message over maxBytes) — it starts again on next use`);
    // One signal for the SDK: the caller's abort, maxCallMs, and a response over maxBytes.
    const ctl = new AbortController();
    const onAbort = () => ctl.abort(hooks.signal?.reason);
    hooks.signal?.addEventListener('abort', onAbort, { once: true });
    // The SDK's maxTotalTimeout is only looked at when progress arrives, and then fails the call
    // without cancelling it: the cap is this timer, which cancels through the signal.
    // (A timer longer than 2^31-1 ms would fire at once: no call waits that long anyway.)
    const timer = setTimeout(() => ctl.abort(new CallExpired(server.maxCallMs)), Math.min(server.maxCallMs, 2 ** 31 - 1));
    this.#flight.inflight.add(ctl);
    this.#askers.add(ctl, hooks.asker, hooks.name ?? tool);
    // The SDK's retry of a 2026-07-28 input_required round does not carry the call's signal: an
    // abort ends the call here whatever the SDK still waits for.
    const aborted = new Promise<never>((_, reject) => ctl.signal.addEventListener('abort', () => reject(ctl.signal.reason), { once: true }));
    aborted.catch(() => {});
    let result: CallToolResult;
    try {
      result = (await Promise.race([aborted, guards.run({ ctl, link: true, settled: false }, () =>
        this.#client.callTool(
          { name: tool, arguments: (args ?? {}) as Record<string, unknown>, ...(hooks.meta ? { _meta: hooks.meta } : {}) },
          {
            timeout: server.timeoutMs,
            // The SDK asks for progress (and resets its timeout on it) only with a callback.
            onprogress: (p) => hooks.onProgress?.({ progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}), ...(p.message !== undefined ? { message: p.message } : {}) }),
            resetTimeoutOnProgress: true,
            signal: ctl.signal,
          },
        ),
      )])) as CallToolResult;
    } catch (err) {
      const reason: unknown = ctl.signal.reason;
      if (reason instanceof TooLarge) throw tooLargeError(server, `tools/call '${tool}'`, reason);
      if (reason instanceof CallExpired) {
        throw new AgentAppsError('E_MCP', `MCP server '${server.name}' did not finish tools/call '${tool}' within ${reason.ms} ms (${server.source.key}.maxCallMs), progress notwithstanding: the call is cancelled — check the server, or raise ${server.source.key}.maxCallMs`, { cause: err });
      }
      if (hooks.signal?.aborted) throw new AbortError(hooks.signal.reason);
      throw callError(server, tool, err, this.#process);
    } finally {
      clearTimeout(timer);
      hooks.signal?.removeEventListener('abort', onAbort);
      this.#flight.inflight.delete(ctl);
      this.#askers.delete(ctl);
      // What is left of the call's HTTP requests (a stream the server keeps open) is closed.
      if (!ctl.signal.aborted) ctl.abort(new Error('the call is over'));
    }
    if (result.isError) {
      const text = textOf(result) || JSON.stringify(result.content ?? []);
      throw new AgentAppsError('E_MCP_TOOL', `${server.name}/${tool}: ${cut(text, MAX_ERROR_TEXT)}`);
    }
    return resultValue(result);
  }

  // ── the Skills extension, host side (docs/mcp.md, "Skills from MCP servers") ──────────────
  #skills: Promise<SkillsClient> | undefined;

  /** The SDK's SkillsClient on this connection: its module loads on first use. */
  #skillsClient(): Promise<SkillsClient> {
    this.#skills ??= import('@modelcontextprotocol/client/ext/skills').then(({ SkillsClient }) => new SkillsClient(this.#client, { skipInvalid: true }));
    return this.#skills;
  }

  /**
   * The server's `skills/list`, every page, checked by the SDK: entries it refuses come back in
   * `invalid` with the reason. A server without the extension lists none.
   */
  async listSkills(): Promise<{ skills: Skill[]; invalid: { uri?: string; reason: string }[]; ttlMs?: number }> {
    const skills = await this.#skillsClient();
    if (!skills.supported) return { skills: [], invalid: [] };
    try {
      const listing = await skills.list(undefined, { timeout: this.server.timeoutMs });
      return { skills: listing.skills, invalid: listing.invalid, ...(listing.ttlMs !== undefined ? { ttlMs: listing.ttlMs } : {}) };
    } catch (err) {
      throw new AgentAppsError('E_MCP', `MCP server '${this.server.name}': skills/list failed — ${cut((err as Error).message, MAX_ERROR_TEXT)}`, { cause: err });
    }
  }

  /**
   * One file of a listed skill (`ref` relative to its folder), as the SDK's reader returns it after
   * checking it against the entry: listed, its size and sha256 digest, and for SKILL.md its
   * frontmatter. A file that fails a check is E_MCP naming the file and the check.
   */
  async readSkillFile(skill: Skill, ref: string): Promise<Uint8Array> {
    const skills = await this.#skillsClient();
    try {
      const file = await skills.read(skill, ref, { timeout: this.server.timeoutMs });
      if (!file.verified) throw new Error(`${file.uri} could not be checked against a digest`);
      return file.bytes;
    } catch (err) {
      const reason = (err as { reason?: unknown }).reason;
      const what = typeof reason === 'string' ? `failed verification (its ${reason} does not match the skill's entry)` : 'could not be read';
      throw new AgentAppsError('E_MCP', `MCP server '${this.server.name}', skill ${JSON.stringify(skill.frontmatter.name)}: ${ref} ${what} — ${cut((err as Error).message, MAX_ERROR_TEXT)}; nothing of the skill is used`, { cause: err });
    }
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

// ── bounded responses over HTTP ───────────────────────────────────────────────────────────

/**
 * The fetch of the HTTP transport: every response body goes through a byte count, and one over
 * the server's maxBytes is cut — the body errors, which cancels the HTTP response (the socket is
 * closed) — and aborts the call whose request it answers.
 */
function boundedFetch(server: HttpServer, log: (event: LogInput) => void): FetchLike {
  return async (url, init) => {
    const guard = guards.getStore();
    // A call's own requests end with it; its notifications (the cancellation itself) do not.
    const linked = guard?.link && !guard.ctl.signal.aborted && carriesRequest(init?.body) ? guard.ctl.signal : undefined;
    const signal = linked && init?.signal ? AbortSignal.any([init.signal, linked]) : (linked ?? init?.signal ?? undefined);
    const response = await fetch(url, { ...init, ...(signal ? { signal } : {}) });
    // Bodies a Response cannot be built with (204, 304 …) carry nothing to bound.
    if (!response.body || response.status < 200 || [204, 205, 304].includes(response.status)) return response;
    const over = (): Error => {
      const err = new TooLarge(server.maxBytes);
      if (guard && !guard.settled && !guard.ctl.signal.aborted) guard.ctl.abort(err);
      else log({ type: 'warn', tag: 'mcp', level: 'warn', server: server.name, text: `MCP server '${server.name}' sent a response over maxBytes (${server.maxBytes} bytes): its stream is cut` });
      return err;
    };
    const sse = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase() === 'text/event-stream';
    const bounded = new Response(response.body.pipeThrough(sse ? eventBound(server.maxBytes, over) : totalBound(server.maxBytes, over)), { status: response.status, statusText: response.statusText, headers: response.headers });
    // The SDK reads these for redirects.
    Object.defineProperties(bounded, { url: { value: response.url }, redirected: { value: response.redirected }, type: { value: response.type } });
    return bounded;
  };
}

/** A JSON-RPC request (not only notifications) in a POST body: the SDK sends them as JSON text. */
function carriesRequest(body: unknown): boolean {
  if (body === undefined || body === null) return true; // a GET: the call's stream, resumed
  if (typeof body !== 'string') return false;
  try {
    const parsed: unknown = JSON.parse(body);
    const isRequest = (m: unknown) => typeof m === 'object' && m !== null && 'method' in m && 'id' in m;
    return Array.isArray(parsed) ? parsed.some(isRequest) : isRequest(parsed);
  } catch {
    return false;
  }
}

/** A whole body (JSON, an error page) of at most `max` bytes. */
function totalBound(max: number, over: () => Error): TransformStream<Uint8Array, Uint8Array> {
  let seen = 0;
  return new TransformStream({
    transform(chunk, out) {
      seen += chunk.byteLength;
      if (seen > max) throw over();
      out.enqueue(chunk);
    },
  });
}

/**
 * An SSE stream whose events are at most `max` bytes each (what the SDK's parser buffers until
 * the blank line that ends an event); the stream itself may go on, bounded by maxCallMs.
 */
function eventBound(max: number, over: () => Error): TransformStream<Uint8Array, Uint8Array> {
  let line = 0;
  let event = 0;
  let afterCR = false;
  return new TransformStream({
    transform(chunk, out) {
      for (let i = 0; i < chunk.length; i++) {
        const b = chunk[i]!;
        if (b === 0x0a || b === 0x0d) {
          // CR, LF and CRLF each end a line; an empty line ends the event.
          if (b === 0x0a && afterCR) {
            afterCR = false;
            continue;
          }
          afterCR = b === 0x0d;
          if (line === 0) event = 0;
          line = 0;
        } else {
          afterCR = false;
          line++;
          if (++event > max) throw over();
        }
      }
      out.enqueue(chunk);
    },
  });
}

// ── results ───────────────────────────────────────────────────────────────────────────────

function textOf(result: CallToolResult): string {
  const texts = (result.content ?? []).filter((c): c is { type: 'text'; text: string } => c?.type === 'text' && typeof (c as { text?: unknown }).text === 'string').map((c) => c.text);
  return texts.join('\n');
}

/** docs/mcp.md: structuredContent when present, else the text content joined, else the content array. */
export function resultValue(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined && result.structuredContent !== null) return clean(result.structuredContent);
  const content = result.content ?? [];
  if (content.some((c) => c?.type === 'text')) return textOf(result);
  return clean(content);
}

/**
 * MCP tool output is untrusted (docs/security.md): a `__proto__` key that JSON can carry is dropped, so
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

/** `cause` is the TooLarge itself: Connection.open does not retry after one. */
function tooLargeError(server: ServerConfig, what: string, cause: TooLarge): AgentAppsError {
  const after = server.transport === 'stdio' ? 'the server is stopped (it starts again on next use)' : 'its stream is cancelled';
  return new AgentAppsError('E_MCP', `MCP server '${server.name}': a response during ${what} exceeded maxBytes (${server.maxBytes} bytes, ${server.source.key}.maxBytes); ${after} — check the server, or raise ${server.source.key}.maxBytes`, { cause });
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
