// The `web` gateway (docs/serve.md, "web"): routes `{ method, path: /orders/:id, skill }` on the
// serve process's shared HTTP listener. A request's args are its query, its JSON body and its
// path params (in that order, the path winning), validated by the skill's params; the skill sees
// the request as `nonlocals.request`. Error codes become HTTP statuses, so a client can tell a bad
// request (400) from a refusal (403), a timeout (504) and a failure (500).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AgentAppsError } from '../../core/errors.ts';
import { isPlainObject } from '../../core/path.ts';
import type { JsonObject, LogEvent } from '../../core/types.ts';
import type { Gateway, GatewayContext, RequestInfo } from './gateway.ts';
import { withLogs } from './dispatch.ts';
import { webApprovals } from './web-approvals.ts';

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);
const MAX_BODY = 4 * 1024 * 1024;

interface Route {
  method: string;
  path: string;
  skill: string;
  match: (path: string) => Record<string, string> | undefined;
}

/** `/orders/:id` → a matcher giving `{ id }`; segments compare exactly, `:name` takes one segment. */
function compile(pattern: string): Route['match'] {
  const parts = pattern.split('/').filter(Boolean);
  return (path) => {
    const segs = path.split('/').filter(Boolean);
    if (segs.length !== parts.length) return undefined;
    const params: Record<string, string> = {};
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      let seg: string;
      try {
        seg = decodeURIComponent(segs[i]!);
      } catch {
        return undefined;
      }
      if (p.startsWith(':')) params[p.slice(1)] = seg;
      else if (p !== seg) return undefined;
    }
    return params;
  };
}

/** The routes of a `web` entry; a malformed one is E_CONFIG naming its key (docs/serve.md). */
function routesOf(ctx: GatewayContext): Route[] {
  const where = `${ctx.place.file ? `${ctx.place.file}: ` : ''}${ctx.place.key}`;
  const bad = (key: string, why: string) => new AgentAppsError('E_CONFIG', `${where}.${key}: ${why}`);
  const list = ctx.config.routes;
  if (!Array.isArray(list) || list.length === 0) throw bad('routes', 'expected a list of { method, path, skill }');
  return list.map((r, i) => {
    if (!isPlainObject(r)) throw bad(`routes[${i}]`, 'expected { method, path, skill }');
    const method = typeof r.method === 'string' ? r.method.toUpperCase() : r.method === undefined ? 'GET' : undefined;
    if (!method || !METHODS.has(method)) throw bad(`routes[${i}].method`, `expected one of ${[...METHODS].join(', ')}`);
    if (typeof r.path !== 'string' || !r.path.startsWith('/')) throw bad(`routes[${i}].path`, "expected a path starting with '/' (e.g. /orders/:id)");
    if (typeof r.skill !== 'string' || !r.skill) throw bad(`routes[${i}].skill`, 'expected the name of a skill');
    return { method, path: r.path, skill: r.skill, match: compile(r.path) };
  });
}

