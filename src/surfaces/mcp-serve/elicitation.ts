// Asking an MCP client (docs/mcp.md, "Questions and approvals"): when a skill that `mcp serve` runs
// for a `tools/call` or `prompts/get` asks — `ctx.manager.ask`, an approval gate — and the client
// declared the `elicitation` capability (form mode), the question goes to the client as a form:
//
//   2025-11-25  an `elicitation/create` request within the call (ctx.mcpReq.elicitInput); the run
//               waits for the answer and goes on.
//   2026-07-28  no server→client requests: the run is parked in memory under a random id, and the
//               call answers `input_required` with the form and a requestState sealed by the SDK's
//               HMAC codec (per-process key; the id, the call and a hash of its args); the client's
//               retry with `inputResponses` resumes the parked run. A parked run nobody resumes
//               within 10 minutes, or when the server closes, is aborted.
//
// A client without the capability gets what a headless run gets: E_NOT_INTERACTIVE for a
// question, "needs approval" at a gate. Who answered is kept on the answer (`by`), which the gate
// records (src/policy/approval.ts).
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  createRequestStateCodec,
  inputRequired,
  inputResponse,
  type ClientCapabilities,
  type ElicitRequestFormParams,
  type InputRequiredResult,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { AbortError, AgentAppsError } from '../../core/errors.ts';
import { printable } from '../../core/line-asker.ts';
import type { Answer, Asker, Question } from '../../core/ask.ts';
import type { ProgressSink } from './progress.ts';

/** How long a question waits for its answer: an `elicitation/create` request, or a parked run. */
export const ANSWER_MS = 10 * 60_000;
/** The first protocol revision without server→client requests. */
const STATELESS = '2026-07-28';
const MAX_ARGS = 2000;
const MAX_CODE_LINES = 12;

// ── the form ────────────────────────────────────────────────────────────────────────────────

/**
 * A question as an elicitation form: a plain question is one `answer` field (an enum of its
 * choices, or free text); an approval is a `decision` (allow once / allow for this run / deny)
 * and an optional `reason`, the message naming the tool, its args, the agent and why it asks.
 */
export function formOf(q: Question): ElicitRequestFormParams {
  if (q.kind === 'approval') {
    return {
      mode: 'form',
      message: approvalMessage(q),
      requestedSchema: {
        type: 'object',
        properties: {
          decision: { type: 'string', title: 'Decision', oneOf: q.choices.map((c) => ({ const: c.value, title: c.label ?? c.value })) },
          reason: { type: 'string', title: 'Reason', description: 'Why not, for a deny (the caller sees it).' },
        },
        required: ['decision'],
      },
    };
  }
  const choices = q.choices ?? [];
  const titled = choices.some((c) => c.label !== undefined && c.label !== c.value);
  const answer = !choices.length
    ? { type: 'string' as const, title: 'Answer' }
    : titled
      ? { type: 'string' as const, title: 'Answer', oneOf: choices.map((c) => ({ const: c.value, title: c.label ?? c.value })) }
      : { type: 'string' as const, title: 'Answer', enum: choices.map((c) => c.value) };
  return { mode: 'form', message: `${q.tool ? `${q.tool} asks: ` : ''}${q.text}`, requestedSchema: { type: 'object', properties: { answer }, required: ['answer'] } };
}

function approvalMessage(q: Extract<Question, { kind: 'approval' }>): string {
  const why = q.because.kind === 'ask-tools' ? `ask-tools '${q.because.pattern}'` : `trust: ask, set in ${q.because.source}`;
  const args = JSON.stringify(q.args ?? {}) ?? '{}';
  const lines = [q.text, `tool: ${q.tool}${q.via ? ` (as ${q.via})` : ''}`, `args: ${args.length > MAX_ARGS ? `${args.slice(0, MAX_ARGS)}…` : args}`];
  if (q.agent) lines.push(`agent: ${q.agent}`);
  lines.push(`why: ${why}`);
  if (q.code) {
    const code = q.code.replace(/\s+$/, '').split('\n');
    lines.push('code:', ...code.slice(0, MAX_CODE_LINES).map((l) => `  ${printable(l)}`));
    if (code.length > MAX_CODE_LINES) lines.push(`  … ${code.length - MAX_CODE_LINES} more lines`);
  }
  return lines.join('\n');
}

