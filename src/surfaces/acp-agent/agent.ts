// `agent-apps acp` (docs/agents.md): agent-apps as an Agent Client Protocol agent over stdio, so ACP
// clients — Zed, JetBrains, Kiro — run a workspace's skills. stdout carries the protocol only;
// logs go to stderr.
//
//   session/new { cwd }         → a runtime for the workspace at cwd (one per session)
//   session/prompt { prompt }   → runs `main` (or --skill NAME) with the prompt's text as `message`;
//                                 agent text and tool calls stream as session/update (updates.ts);
//                                 the result is a last agent_message_chunk (text, or JSON), then
//                                 stopReason end_turn — or a JSON-RPC error with the skill's code
//   approval gates              → session/request_permission (src/acp/asker.ts)
//   ask()                       → elicitation/create (a form) when the client declares it, else as
//                                 an approval (choices) or E_NOT_INTERACTIVE (free text)
//   session/cancel              → the run is aborted; stopReason cancelled
// Loaded only by this command (src/surfaces/cli/acp.ts), with the ACP SDK.
import { invokeUntrusted } from '../../policy/untrusted.ts';
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { AbortError, ToolNotFoundError } from '../../core/errors.ts';
import { createRuntime, type Runtime } from '../../runtime.ts';
import type { LogLevel, Reporter } from '../../core/types.ts';
import { EXIT, exitCodeFor, formatResult, painter } from '../shared/output.ts';
import { consoleReporter } from '../shared/reporters.ts';
import { runtimeOptions, type GlobalOptions } from '../shared/runtime-options.ts';
import type { CliIO } from '../shared/io.ts';
import { VERSION } from '../../core/version.ts';
import type { ProgressSink } from '../../agent/trace.ts';
import { AcpAsker } from '../../acp/asker.ts';
import { withRunAsker } from '../../kernel/asking.ts';
import { UpdateMapper, type ProgressEvent } from './updates.ts';

export interface AcpServeOptions {
  /** The skill a prompt runs (default `main`). */
  skill?: string;
}

interface Session {
  id: string;
  runtime: Runtime;
  /** The prompt under way: aborting it cancels the run. */
  running?: AbortController;
  /** Settles when the prompt under way has answered. */
  answered?: Promise<unknown>;
  /** session/update notifications go out in order; a prompt's answer waits for them. */
  updates: Promise<unknown>;
}

const RANK: Record<LogLevel, number> = { trace: 0, debug: 1, info: 2, warn: 3, error: 4 };
/** In-flight runs get this long to unwind when the client goes. */
const DRAIN_MS = 3000;

