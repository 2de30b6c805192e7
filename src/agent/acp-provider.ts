// What `agent-apps/agent` offers of the ACP provider (docs/agents.md): its argument and option
// types and `runAcpProvider`. The provider itself is src/acp/provider.ts, above agent/ — acp/
// imports agent/'s provider types, so agent/ must not import acp/ (docs/architecture.md, The
// rules). createRuntime, the composition root, puts a loader for it on the runtime state, and
// src/acp (with the ACP and MCP SDKs) loads when a run uses it.
import { AgentAppsError } from '../core/errors.ts';
import type { Context, JsonObject } from '../core/types.ts';
import type { AgentArgs } from './provider.ts';

/** An entry of a cassette: the `turns` list of the cassette format (docs/agents.md). */
export interface CassetteEntry {
  text?: string;
  invoke?: string;
}

/** What a provider skill built on ACP adds: its name, its agent's defaults, and the cassette writer. */
export interface AcpProviderOptions {
  /** The provider skill's name, for messages. */
  provider: string;
  /** `model.acp` values used when the config does not set them (agent-kiro: kiro-cli acp). */
  defaults?: { command?: string; args?: string[]; install?: string };
  /** Writes the cassette (`model.record`) after every turn: the standard writer, agent-strands' cassette.ts. */
  writeCassette?(file: string, entries: CassetteEntry[]): void;
}

export type AcpProviderArgs = Pick<AgentArgs, 'prompt' | 'invokeRef'> & Partial<Omit<AgentArgs, 'config'>> & { config?: JsonObject };

export type RunAcpProvider = (ctx: Context, args: AcpProviderArgs, o: AcpProviderOptions) => Promise<unknown>;

/**
 * The provider behind `agent-acp` and `agent-kiro` (docs/agents.md): any Agent Client Protocol agent as
 * the agent's LLM loop. src/acp, and the ACP and MCP SDKs with it, load when a run uses it.
 */
export async function runAcpProvider(ctx: Context, args: AcpProviderArgs, o: AcpProviderOptions): Promise<unknown> {
  const run = ctx.globals.internals.runAcpProvider;
  if (!run) throw new AgentAppsError('E_CONFIG', `${o.provider}: this runtime has no ACP provider (createRuntime sets it)`);
  return run(ctx, args, o);
}

declare module '../core/types.ts' {
  interface RuntimeState {
    /** The ACP provider (src/acp/provider.ts), loaded on first use: set by createRuntime. */
    runAcpProvider?: RunAcpProvider;
  }
}
