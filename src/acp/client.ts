// The ACP client behind the `agent-acp` / `agent-kiro` providers (docs/agents.md): it drives any Agent
// Client Protocol agent — Kiro CLI, Gemini CLI, Goose, Claude or Codex through their adapters —
// as an agent-apps provider, on the official SDK (@agentclientprotocol/sdk, loaded only here).
//
//   start the agent process → initialize (protocol 1) → session/new whose mcpServers is our
//   in-process MCP server with one `invoke` tool (invoke-server.ts: over HTTP when the agent
//   declares mcpCapabilities.http, else over stdio through the relay it starts) → session/prompt,
//   once per turn
//
// Lifecycle events go to the hook as docs/agents.md names them: `turn-start` before each prompt,
// `message` for the text (streamed chunks as deltas when a view wants them, the whole text of each
// stretch between tool calls), `tool-call` / `tool-result` for each tool call — our `invoke`'s
// reported by our MCP server as its code runs, the agent's own from its `tool_call` updates —
// `plan` for plan updates, and `turn-end` with the turn's text when the prompt returns. A
// `{ continue, message }` answer is the next prompt; `{ stop }` ends the run, cancelling the
// prompt under way. Permission requests: our tool is allowed (the code in it is checked by the
// pipeline), the agent's own tools go to a person (`ask`) or are refused, unless allowAgentTools.
// The agent process ends with the run, whatever way the run ends.
import type * as Acp from '@agentclientprotocol/sdk';
import { AbortError, AgentAppsError, ConfigurationError } from '../core/errors.ts';
import type { HookDirective, HookEvent } from '../agent/provider.ts';
import { VERSION } from '../core/version.ts';
import { startAgentProcess, type AgentProcess } from './process.ts';
import { startInvokeServer, type InvokeOutcome, type InvokeServer } from './invoke-server.ts';
import { RELAY_COMMAND } from './relay-child.ts';
import { answerForm, formQuestions } from './elicit.ts';
import { isOurTool, isReportedByUs, toolLabel } from './tools.ts';
import { PromptTurn, type CassetteEntry } from './turn.ts';

/** `model.acp`, checked (skills/extensions/agent/acp/config.ts). */
export interface AcpConfig {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** The agent's own tools (edits, terminal …) run without asking. Default false. */
  allowAgentTools: boolean;
  /** How long starting the agent may take: initialize and session/new (default 60 s). */
  startTimeoutMs: number;
  /** Said when the command is not found: how to install it. */
  install?: string;
}

/** A question for the person running agent-apps; rejects with E_NOT_INTERACTIVE when there is none. */
export type AskPerson = (question: string, choices: { value: string; label: string; key: string }[], signal: AbortSignal) => Promise<string>;

export type LogSink = (level: 'debug' | 'info' | 'warn' | 'error', text: string, fields?: Record<string, unknown>) => void;

export interface AcpRunOptions {
  acp: AcpConfig;
  /** The system prompt (the skill's prompt and the tool documentation): the first prompt's first block. */
  prompt: string;
  userMessage: string;
  /** Where the agent works: session/new's cwd and the process's. */
  cwd: string;
  /** Prompts (turns) before E_AGENT_LIMIT; the agent skill counts them too. Default: no limit here. */
  maxTurns?: number;
  signal: AbortSignal;
  /** Also report streamed text as `{ type: 'message', delta: true }`. */
  deltas?: boolean;
  /** Runs the `invoke` tool's code (the agent skill's invokeRef). */
  onCode(code: string): Promise<unknown>;
  /** Lifecycle events; the answer is a directive. */
  onHook?(event: HookEvent | { type: string; [key: string]: unknown }): Promise<HookDirective | unknown>;
  onLog: LogSink;
  /** Asks about the agent's own tools; absent = nobody to ask. */
  ask?: AskPerson;
  /** After each turn (and when a run stops mid-turn): the cassette entries of the run so far. */
  onRecord?(entries: CassetteEntry[]): void;
  /**
   * Called once the agent process runs, with what ends the run from outside (the runtime closing:
   * the CLI on SIGINT); returns what to call when the run ended by itself.
   */
  onShutdown?(end: () => Promise<void>): () => void;
}

export interface AcpRunResult {
  /** The text of the last turn. */
  text: string;
  /** Set when a hook answered `{ stop: true, result }`. */
  stopped?: { result: unknown };
  /** Prompts sent. */
  turns: number;
}

