// agent-kiro: the second bundled provider (docs/agents.md) — Kiro CLI as the backend over ACP, the tools
// served by an in-process HTTP MCP server (docs/agents.md). It is agent-acp with `kiro-cli acp` as the
// agent; `model.acp` may still set env, allowAgentTools, or another path to kiro-cli.
import type { Context } from 'agent-apps';
import { runAcpProvider, type AcpProviderArgs } from 'agent-apps/agent';
import { writeCassette } from './record.ts';
import { providerFrontmatter } from './frontmatter.ts';

export const frontmatter = providerFrontmatter('agent-kiro', 'Agent provider: Kiro CLI (kiro-cli acp) over the Agent Client Protocol, with one invoke tool served over MCP; model.provider: replay plays a cassette instead.', 'command (default kiro-cli), args (default [acp]), env, allowAgentTools, startTimeoutMs');

/** How to get kiro-cli, said in the one line a missing kiro-cli is (exit 2). */
export const KIRO_INSTALL = 'install Kiro CLI (curl -fsSL https://cli.kiro.dev/install | bash; see https://kiro.dev/cli/) and log in with kiro-cli login, or set model.acp.command to its path';

export default async function agentKiro(ctx: Context, args: AcpProviderArgs): Promise<unknown> {
  return runAcpProvider(ctx, args, { provider: 'agent-kiro', defaults: { command: 'kiro-cli', args: ['acp'], install: KIRO_INSTALL }, writeCassette });
}