export async function serveAcp(opts: AcpServeOptions, g: GlobalOptions, io: CliIO): Promise<number> {
  const skill = opts.skill ?? 'main';
  const rtOpts = runtimeOptions(g);
  const paint = await painter(io.stderr, g.color !== false);
  const level = rtOpts.logLevel;
  const stderrLog = consoleReporter(io.stderr, paint, { verbose: level !== undefined });
  const shown: Reporter = level === undefined ? stderrLog : { name: stderrLog.name, report: (e) => (RANK[e.level] >= RANK[level] ? stderrLog.report(e) : undefined) };
  const note = (text: string) => io.stderr.write(`${paint.dim('agent-apps acp:')} ${text}\n`);

  // stdout is the protocol channel: whatever else writes to it (a skill's console.log) goes to
  // stderr; the connection writes with stdout's own `write`.
  const stdout = io.stdout;
  const original = stdout.write;
  const write = original.bind(stdout) as (chunk: Uint8Array, cb: (err?: Error | null) => void) => boolean;
  stdout.write = ((chunk: unknown, encoding?: unknown, cb?: unknown) => (io.stderr.write as (...a: unknown[]) => boolean)(chunk, encoding, cb)) as typeof stdout.write;
  const output = new WritableStream<Uint8Array>({
    write: (chunk) => new Promise<void>((resolve, reject) => void write(chunk, (err) => (err ? reject(err) : resolve()))),
  });

  const sessions = new Map<string, Session>();
  let connection: acp.AgentConnection | undefined;
  /** What the client declared in `initialize` (form elicitation: asker.ts). */
  let clientCapabilities: acp.ClientCapabilities | undefined;
  const askerFor = (id: string) => new AcpAsker(() => connection!.client, id, () => clientCapabilities);

  const app = acp
    .agent({ name: 'agent-apps' })
    .onRequest(acp.methods.agent.initialize, ({ params }) => {
      clientCapabilities = params.clientCapabilities;
      return {
        protocolVersion: acp.PROTOCOL_VERSION,
        agentCapabilities: {
          loadSession: false,
          promptCapabilities: { image: false, audio: false, embeddedContext: false },
          // MCP servers a client offers are not taken: a workspace's own are its `mcp` config (docs/mcp.md).
          mcpCapabilities: { http: false, sse: false },
        },
        agentInfo: { name: 'agent-apps', title: 'agent-apps', version: VERSION },
        authMethods: [],
      };
    })
    .onRequest(acp.methods.agent.session.new, async ({ params }) => {
      const cwd = params.cwd;
      if (!path.isAbsolute(cwd) || !isDirectory(cwd)) throw acp.RequestError.invalidParams({ cwd }, `session/new: cwd must be an absolute path to a folder (got '${cwd}')`);
      const id = randomUUID();
      const runtime = await createRuntime({ ...rtOpts, cwd, reporters: [shown], asker: askerFor(id) });
      if (level && RANK[level] < RANK.info) runtime.root.manager.configure({ level, global: true });
      const config = runtime.root.locals.config;
      try {
        await runtime.root.globals.internals.kernel.resolve(skill, config.paths, config.cwd);
      } catch (err) {
        await runtime.close();
        if (err instanceof ToolNotFoundError) {
          const why = skill === 'main' ? `the workspace ${config.workspace} has no main skill — create skills/main.md, or start agent-apps acp --skill NAME` : err.message;
          throw new acp.RequestError(-32602, `E_TOOL_NOT_FOUND: ${why}`, { code: 'E_TOOL_NOT_FOUND', exitCode: EXIT.usage });
        }
        throw skillError(err);
      }
      const session: Session = { id, runtime, updates: Promise.resolve() };
      sessions.set(id, session);
      // The run's agent events, as session/updates of this session, in order.
      const mapper = new UpdateMapper();
      const sink: ProgressSink = (e) => {
        for (const update of mapper.map(e as ProgressEvent)) send(session, update);
      };
      sink.deltas = true;
      runtime.root.globals.internals.progress = sink;
      note(`session ${id}: ${skill} in ${config.workspace}`);
      return { sessionId: id };
    })
    .onRequest(acp.methods.agent.session.prompt, async ({ params }) => {
      const session = sessions.get(params.sessionId);
      if (!session) throw acp.RequestError.sessionNotFound(params.sessionId);
      if (session.running) throw acp.RequestError.invalidRequest(undefined, 'a prompt is already running in this session: cancel it (session/cancel) or wait for its answer');
      const message = params.prompt
        .map((b) => (b.type === 'text' ? b.text : b.type === 'resource_link' ? b.uri : ''))
        .filter(Boolean)
        .join('\n');
      const running = new AbortController();
      session.running = running;
      // A run awaiting something with no timer behind it must not let Node exit mid-run.
      const keepAlive = setInterval(() => {}, 1 << 30);
      // An ACP client is an untrusted caller (docs/security.md): the policy checks the request, with
      // the one skill this server runs as the client's allow-list; trust: ask asks the client. The
      // run's questions go to this client (withRunAsker: docs/agents.md, "Asking a person").
      const nonlocals = withRunAsker({}, askerFor(session.id));
      const invocation = invokeUntrusted(session.runtime.root, { name: 'an ACP client', allow: skill }, skill, { message }, { signal: running.signal, context: { nonlocals } });
      session.answered = invocation.catch(() => {});
      try {
        const value = await invocation;
        const text = formatResult(value, false);
        if (text) send(session, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } });
        await session.updates;
        return { stopReason: 'end_turn' as const };
      } catch (err) {
        await session.updates;
        if (running.signal.aborted && (err instanceof AbortError || (err as { code?: unknown }).code === 'E_ABORTED')) return { stopReason: 'cancelled' as const };
        throw skillError(err);
      } finally {
        clearInterval(keepAlive);
        session.running = undefined;
      }
    })
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      sessions.get(params.sessionId)?.running?.abort(new AbortError('the ACP client cancelled the prompt (session/cancel)'));
    });

  function send(session: Session, update: acp.SessionUpdate): void {
    session.updates = session.updates.then(() => connection?.client.notify(acp.methods.client.session.update, { sessionId: session.id, update })).catch(() => {});
  }

  let stopping: 'SIGINT' | 'SIGTERM' | 'closed' | undefined;
  const stop = (why: 'SIGINT' | 'SIGTERM' | 'closed') => {
    if (stopping === 'SIGINT' && why === 'SIGINT') process.exit(EXIT.interrupted);
    stopping ??= why;
    connection?.close();
  };
  const onInt = () => stop('SIGINT');
  const onTerm = () => stop('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  try {
    connection = app.connect(acp.ndJsonStream(output, Readable.toWeb(io.stdin) as ReadableStream<Uint8Array>));
    note(`serving ${skill === 'main' ? 'the workspace’s main skill' : `'${skill}'`} over stdio (ACP protocol ${acp.PROTOCOL_VERSION})`);
    await connection.closed;
  } finally {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
    // The client went (or a signal came): runs under way are aborted and get a moment to unwind.
    const all = [...sessions.values()];
    for (const s of all) s.running?.abort(new AbortError('the ACP connection closed'));
    await Promise.race([Promise.allSettled(all.flatMap((s) => [s.updates, s.answered])), new Promise((resolve) => setTimeout(resolve, DRAIN_MS).unref())]);
    await Promise.allSettled(all.map((s) => s.runtime.close()));
    stdout.write = original;
  }
  if (stopping === 'SIGINT') return EXIT.interrupted;
  if (stopping === 'SIGTERM') return EXIT.terminated;
  return EXIT.ok;
}

/**
 * A failed skill as a JSON-RPC error: the message says its code (`E_VALIDATION: …`), `data`
 * carries the code and the CLI's exit code for it. A usage or configuration error (exit 2) is
 * -32602 (invalid params: the prompt could not be run as given); any other failure -32603.
 */
function skillError(err: unknown): acp.RequestError {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : 'E_SKILL';
  const exitCode = exitCodeFor(err);
  return new acp.RequestError(exitCode === EXIT.usage ? -32602 : -32603, `${code}: ${String(e?.message ?? err)}`, { code, exitCode });
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}