/** A client's answer that does not fit the form: the 2026-07-28 flow asks again. */
class UnfitAnswer extends AgentAppsError {
  constructor(message: string) {
    super('E_VALIDATION', message);
  }
}

/**
 * The client's answer as the asker's: accepted content checked against the question; a decline
 * or cancel is a deny with "declined by the MCP client" at a gate, E_NOT_INTERACTIVE for a
 * question (as if nobody were there to ask).
 */
export function answerOf(q: Question, result: { action: string; content?: Record<string, unknown> | undefined }, client: string): Answer {
  const by = { who: `mcp client ${client}`, via: 'elicitation', at: Date.now() };
  if (result.action !== 'accept') {
    if (q.kind === 'approval') return { value: 'deny', reason: 'declined by the MCP client', by };
    const asked = `'${q.tool ?? 'a skill'}' asked ${JSON.stringify(q.text.length > 80 ? `${q.text.slice(0, 80)}…` : q.text)}`;
    throw new AgentAppsError('E_NOT_INTERACTIVE', `${asked}, and the MCP client ${client} ${result.action === 'cancel' ? 'cancelled' : 'declined'} it`);
  }
  const content = result.content ?? {};
  const key = q.kind === 'approval' ? 'decision' : 'answer';
  const value = content[key];
  if (typeof value !== 'string') throw new UnfitAnswer(`the MCP client ${client} answered without a '${key}'`);
  const choices = q.choices ?? [];
  if (choices.length && !choices.some((c) => c.value === value)) throw new UnfitAnswer(`the MCP client ${client} answered '${value.slice(0, 80)}', which is not one of ${choices.map((c) => `'${c.value}'`).join(', ')}`);
  const reason = q.kind === 'approval' && value === 'deny' && typeof content.reason === 'string' && content.reason.trim() ? content.reason.trim().slice(0, 1000) : undefined;
  return { value, ...(reason ? { reason } : {}), by };
}

// ── who the client is, what it can do ───────────────────────────────────────────────────────

/** How a request's client can be asked: in the call (2025-11-25), in rounds (2026-07-28), or not at all. */
export type ClientAsking = { mode: 'in-call'; asker: Asker } | { mode: 'rounds'; client: string };

/** Form-mode elicitation: an `elicitation` capability that is empty (the pre-mode rule) or names `form`. */
function formElicitation(caps: ClientCapabilities | undefined): boolean {
  const e = caps?.elicitation as { form?: unknown; url?: unknown } | undefined;
  if (e === undefined || e === null || typeof e !== 'object') return false;
  return e.form !== undefined || e.url === undefined;
}

