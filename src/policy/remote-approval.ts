// Remote approvals (docs/serve.md, "Remote approvals"): an approval gate of a run that has no
// terminal — one a gateway started, or a headless run with `--approvals-via NAME` — is sent to
// the people named in `approvals.approvers` through a gateway (Slack buttons, an email answered
// yes / no, a web page behind a single-use link) instead of being refused.
//
// The rules, all here so that every channel keeps them:
//   - a gate is a pending approval with a random id and a random single-use token; the channel
//     puts both in what it sends (a button's value, a mail's subject, a link), and an answer must
//     carry both: the token is compared in constant time;
//   - only an approver may answer: the channel says who answered (a Slack user id from a verified
//     interactivity payload, an email's sender, `web` for the link) and `approvers` must list them
//     (`web` approves through the link or the web view);
//   - an answer settles its gate once: a second, replayed or late answer (the gate settled, timed
//     out or was withdrawn) is refused and logged, and never reaches another gate;
//   - no answer within `approvals.timeoutMs` (default 10 minutes) is a deny;
//   - a message through a gateway is never an answer by itself: only `answer()` with the gate's own
//     id and token settles a gate (docs/security.md).
// Every decision carries who answered, when and through what (`Answer.by`), which the gate writes
// into the run's log (the run file), the agent's trace and the run's denials.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { AbortError, AgentAppsError } from '../core/errors.ts';
import type { Answer, ApprovalQuestion, Asker, Question } from '../core/ask.ts';
import { withRunAsker } from '../kernel/asking.ts';
import type { Nonlocals } from '../core/types.ts';

export const DEFAULT_APPROVAL_TIMEOUT_MS = 600_000;

/** The run a gate belongs to, as the approvers see it. */
export interface GateRun {
  /** The skill the run was started for. */
  skill: string;
  /** What started it: a gateway's name and type, `schedule`, `run`. */
  trigger?: string;
  /** The run file's id, when the run has one. */
  runId?: string;
  /**
   * Where the message that started the run came from, as its gateway put it (the slack gateway:
   * `{ channel, thread_ts }`), so that the channel can say in that place that the run waits.
   */
  origin?: Readonly<Record<string, string>>;
}

export interface PendingApproval {
  /** Random, 16 hex digits: names the gate in what the channel sends. */
  id: string;
  question: ApprovalQuestion;
  run: GateRun;
  /** The gateway that carries it. */
  via: string;
  createdAt: number;
  expiresAt: number;
}

/** What a channel sends and how its answers come back (an email, a Slack message, a link). */
export interface ApprovalChannel {
  /** Sends the gate to the approvers; `token` is the gate's single-use secret, for its answer. */
  send(p: PendingApproval, token: string): Promise<void>;
  /** Tells the approvers how it ended (a Slack message updated), when the channel can. */
  settled?(p: PendingApproval, outcome: Outcome): Promise<void>;
}

export interface Outcome {
  decision: 'allow' | 'deny';
  /** Who answered (a Slack user id, an email address, `web`); absent for a timeout. */
  who?: string;
  /** Through what: the gateway's name, or `timeout`, `withdrawn`. */
  via: string;
  at: number;
  reason?: string;
}

/** What a channel passes on from a verified answer. */
export interface AnswerInput {
  id: string;
  token: string;
  value: 'allow' | 'deny';
  /** Who answered, as the channel verified it. */
  who: string;
  /** The gateway it came through. */
  via: string;
  reason?: string;
}

export type AnswerResult = { ok: true; pending: PendingApproval } | { ok: false; code: 'E_STALE' | 'E_NOT_APPROVER' | 'E_BAD_TOKEN'; message: string };

export interface BrokerOptions {
  approvers: readonly string[];
  timeoutMs?: number;
  /** A refused answer, a timeout: one line where the serve process logs. */
  log(level: 'info' | 'warn', text: string): void;
  now?: () => number;
}

interface Gate {
  pending: PendingApproval;
  digest: Buffer;
  resolve(answer: Answer): void;
  timer: ReturnType<typeof setTimeout>;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Settled gates remembered, so that a late or second answer is told so (not "no such gate"). */
const SETTLED_MEMORY = 1000;

export class ApprovalBroker {
  readonly approvers: ReadonlySet<string>;
  readonly timeoutMs: number;
  readonly #channels = new Map<string, ApprovalChannel>();
  readonly #gates = new Map<string, Gate>();
  readonly #settled = new Map<string, Outcome>();
  readonly #log: BrokerOptions['log'];
  readonly #now: () => number;

  constructor(o: BrokerOptions) {
    this.approvers = new Set(o.approvers);
    this.timeoutMs = o.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
    this.#log = o.log;
    this.#now = o.now ?? Date.now;
  }

  /** A gateway that can carry approvals registers its channel under its name. */
  register(via: string, channel: ApprovalChannel): void {
    this.#channels.set(via, channel);
  }

  has(via: string): boolean {
    return this.#channels.has(via);
  }

