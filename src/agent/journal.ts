// The journal of a run (docs/runs.md): every model response of every agent (`model-turn`) and
// every host call of agent code (`call-start` before the tool runs, `call-end` with its result or
// error when it returns), appended to the run file as it happens — through the run's logger, whose
// jsonl reporter writes each line synchronously, so a process killed right after a call started
// leaves that call's `call-start` behind. A run resumed from its journal (`agent-apps runs resume
// ID`) plays it back: journaled responses instead of model requests, journaled results instead of
// tool calls; a call that started and left no result is *unverified*, and runs again only for an
// `idempotent: true` tool, with --rerun-unverified, or when a person says so — else the run ends on
// E_RESUME. Keys are stable across a resume: an agent is `1`, `2` … in the order the run started
// them, or `PARENT/TURN.INDEX/N` for the Nth agent started inside a host call of another; a call is
// `TURN.INDEX`, the INDEXth host call of the agent's code in model turn TURN.
import { AgentAppsError } from '../core/errors.ts';
import { redact } from '../core/redact.ts';
import type { Context, LogInput } from '../core/types.ts';
import type { JournalTurn, TokenUsage } from './provider.ts';

export type { JournalTurn } from './provider.ts';

/** The tag of every journal line in the run file. */
export const JOURNAL_TAG = 'journal';

/** What `target.manager.next()` is journaled as: no skill has this name. */
export const NEXT_CALL = 'target.manager.next';

/** One model response (a `model-turn` line), as a cassette entry would hold it. */
export interface TurnLine extends JournalTurn {
  type: 'model-turn';
  agent: string;
  skill: string;
  turn: number;
  /** Played back from the journal of the run this one resumed. */
  replayed?: true;
}

export interface CallLine {
  type: 'call-start' | 'call-end';
  agent: string;
  /** `TURN.INDEX`. */
  call: string;
  turn: number;
  index: number;
  tool: string;
  /** The args as the code passed them. */
  args?: unknown;
  /** call-end: what the tool returned … */
  result?: unknown;
  /** … or the error it threw (also a call refused before it ran: no call-start then). */
  error?: { code: string; message: string };
  /** call-end: the call was refused (allowed-tools, trust, a person's deny): a denial of the run. */
  denied?: true;
  /** Its result came from the journal of the run this one resumed. */
  replayed?: true;
  /** call-start of an unverified call run again: why (`idempotent`, `--rerun-unverified`, `asked`). */
  rerun?: string;
}

export type JournalLine = TurnLine | CallLine;

/** One agent's part of a journal read back. */
export interface JournalAgent {
  skill?: string;
  /** Its model responses by turn number. */
  turns: Map<number, TurnLine>;
  /** Its calls by key (`TURN.INDEX`). */
  calls: Map<string, { start?: CallLine; end?: CallLine }>;
}

/** A run's journal, read back from its run file. */
export interface Journal {
  agents: Map<string, JournalAgent>;
  /** How many journal lines the run file held. */
  lines: number;
}

/** Whether a run-file event is a journal line. */
export function isJournalLine(e: { type?: unknown; tag?: unknown }): boolean {
  return e.tag === JOURNAL_TAG && (e.type === 'model-turn' || e.type === 'call-start' || e.type === 'call-end');
}

/** The journal in a run file's events (in the order they were written). */
export function readJournal(events: readonly { type?: unknown; tag?: unknown }[]): Journal {
  const agents = new Map<string, JournalAgent>();
  let lines = 0;
  const of = (key: string) => {
    let a = agents.get(key);
    if (!a) agents.set(key, (a = { turns: new Map(), calls: new Map() }));
    return a;
  };
  for (const e of events) {
    if (!isJournalLine(e)) continue;
    const line = e as unknown as JournalLine;
    if (typeof line.agent !== 'string') continue;
    lines++;
    const agent = of(line.agent);
    if (line.type === 'model-turn') {
      if (typeof line.turn !== 'number') continue;
      agent.turns.set(line.turn, line);
      if (typeof line.skill === 'string') agent.skill ??= line.skill;
      continue;
    }
    if (typeof line.call !== 'string') continue;
    const call = agent.calls.get(line.call) ?? {};
    if (line.type === 'call-start') call.start = line;
    else call.end = line;
    agent.calls.set(line.call, call);
  }
  return { agents, lines };
}

