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
//   session/load, session/resume → the session again, from its run file (history.ts): load
//                                 replays it as session/updates first, resume does not
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
import { findWorkspace } from '../../loader/search-paths.ts';
import { jsonlReporter, recordsRuns } from '../shared/reporters.ts';
import { UpdateMapper, type ProgressEvent } from './updates.ts';
import { PROMPT_EVENT, TURN_EVENT, joinChunks, readHistory, runStart } from './history.ts';

export interface AcpServeOptions {
  /** The skill a prompt runs (default `main`). */
  skill?: string;
}

interface Session {
  id: string;
  cwd: string;
  runtime: Runtime;
  /** The updates of the prompt under way, for its record (history.ts). */
  turn?: acp.SessionUpdate[];
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

  /**
   * A session's runtime, for the workspace at `cwd`: the skill resolved (an error now, not at the
   * first prompt), the session recorded in its run file, its agent events as session/updates.
   */
  async function open(id: string, cwd: string, how: 'new' | 'load' | 'resume'): Promise<Session> {
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
    // The session's run file: <workspace>/.agent-apps/runs/<session id>.jsonl, appended to when the
    // session is loaded or resumed (touched first, so that the reporter's pruning keeps it).
    if (recordsRuns(config.workspace)) {
      try {
        const file = path.join(config.workspace, '.agent-apps', 'runs', `${id}.jsonl`);
        if (fs.existsSync(file)) fs.utimesSync(file, new Date(), new Date());
        runtime.root.manager.configure({ reporter: jsonlReporter(config.workspace, id), global: true });
      } catch (err) {
        note(`${paint.yellow('warn')}: cannot record session ${id} under ${config.workspace}/.agent-apps (${(err as Error).message}): session/load will not find it`);
      }
    }
    runtime.root.manager.log(runStart(id, skill, cwd, how));
    const session: Session = { id, cwd, runtime, updates: Promise.resolve() };
    sessions.set(id, session);
    // The run's agent events, as session/updates of this session, in order.
    const mapper = new UpdateMapper();
    const sink: ProgressSink = (e) => {
      for (const update of mapper.map(e as ProgressEvent)) send(session, update);
    };
    sink.deltas = true;
    runtime.root.globals.internals.progress = sink;
    note(`session ${id}: ${skill} in ${config.workspace}${how === 'new' ? '' : ` (${how === 'load' ? 'loaded' : 'resumed'})`}`);
    return session;
  }

  /**
   * session/load and session/resume: the session from its run file in the workspace at `cwd` (or
   * still open in this process); load replays its history first. An id with no record here is
   * -32002 (session not found), and the connection goes on.
   */
  async function reopen(id: string, cwd: string, how: 'load' | 'resume'): Promise<void> {
    checkCwd(cwd, `session/${how}`);
    const live = sessions.get(id);
    if (live && live.cwd !== cwd) throw acp.RequestError.invalidParams({ cwd }, `session/${how}: session ${id} works in ${live.cwd}, not ${cwd}`);
    const history = readHistory(findWorkspace(cwd), id);
    if (!live) {
      if (!history) throw new acp.RequestError(-32002, `Resource not found: no session ${id.length > 40 ? id.slice(0, 40) + '…' : id} recorded in ${path.join(findWorkspace(cwd), '.agent-apps', 'runs')}`, { sessionId: id });
      if (history.cwd !== undefined && history.cwd !== cwd) throw acp.RequestError.invalidParams({ cwd }, `session/${how}: session ${id} worked in ${history.cwd}, not ${cwd}`);
      if (history.skill !== skill) throw acp.RequestError.invalidParams({ sessionId: id }, `session/${how}: session ${id} ran '${history.skill ?? '?'}'; this agent-apps acp runs '${skill}' (start it with --skill ${history.skill ?? 'NAME'})`);
      if (history.openIn !== undefined && history.openIn !== process.pid) throw acp.RequestError.invalidRequest({ sessionId: id }, `session/${how}: session ${id} is open in another agent-apps process (pid ${history.openIn})`);
    }
    const session = live ?? (await open(id, cwd, how));
    if (how === 'load' && history) {
      for (const update of history.updates) send(session, update, false);
      // session/load answers once the history is out (ACP: the replay comes before the answer).
      await session.updates;
    }
  }

