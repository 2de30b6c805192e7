// `agent-apps/agent`: the parts of the `agent` skill (docs/agents.md), for the bundled skills and
// for anyone writing another agent or provider. Not the API a skill needs — that is `agent-apps`.
// In order of use: limits → discovery → prompt → provider → trace, and the host-call policy
// (the bridge) between agent code and the pipeline.
import type { Context } from '../core/types.ts';
import type { Sandbox, SandboxOptions } from '../sandbox/sandbox.ts';
import { isCallable } from './visible-tools.ts';
import type { AgentPolicy } from './bridge.ts';

export { readLimits, findProvider, LimitCounter, type AgentLimits, type SandboxLimits } from './limits.ts';
export { isCallable } from './visible-tools.ts';
export { systemPrompt, userMessage } from './prompt.ts';
export { providerError } from './provider.ts';
export { AgentTrace } from './trace.ts';
export { Returns } from './returns.ts';
export { AgentCode, prestartSandbox } from './code.ts';
export { ApprovalState } from '../policy/approval.ts';
export { createBridge, jsonSafe, scrub, subAgentConfig, subAgentWithin, DEFAULT_HOST_MB, type AgentPolicy } from './bridge.ts';
export { realPath } from '../kernel/allowed-tools.ts';
export { RunJournal, AgentJournal, runJournalOf, withRunJournal, type JournalTurn } from './journal.ts';

/** A fresh isolated-vm sandbox for agent code (docs/agents.md); isolated-vm loads on first use. */
export async function createSandbox(opts: SandboxOptions): Promise<Sandbox> {
  const { Sandbox } = await import('../sandbox/sandbox.ts');
  return Sandbox.create(opts);
}

/**
 * When `ctx` was invoked by agent code (its caller has `locals.internals.untrustedRef`), the
 * policy of that agent (src/agent/bridge.ts). Otherwise undefined.
 */
export function agentPolicy(ctx: Context): AgentPolicy | undefined {
  const state = ctx.envelope.parent?.locals.internals;
  if (state?.untrustedRef !== true) return undefined;
  return state.agent as AgentPolicy;
}

/**
 * When `ctx` was invoked by agent code, the discovery filter of that agent: `(name, hidden) =>
 * boolean` (its own allowed-tools and every calling agent's). Otherwise undefined.
 */
export function agentFilter(ctx: Context): ((name: string, hidden: boolean) => boolean) | undefined {
  const policy = agentPolicy(ctx);
  if (!policy) return undefined;
  return (name, hidden) => isCallable(name, hidden, policy).ok;
}

// The ACP provider: src/acp loads through the runtime state, never imported from here (agent/acp-provider.ts).
export { runAcpProvider, type AcpProviderArgs, type AcpProviderOptions, type CassetteEntry } from './acp-provider.ts';