/** The calls of a journal that started and left no result, in the order they started. */
export function unverifiedCalls(journal: Journal): CallLine[] {
  const out: CallLine[] = [];
  for (const agent of journal.agents.values()) for (const c of agent.calls.values()) if (c.start && !c.end) out.push(c.start);
  return out;
}

/**
 * Whether a journal holds anything this run did itself (not played back from the run it resumed).
 * An agent skill's call entered again does not count by itself: what it did is its agent's lines.
 */
export function hasLiveLines(journal: Journal): boolean {
  for (const agent of journal.agents.values()) {
    for (const t of agent.turns.values()) if (!t.replayed) return true;
    for (const c of agent.calls.values()) if ((c.start && !c.start.replayed && c.start.rerun !== 'agent') || (c.end && !c.end.replayed)) return true;
  }
  return false;
}

/** `bump({"text":"two"})`, cut to one short line. */
export function callText(tool: string, args: unknown): string {
  let json: string;
  try {
    json = args === undefined || args === null ? '' : (JSON.stringify(args) ?? '');
  } catch {
    json = String(args);
  }
  if (json.length > 120) json = `${json.slice(0, 119)}…`;
  return `${tool}(${json})`;
}

export interface RunJournalOptions {
  /** Writes one line to the run file, synchronously (the CLI: its logger, whose jsonl reporter writes it). */
  write(line: LogInput): void;
  /**
   * Resolves once every line written so far is kept (a worker's journal in NATS KV, docs/scale.md):
   * a call's tool runs only after its call-start is. Without it, `write` keeps each line at once.
   */
  flush?(): Promise<void>;
  /** The run this one resumes: its id and its journal; `name`, how messages name it (`run 1a2b3c4d` by default). */
  resume?: { from: string; journal: Journal; name?: string };
  /** `--rerun-unverified`: unverified calls run again without asking. */
  rerunUnverified?: boolean;
  /** What an E_RESUME for an unverified call of `tool` says to do (the CLI's: --rerun-unverified, or idempotent: true). */
  unverifiedHelp?(tool: string): string;
}

/**
 * Where the journal of one request rides on the nonlocals of the invocation it starts (the NATS
 * worker, docs/scale.md): inherited by every context under it, never serialized. It wins over
 * `globals.internals.journal`, which is the CLI's one run.
 */
const RUN_JOURNAL: unique symbol = Symbol.for('agent-apps.journal') as never;

/** `nonlocals` with `journal` as the journal of the invocation they seed. */
export function withRunJournal<T extends object>(nonlocals: T, journal: RunJournal): T {
  (nonlocals as Record<symbol, unknown>)[RUN_JOURNAL] = journal;
  return nonlocals;
}

/** The journal `ctx` runs under: its request's (withRunJournal), else the CLI run's, else none. */
export function runJournalOf(ctx: Context): RunJournal | undefined {
  const own = (ctx.nonlocals as Record<symbol, unknown>)[RUN_JOURNAL];
  return own instanceof RunJournal ? own : ctx.globals.internals.journal;
}

/**
 * The journal of one run, on `globals.internals.journal` (set by the CLI when it records the run):
 * what is written, and what the run being resumed journaled.
 */
export class RunJournal {
  readonly resume: RunJournalOptions['resume'];
  readonly rerunUnverified: boolean;
  /** The error the run ends on, once resuming it cannot go on (E_RESUME): every agent stops with it. */
  fatal: AgentAppsError | undefined;
  readonly #write: RunJournalOptions['write'];
  readonly #flush: RunJournalOptions['flush'];
  readonly #help: RunJournalOptions['unverifiedHelp'];
  #roots = 0;
  readonly #nested = new Map<string, number>();
  readonly #stops = new Set<(err: AgentAppsError) => void>();

