// `agent-apps mcp serve` (docs/mcp.md): one runtime for the workspace, its skills served to MCP
// clients over stdio (the default) or Streamable HTTP, until stdin closes or a signal comes.
// Loaded only by this command, so no other command pays for the MCP SDK (heavy modules
// load only when used: docs/architecture.md).
import { AgentAppsError } from '../../core/errors.ts';
import { createRuntime } from '../../runtime.ts';
import { parseAllowedTools } from '../../kernel/allowed-tools.ts';
import type { LogLevel, Reporter } from '../../core/types.ts';
import { EXIT, painter } from '../shared/output.ts';
import { consoleReporter } from '../shared/reporters.ts';
import { runtimeOptions, type GlobalOptions } from '../shared/runtime-options.ts';
import { stopSignal } from '../shared/stop-signal.ts';
import type { CliIO } from '../shared/io.ts';
import { SkillCatalog } from './catalog.ts';
import { SkillHost, createServer, serverFactory } from './server.ts';
import { installAgentProgress, progressReporter } from './progress.ts';
import { readTokenFile } from '../shared/token-file.ts';

export interface ServeOptions {
  /** `[HOST:]PORT`: Streamable HTTP instead of stdio. */
  http?: string;
  /** Bearer token for HTTP; defaults to AGENT_APPS_MCP_TOKEN. */
  token?: string;
  /** A file holding the bearer token (kept off the command line, which other local users can read). */
  tokenFile?: string;
  /** Allowed-tools patterns: only matching skills are served. */
  allow?: string;
}

const RANK: Record<LogLevel, number> = { trace: 0, debug: 1, info: 2, warn: 3, error: 4 };

/** In-flight calls get this long to run their `finally` blocks after a shutdown aborts them. */
const DRAIN_MS = 3000;