/** The HTTP status of an error code (docs/serve.md, "Status codes"). */
export function statusOf(code: string | undefined): number {
  switch (code) {
    case 'E_VALIDATION':
      return 400;
    case 'E_TOOL_NOT_FOUND':
      return 404;
    case 'E_DENIED':
    case 'E_ALLOWED_TOOLS':
    case 'E_UNTRUSTED_REF':
      return 403;
    case 'E_TIMEOUT':
      return 504;
    default:
      return 500;
  }
}

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        resolve(undefined);
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, value: unknown): void {
  if (res.headersSent || res.writableEnded) {
    if (!res.writableEnded) res.end();
    return;
  }
  const json = value !== null && typeof value === 'object';
  const body = json ? JSON.stringify(value) : String(value ?? '');
  res.writeHead(status, { 'content-type': json ? 'application/json' : 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const errorBody = (err: unknown) => ({ code: (err as { code?: string })?.code ?? 'E_INTERNAL', message: (err as Error)?.message ?? String(err) });

export default function webGateway(ctx: GatewayContext): Gateway {
  const routes = routesOf(ctx);
  // Remote approvals through this gateway: a page per gate behind a single-use link (web-approvals.ts).
  const approvals = ctx.approvals ? webApprovals(ctx.approvals, ctx.name, (level, text) => ctx.log(level, text)) : undefined;
  if (approvals) ctx.approvals!.register(ctx.name, approvals.channel);
  let closed = false;

  async function answer(req: IncomingMessage, res: ServerResponse, url: URL, route: Route, params: Record<string, string>): Promise<void> {
    const query: Record<string, string | string[]> = {};
    // No query string, no URLSearchParams to make (url.searchParams is built on first read).
    if (url.search) for (const key of new Set(url.searchParams.keys())) {
      const all = url.searchParams.getAll(key);
      query[key] = all.length === 1 ? all[0]! : all;
    }
    let body: unknown;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const text = await readBody(req);
      if (text === undefined) return send(res, 413, { code: 'E_VALIDATION', message: `request body over ${MAX_BODY} bytes` });
      if (text.trim()) {
        const type = String(req.headers['content-type'] ?? '');
        if (/x-www-form-urlencoded/i.test(type)) body = Object.fromEntries(new URLSearchParams(text));
        else if (/json/i.test(type) || !type) {
          try {
            body = JSON.parse(text);
          } catch {
            return send(res, 400, { code: 'E_VALIDATION', message: 'the request body is not valid JSON' });
          }
        } else body = text;
      }
    }
    const args: JsonObject = { ...(query as JsonObject), ...(isPlainObject(body) ? (body as JsonObject) : {}), ...params };
    // The sender going away aborts its run (gateway.ts, InboundMessage.signal).
    const gone = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) gone.abort(new AgentAppsError('E_ABORTED', 'the client closed the connection'));
    });
    const request: RequestInfo = { method: req.method ?? 'GET', path: url.pathname, params, query, headers: req.headers, body: body ?? null, ip: req.socket.remoteAddress ?? '', res };
    const sse = /text\/event-stream/i.test(String(req.headers.accept ?? ''));
    const event = (name: string, data: unknown) => {
      if (!res.writableEnded) res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    if (sse) res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    let replied = false;
    const reply = (value: unknown) => {
      if (replied) return;
      replied = true;
      if (sse) event('reply', value);
      else send(res, 200, value);
    };
    const data: JsonObject = { method: request.method, path: request.path, route: route.path, params, query: query as JsonObject, body: (body ?? null) as JsonObject, ip: request.ip };
    const run = () => ctx.dispatch({ skill: route.skill, args, data, reply, request, signal: gone.signal });
    try {
      const result = sse ? await withLogs((e: LogEvent) => event('log', { level: e.level, tool: e.tool, type: e.type, text: e.text ?? '', ...(e.code ? { code: e.code } : {}) }), run) : await run();
      if (sse) {
        event('result', result === undefined ? null : result);
        res.end();
      } else if (!replied) send(res, 200, result === undefined ? '' : result);
    } catch (err) {
      const e = errorBody(err);
      if (sse) {
        event('error', e);
        res.end();
      } else if (!replied) send(res, statusOf(e.code), e);
      if (statusOf(e.code) === 500) ctx.log('warn', `${route.method} ${route.path} → ${route.skill}: ${e.code}: ${e.message}`);
    }
  }

  return {
    http(req, res, url) {
      if (closed) return false;
      if (approvals?.http(req, res, url)) return true;
      const method = (req.method ?? 'GET').toUpperCase();
      let pathMatched = false;
      for (const route of routes) {
        const params = route.match(url.pathname);
        if (!params) continue;
        pathMatched = true;
        if (route.method !== method && !(method === 'HEAD' && route.method === 'GET')) continue;
        void answer(req, res, url, route, params).catch((err: unknown) => send(res, 500, errorBody(err)));
        return true;
      }
      if (pathMatched) {
        res.setHeader('allow', routes.filter((r) => r.match(url.pathname)).map((r) => r.method).join(', '));
        send(res, 405, { code: 'E_VALIDATION', message: `${method} is not allowed on ${url.pathname}` });
        return true;
      }
      return false;
    },
    async close() {
      closed = true;
    },
    describe: () => routes.map((r) => `${r.method} ${r.path} → ${r.skill}`),
    // The web view's Allow / Deny for a gate this gateway sent (web-view.ts).
    approvalToken: (id: string) => approvals?.tokenOf(id),
  } as Gateway & { describe(): string[]; approvalToken(id: string): string | undefined };
}
