// The `session` middleware (docs/agents.md, docs/ci.md): it captures the agent trace by default,
// by way of the $agent sentinel. The library's main.md orders it after `$agent`, so it runs once
// an agent has run — `agent-execute` (a prompt skill) or `execute` (the `agent` skill invoked
// directly) hands over to the entries after `$agent` — and never for any other skill. It records
// the run — trace, usage, cost, denials, result or error — as one `agent-run` log event, which the
// CLI's jsonl reporter writes to the run file; `agent-apps runs show ID` prints it as a transcript.
// `session: false` (in a main, a skill, or --set) turns the record off.
import { ctxTarget, type Context } from 'agent-apps';

export const frontmatter = {
  name: 'session',
  description: 'Records every agent run — its trace, token usage, cost, denials and result or error — in the run file (`agent-apps runs show ID`). Runs after the agent ($agent); `session: false` turns it off.',
  metadata: { role: 'middleware', visibility: 'hidden', tags: ['meta-internal'], params: { type: 'boolean' }, returns: {} },
};

/** What the agent leaves on the served skill's `locals.agent` (src/agent/trace.ts). */
interface AgentLocals {
  trace: { type: string; timestamp: number; delta?: unknown; [key: string]: unknown }[];
  usage: { inputTokens: number; outputTokens: number; totalTokens: number };
  denials: unknown[];
  costUsd?: number;
}

export default async function session(ctx: Context, enabled: unknown) {
  const target = ctxTarget(ctx);
  const agent = target.locals.agent as AgentLocals | undefined;
  if (enabled !== false && agent && Array.isArray(agent.trace)) {
    try {
      ctx.manager.log(record(target, agent));
    } catch {
      // A record that cannot be made must never change the run it records.
    }
  }
  return target.manager.next();
}

function record(target: Context, agent: AgentLocals) {
  const skill = target.run.tool.name;
  const scope = target.nonlocals.agent;
  const failed = target.locals.error !== undefined && target.locals.error !== null;
  // Streamed chunks (`delta: true`) are left out: each turn's whole message is in the trace too.
  const trace = agent.trace.filter((e) => e.delta !== true);
  const startedAt = target.locals.history.at(-1)?.timestamp ?? trace[0]?.timestamp ?? Date.now();
  let turns = 0;
  let calls = 0;
  for (const e of trace) {
    if (e.type === 'turn-start') turns++;
    else if (e.type === 'tool-call') calls++;
  }
  const usage = { ...agent.usage };
  const err = target.locals.error as { code?: unknown; message?: unknown } | undefined;
  const error = failed ? { code: typeof err?.code === 'string' ? err.code : 'E_FAILED', message: typeof err?.message === 'string' ? err.message : String(err) } : undefined;
  const counts = `${turns} turn${turns === 1 ? '' : 's'}, ${calls} tool call${calls === 1 ? '' : 's'}, ${usage.totalTokens} tokens`;
  return {
    type: 'agent-run',
    tag: 'agent',
    level: 'info' as const,
    // Part of the run's record: written whatever --log-level or a `log` scope says.
    record: true,
    tool: skill,
    contextId: target.envelope.id,
    text: error ? `${skill}: failed [${error.code}] ${error.message} — ${counts}` : `${skill}: ok — ${counts}`,
    skill,
    ...(scope?.contextId ? { agentId: scope.contextId } : {}),
    ...(scope?.ancestorContextId ? { parentAgentId: scope.ancestorContextId } : {}),
    ok: !error,
    ...(error ? { error } : { result: target.locals.result }),
    startedAt,
    durationMs: Date.now() - startedAt,
    turns,
    usage,
    ...(typeof agent.costUsd === 'number' ? { costUsd: agent.costUsd } : {}),
    denials: agent.denials,
    trace,
  };
}