export async function serve(opts: ServeOptions, g: GlobalOptions, io: CliIO): Promise<number> {
  // Usage errors first, before anything starts.
  const { parseHttpTarget, isLoopback } = opts.http !== undefined ? await import('../../mcp/http.ts') : { parseHttpTarget: undefined, isLoopback: undefined };
  const target = parseHttpTarget?.(opts.http!);
  if (opts.token !== undefined && opts.tokenFile !== undefined) throw new AgentAppsError('E_USAGE', '--token <token> and --token-file <path>: give one of them');
  if (!target && (opts.token !== undefined || opts.tokenFile !== undefined)) throw new AgentAppsError('E_USAGE', `${opts.token !== undefined ? '--token' : '--token-file'}: only for --http; a stdio server is reached only by the process that started it`);
  if (opts.token !== undefined && !opts.token) throw new AgentAppsError('E_USAGE', '--token: the token is empty');
  const token = opts.token ?? (opts.tokenFile !== undefined ? readTokenFile(opts.tokenFile) : undefined) ?? (process.env.AGENT_APPS_MCP_TOKEN || undefined);
  if (target && !isLoopback!(target.host) && !token) {
    throw new AgentAppsError('E_USAGE', `--http ${opts.http}: binding to ${target.host} (not loopback) needs a bearer token — pass --token-file <path>, set AGENT_APPS_MCP_TOKEN, or pass --token <token>`);
  }
  // Any local user can read a process's command line (/proc/PID/cmdline, ps): docs/mcp.md.
  if (opts.token !== undefined) io.stderr.write("agent-apps mcp: warning: --token: other local users can read a process's command line (/proc/PID/cmdline, ps) — use --token-file <path> or AGENT_APPS_MCP_TOKEN instead\n");
  if (opts.allow !== undefined) {
    if (!opts.allow.trim()) throw new AgentAppsError('E_USAGE', '--allow: no patterns given (e.g. --allow "greet file-*")');
    parseAllowedTools(opts.allow); // a malformed pattern is E_CONFIG now, not at the first request
  }
  const rtOpts = runtimeOptions(g);

  const paint = await painter(io.stderr, g.color !== false);
  // --log-level is what stderr shows; progress needs info and up whatever it says, so the
  // logger itself never filters above info.
  const level = rtOpts.logLevel;
  const verbose = level !== undefined && RANK[level] <= RANK.info;
  const stderrLog = consoleReporter(io.stderr, paint, { verbose: level !== undefined });
  const shown: Reporter =
    level === undefined
      ? stderrLog
      : {
          name: stderrLog.name,
          report(e) {
            if (RANK[e.level] >= RANK[level]) stderrLog.report(e);
          },
        };
  const reporters: Reporter[] = [progressReporter, shown];
  const runtime = await createRuntime({ cwd: rtOpts.cwd, paths: rtOpts.paths, overrides: rtOpts.overrides, reporters });
  if (level && RANK[level] < RANK.info) runtime.root.manager.configure({ level, global: true });
  installAgentProgress(runtime);

  // stdio: stdout is the protocol channel. Anything else that writes to it — a skill's
  // console.log — goes to stderr instead; the transport gets a view of stdout whose `write` is
  // still the real one (events, listeners and the rest are stdout's own).
  let protocolOut: NodeJS.WriteStream | undefined;
  let restoreStdout = () => {};
  if (!target) {
    const stdout = io.stdout;
    const original = stdout.write;
    const write = original.bind(stdout);
    protocolOut = new Proxy(stdout, {
      get(stream, key) {
        if (key === 'write') return write;
        const value = Reflect.get(stream, key, stream) as unknown;
        return typeof value === 'function' ? value.bind(stream) : value;
      },
    });
    stdout.write = ((chunk: unknown, encoding?: unknown, cb?: unknown) => (io.stderr.write as (...a: unknown[]) => boolean)(chunk, encoding, cb)) as typeof stdout.write;
    restoreStdout = () => {
      stdout.write = original;
    };
  }

  const note = (text: string) => io.stderr.write(`${paint.dim('agent-apps mcp:')} ${text}\n`);
  // What the SDK reports out of band is almost always a client's malformed or refused request,
  // already answered with its error: worth a line only when asked for (--log-level info or lower).
  const onError = (e: Error) => {
    if (verbose) note(`${paint.yellow('warn')}: ${e.message}`);
  };

  const signal = stopSignal<'closed'>();
  const stop = signal.stop;

  let close: () => Promise<void> = async () => {};
  const host = new SkillHost(runtime, new SkillCatalog(runtime, opts.allow));
  try {
    const catalog = host.catalog;
    // The Skills extension over the workspace's SKILL.md folders (docs/mcp.md, "Skills over MCP").
    const { skillsExtension } = await import('./skills.ts');
    host.skills = await skillsExtension(catalog, (text) => note(paint.yellow(`warning: ${text}`)));
    const count = (await catalog.skills()).length;
    const workspace = runtime.root.locals.config.workspace;
    if (target) {
      const { serveHttp } = await import('../../mcp/http.ts');
      const serving = await serveHttp(() => createServer(host), { ...target, token, onError });
      close = serving.close;
      void serving.failed.then((e) => {
        note(paint.red(`error: ${e.message}`));
        stop('closed');
      });
      note(`serving ${count} skill${count === 1 ? '' : 's'} of ${workspace} at ${serving.url}${token ? ' (bearer token required)' : ''}`);
    } else {
      const { serveStdio, StdioServerTransport } = await import('@modelcontextprotocol/server/stdio');
      const transport = new StdioServerTransport(io.stdin, protocolOut);
      const handle = serveStdio(serverFactory(host), { transport, onerror: onError });
      // The client closing stdin ends the connection, and with it the server.
      const onEnd = () => stop('closed');
      io.stdin.once('end', onEnd);
      io.stdin.once('close', onEnd);
      if (io.stdin.readableEnded || io.stdin.destroyed) onEnd();
      close = async () => {
        io.stdin.off('end', onEnd);
        io.stdin.off('close', onEnd);
        await handle.close();
      };
      note(`serving ${count} skill${count === 1 ? '' : 's'} of ${workspace} over stdio`);
    }
    await signal.stopped;
  } finally {
    signal.release();
    // Closing the serving entry aborts in-flight requests (their invocations see the abort);
    // they get a moment to unwind before the runtime goes, which aborts whatever is left.
    await close().catch(() => {});
    await host.drain(DRAIN_MS);
    await runtime.close();
    restoreStdout();
  }
  if (signal.reason === 'SIGINT') return EXIT.interrupted;
  if (signal.reason === 'SIGTERM') return EXIT.terminated;
  return EXIT.ok;
}
