// `agent-apps mcp serve --http [HOST:]PORT` (docs/mcp.md): Streamable HTTP at `/mcp`.
//
// Both protocol eras on one endpoint, as the SDK's own conformance server does it: requests that
// claim the 2026-07-28 per-request envelope (and `server/discover`) go to `createMcpHandler`,
// which builds a fresh `Server` per request; 2025-era traffic gets a session per `initialize`
// (Mcp-Session-Id), so that `logging/setLevel`, `notifications/cancelled` and DELETE work as
// 2025 clients expect. A 2025-era request without a session is served statelessly.
//
// In front of both: the path, DNS-rebinding protection on a loopback bind (Host and Origin must
// name a loopback host), and the bearer token when one is configured.
//
// The session table is bounded and a session in use is never evicted: a full table answers a new
// `initialize` with 503, so that one client opening sessions in a loop cannot end another's
// (docs/mcp.md, "Streamable HTTP"); idle sessions are closed by the sweep.
import { randomUUID, timingSafeEqual, createHash } from 'node:crypto';
import http from 'node:http';
import { classifyInboundRequest, createMcpHandler, isInitializeRequest } from '@modelcontextprotocol/server';
import { NodeStreamableHTTPServerTransport, hostHeaderValidation, originValidation, toNodeHandler } from '@modelcontextprotocol/node';
import { AgentAppsError } from '../core/errors.ts';
import type { McpServer, Server } from '@modelcontextprotocol/server';

export interface HttpTarget {
  host: string;
  port: number;
}

export interface HttpOptions extends HttpTarget {
  /** Required as `Authorization: Bearer …` on every request when set. */
  token?: string;
  /** Out-of-band errors (a handler that failed outside any request's answer). */
  onError?: (error: Error) => void;
}

export interface HttpServing {
  /** `http://HOST:PORT/mcp`, with the port actually bound. */
  url: string;
  /** Settles when the listener fails after it started (never on a clean close). */
  failed: Promise<Error>;
  close(): Promise<void>;
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];
const MAX_BODY = 4 * 1024 * 1024;
const MAX_SESSIONS = 256;
const SESSION_IDLE_MS = 30 * 60_000;

