// `agent-apps serve` (docs/serve.md): one process running a workspace's gateways, schedules and
// event routes until SIGTERM / SIGINT. The surface owns the shared HTTP listener (loopback by
// default, a bearer token required off loopback, as `mcp serve`: docs/mcp.md), the runtime and
// the drain: on a signal it stops taking work, lets what runs finish (up to --drain-ms), and exits
// 0 (SIGTERM: a supervisor's ordinary stop) or 130 (SIGINT). Gateways are configured under
// `gateways:` in the workspace's root `main`; each type's module loads only when configured
// (docs/architecture.md: heavy modules load only when used).
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentAppsError } from '../../core/errors.ts';
import { isPlainObject } from '../../core/path.ts';
import { interpolate, type InterpolationVars } from '../../kernel/interpolate.ts';
import { createRuntime, type Runtime } from '../../runtime.ts';
import { isLoopback, parseHttpTarget } from '../../mcp/http.ts';
import { eventBusReady } from '../../events/runtime.ts';
import { claimsFor, type Claims } from '../../events/claims.ts';
import type { JsonObject, LogLevel, Reporter } from '../../core/types.ts';
import { EXIT, painter } from '../shared/output.ts';
import { consoleReporter } from '../shared/reporters.ts';
import { runtimeOptions, type GlobalOptions } from '../shared/runtime-options.ts';
import type { CliIO } from '../shared/io.ts';
import type { Gateway, GatewayContext, GatewayFactory } from './gateway.ts';
import { logsReporter, makeDispatch } from './dispatch.ts';
import { readTokenFile } from '../shared/token-file.ts';
import { stopSignal } from '../shared/stop-signal.ts';
import { ApprovalBroker } from '../../policy/remote-approval.ts';
import { approvalRequests, parseApprovals } from './approvals.ts';
import { viewSession, webView, type WebView } from './web-view.ts';

export interface ServeOptions {
  /** `[HOST:]PORT` of the shared HTTP listener; default 127.0.0.1:8808. */
  http?: string;
  token?: string;
  tokenFile?: string;
  /** How long what runs may go on after a signal (default 10000). */
  drainMs?: string;
  /** Per-message time limit (default 600000): past it, E_TIMEOUT. */
  maxMs?: string;
}

const RANK: Record<LogLevel, number> = { trace: 0, debug: 1, info: 2, warn: 3, error: 4 };
const DEFAULT_HTTP = '127.0.0.1:8808';

/**
 * The gateway types, each loaded only when a `gateways:` entry names it. The specifier is built
 * at run time so that a type whose module is absent (not built in this checkout) is an E_CONFIG
 * naming it, never a failed start; `.ts` from source, `.js` from dist/.
 */
const EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
// A module's factory is its default export or `<type>Gateway` (webhook.ts: webhookGateway).
const load = (type: string) => async (): Promise<{ default: GatewayFactory }> => {
  const mod = (await import(new URL(`./${type}${EXT}`, import.meta.url).href)) as Record<string, unknown>;
  const factory = mod.default ?? mod[`${type}Gateway`];
  if (typeof factory !== 'function') throw new Error(`${type}${EXT} exports no gateway factory (default or ${type}Gateway)`);
  return { default: factory as GatewayFactory };
};
export const GATEWAYS: Record<string, () => Promise<{ default: GatewayFactory }>> = { web: load('web'), webhook: load('webhook'), websocket: load('websocket'), email: load('email'), slack: load('slack') };

function positive(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new AgentAppsError('E_USAGE', `${flag}: expected a whole number of milliseconds, got '${value}'`);
  return n;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** The bearer token compared by digest, so the comparison's time says nothing about the token. */
function authorized(req: http.IncomingMessage, token: Buffer): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(String(req.headers.authorization ?? ''));
  return !!m && timingSafeEqual(digest(m[1]!.trim()), token);
}

/** The `gateways:` of the workspace's root main, with the file it is in and what `${…}` takes there. */
async function gatewaysConfig(runtime: Runtime): Promise<{ file?: string; entries: [string, unknown][]; vars?: InterpolationVars; approvals?: unknown }> {
  const kernel = runtime.root.globals.internals.kernel;
  const workspace = runtime.root.locals.config.workspace;
  for (const dir of kernel.base.paths) {
    if (dir === kernel.registry.library) continue;
    const main = kernel.registry.root(dir).mains.get(dir);
    if (!main) continue;
    const tool = await kernel.registry.load(main);
    const g = tool.metadata.gateways;
    if (g === undefined) {
      if (dir === workspace || main.file?.startsWith(workspace)) return { file: main.file, entries: [], ...(tool.metadata.approvals !== undefined ? { approvals: tool.metadata.approvals } : {}) };
      continue;
    }
    if (!isPlainObject(g)) throw new AgentAppsError('E_CONFIG', `${main.file}: gateways: expected { NAME: { type, … } }`);
    // `${env.NAME}`, `${dir}` … as the cascade would interpolate them for this file (docs/concepts.md).
    const vars = { dir: main.file ? path.dirname(main.file) : dir, root: dir, workspace, cwd: runtime.root.locals.config.cwd, name: tool.name };
    return { file: main.file, entries: Object.entries(g), vars, ...(tool.metadata.approvals !== undefined ? { approvals: tool.metadata.approvals } : {}) };
  }
  return { entries: [] };
}