type Answer = { stop?: boolean; result?: unknown; continue?: boolean; message?: unknown; deny?: unknown };

const NEEDS_PERSON = "the ACP agent's own tool needs a person's approval: run in a terminal, or set model.acp.allowAgentTools: true";

/** How long a cancelled prompt may take to come back before the process is ended regardless. */
const CANCEL_GRACE_MS = 3000;

export async function runAcpAgent(opts: AcpRunOptions): Promise<AcpRunResult> {
  const { signal, acp: config } = opts;
  if (signal.aborted) throw new AbortError(signal.reason);
  const acp = await import('@agentclientprotocol/sdk');
  const label = [config.command, ...config.args].join(' ');
  const agentProcess = await startAgentProcess(
    { command: config.command, args: config.args, env: config.env, cwd: opts.cwd, key: 'model.acp.command', ...(config.install ? { install: config.install } : {}) },
    (line) => opts.onLog('debug', line, { stream: 'stderr' }),
  );
  const run = new AcpRun(opts, acp, agentProcess, label);
  const done = run.run().finally(() => run.close());
  // The runtime closing mid-run (the CLI on SIGINT): the prompt is cancelled and the process ended
  // before agent-apps exits, not killed with it.
  const unregister = opts.onShutdown?.(async () => {
    run.end('agent-apps is shutting down');
    await done.catch(() => {});
  });
  try {
    return await done;
  } finally {
    unregister?.();
  }
}

class AcpRun {
  readonly #o: AcpRunOptions;
  readonly #acp: typeof Acp;
  readonly #proc: AgentProcess;
  readonly #label: string;
  #server: InvokeServer | undefined;
  #connection: Acp.ClientConnection | undefined;
  #sessionId: string | undefined;
  /** The prompt under way. */
  #turn: PromptTurn | undefined;
  /** Cassette entries of the turns that ended. */
  readonly #recorded: CassetteEntry[] = [];
  /** Hook calls run one after another, in the order their events happened. */
  #queue: Promise<unknown> = Promise.resolve();
  #stop: { result: unknown } | undefined;
  /** A hook that threw: the run ends with that error as it is. */
  #fatal: { error: unknown } | undefined;
  /** Aborted when the prompt under way must end: a stop, a fatal hook error, the agentSignal. */
  #interrupt = new AbortController();
  #lastText = '';
  #invokes = 0;
  /** Tool calls by id: ours (reported by the MCP server) or the agent's own, and whether their result was reported. */
  readonly #calls = new Map<string, { ours: boolean; tool: string; args: unknown; done: boolean }>();
  /** "allow for this run" answers, by tool. */
  readonly #allowedForRun = new Set<string>();

  constructor(o: AcpRunOptions, acp: typeof Acp, proc: AgentProcess, label: string) {
    this.#o = o;
    this.#acp = acp;
    this.#proc = proc;
    this.#label = label;
  }

