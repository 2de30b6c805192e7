// agent-acp: an agent provider that drives any Agent Client Protocol agent — Kiro CLI, Gemini CLI,
// Goose, Claude or Codex through their ACP adapters — as the `agent` skill's LLM loop (docs/agents.md).
// `model: { agent: agent-acp, acp: { command, args, env, allowAgentTools } }`. The agent gets one
// tool, `invoke`, from an in-process MCP server; its code runs through the agent skill's invokeRef
// like any provider's. The loop is src/acp (loaded when this runs); see README.md here.
import type { Context } from 'agent-apps';
import { runAcpProvider, type AcpProviderArgs } from 'agent-apps/agent';
import { writeCassette } from './record.ts';
import { providerFrontmatter } from './frontmatter.ts';

export const frontmatter = providerFrontmatter('agent-acp', 'Agent provider: drives any ACP agent (model.acp.command, e.g. Gemini CLI, Goose, an ACP adapter of Claude or Codex) with one invoke tool served over MCP; model.provider: replay plays a cassette instead.', 'command, args, env, allowAgentTools, startTimeoutMs');

export default async function agentAcp(ctx: Context, args: AcpProviderArgs): Promise<unknown> {
  return runAcpProvider(ctx, args, { provider: 'agent-acp', writeCassette });
}