export async function serve(opts: ServeOptions, g: GlobalOptions, io: CliIO): Promise<number> {
  // Usage errors first, before anything starts.
  const target = parseHttpTarget(opts.http ?? DEFAULT_HTTP);
  const drainMs = positive(opts.drainMs, '--drain-ms', 10_000);
  const maxMs = positive(opts.maxMs, '--max-ms', 600_000);
  if (opts.token !== undefined && opts.tokenFile !== undefined) throw new AgentAppsError('E_USAGE', '--token <token> and --token-file <path>: give one of them');
  if (opts.token !== undefined && !opts.token) throw new AgentAppsError('E_USAGE', '--token: the token is empty');
  const token = opts.token ?? (opts.tokenFile !== undefined ? readTokenFile(opts.tokenFile) : undefined) ?? (process.env.AGENT_APPS_SERVE_TOKEN || undefined);
  const loopback = isLoopback(target.host);
  if (!loopback && !token) {
    throw new AgentAppsError('E_USAGE', `--http ${opts.http}: binding to ${target.host} (not loopback) needs a bearer token — pass --token-file <path>, set AGENT_APPS_SERVE_TOKEN, or pass --token <token>`);
  }
  // Any local user can read a process's command line (/proc/PID/cmdline, ps): docs/serve.md.
  if (opts.token !== undefined) io.stderr.write("agent-apps serve: warning: --token: other local users can read a process's command line (/proc/PID/cmdline, ps) — use --token-file <path> or AGENT_APPS_SERVE_TOKEN instead\n");
  const rtOpts = runtimeOptions(g);
  const paint = await painter(io.stderr, g.color !== false);
  const level = rtOpts.logLevel;
  const stderrLog = consoleReporter(io.stderr, paint, { verbose: level !== undefined });
  const shown: Reporter = { name: stderrLog.name, report: (e) => void (RANK[e.level] >= RANK[level ?? 'warn'] && stderrLog.report(e)) };
  const runtime = await createRuntime({ cwd: rtOpts.cwd, paths: rtOpts.paths, overrides: rtOpts.overrides, reporters: [logsReporter, shown] });
  if (level && RANK[level] < RANK.info) runtime.root.manager.configure({ level, global: true });
  const note = (text: string) => io.stderr.write(`${paint.dim('agent-apps serve:')} ${text}\n`);
  const logLine = (lvl: 'info' | 'warn' | 'error', text: string) => note(`${lvl === 'info' ? '' : `${lvl === 'error' ? paint.red(lvl) : paint.yellow(lvl)}: `}${text}`);

  // The drain: what runs is counted; a signal stops new work and waits for the count to reach 0.
  const stopAll = new AbortController();
  let running = 0;
  let idle: (() => void) | undefined;
  const track = <T>(run: Promise<T>): Promise<T> => {
    running++;
    return run.finally(() => {
      if (--running === 0) idle?.();
    });
  };

  const signal = stopSignal<'failed'>();
  const stop = signal.stop;

  const gateways: { name: string; type: string; gateway: Gateway }[] = [];
  const server = http.createServer({ keepAliveTimeout: 5000 });
  let closeSchedules: (() => Promise<void>) | undefined;
  let approvals: { broker: ApprovalBroker; via: string } | undefined;
  let view: WebView | undefined;
  try {
    // Gateways: a malformed entry is one E_CONFIG line with its file and key; the rest still serve.
    let config: Awaited<ReturnType<typeof gatewaysConfig>> = { entries: [] };
    try {
      config = await gatewaysConfig(runtime);
    } catch (err) {
      note(`${paint.red('error')}: ${(err as { code?: string }).code ?? 'E_CONFIG'}: ${(err as Error).message}`);
    }
    // Claims (a webhook's delivery ids): on NATS shared with the other serves of the namespace.
    // NATS not reached is the serve's failure (E_EVENTS naming the URL), not one gateway's.
    const claims: Claims | undefined = config.entries.length ? await claimsFor(runtime.root) : undefined;
    // Remote approvals: a run a gateway started asks its approvers through `approvals.via`.
    if (config.approvals !== undefined) {
      try {
        const a = parseApprovals(config.approvals, config.file);
        approvals = { broker: new ApprovalBroker({ approvers: a.approvers, timeoutMs: a.timeoutMs, log: (lvl, text) => logLine(lvl, `approvals: ${text}`) }), via: a.via };
      } catch (err) {
        note(`${paint.red('error')}: ${(err as { code?: string }).code ?? 'E_CONFIG'}: ${config.file ? `${config.file}: ` : ''}${(err as Error).message}`);
      }
    }
    for (const [name, given] of config.entries) {
      const place = { ...(config.file ? { file: config.file } : {}), key: `gateways.${name}` };
      const where = `${config.file ? `${config.file}: ` : ''}${place.key}`;
      try {
        const entry = isPlainObject(given) && config.vars ? interpolate(given, config.vars, place) : given;
        if (!isPlainObject(entry) || typeof entry.type !== 'string') throw new AgentAppsError('E_CONFIG', `${where}: expected { type: ${Object.keys(GATEWAYS).join(' | ')}, … }`);
        const type = entry.type;
        const loader = Object.hasOwn(GATEWAYS, type) ? GATEWAYS[type] : undefined;
        if (!loader) throw new AgentAppsError('E_CONFIG', `${where}.type: unknown gateway type '${type}' (known: ${Object.keys(GATEWAYS).join(', ')})`);
        let factory: GatewayFactory;
        try {
          factory = (await loader()).default;
        } catch (err) {
          throw new AgentAppsError('E_CONFIG', `${where}.type: the '${type}' gateway is not available in this build (${(err as Error).message.split('\n')[0]})`);
        }
        const ctx: GatewayContext = {
          runtime,
          name,
          type,
          config: entry as JsonObject,
          place,
          loopback,
          log: (lvl, text) => logLine(lvl, `${type} '${name}': ${text}`),
          dispatch: makeDispatch({ runtime, name, type, maxMs, signal: stopAll.signal, track, ...(approvals ? { approvals } : {}) }),
          track,
          ...(claims ? { claims } : {}),
          ...(approvals ? { approvals: approvals.broker, approvalsVia: approvals.via } : {}),
        };
        gateways.push({ name, type, gateway: await factory(ctx) });
      } catch (err) {
        const code = (err as { code?: string }).code ?? 'E_CONFIG';
        const message = (err as Error).message;
        note(`${paint.red('error')}: ${code}: ${message.includes(place.key) ? message : `${where}: ${message}`}`);
      }
    }

    const auth = token === undefined ? undefined : digest(token);
    // The web view (docs/serve.md, "The web view"): a browser signs in once with ?token=, a cookie after.
    const session = token === undefined ? undefined : viewSession(token);
    const web = (view = webView({
      workspace: runtime.root.locals.config.workspace,
      ...(approvals ? { approvals: approvals.broker } : {}),
      tokenOf: (via, id) => (gateways.find((x) => x.name === via)?.gateway as { approvalToken?: (id: string) => string | undefined } | undefined)?.approvalToken?.(id),
    }));
    server.on('request', (req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (signal.reason) {
        res.writeHead(503, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify({ code: 'E_ABORTED', message: 'the server is stopping' }));
        return;
      }
      // /healthz answers liveness probes without the token: it says nothing but "up".
      if (url.pathname === '/healthz' && (req.method === 'GET' || req.method === 'HEAD')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, gateways: gateways.map((x) => x.name), running }));
        return;
      }
      if (session?.signIn(req, res, url)) return;
      if (auth && !authorized(req, auth) && !session?.admits(req)) {
        res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer realm="agent-apps"' }).end(JSON.stringify({ code: 'E_DENIED', message: 'send Authorization: Bearer <token> (--token-file / AGENT_APPS_SERVE_TOKEN / --token); in a browser, open /?token=<token> once' }));
        return;
      }
      // The drain waits for the answer to be written, not only for the skill to return.
      void track(new Promise((resolve) => res.once('close', resolve)));
      void (async () => {
        if (approvalRequests(approvals?.broker, approvals?.via, req, res, url)) return;
        for (const { gateway } of gateways) if (gateway.http && (await gateway.http(req, res, url))) return;
        // After the gateways: a web route of its own on / wins (docs/decisions.md).
        if (web.http(req, res, url)) return;
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'E_NOT_FOUND', message: `no route for ${req.method} ${url.pathname}` }));
      })().catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'E_INTERNAL', message: (err as Error).message }));
        else res.end();
      });
    });
    server.on('upgrade', (req, socket, head) => {
      if (!signal.reason && (!auth || authorized(req, auth))) for (const { gateway } of gateways) if (gateway.upgrade?.(req, socket, head)) return;
      socket.end(`HTTP/1.1 ${auth && !authorized(req, auth) ? '401 Unauthorized' : '404 Not Found'}\r\nconnection: close\r\n\r\n`);
    });

    const shownHost = target.host.includes(':') ? `[${target.host}]` : target.host;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(target.port, target.host, () => {
        server.off('error', reject);
        resolve();
      });
    }).catch((err: NodeJS.ErrnoException) => {
      const why = err.code === 'EADDRINUSE' ? 'the port is in use' : err.code === 'EACCES' ? 'permission denied' : err.message;
      throw new AgentAppsError('E_USAGE', `--http ${shownHost}:${target.port}: cannot listen: ${why} (${err.code ?? 'error'})`);
    });
    server.on('error', (err) => {
      note(paint.red(`error: ${err.message}`));
      stop('failed');
    });
    const port = (server.address() as { port: number }).port;
    const url = `http://${shownHost}:${port}`;
    note(`listening on ${url} (GET /healthz)${auth ? ' (bearer token required)' : ''}`);
    for (const entry of [...gateways]) {
      const { name, type, gateway } = entry;
      // A listener of its own that cannot start (email's port in use) is that gateway's E_CONFIG
      // line; the others still serve.
      let lines: string[];
      try {
        lines = (await gateway.start?.()) ?? [];
      } catch (err) {
        const where = `${config.file ? `${config.file}: ` : ''}gateways.${name}`;
        const message = (err as Error).message;
        note(`${paint.red('error')}: ${(err as { code?: string }).code ?? 'E_CONFIG'}: ${message.includes(`gateways.${name}`) ? message : `${where}: ${message}`}`);
        gateways.splice(gateways.indexOf(entry), 1);
        await gateway.close().catch(() => {});
        continue;
      }
      // Only a gateway on the shared listener is "on" its URL; email has its own.
      if (gateway.http || gateway.upgrade) {
        const routes = (gateway as { describe?: () => string[] }).describe?.();
        note(`${type} gateway '${name}' on ${url}${routes?.length ? `: ${routes.join(', ')}` : ''}`);
      }
      for (const line of lines) note(`${type} gateway '${name}': ${line}`);
    }
    // After the starts: a gateway registers its approval channel once it runs (email once it listens).
    if (approvals && !approvals.broker.has(approvals.via)) {
      note(`${paint.red('error')}: E_CONFIG: ${config.file ? `${config.file}: ` : ''}approvals.via: '${approvals.via}' is not a running gateway that can carry approvals (an email, slack or web gateway): approval gates are refused`);
    }

    // Event routes of the root mains (docs/events.md), and the schedules if this build has them.
    const schedulesUrl = new URL(`./schedules${EXT}`, import.meta.url);
    await eventBusReady(runtime.root);
    try {
      const mod = (await import(schedulesUrl.href)) as { startSchedules?: (rt: Runtime, o: { log: typeof logLine }) => Promise<{ close(): Promise<void>; lines: string[] }> };
      if (mod.startSchedules) {
        const schedules = await mod.startSchedules(runtime, { log: logLine });
        closeSchedules = () => schedules.close();
        for (const line of schedules.lines) note(line);
      }
    } catch (err) {
      // Absent from this build: no schedules. Anything else is worth its line.
      const absent = (err as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' && (err as Error).message.includes(`'${fileURLToPath(schedulesUrl)}'`);
      if (!absent) note(`${paint.red('error')}: schedules: ${(err as Error).message}`);
    }

    await signal.stopped;
  } finally {
    signal.release();
    if (!signal.reason) stop('failed');
    // The drain (docs/serve.md, "Stopping"): new requests are answered 503 (above), what runs
    // finishes. The listener is closed only after: Node's server.close() also ends connections
    // it counts as idle, among them one whose request is still being answered.
    await Promise.all(gateways.map((x) => x.gateway.close().catch(() => {})));
    view?.close();
    approvals?.broker.close();
    await closeSchedules?.().catch(() => {});
    if (running > 0) {
      await new Promise<void>((resolve) => {
        // Not unref()ed: the skill may run in a sandbox whose timers do not hold this loop open.
        const timer = setTimeout(resolve, drainMs);
        idle = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    stopAll.abort(new AgentAppsError('E_ABORTED', 'the server stopped'));
    server.close();
    server.closeAllConnections();
    await runtime.close();
  }
  if (signal.reason === 'SIGINT') return EXIT.interrupted;
  if (signal.reason === 'SIGTERM') return EXIT.ok;
  return EXIT.failed;
}