  /** The gates waiting for an answer, oldest first (the web view lists them). */
  pending(): PendingApproval[] {
    return [...this.#gates.values()].map((g) => g.pending);
  }

  /** How a settled gate ended, for a while after (the web view's answer page). */
  outcome(id: string): Outcome | undefined {
    return this.#settled.get(id);
  }

  /**
   * Sends `question` through `via` and waits: resolves with the approver's answer, or a deny when
   * no answer comes within timeoutMs; rejects (E_ABORTED) when `signal` aborts — the gate is
   * withdrawn and a later answer to it refused.
   */
  async request(question: ApprovalQuestion, run: GateRun, via: string, signal: AbortSignal): Promise<Answer> {
    const channel = this.#channels.get(via);
    if (!channel) throw new AgentAppsError('E_CONFIG', `approvals.via: no gateway '${via}' that can carry approvals is running (email, slack or web)`);
    if (signal.aborted) throw new AbortError(signal.reason);
    const id = randomBytes(8).toString('hex');
    const token = randomBytes(24).toString('base64url');
    const now = this.#now();
    const pending: PendingApproval = { id, question, run, via, createdAt: now, expiresAt: now + this.timeoutMs };
    return new Promise<Answer>((resolve, reject) => {
      const finish = (outcome: Outcome, answer?: Answer, error?: Error) => {
        const gate = this.#gates.get(id);
        if (!gate) return;
        this.#gates.delete(id);
        clearTimeout(gate.timer);
        signal.removeEventListener('abort', onAbort);
        this.#remember(id, outcome);
        void channel.settled?.(pending, outcome).catch((err: unknown) => this.#log('warn', `approval ${id}: cannot tell ${via} how it ended (${(err as Error).message})`));
        if (error) reject(error);
        else resolve(answer!);
      };
      const onAbort = () => finish({ decision: 'deny', via: 'withdrawn', at: this.#now() }, undefined, new AbortError(signal.reason));
      signal.addEventListener('abort', onAbort, { once: true });
      const timer = setTimeout(() => {
        const at = this.#now();
        const reason = `no answer through ${via} within ${this.timeoutMs} ms (approvals.timeoutMs)`;
        this.#log('warn', `approval ${id} of ${question.tool}: ${reason}: denied`);
        finish({ decision: 'deny', via: 'timeout', at, reason }, { value: 'deny', reason, by: { who: 'timeout', via, at } });
      }, this.timeoutMs);
      this.#gates.set(id, {
        pending,
        digest: digest(token),
        timer,
        resolve: (answer) => finish({ decision: answer.value === 'deny' ? 'deny' : 'allow', via, at: answer.by?.at ?? this.#now(), ...(answer.by ? { who: answer.by.who } : {}), ...(answer.reason ? { reason: answer.reason } : {}) }, answer),
      });
      channel.send(pending, token).catch((err: unknown) => {
        const reason = `the approval could not be sent through ${via} (${(err as Error).message})`;
        this.#log('warn', `approval ${id} of ${question.tool}: ${reason}: denied`);
        const at = this.#now();
        finish({ decision: 'deny', via: 'unsent', at, reason }, { value: 'deny', reason, by: { who: 'nobody', via, at } });
      });
    });
  }

  /** A verified answer from a channel: settles its gate, or says why not (and logs it). */
  answer(a: AnswerInput): AnswerResult {
    const refuse = (code: 'E_STALE' | 'E_NOT_APPROVER' | 'E_BAD_TOKEN', message: string): AnswerResult => {
      this.#log('warn', `approval ${safe(a.id)}: refused an answer from ${safe(a.who)} through ${a.via}: ${message}`);
      return { ok: false, code, message };
    };
    const gate = this.#gates.get(a.id);
    if (!gate) {
      const done = this.#settled.get(a.id);
      return refuse('E_STALE', done ? `the gate was already settled (${done.decision}${done.who ? ` by ${done.who}` : ''} through ${done.via})` : 'no such approval is waiting');
    }
    if (typeof a.token !== 'string' || !timingSafeEqual(digest(a.token), gate.digest)) return refuse('E_BAD_TOKEN', 'the answer does not carry this gate’s token');
    if (a.via !== gate.pending.via) return refuse('E_BAD_TOKEN', `this gate was sent through ${gate.pending.via}, not ${a.via}`);
    if (!this.approvers.has(a.who)) return refuse('E_NOT_APPROVER', `${a.who} is not one of approvals.approvers`);
    const at = this.#now();
    this.#log('info', `approval ${a.id} of ${gate.pending.question.tool}: ${a.value === 'allow' ? 'allowed' : 'denied'} by ${a.who} through ${a.via}`);
    gate.resolve({ value: a.value, ...(a.reason ? { reason: a.reason } : {}), by: { who: a.who, via: a.via, at } });
    return { ok: true, pending: gate.pending };
  }

  /** An Asker for one run: its approval gates go through `via`; a plain question is refused. */
  askerFor(run: GateRun, via: string): Asker {
    return {
      ask: (question: Question, signal: AbortSignal) => {
        if (question.kind !== 'approval') return Promise.reject(new AgentAppsError('E_NOT_INTERACTIVE', `ask: nobody is at a terminal for this run (${run.trigger ?? 'a gateway'}); only approval gates go through ${via}`));
        return this.request(question, run, via, signal);
      },
    };
  }

  /** Stops: every waiting gate is denied (the serve process is going away). */
  close(): void {
    for (const gate of [...this.#gates.values()]) {
      const at = this.#now();
      gate.resolve({ value: 'deny', reason: 'the server stopped', by: { who: 'nobody', via: 'shutdown', at } });
    }
  }

  #remember(id: string, outcome: Outcome): void {
    this.#settled.set(id, outcome);
    while (this.#settled.size > SETTLED_MEMORY) this.#settled.delete(this.#settled.keys().next().value!);
  }
}

/** An id or a name from outside, for a log line: short and printable. */
function safe(s: unknown): string {
  return String(s).replace(/[^\x20-\x7e]/g, '?').slice(0, 80);
}

/** Puts a remote asker on a run's nonlocals (the dispatch of a gateway message). */
export const withRemoteApprovals = (nonlocals: Nonlocals, asker: Asker): Nonlocals => withRunAsker(nonlocals, asker);