  const app = acp
    .agent({ name: 'agent-apps' })
    .onRequest(acp.methods.agent.initialize, ({ params }) => {
      clientCapabilities = params.clientCapabilities;
      return {
        protocolVersion: acp.PROTOCOL_VERSION,
        agentCapabilities: {
          // Sessions are recorded as run files: session/load replays one, session/resume goes on (history.ts).
          loadSession: true,
          sessionCapabilities: { resume: {} },
          promptCapabilities: { image: false, audio: false, embeddedContext: false },
          // MCP servers a client offers are not taken: a workspace's own are its `mcp` config (docs/mcp.md).
          mcpCapabilities: { http: false, sse: false },
        },
        agentInfo: { name: 'agent-apps', title: 'agent-apps', version: VERSION },
        authMethods: [],
      };
    })
    .onRequest(acp.methods.agent.session.new, async ({ params }) => {
      checkCwd(params.cwd, 'session/new');
      const session = await open(randomUUID(), params.cwd, 'new');
      return { sessionId: session.id };
    })
    .onRequest(acp.methods.agent.session.load, async ({ params }) => {
      await reopen(params.sessionId, params.cwd, 'load');
      return {};
    })
    .onRequest(acp.methods.agent.session.resume, async ({ params }) => {
      await reopen(params.sessionId, params.cwd, 'resume');
      return {};
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
      session.turn = [];
      const root = session.runtime.root;
      root.manager.log({ type: PROMPT_EVENT, tag: 'acp', level: 'info', text: `prompt: ${message.length > 80 ? message.slice(0, 79) + '…' : message}`, session: session.id, prompt: message, record: true });
      // The turn's record: what it sent (joined), and how it ended.
      const recordTurn = (ended: { stopReason: acp.StopReason } | { error: acp.RequestError }) => {
        const updates = joinChunks(session.turn ?? []);
        session.turn = undefined;
        const how = 'stopReason' in ended ? { text: ended.stopReason, stopReason: ended.stopReason } : { text: ended.error.message, error: { message: ended.error.message, ...(ended.error.data as object) } };
        root.manager.log({ type: TURN_EVENT, tag: 'acp', level: 'info', session: session.id, ...how, updates, record: true });
      };
      // A run awaiting something with no timer behind it must not let Node exit mid-run.
      const keepAlive = setInterval(() => {}, 1 << 30);
      // An ACP client is an untrusted caller (docs/security.md): the policy checks the request, with
      // the one skill this server runs as the client's allow-list; trust: ask asks the client. The
      // run's questions go to this client (withRunAsker: docs/agents.md, "Asking a person").
      const nonlocals = withRunAsker({}, askerFor(session.id));
      const invocation = invokeUntrusted(root, { name: 'an ACP client', allow: skill }, skill, { message }, { signal: running.signal, context: { nonlocals } });
      session.answered = invocation.catch(() => {});
      try {
        const value = await invocation;
        const text = formatResult(value, false);
        if (text) send(session, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } });
        await session.updates;
        recordTurn({ stopReason: 'end_turn' });
        return { stopReason: 'end_turn' as const };
      } catch (err) {
        await session.updates;
        if (running.signal.aborted && (err instanceof AbortError || (err as { code?: unknown }).code === 'E_ABORTED')) {
          recordTurn({ stopReason: 'cancelled' });
          return { stopReason: 'cancelled' as const };
        }
        const error = skillError(err);
        recordTurn({ error });
        throw error;
      } finally {
        clearInterval(keepAlive);
        session.running = undefined;
      }
    })
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      sessions.get(params.sessionId)?.running?.abort(new AbortError('the ACP client cancelled the prompt (session/cancel)'));
    });

  /** Sends a session/update after those before it; `record`: it is part of the prompt under way's record (not a replay). */
  function send(session: Session, update: acp.SessionUpdate, record = true): void {
    if (record) session.turn?.push(update);
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
    // Each session's run file ends with how this process ended (agent-apps runs: ok, interrupted);
    // no durationMs, so that `runs` counts from the session's first start, not this process's.
    const exitCode = stopping === 'SIGINT' ? EXIT.interrupted : stopping === 'SIGTERM' ? EXIT.terminated : EXIT.ok;
    for (const s of all) {
      s.runtime.root.manager.log({ type: 'run-end', tag: 'cli', level: exitCode === EXIT.ok ? 'info' : 'warn', text: `acp session ${s.id}: ${stopping === 'SIGINT' || stopping === 'SIGTERM' ? stopping : 'the client closed the connection'}`, skill, session: s.id, exitCode, record: true });
    }
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

/** A session's cwd: an absolute path to a folder, else invalid params. */
function checkCwd(cwd: string, method: string): void {
  if (!path.isAbsolute(cwd) || !isDirectory(cwd)) throw acp.RequestError.invalidParams({ cwd }, `${method}: cwd must be an absolute path to a folder (got '${cwd}')`);
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}