function clientName(info: unknown): string {
  const name = (info as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' && name.trim() ? printable(name.trim()).slice(0, 100) : '(unnamed)';
}

/** Whether and how the client of this request can answer questions (undefined: it cannot). */
export function clientAsking(server: Server, ctx: ServerContext): ClientAsking | undefined {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const version = (envelope?.[PROTOCOL_VERSION_META_KEY] as string | undefined) ?? server.getNegotiatedProtocolVersion();
  if (version !== undefined && version >= STATELESS) {
    if (!formElicitation(envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined)) return undefined;
    return { mode: 'rounds', client: clientName(envelope?.[CLIENT_INFO_META_KEY]) };
  }
  if (!formElicitation(server.getClientCapabilities())) return undefined;
  return { mode: 'in-call', asker: inCallAsker(ctx, clientName(server.getClientVersion())) };
}

/** 2025-11-25: each question is an `elicitation/create` request related to the call. */
function inCallAsker(ctx: ServerContext, client: string): Asker {
  return {
    async ask(question, signal) {
      let result;
      try {
        result = await ctx.mcpReq.elicitInput(formOf(question), { signal, timeout: ANSWER_MS, relatedRequestId: ctx.mcpReq.id });
      } catch (err) {
        if (signal.aborted) throw signal.reason instanceof AbortError ? signal.reason : new AbortError(signal.reason);
        if ((err as { code?: unknown }).code === 'REQUEST_TIMEOUT') return answerOf(question, { action: 'cancel' }, client);
        throw new AgentAppsError('E_NOT_INTERACTIVE', `asking the MCP client ${client} failed: ${(err as Error).message ?? String(err)}`);
      }
      return answerOf(question, result, client);
    },
  };
}

// ── 2026-07-28: parked runs ─────────────────────────────────────────────────────────────────

/** What the sealed requestState carries: the parked run, its round, and the call it belongs to. */
interface Ticket {
  id: string;
  round: number;
  call: string;
  args: string;
}

/** What the client asked for: the method and name, and its args (hashed into the ticket). */
export interface Call {
  method: 'tools/call' | 'prompts/get';
  name: string;
  args: unknown;
}

/** Starts the run with the asker that parks it, the signal that aborts it and the progress sink of the request that waits on it. */
export type Start<R> = (asker: Asker, signal: AbortSignal, progress: ProgressSink) => Promise<R>;

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

interface Parked {
  id: string;
  call: string;
  args: string;
  client: string;
  round: number;
  controller: AbortController;
  outcome: Promise<Outcome>;
  /** The question the run waits on; `key` once it went to the client. */
  pending?: { question: Question; key?: string; resolve(answer: Answer): void; reject(err: unknown): void };
  /** Wakes the request waiting on the run when the run asks. */
  wake?: () => void;
  /** The last input_required sent, sent again when the retry does not answer it. */
  last?: InputRequiredResult;
  /** The progress sink of the request that waits on the run now. */
  sink?: ProgressSink;
  timer?: NodeJS.Timeout;
}

const invalidState = () => new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid or expired requestState', { reason: 'invalid_request_state' });

/**
 * The runs of 2026-07-28 calls, parked while their client answers a question. One per process
 * (the key of the requestState codec is this process's), shared by every `Server` instance.
 */
export class ParkedRuns {
  readonly #runs = new Map<string, Parked>();
  readonly #codec = createRequestStateCodec<Ticket>({ key: randomBytes(32), ttlSeconds: ANSWER_MS / 1000 });
  /** Runs that settle in their own time: the host waits for them at shutdown. */
  readonly #track: (running: Promise<unknown>) => void;
  #closed = false;

  constructor(track: (running: Promise<unknown>) => void) {
    this.#track = track;
  }

  /** ServerOptions.requestState.verify: tampered, malformed or expired state is refused by the SDK (-32602). */
  readonly verify = (state: string, ctx: ServerContext): Promise<Ticket> => this.#codec.verify(state, ctx);

  /** Runs parked now (for tests and `drain`). */
  get size(): number {
    return this.#runs.size;
  }

  /**
   * One request of a 2026-07-28 call: a first one starts the run, a retry (with the requestState
   * the SDK verified) resumes it. Returns the run's result, or input_required with its next
   * question; `gone` answers a retry whose run is not waiting any more. `client` names the client
   * of a first request (it declared form elicitation: clientAsking).
   */
  async serve<R>(call: Call, ctx: ServerContext, client: string, sink: ProgressSink | undefined, start: Start<R>, gone: (message: string) => R): Promise<R | InputRequiredResult> {
    const ticket = ctx.mcpReq.requestState<Ticket>();
    const args = hashArgs(call.args);
    const key = `${call.method}\0${call.name}`;
    if (ticket === undefined) {
      if (this.#closed) return gone('the server is closing');
      return (await this.#step(this.#park(key, args, client, start), ctx.mcpReq.signal, sink)) as R | InputRequiredResult;
    }
    // State the codec did not mint (a hook-less server would hand over the raw string) or minted for another call.
    if (typeof ticket !== 'object' || ticket === null || ticket.call !== key || ticket.args !== args) throw invalidState();
    const p = this.#runs.get(ticket.id);
    if (!p || p.round !== ticket.round) return gone('the run this answer is for is not waiting any more (it was answered already, or aborted after 10 minutes without an answer) — call it again');
    return (await this.#resume(p, ctx, sink)) as R | InputRequiredResult;
  }

  /** Aborts every parked run (the server is closing: nobody can resume them). */
  close(): void {
    this.#closed = true;
    for (const p of this.#runs.values()) this.#abort(p, new AbortError('the MCP server is closing'));
  }

  #park(call: string, args: string, client: string, start: Start<unknown>): Parked {
    const p: Parked = { id: randomUUID(), call, args, client, round: 0, controller: new AbortController(), outcome: undefined as unknown as Promise<Outcome> };
    const asker: Asker = {
      ask: (question, signal) =>
        new Promise<Answer>((resolve, reject) => {
          const onAbort = () => {
            if (p.pending?.question === question) p.pending = undefined;
            reject(signal.reason instanceof AbortError ? signal.reason : new AbortError(signal.reason));
          };
          if (signal.aborted) return onAbort();
          signal.addEventListener('abort', onAbort, { once: true });
          p.pending = {
            question,
            resolve: (a) => (signal.removeEventListener('abort', onAbort), resolve(a)),
            reject: (e) => (signal.removeEventListener('abort', onAbort), reject(e)),
          };
          p.wake?.();
        }),
    };
    const running = start(asker, p.controller.signal, (message) => p.sink?.(message));
    this.#track(running);
    p.outcome = running.then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    this.#runs.set(p.id, p);
    return p;
  }

  /** Waits for the run to finish or ask, on behalf of one request (whose cancellation aborts the run). */
  async #step(p: Parked, signal: AbortSignal, sink: ProgressSink | undefined): Promise<unknown> {
    clearTimeout(p.timer);
    const asked = new Promise<'asked'>((resolve) => (p.wake = () => resolve('asked')));
    if (p.pending && p.pending.key === undefined) p.wake!();
    p.sink = sink;
    const onAbort = () => p.controller.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    let next: Outcome | 'asked';
    try {
      next = await Promise.race([p.outcome, asked]);
    } finally {
      signal.removeEventListener('abort', onAbort);
      p.sink = undefined;
      p.wake = undefined;
    }
    if (next === 'asked') {
      p.round++;
      p.pending!.key = `q${p.round}`;
      return this.#ask(p);
    }
    this.#runs.delete(p.id);
    if (next.ok) return next.value;
    throw next.error;
  }

  /** The pending question as input_required, with a fresh requestState; the run waits at most ANSWER_MS for it. */
  async #ask(p: Parked): Promise<InputRequiredResult> {
    const pending = p.pending!;
    const requestState = await this.#codec.mint({ id: p.id, round: p.round, call: p.call, args: p.args });
    clearTimeout(p.timer);
    p.timer = setTimeout(() => this.#abort(p, new AbortError(`the MCP client ${p.client} did not answer within ${ANSWER_MS / 60_000} minutes`)), ANSWER_MS);
    p.timer.unref();
    p.last = inputRequired({ inputRequests: { [pending.key!]: inputRequired.elicit(formOf(pending.question)) }, requestState });
    return p.last;
  }

  async #resume(p: Parked, ctx: ServerContext, sink: ProgressSink | undefined): Promise<unknown> {
    const pending = p.pending;
    // The question was withdrawn (its caller aborted): on to what the run does next.
    if (!pending?.key) return this.#step(p, ctx.mcpReq.signal, sink);
    const view = inputResponse(ctx.mcpReq.inputResponses, pending.key);
    // No answer to it in the retry: asked again (SEP-2322 servers re-request what is missing).
    if (view.kind !== 'elicit') return this.#ask(p);
    let answer: Answer;
    try {
      answer = answerOf(pending.question, view, p.client);
    } catch (err) {
      if (err instanceof UnfitAnswer) return this.#ask(p);
      p.pending = undefined;
      pending.reject(err);
      return this.#step(p, ctx.mcpReq.signal, sink);
    }
    p.pending = undefined;
    // Woken by the next question only from here on: the answer lets the run go on.
    const stepping = this.#step(p, ctx.mcpReq.signal, sink);
    pending.resolve(answer);
    return stepping;
  }

  #abort(p: Parked, reason: AbortError): void {
    clearTimeout(p.timer);
    this.#runs.delete(p.id);
    p.controller.abort(reason);
  }
}

/** The args a ticket is bound to: a hash of their JSON with keys sorted. */
function hashArgs(args: unknown): string {
  return createHash('sha256').update(stableJson(args ?? {})).digest('base64url');
}

function stableJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  const entries = Object.keys(value)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(',')}}`;
}