  constructor(o: RunJournalOptions) {
    this.#write = o.write;
    this.#flush = o.flush;
    this.#help = o.unverifiedHelp;
    this.resume = o.resume;
    this.rerunUnverified = o.rerunUnverified === true;
  }

  /** One line; `text` is what `tail` shows of it — a model-turn's own `text` is the model's, and stays. */
  write(line: JournalLine, text?: string): void {
    this.#write(text === undefined || line.type === 'model-turn' ? { ...line, tag: JOURNAL_TAG, level: 'debug', record: true } : { ...line, tag: JOURNAL_TAG, level: 'debug', record: true, text });
  }

  /** Resolves once every line written so far is kept (at once for a run file, written synchronously). */
  durable(): Promise<void> | undefined {
    return this.#flush?.();
  }

  /** What an E_RESUME for an unverified call of `tool` says to do. */
  unverifiedHelp(tool: string): string {
    return this.#help ? this.#help(tool) : `pass --rerun-unverified to run it again, or give '${tool}' idempotent: true in its metadata if running it twice is harmless`;
  }

  /** The journal of an agent the run starts now: `ctx` is the agent skill's context. */
  agent(ctx: Context, skill: string): AgentJournal {
    const within = ctx.nonlocals.journalCall;
    let key: string;
    if (typeof within === 'string') {
      const n = (this.#nested.get(within) ?? 0) + 1;
      this.#nested.set(within, n);
      key = `${within}/${n}`;
    } else key = String(++this.#roots);
    return new AgentJournal(this, key, skill, this.resume?.journal.agents.get(key));
  }

  /** Ends the run on `err` (the first one stays): every agent running stops, and the CLI reports it. */
  fail(err: AgentAppsError): AgentAppsError {
    this.fatal ??= err;
    for (const stop of [...this.#stops]) stop(this.fatal);
    return this.fatal;
  }

  /** Calls `stop` when the run fails (`fail`); the returned function unregisters it. */
  onFatal(stop: (err: AgentAppsError) => void): () => void {
    this.#stops.add(stop);
    return () => this.#stops.delete(stop);
  }

  /** `run ID` of the run being resumed, for messages. */
  get from(): string {
    return this.resume ? (this.resume.name ?? `run ${this.resume.from.slice(0, 8)}`) : 'this run';
  }
}

/** How a person is asked (the served skill's `ctx.manager.ask`). */
export type AskPerson = (question: string, choices: { value: string; label: string; key: string }[]) => Promise<string>;

/** One agent's journal: its key, the responses to play back, and its calls. */
export class AgentJournal {
  readonly run: RunJournal;
  readonly key: string;
  readonly skill: string;
  readonly #recorded: JournalAgent | undefined;
  #turn = 0;
  #index = 0;

  constructor(run: RunJournal, key: string, skill: string, recorded: JournalAgent | undefined) {
    this.run = run;
    this.key = key;
    this.skill = skill;
    this.#recorded = recorded;
  }

  /** The responses the run being resumed journaled for this agent, turn 1 on, up to the first turn it has none of. */
  get replayTurns(): JournalTurn[] {
    const out: JournalTurn[] = [];
    const turns = this.#recorded?.turns;
    if (!turns) return out;
    for (let n = 1; turns.has(n); n++) {
      const t = turns.get(n)!;
      out.push({ ...(t.text !== undefined ? { text: t.text } : {}), ...(t.invoke !== undefined ? { invoke: t.invoke } : {}), ...(t.usage ? { usage: t.usage } : {}) });
    }
    return out;
  }

  /** A model turn begins: its calls are numbered from 1. */
  turnStart(turn: number): void {
    this.#turn = turn;
    this.#index = 0;
  }

  /** A model response came in (the provider's `response` hook event): its `model-turn` line. */
  response(e: { [key: string]: unknown }): void {
    const turn = typeof e.turnNumber === 'number' ? e.turnNumber : this.#turn;
    const invoke = typeof e.invoke === 'string' || (Array.isArray(e.invoke) && e.invoke.every((c) => typeof c === 'string')) ? (e.invoke as string | string[]) : undefined;
    const usage = e.usage as TokenUsage | undefined;
    const line: TurnLine = {
      type: 'model-turn',
      agent: this.key,
      skill: this.skill,
      turn,
      ...(typeof e.text === 'string' && e.text ? { text: e.text } : {}),
      ...(invoke !== undefined ? { invoke } : {}),
      ...(usage && typeof usage === 'object' ? { usage: { inputTokens: Number(usage.inputTokens) || 0, outputTokens: Number(usage.outputTokens) || 0, totalTokens: Number(usage.totalTokens) || 0 } } : {}),
      ...(e.replayed === true ? { replayed: true as const } : {}),
    };
    this.run.write(line);
  }

  /**
   * A host call of the agent's code, numbered: what the journal of the run being resumed holds for
   * it. A journaled call that is not this one (another tool or other args: the code no longer does
   * what it did) ends the run with E_RESUME.
   */
  call(tool: string, args: unknown, kill: (message: string) => void): JournalCall {
    if (this.run.fatal) throw this.run.fatal;
    const index = ++this.#index;
    const key = `${this.#turn}.${index}`;
    const recorded = this.#recorded?.calls.get(key);
    const call = new JournalCall(this, key, this.#turn, index, tool, args, recorded, kill);
    const was = recorded?.start ?? recorded?.end;
    if (was && (was.tool !== tool || !sameArgs(was.args, args))) {
      throw call.fail(`the journal of ${this.run.from} does not match this run: call ${key} of agent ${this.key} (${this.skill}) was ${callText(was.tool, was.args)}, the code now calls ${callText(tool, redact(args))} — the code or what it was given changed; run the skill again instead`);
    }
    return call;
  }
}

/** One host call of agent code in a journaled run. */
export class JournalCall {
  readonly agent: AgentJournal;
  /** `TURN.INDEX`. */
  readonly key: string;
  readonly turn: number;
  readonly index: number;
  readonly tool: string;
  readonly args: unknown;
  /** Its call-end in the journal being resumed: the call is played back from it. */
  readonly recorded: CallLine | undefined;
  /** Its call-start in that journal, when it has no call-end: the call may have run. */
  readonly unverified: CallLine | undefined;
  readonly #kill: (message: string) => void;
  /** The recorded call had started (a call refused before it ran has only its call-end). */
  readonly #started: boolean;
  #rerun: string | undefined;

  constructor(agent: AgentJournal, key: string, turn: number, index: number, tool: string, args: unknown, recorded: { start?: CallLine; end?: CallLine } | undefined, kill: (message: string) => void) {
    this.agent = agent;
    this.key = key;
    this.turn = turn;
    this.index = index;
    this.tool = tool;
    this.args = args;
    this.recorded = recorded?.end;
    this.unverified = recorded?.start && !recorded.end ? recorded.start : undefined;
    this.#started = recorded?.start !== undefined;
    this.#kill = kill;
  }

  /** What the called tool's context carries, so that an agent started inside the call is keyed under it. */
  get scope(): string {
    return `${this.agent.key}/${this.key}`;
  }

  #line(type: CallLine['type'], more: Partial<CallLine>): CallLine {
    return { type, agent: this.agent.key, call: this.key, turn: this.turn, index: this.index, tool: this.tool, ...more };
  }

  #text(what: string): string {
    return `call ${this.key}${this.agent.key === '1' ? '' : ` of agent ${this.agent.key}`}: ${what}`;
  }

  /** Plays the call back: its recorded result, or its recorded error thrown; a recorded denial is a denial of this run too. */
  replay(denied: (tool: string, err: AgentAppsError) => void): unknown {
    const end = this.recorded!;
    const run = this.agent.run;
    if (this.#started) run.write(this.#line('call-start', { args: this.args, replayed: true }), this.#text('replayed'));
    if (end.error) {
      const err = new AgentAppsError(end.error.code || 'E_SKILL', end.error.message ?? '');
      if (end.denied) denied(this.tool, err);
      run.write(this.#line('call-end', { ...(this.#started ? {} : { args: this.args }), error: end.error, ...(end.denied ? { denied: true as const } : {}), replayed: true }), this.#text(`${end.error.code} (replayed)`));
      throw err;
    }
    run.write(this.#line('call-end', { result: end.result, replayed: true }), this.#text('ok (replayed)'));
    return end.result ?? null;
  }

  /**
   * An unverified call (it started in the run being resumed and left no result): run it again for
   * a tool whose metadata says `idempotent: true` or an agent skill (a prompt: its work is its
   * agent's, whose calls the journal keeps apart), with --rerun-unverified, or when the person at
   * the terminal says so; else the run ends with E_RESUME naming the call.
   */
  async confirm(o: { idempotent: 'idempotent' | 'agent' | undefined; ask: AskPerson }): Promise<void> {
    const run = this.agent.run;
    // An agent skill's work is its agent's, whose own calls resume from this journal one by one.
    if (o.idempotent) {
      this.#rerun = o.idempotent;
      return;
    }
    if (run.rerunUnverified) {
      this.#rerun = '--rerun-unverified';
      return;
    }
    const what = callText(this.tool, this.unverified?.args ?? this.args);
    let answer: string;
    try {
      answer = await o.ask(`re-run ${what}? it may have run already (call ${this.key} of ${run.from} started and left no result)`, [
        { value: 'rerun', label: 're-run it', key: 'y' },
        { value: 'stop', label: 'stop the run', key: 'n' },
      ]);
    } catch (err) {
      if ((err as { code?: unknown })?.code !== 'E_NOT_INTERACTIVE') throw err;
      throw this.fail(`${what} (call ${this.key} of ${run.from}) started and left no result: it may have run already, so it is not run again — ${run.unverifiedHelp(this.tool)}`);
    }
    if (answer !== 'rerun') throw this.fail(`${what} (call ${this.key} of ${run.from}) started and left no result, and was not run again (the answer was no)`);
    this.#rerun = 'asked';
  }

  /** The tool is about to run: its call-start. */
  start(): void {
    const rerun = this.#rerun;
    this.agent.run.write(this.#line('call-start', { args: this.args, ...(rerun ? { rerun } : {}) }), this.#text(rerun ? `re-run (unverified; ${rerun})` : 'start'));
  }

  /** It returned `result`: its call-end. */
  end(result: unknown): void {
    this.agent.run.write(this.#line('call-end', { result }), this.#text('ok'));
  }

  /**
   * It threw `err` — after it started, or before (refused, not found, bad args: `denied` when it
   * was a denial). Not journaled once the run is failing: a call stopped by E_RESUME did not end.
   */
  failed(err: unknown, o: { started: boolean; denied?: boolean }): void {
    const run = this.agent.run;
    if (run.fatal) return;
    const e = err as { code?: unknown; message?: unknown } | null;
    const error = { code: typeof e?.code === 'string' ? e.code : 'E_SKILL', message: typeof e?.message === 'string' ? e.message : String(err) };
    run.write(this.#line('call-end', { ...(o.started ? {} : { args: this.args }), error, ...(o.denied ? { denied: true as const } : {}) }), this.#text(error.code));
  }

  /** The run cannot be resumed past this call: E_RESUME, and every agent stops (the execution at once). */
  fail(message: string): AgentAppsError {
    const err = this.agent.run.fail(new AgentAppsError('E_RESUME', message));
    this.#kill(err.message);
    return err;
  }
}

/** Args as the journal holds them (redacted as every run-file line is) against the code's args now. */
function sameArgs(recorded: unknown, now: unknown): boolean {
  return stable(recorded) === stable(redact(jsonCopy(now)));
}

function jsonCopy(v: unknown): unknown {
  if (v === undefined) return undefined;
  try {
    return JSON.parse(JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? String(x) : x)) ?? 'null');
  } catch {
    return String(v);
  }
}

function stable(v: unknown): string {
  return JSON.stringify(v ?? null) ?? 'null';
}

declare module '../core/types.ts' {
  interface RuntimeState {
    /** The run's journal (docs/runs.md): set by the CLI for a run it records in a run file. */
    journal?: RunJournal;
  }
}
