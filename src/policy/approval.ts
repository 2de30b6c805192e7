// Approval gates and trust (docs/agents.md): tool-execution approval — may this tool call
// run? — opens inside a tool handler. The bridge (bridge.ts) decides that a call from agent code
// needs a person — its agent's `ask-tools` matched it, or the called tool's `trust` is `ask` — and
// this module opens the gate: only that call waits; the person sees the tool, its args and the
// calling code and answers allow once / allow for this run / deny (with a reason the model sees).
//
//   --approve all | PATTERNS   pre-approves (no person asked)       → decision allow
//   an earlier "allow for this run" for the same rule                → decision allow-run
//   a person: y / a / n + reason                                     → allow | allow-run | deny (E_DENIED)
//   nobody to ask (no terminal, no asker)                            → refused (E_ALLOWED_TOOLS, "needs approval")
//   the call or the run aborted while the gate waits                 → refused (E_ABORTED)
//   trust: deny                                                      → refused (E_ALLOWED_TOOLS, naming trust)
//
// Every decision is a log event `{ type: 'approval', tool, decision, reason? }` and an entry on
// the agent's trace; every refused call of agent code is a denial on `locals.agent.denials` and a
// `denied` trace entry (which the CLI's stream-json and --fail-on-denial read, docs/ci.md).
import { AbortError, AgentAppsError, ConfigurationError } from '../core/errors.ts';
import { askDesk, runDesk, type AskDesk } from '../kernel/asking.ts';
import { APPROVAL_CHOICES, type Answer, type ApprovalQuestion } from '../core/ask.ts';
import { parseAllowedTools } from '../kernel/allowed-tools.ts';
import type { Kernel } from '../kernel/orchestrator.ts';
import type { Context, LoadedTool } from '../core/types.ts';

export type Decision = 'allow' | 'allow-run' | 'deny' | 'refused';

/** A call of agent code that was refused (docs/agents.md): what `--fail-on-denial` and stream-json read. */
export interface Denial {
  tool: string;
  /** The error code agent code got: E_ALLOWED_TOOLS, E_DENIED, E_UNTRUSTED_REF, E_ABORTED. */
  code: string;
  reason: string;
  timestamp: number;
  /** A remote approval's answer (docs/serve.md): who denied it, through what gateway, when (ISO 8601). */
  answeredBy?: string;
  answeredVia?: string;
  answeredAt?: string;
}

/** What an ApprovalState puts on its agent's trace: gate decisions and refused calls. */
export type StateEntry = { type: 'approval' | 'denied'; [key: string]: unknown };

/** What opened a gate: a rule of the agent's ask-tools, or the called tool's `trust: ask`. */
export type GateCause = ApprovalQuestion['because'];

/**
 * One agent run's approvals and refusals. A sub-agent started by agent code has its own, whose
 * parent is its caller's: "allow for this run" is remembered for the whole agent run (sub-agents
 * included), and a sub-agent's denials are its caller's too.
 */
export class ApprovalState {
  readonly parent: ApprovalState | undefined;
  /** This run's refused calls (the array on `locals.agent.denials`), its sub-agents' included. */
  readonly denials: Denial[];
  readonly #allowRun = new Set<string>();
  readonly #trace: ((entry: StateEntry) => void) | undefined;

  constructor(o: { parent?: ApprovalState; denials?: Denial[]; trace?: (entry: StateEntry) => void } = {}) {
    this.parent = o.parent;
    this.denials = o.denials ?? [];
    this.#trace = o.trace;
  }

  get root(): ApprovalState {
    let s: ApprovalState = this;
    while (s.parent) s = s.parent;
    return s;
  }

  allowedForRun(key: string): boolean {
    return this.root.#allowRun.has(key);
  }

  allowForRun(key: string): void {
    this.root.#allowRun.add(key);
  }

  /** A refused call: on this run's denials and every caller's; a `denied` entry on this run's trace only (it happened here). */
  deny(d: Denial): void {
    for (let s: ApprovalState | undefined = this; s; s = s.parent) s.denials.push(d);
    this.#trace?.({ type: 'denied', tool: d.tool, code: d.code, reason: d.reason, ...(d.answeredBy !== undefined ? { answeredBy: d.answeredBy, answeredVia: d.answeredVia, answeredAt: d.answeredAt } : {}) });
  }

  trace(entry: StateEntry): void {
    this.#trace?.(entry);
  }
}

// ── trust ───────────────────────────────────────────────────────────────────────────────────

export type TrustLevel = 'allow' | 'ask' | 'deny';

export interface Trust {
  value: TrustLevel;
  /** Where it was set: a file (a skill, a folder's main), `--set`, an MCP server entry — or `default`. */
  source: string;
  /** The cascade level that set it, as the cascade names it (a `file://` URI, `cli (--set)`, `mcp://…`). */
  from?: string;
}