/** `PORT`, `HOST:PORT`, `[V6]:PORT`; the host defaults to 127.0.0.1. */
export function parseHttpTarget(spec: string): HttpTarget {
  const m = /^(?:(\[[0-9a-fA-F:.]+\]|[^:[\]]+):)?(\d{1,5})$/.exec(spec.trim());
  const port = m ? Number(m[2]) : NaN;
  if (!m || !(port >= 0 && port <= 65535)) throw new AgentAppsError('E_USAGE', `--http: expected [HOST:]PORT (e.g. 8808 or 127.0.0.1:8808), got '${spec}'`);
  const host = m[1] ?? '127.0.0.1';
  return { host: host.startsWith('[') ? host.slice(1, -1) : host, port };
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * Serves `skills` (the workspace's skills, `mcp serve --http`) — or any server `skills` makes: the
 * ACP provider serves its one `invoke` tool this way (src/acp/invoke-server.ts).
 */
export async function serveHttp(make: () => Server | McpServer, opts: HttpOptions): Promise<HttpServing> {
  const onError = opts.onError ?? (() => {});
  const modern = createMcpHandler(() => make(), { onerror: onError });
  const modernNode = toNodeHandler(modern, { onerror: onError });
  const sessions = new Map<string, { transport: NodeStreamableHTTPServerTransport; usedAt: number }>();
  /** initialize requests between the check and their session's entry. */
  let opening = 0;
  const loopback = isLoopback(opts.host);
  const allowedHosts = [...new Set([...LOOPBACK_NAMES, opts.host.includes(':') ? `[${opts.host}]` : opts.host])];
  // A non-loopback bind is reached under names we cannot know: the token is what protects it.
  const checkHost = loopback ? hostHeaderValidation(allowedHosts) : () => true;
  const checkOrigin = loopback ? originValidation(allowedHosts) : () => true;
  const token = opts.token === undefined ? undefined : digest(opts.token);

  async function legacy(req: http.IncomingMessage, res: http.ServerResponse, body: unknown): Promise<void> {
    const id = header(req, 'mcp-session-id');
    if (id !== undefined) {
      const session = sessions.get(id);
      if (!session) return json(res, 404, rpcError(-32001, 'Session not found (it ended, or the server restarted): initialize again'));
      session.usedAt = Date.now();
      return session.transport.handleRequest(req, res, body);
    }
    if (req.method === 'POST' && isInitializeRequest(body)) {
      // Counted with those still opening, so that a burst of initialize calls cannot overshoot.
      if (sessions.size + opening >= MAX_SESSIONS) {
        const id = (body as { id?: unknown }).id;
        return json(res, 503, { ...rpcError(-32000, `Server at its session limit (${MAX_SESSIONS} sessions): try again later, or close idle sessions (DELETE with their Mcp-Session-Id)`), id: typeof id === 'string' || typeof id === 'number' ? id : null });
      }
      opening++;
      let counted = true;
      const settle = () => {
        if (counted) opening--;
        counted = false;
      };
      try {
        const transport: NodeStreamableHTTPServerTransport = new NodeStreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => {
            settle();
            sessions.set(sid, { transport, usedAt: Date.now() });
          },
        });
        transport.onclose = () => {
          if (transport.sessionId) sessions.delete(transport.sessionId);
        };
        await make().connect(transport);
        return await transport.handleRequest(req, res, body);
      } finally {
        settle();
      }
    }
    // A 2025-era request outside any session: answered statelessly by a fresh instance.
    return modernNode(req, res, body);
  }

  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [id, s] of sessions) {
      if (now - s.usedAt > SESSION_IDLE_MS) {
        sessions.delete(id);
        void s.transport.close().catch(() => {});
      }
    }
  }, 60_000);
  sweep.unref();

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      onError(err as Error);
      if (!res.headersSent) json(res, 500, rpcError(-32603, 'Internal server error'));
      else res.end();
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== '/mcp') return json(res, 404, rpcError(-32000, `Not found: the MCP endpoint is /mcp`));
    if (!checkHost(req, res) || !checkOrigin(req, res)) return;
    if (token && !authorized(req, token)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="agent-apps"');
      return json(res, 401, rpcError(-32001, 'Unauthorized: send Authorization: Bearer <token> (--token-file / AGENT_APPS_MCP_TOKEN / --token)'));
    }
    let body: unknown;
    if (req.method === 'POST') {
      const text = await readBody(req);
      if (text === undefined) return json(res, 413, rpcError(-32600, `Request body over ${MAX_BODY} bytes`));
      try {
        body = JSON.parse(text);
      } catch {
        return json(res, 400, rpcError(-32700, 'Parse error: the body is not JSON'));
      }
    }
    const inbound = classifyInboundRequest({
      httpMethod: req.method ?? 'GET',
      protocolVersionHeader: header(req, 'mcp-protocol-version'),
      mcpMethodHeader: header(req, 'mcp-method'),
      body,
    });
    if (inbound.kind !== 'legacy') return modernNode(req, res, body);
    return legacy(req, res, body);
  }

  const failed = new Promise<Error>((resolve) => server.on('error', resolve));
  await new Promise<void>((resolve, reject) => {
    const onListenError = (err: NodeJS.ErrnoException) => {
      reject(new AgentAppsError('E_MCP', `cannot listen on ${opts.host}:${opts.port}: ${err.code === 'EADDRINUSE' ? 'the port is in use' : err.message}`));
    };
    server.once('error', onListenError);
    server.listen(opts.port, opts.host, () => {
      server.off('error', onListenError);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  const hostInUrl = opts.host.includes(':') ? `[${opts.host}]` : opts.host;

  return {
    url: `http://${hostInUrl}:${port}/mcp`,
    failed,
    async close() {
      clearInterval(sweep);
      const closing = [...sessions.values()].map((s) => s.transport.close().catch(() => {}));
      sessions.clear();
      await Promise.all([...closing, modern.close().catch(() => {})]);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

function header(req: http.IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Compared as SHA-256 digests, in constant time whatever the lengths. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function authorized(req: http.IncomingMessage, expected: Buffer): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(header(req, 'authorization') ?? '');
  return !!m && timingSafeEqual(digest(m[1]!.trim()), expected);
}

function readBody(req: http.IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) over = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(over ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function rpcError(code: number, message: string) {
  return { jsonrpc: '2.0', error: { code, message }, id: null };
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}