  async run(): Promise<AcpRunResult> {
    const o = this.#o;
    const acp = this.#acp;
    const onAbort = () => this.#interrupt.abort(o.signal.reason);
    o.signal.addEventListener('abort', onAbort, { once: true });
    try {
      const app = acp
        .client({ name: 'agent-apps' })
        .onNotification(acp.methods.client.session.update, ({ params }) => this.#update(params))
        .onRequest(acp.methods.client.session.requestPermission, ({ params, signal }) => this.#permission(params, signal))
        .onRequest(acp.methods.client.elicitation.create, ({ params, signal }) => this.#elicit(params, signal));
      this.#connection = app.connect(acp.ndJsonStream(this.#proc.input, this.#proc.output));
      const agent = this.#connection.agent;

      const init = await this.#startup(
        'initialize',
        agent.request(acp.methods.agent.initialize, {
          protocolVersion: acp.PROTOCOL_VERSION,
          // The agent uses its own file and terminal tools; agent-apps offers none of the client's.
          // Its questions (form elicitation) go to the run's person, or are declined (elicit.ts).
          clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false, elicitation: { form: {} } },
          clientInfo: { name: 'agent-apps', version: VERSION },
        }),
      );
      if (init.protocolVersion !== acp.PROTOCOL_VERSION) {
        throw new AgentAppsError('E_MODEL', `the ACP agent '${this.#label}' speaks ACP protocol version ${String(init.protocolVersion)}; agent-apps speaks ${acp.PROTOCOL_VERSION}`);
      }
      // Every ACP agent takes stdio MCP servers; HTTP is an option it declares. Without it, our
      // server goes over stdio: the agent starts the relay (invoke-server.ts).
      const http = init.agentCapabilities?.mcpCapabilities?.http === true;
      if (!http) o.onLog('debug', `the ACP agent takes no HTTP MCP servers (no mcpCapabilities.http): the invoke tool goes over stdio, through agent-apps ${RELAY_COMMAND}`);
      this.#server = await startInvokeServer((code, signal) => this.#invoke(code, signal), (e) => o.onLog('debug', `invoke server: ${e.message}`), http ? 'http' : 'stdio');
      const newSession: Acp.NewSessionRequest = { cwd: this.#o.cwd, mcpServers: [this.#server.entry] };
      const session: Acp.NewSessionResponse = await this.#startup('session/new', agent.request(acp.methods.agent.session.new, newSession), init);
      this.#sessionId = session.sessionId;
      o.onLog('debug', `ACP session ${session.sessionId} with ${init.agentInfo?.name ?? this.#label}${init.agentInfo?.version ? ` ${init.agentInfo.version}` : ''}`);

      let input: Acp.ContentBlock[] = [
        { type: 'text', text: o.prompt },
        { type: 'text', text: o.userMessage },
      ];
      let turns = 0;
      for (;;) {
        if (o.maxTurns !== undefined && turns >= o.maxTurns) throw limitError(o.maxTurns);
        const turn = new PromptTurn(++turns);
        this.#turn = turn;
        if (this.#takeStop(await this.#hook({ type: 'turn-start', turnNumber: turn.number }))) return this.#finish(turns);
        this.#throwIfEnded();
        const response = await this.#prompt(input);
        // Every update sent before the answer has been handed to the queue: let it drain.
        await this.#queue;
        this.#throwIfFatal();
        this.#recordTurn(turn);
        if (this.#stop) return this.#finish(turns);
        if (response === 'interrupted') {
          this.#throwIfEnded();
          const why: unknown = this.#interrupt.signal.reason;
          throw why instanceof AbortError ? why : new AbortError(why);
        }
        if (response.stopReason === 'cancelled') throw new AbortError('the ACP agent cancelled the prompt (stopReason: cancelled)');
        if (response.stopReason === 'refusal') throw new AgentAppsError('E_MODEL', `the ACP agent '${this.#label}' refused to go on (stopReason: refusal)`);
        this.#closeSegment(turn);
        await this.#queue;
        this.#lastText = turn.text;
        const d = await this.#hook({ type: 'turn-end', result: turn.text, turnNumber: turn.number });
        this.#throwIfFatal();
        this.#turn = undefined;
        if (this.#takeStop(d)) return this.#finish(turns);
        if (d?.continue) {
          input = [{ type: 'text', text: typeof d.message === 'string' && d.message ? d.message : 'Continue.' }];
          continue;
        }
        return this.#finish(turns);
      }
    } finally {
      o.signal.removeEventListener('abort', onAbort);
    }
  }

  /** Ends the run from outside: the prompt under way is cancelled. */
  end(reason: string): void {
    this.#interrupt.abort(new AbortError(reason));
  }

  /** Ends the session, the connection, the invoke server and the process, whatever happened. */
  async close(): Promise<void> {
    this.#turn = undefined;
    this.#connection?.close();
    await this.#server?.close().catch(() => {});
    await this.#proc.stop();
  }

  #finish(turns: number): AcpRunResult {
    const out: AcpRunResult = { text: this.#lastText, turns };
    if (this.#stop) out.stopped = this.#stop;
    return out;
  }

  // ── requests ──────────────────────────────────────────────────────────────────────────────

  /**
   * One prompt: its answer, or 'interrupted' when the run had to end first (a stop, a fatal hook
   * error, the agentSignal) — then the prompt is cancelled and given a moment to come back.
   */
  async #prompt(input: Acp.ContentBlock[]): Promise<Acp.PromptResponse | 'interrupted'> {
    const agent = this.#connection!.agent;
    const prompting = agent.request(this.#acp.methods.agent.session.prompt, { sessionId: this.#sessionId!, prompt: input });
    const signal = this.#interrupt.signal;
    let onInterrupt = () => {};
    const interrupted = new Promise<'interrupted'>((resolve) => {
      onInterrupt = () => resolve('interrupted');
      if (signal.aborted) onInterrupt();
      else signal.addEventListener('abort', onInterrupt, { once: true });
    });
    // One listener per prompt, removed with it: a long run must not pile them up.
    const outcome = await Promise.race([prompting.then((r) => ({ r }), (e: unknown) => ({ e })), interrupted, this.#died()]).finally(() => signal.removeEventListener('abort', onInterrupt));
    if (outcome === 'interrupted') {
      await agent.notify(this.#acp.methods.agent.session.cancel, { sessionId: this.#sessionId! }).catch(() => {});
      await within(prompting.catch(() => undefined), CANCEL_GRACE_MS);
      return 'interrupted';
    }
    if ('e' in outcome) {
      if (this.#interrupt.signal.aborted) return 'interrupted';
      throw await this.#requestFailure('session/prompt', outcome.e);
    }
    return outcome.r;
  }

  /** A start-up request, bounded by model.acp.startTimeoutMs and by the process dying. */
  async #startup<T>(method: string, request: Promise<T>, init?: Acp.InitializeResponse): Promise<T> {
    const ms = this.#o.acp.startTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new AgentAppsError('E_MODEL', `the ACP agent '${this.#label}' did not answer ${method} within ${ms} ms (model.acp.startTimeoutMs)`)), ms);
    });
    const signal = this.#o.signal;
    let fail = () => {};
    const aborted = new Promise<never>((_, reject) => {
      fail = () => reject(new AbortError(signal.reason));
      if (signal.aborted) fail();
      else signal.addEventListener('abort', fail, { once: true });
    });
    try {
      return await Promise.race([request.catch(async (e: unknown) => Promise.reject(await this.#requestFailure(method, e, init))), timeout, aborted, this.#died()]);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', fail);
    }
  }

  /** Rejects when the agent process exits (it never resolves). */
  #died(): Promise<never> {
    return this.#proc.exited.then(({ code, signal }) => {
      const tail = this.#proc.stderrTail();
      throw new AgentAppsError('E_MODEL', `the ACP agent '${this.#label}' exited (${signal ? `signal ${signal}` : `code ${code}`})${tail ? `: ${tail.split('\n').slice(-1)[0]}` : ''}`);
    });
  }

  /**
   * What a failed request means. A request fails too when the connection closes because the
   * process died: then the exit (and its last stderr line) is what to say.
   */
  async #requestFailure(method: string, e: unknown, init?: Acp.InitializeResponse): Promise<Error> {
    if (e instanceof AgentAppsError) return e;
    const died = await Promise.race([this.#died().catch((err: unknown) => err as Error), new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 200))]);
    if (died) return died;
    const err = e as { code?: unknown; message?: unknown };
    const message = typeof err?.message === 'string' ? err.message : String(e);
    // -32000: authentication required (ACP). Logging in is the agent's own business.
    if (err?.code === -32000) {
      const methods = (init?.authMethods ?? []).map((m) => m.name).filter(Boolean);
      return new ConfigurationError(`the ACP agent '${this.#label}' needs you to log in first (${method}: ${message})${methods.length ? ` — it offers: ${methods.join(', ')}` : ''}; log in with the agent's own command (for Kiro: kiro-cli login)`, { cause: e });
    }
    return new AgentAppsError('E_MODEL', `the ACP agent '${this.#label}' failed ${method}: ${message}`, { cause: e });
  }

  // ── hooks ─────────────────────────────────────────────────────────────────────────────────

  /** Reports an event once those before it were reported; the answer as the loop reads it. */
  #hook(event: { type: string; [key: string]: unknown }): Promise<Answer | undefined> {
    const onHook = this.#o.onHook;
    if (!onHook) return Promise.resolve(undefined);
    const call = this.#queue.then(async () => {
      if (this.#fatal) return undefined;
      try {
        const answer = await onHook(event);
        return answer !== null && typeof answer === 'object' && !Array.isArray(answer) ? (answer as Answer) : undefined;
      } catch (error) {
        this.#fatal ??= { error };
        this.#interrupt.abort(error);
        return undefined;
      }
    });
    this.#queue = call;
    return call;
  }

  /** `{ stop: true, result? }`: the run ends with `result`, else the agent's latest text. */
  #takeStop(d: Answer | undefined): boolean {
    if (!d?.stop) return false;
    this.#stop ??= { result: d.result !== undefined ? d.result : this.#turn?.text || this.#lastText };
    this.#interrupt.abort('stop');
    return true;
  }

  #throwIfFatal(): void {
    if (this.#fatal) throw this.#fatal.error;
  }

  /** A fatal hook error, or the agentSignal: the run ends here with it. */
  #throwIfEnded(): void {
    this.#throwIfFatal();
    if (this.#o.signal.aborted) throw new AbortError(this.#o.signal.reason);
  }

  /** The text (and reasoning) since the last tool call, as whole `message` / `reasoning` events. */
  #closeSegment(turn: PromptTurn, segment = turn.closeSegment()): void {
    if (segment.reasoning) void this.#hook({ type: 'reasoning', text: segment.reasoning, turnNumber: turn.number }).then((d) => this.#takeStop(d));
    if (segment.text) void this.#hook({ type: 'message', text: segment.text, turnNumber: turn.number }).then((d) => this.#takeStop(d));
  }

  #recordTurn(turn: PromptTurn): void {
    if (!this.#o.onRecord) return;
    this.#recorded.push(...turn.cassette());
    this.#o.onRecord([...this.#recorded]);
  }

  // ── session/update ────────────────────────────────────────────────────────────────────────

  #update(n: Acp.SessionNotification): void {
    const turn = this.#turn;
    if (n.sessionId !== this.#sessionId || !turn) return;
    const u = n.update;
    switch (u.sessionUpdate) {
      case 'agent_message_chunk':
      case 'agent_thought_chunk': {
        if (u.content.type !== 'text' || !u.content.text) return;
        const thought = u.sessionUpdate === 'agent_thought_chunk';
        if (thought) turn.addReasoning(u.content.text);
        else turn.addText(u.content.text);
        if (this.#o.deltas) void this.#hook({ type: thought ? 'reasoning' : 'message', text: u.content.text, delta: true, turnNumber: turn.number }).then((d) => this.#takeStop(d));
        return;
      }
      case 'tool_call':
      case 'tool_call_update': {
        const known = this.#calls.get(u.toolCallId);
        if (known?.ours) return;
        if (!known) {
          if (isReportedByUs(u)) {
            this.#calls.set(u.toolCallId, { ours: true, tool: 'invoke', args: u.rawInput, done: true });
            return;
          }
          // The agent's own tool: a tool-call event now, its result when its status says it ended.
          const tool = toolLabel(u);
          const args = u.rawInput ?? {};
          this.#calls.set(u.toolCallId, { ours: false, tool, args, done: false });
          this.#closeSegment(turn, turn.ownTool(tool, u.kind));
          void this.#hook({ type: 'tool-call', tool, args, toolUseId: u.toolCallId, turnNumber: turn.number, ...(u.kind ? { kind: u.kind } : {}), ...(u.title ? { title: u.title } : {}) }).then((d) => this.#takeStop(d));
        }
        const call = this.#calls.get(u.toolCallId)!;
        if (u.rawInput !== undefined && u.rawInput !== null) call.args = u.rawInput;
        if ((u.status === 'completed' || u.status === 'failed') && !call.done) {
          call.done = true;
          const text = contentText(u.content);
          const event =
            u.status === 'completed'
              ? { type: 'tool-result', tool: call.tool, args: call.args, result: u.rawOutput ?? text, toolUseId: u.toolCallId, turnNumber: turn.number }
              : { type: 'tool-result', tool: call.tool, args: call.args, error: text || errorOf(u.rawOutput) || 'the tool call failed', toolUseId: u.toolCallId, turnNumber: turn.number };
          void this.#hook(event).then((d) => this.#takeStop(d));
        }
        return;
      }
      case 'plan':
        void this.#hook({ type: 'plan', entries: u.entries, turnNumber: turn.number }).then((d) => this.#takeStop(d));
        return;
      default:
        // Commands, modes, config options, session info, usage: not part of an agent-apps run.
        return;
    }
  }

  // ── our invoke tool ───────────────────────────────────────────────────────────────────────

  async #invoke(code: string, _signal: AbortSignal): Promise<InvokeOutcome> {
    // The agent sent what it said before this call on stdio, before it called us over HTTP: let
    // those updates land first, so the text before the call is the text before the call.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    const turn = this.#turn;
    if (!turn || this.#stop || this.#fatal || this.#interrupt.signal.aborted) {
      return { text: 'E_ABORTED: the agent-apps run has ended or is not in a turn; this call was not executed', isError: true };
    }
    const toolUseId = `invoke-${++this.#invokes}`;
    this.#closeSegment(turn, turn.invoke(code));
    const args = { code };
    const d = await this.#hook({ type: 'tool-call', tool: 'invoke', args, toolUseId, turnNumber: turn.number });
    if (this.#takeStop(d) || this.#fatal) return { text: 'E_ABORTED: the agent-apps run has ended; this call was not executed', isError: true };
    const deny = d?.deny;
    if (deny !== undefined && deny !== null && deny !== false) {
      const why = typeof deny === 'string' && deny ? `tool call denied: ${deny}` : 'tool call denied';
      this.#takeStop(await this.#hook({ type: 'tool-result', tool: 'invoke', args, error: why, denied: true, toolUseId, turnNumber: turn.number }));
      return { text: why, isError: true };
    }
    let value: unknown;
    let failure: unknown;
    try {
      value = await this.#o.onCode(code);
    } catch (err) {
      failure = err;
    }
    const code_ = errorCode(failure);
    this.#takeStop(
      await this.#hook(
        failure === undefined
          ? { type: 'tool-result', tool: 'invoke', args, result: value, toolUseId, turnNumber: turn.number }
          : { type: 'tool-result', tool: 'invoke', args, error: errorText(failure), ...(code_ ? { code: code_ } : {}), toolUseId, turnNumber: turn.number },
      ),
    );
    if (failure instanceof AbortError) {
      // The run itself was aborted under the code (a refusal): it ends here, with that error.
      this.#fatal ??= { error: failure };
      this.#interrupt.abort(failure);
    }
    if (failure !== undefined) return { text: code_ ? `${code_}: ${errorText(failure)}` : errorText(failure), isError: true };
    return { text: toToolText(value) };
  }

  // ── elicitation/create ────────────────────────────────────────────────────────────────────

  /**
   * The agent asks for input (a form): each field is a question to the run's person — the
   * terminal, or the editor under `agent-apps acp` — and the form is declined when there is
   * nobody to ask, or when it is not for this session or not a form (elicit.ts).
   */
  async #elicit(params: Acp.CreateElicitationRequest, signal: AbortSignal): Promise<Acp.CreateElicitationResponse> {
    const sessionId = (params as { sessionId?: unknown }).sessionId;
    const decline = (why: string): Acp.CreateElicitationResponse => {
      this.#o.onLog('info', `declined the ACP agent's question (${why}): ${oneLine(params.message)}`, { type: 'elicitation', action: 'decline' });
      return { action: 'decline' };
    };
    if (sessionId !== undefined && sessionId !== this.#sessionId) return decline('not for this session');
    const questions = formQuestions(params);
    if (typeof questions === 'string') return decline(questions);
    const ask = this.#o.ask;
    if (!ask) return decline('nobody to ask: not a terminal');
    const both = AbortSignal.any([signal, this.#interrupt.signal]);
    try {
      const answer = await answerForm(questions, (text, choices, s) => ask(`The ACP agent '${this.#label}' asks: ${text}`, choices, s), both);
      this.#o.onLog('info', `${answer.action === 'accept' ? 'answered' : 'declined'} the ACP agent's question: ${oneLine(params.message)}`, { type: 'elicitation', action: answer.action });
      return answer;
    } catch (err) {
      if ((err as { code?: unknown }).code === 'E_NOT_INTERACTIVE') return decline('nobody to ask: not a terminal');
      if (both.aborted || err instanceof AbortError) return { action: 'cancel' };
      throw err;
    }
  }

  // ── session/request_permission ────────────────────────────────────────────────────────────

  async #permission(params: Acp.RequestPermissionRequest, signal: AbortSignal): Promise<Acp.RequestPermissionResponse> {
    const call = params.toolCall;
    const options = params.options;
    const pick = (...kinds: Acp.PermissionOptionKind[]): Acp.RequestPermissionResponse => {
      for (const kind of kinds) {
        const option = options.find((opt) => opt.kind === kind);
        if (option) return { outcome: { outcome: 'selected', optionId: option.optionId } };
      }
      return { outcome: { outcome: 'cancelled' } };
    };
    const allow = () => pick('allow_once', 'allow_always');
    const reject = () => pick('reject_once', 'reject_always');
    if (params.sessionId !== this.#sessionId) return reject();
    // Our invoke: the code inside it is checked by the pipeline (allowed-tools, trust, ask-tools).
    if (isOurTool(call)) return allow();
    const known = this.#calls.get(call.toolCallId);
    const tool = known?.tool ?? toolLabel(call);
    const decide = (decision: 'allow' | 'allow-run' | 'deny' | 'refused', by: string, reason?: string) => {
      const allowed = decision === 'allow' || decision === 'allow-run';
      // The console shows `LEVEL TOOL: TEXT`: the tool is the agent's, the text says the rest.
      const verb = allowed ? 'allowed' : decision === 'deny' ? 'denied' : 'refused';
      this.#o.onLog(allowed ? 'info' : 'warn', `${verb}${reason ? `: ${reason}` : ` (the ACP agent's own tool)`}`, { type: 'approval', tool, decision, by, ...(reason ? { reason } : {}) });
      void this.#hook({ type: 'approval', tool, decision, by, ...(reason ? { reason } : {}) });
      if (!allowed) void this.#hook({ type: 'denied', tool, code: decision === 'deny' ? 'E_DENIED' : 'E_ALLOWED_TOOLS', reason: reason ?? decision });
    };
    if (this.#o.acp.allowAgentTools) {
      decide('allow', 'config', "the ACP agent's own tool, by model.acp.allowAgentTools");
      return allow();
    }
    const key = `${call.kind ?? ''}\0${tool}`;
    if (this.#allowedForRun.has(key)) {
      decide('allow-run', 'earlier');
      return allow();
    }
    if (!this.#o.ask) {
      decide('refused', 'no-person', NEEDS_PERSON);
      return reject();
    }
    const question = `The ACP agent '${this.#label}' asks to use its own tool: ${call.title ?? tool}${call.kind ? ` (${call.kind})` : ''}. Allow it?`;
    const choices = [
      { value: 'allow', label: 'allow once', key: 'y' },
      { value: 'allow-run', label: 'allow this tool for this run', key: 'a' },
      { value: 'deny', label: 'deny', key: 'n' },
    ];
    const both = AbortSignal.any([signal, this.#interrupt.signal]);
    let answer: string;
    try {
      answer = await this.#o.ask(question, choices, both);
    } catch (err) {
      if ((err as { code?: unknown }).code === 'E_NOT_INTERACTIVE') {
        decide('refused', 'no-person', NEEDS_PERSON);
        return reject();
      }
      decide('refused', 'abort', (err as Error).message);
      return both.aborted ? { outcome: { outcome: 'cancelled' } } : reject();
    }
    if (answer === 'allow-run') this.#allowedForRun.add(key);
    if (answer === 'allow' || answer === 'allow-run') {
      decide(answer, 'person');
      return allow();
    }
    decide('deny', 'person', "the person running agent-apps denied the ACP agent's own tool");
    return reject();
  }
}

/** Text from the agent on one log line, not too long. */
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 120 ? flat.slice(0, 119) + '…' : flat;
}

function limitError(maxTurns: number): AgentAppsError {
  return new AgentAppsError('E_AGENT_LIMIT', `the agent used its ${maxTurns} model turn${maxTurns === 1 ? '' : 's'} (model.maxTurns) without finishing`);
}

async function within(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

function contentText(content: Acp.ToolCallContent[] | null | undefined): string {
  if (!content) return '';
  return content
    .map((c) => (c.type === 'content' && c.content.type === 'text' ? c.content.text : c.type === 'diff' ? `diff of ${c.path}` : ''))
    .filter(Boolean)
    .join('\n');
}

function errorOf(raw: unknown): string {
  if (typeof raw === 'string') return raw;
  const m = (raw as { error?: unknown; message?: unknown } | null | undefined)?.error ?? (raw as { message?: unknown } | null | undefined)?.message;
  return typeof m === 'string' ? m : '';
}

/** The tool result the agent reads: strings as they are, anything else as JSON. */
function toToolText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return 'null';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return typeof err === 'string' ? err : toToolText(err);
}

function errorCode(err: unknown): string | undefined {
  const code = err !== null && typeof err === 'object' ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}