const LEVELS: readonly string[] = ['allow', 'ask', 'deny'];

/**
 * A tool's effective `trust` (docs/agents.md): the `trust` key of its cascade — its own metadata, a
 * folder's `main` above it, `--set trust=…`, or for an MCP tool its server entry
 * (`mcp.servers.NAME.trust`) — else `allow`. A value other than allow / ask / deny is E_CONFIG.
 */
export async function trustOf(kernel: Kernel, tool: LoadedTool, paths: readonly string[]): Promise<Trust> {
  const plan = await kernel.planner.plan(tool, paths);
  return readTrust(plan.cascade.metadata.trust, plan.cascade.from.trust, tool.name);
}

export function readTrust(value: unknown, from: string | undefined, tool: string): Trust {
  const source = describeSource(from);
  if (value === undefined || value === null) return { value: 'allow', source: 'default' };
  const at = from !== undefined ? { from } : {};
  if (typeof value !== 'string' || !LEVELS.includes(value)) {
    const place = from?.startsWith('file://') ? { file: source, key: 'trust' } : { source, key: 'trust' };
    throw new ConfigurationError(`trust of '${tool}' must be ask, deny or allow (got ${JSON.stringify(value)})`, { place });
  }
  return { value: value as TrustLevel, source, ...at };
}

/** A cascade level's label as a person reads it: a path, `--set`, `mcp.servers.NAME.trust`. */
function describeSource(label: string | undefined): string {
  if (label === undefined) return 'default';
  if (label.startsWith('file://')) {
    try {
      return decodeURIComponent(new URL(label).pathname);
    } catch {
      return label;
    }
  }
  if (label.startsWith('cli')) return '--set';
  const mcp = /^mcp:\/\/([^/]+)\//.exec(label);
  if (mcp) {
    let server = mcp[1]!;
    try {
      server = decodeURIComponent(server);
    } catch {}
    return `mcp.servers.${server}.trust`;
  }
  return label;
}

// ── the gate ────────────────────────────────────────────────────────────────────────────────

export interface GateRequest {
  /** Where the decision is logged: the skill the agent serves. */
  served: Context;
  /** The agent, as logs show it. */
  display: string;
  state: ApprovalState;
  /** The called tool, its args (as agent code passed them, sanitized), its params and the cwd they resolve against. */
  tool: string;
  args: unknown;
  params: unknown;
  cwd: string;
  because: GateCause;
  /** The code of the execution that made the call. */
  code?: string;
  /** How agent code reaches the tool when it does not call it: `event-subscribe's ref`, `$context.middleware`. */
  via?: string;
  /** The execution's signal: the gate is withdrawn when it ends or the run is aborted. */
  signal: AbortSignal;
  /** Set when the caller is not agent code but a way in from outside: "an MCP client" … */
  from?: string;
  /** Who to ask instead of the served context's: a remote asker (remote-approval.ts) of a request from outside. */
  desk?: AskDesk;
}

/**
 * Opens the gate for one call and waits for it: returns when the call may run, throws E_DENIED
 * (the person said no), E_ALLOWED_TOOLS (nobody to ask) or E_ABORTED (withdrawn).
 */
export async function passGate(r: GateRequest): Promise<void> {
  const key = r.because.kind === 'ask-tools' ? `ask-tools\0${r.because.pattern}` : `trust\0${r.tool}`;
  const why = r.because.kind === 'ask-tools' ? `ask-tools '${r.because.pattern}'` : `trust: ask, set in ${r.because.source}`;
  const approve = r.served.globals.internals.approve;
  if (typeof approve === 'string' && (approve === 'all' || parseAllowedTools(approve).allows(r.tool, r.args, { cwd: r.cwd, params: r.params }))) {
    return decide(r, 'allow', { by: 'approve', text: `allowed by --approve ${approve}` });
  }
  if (r.state.allowedForRun(key)) return decide(r, 'allow-run', { by: 'earlier', text: `allowed for this run (${why})` });
  // A run whose approvals go through a gateway (docs/serve.md, "Remote approvals") asks there;
  // otherwise the runtime's person (the terminal), if it has one.
  const desk = r.desk ?? runDesk(r.served.nonlocals) ?? askDesk(r.served.globals);
  const refuse = (reason: string): never => {
    decide(r, 'refused', { by: 'no-person', reason, text: `refused: ${reason}` });
    throw denied(r, new AgentAppsError('E_ALLOWED_TOOLS', `'${r.display}' may not invoke '${r.tool}' without a person's approval (${why}): it needs approval; run in a terminal or pass --approve`));
  };
  if (!desk) return refuse('needs approval; run in a terminal or pass --approve');
  const question: ApprovalQuestion = {
    kind: 'approval',
    text: `Allow ${r.tool}${r.via ? ` (as ${r.via})` : ''}?`,
    tool: r.tool,
    args: r.args,
    ...(r.code !== undefined ? { code: r.code } : {}),
    agent: r.display,
    ...(r.via ? { via: r.via } : {}),
    because: r.because,
    choices: [...APPROVAL_CHOICES],
  };
  let answer: Answer;
  try {
    // Waiting in line behind other questions, an earlier "allow for this run" may settle it.
    answer = await desk.ask(question, r.signal, () => (r.state.allowedForRun(key) ? { value: 'allow-run' } : undefined));
  } catch (err) {
    if (err instanceof AbortError || r.signal.aborted) {
      const error = err instanceof AbortError ? err : new AbortError(r.signal.reason);
      decide(r, 'refused', { by: 'abort', reason: 'aborted', text: `refused: the gate was withdrawn (${error.message})` });
      throw denied(r, error);
    }
    if ((err as { code?: string }).code === 'E_NOT_INTERACTIVE') return refuse('needs approval; nobody is left to answer (the input ended)');
    throw err;
  }
  // A remote answer says who gave it, through what and when: kept on the decision (run file, trace).
  const remote = answer.by ? { answeredBy: answer.by.who, answeredVia: answer.by.via, answeredAt: new Date(answer.by.at).toISOString() } : {};
  const byWhom = answer.by ? ` by ${answer.by.who} through ${answer.by.via}` : '';
  switch (answer.value) {
    case 'allow':
      return decide(r, 'allow', { by: 'person', ...remote, text: `allowed once${byWhom}` });
    case 'allow-run':
      r.state.allowForRun(key);
      return decide(r, 'allow-run', { by: 'person', ...remote, text: `allowed for this run (${why})${byWhom}` });
    default: {
      const reason = answer.reason;
      decide(r, 'deny', { by: answer.by?.who === 'timeout' ? 'timeout' : 'person', ...remote, ...(reason ? { reason } : {}), text: `denied${byWhom}${reason ? `: ${reason}` : ''}` });
      const who = answer.by ? (answer.by.who === 'timeout' ? `nobody answered through ${answer.by.via} in time, so the call of '${r.tool}' was denied` : `${answer.by.who} denied the call of '${r.tool}' through ${answer.by.via}`) : `the person running agent-apps denied the call of '${r.tool}'`;
      throw denied(r, new AgentAppsError('E_DENIED', `${who}${reason ? `: ${reason}` : ' (no reason given)'}`), remote);
    }
  }
}

/** `trust: deny` on the called tool: refused without asking. */
export function refuseByTrust(r: Omit<GateRequest, 'because' | 'signal' | 'params' | 'cwd' | 'code'>, trust: Trust): never {
  const reason = `trust: deny, set in ${trust.source}`;
  logDecision(r, 'refused', { by: 'trust', reason, text: `refused: ${reason}` });
  throw denied(r, new AgentAppsError('E_ALLOWED_TOOLS', `'${r.display}' may not invoke '${r.tool}': its trust is deny (set in ${trust.source}); agent code may not call it`));
}

const recorded = new WeakSet<Error>();

/** A refused call: recorded on the agent run (once), returned to be thrown. */
export function denied(r: { state: ApprovalState; tool: string }, error: AgentAppsError, answered: Partial<Pick<Denial, 'answeredBy' | 'answeredVia' | 'answeredAt'>> = {}): AgentAppsError {
  if (recorded.has(error)) return error;
  recorded.add(error);
  r.state.deny({ tool: r.tool, code: error.code, reason: error.message, timestamp: Date.now(), ...answered });
  return error;
}

/** True when `error` was recorded as a denial already. */
export function isRecorded(error: Error): boolean {
  return recorded.has(error);
}

function decide(r: GateRequest, decision: Decision, extra: { by: string; reason?: string; text: string; answeredBy?: string; answeredVia?: string; answeredAt?: string }): void {
  logDecision(r, decision, { ...extra, because: r.because });
}

function logDecision(r: { served: Context; display: string; state: ApprovalState; tool: string; args: unknown; from?: string }, decision: Decision, extra: { by: string; reason?: string; text: string; because?: GateCause; answeredBy?: string; answeredVia?: string; answeredAt?: string }): void {
  const { text, ...fields } = extra;
  r.state.trace({ type: 'approval', tool: r.tool, decision, ...fields });
  r.served.manager.log({
    type: 'approval',
    tag: 'agent',
    level: decision === 'allow' || decision === 'allow-run' ? 'info' : 'warn',
    tool: r.tool,
    decision,
    agent: r.display,
    args: r.args,
    ...fields,
    // The console shows `LEVEL TOOL: TEXT`: the tool is the one called, the text says the rest.
    text: `${text} (a call from ${r.from ?? `the agent of '${r.display}'`})`,
  });
}
