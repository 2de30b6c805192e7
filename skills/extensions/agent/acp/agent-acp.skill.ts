// agent-acp: an agent provider that drives any Agent Client Protocol agent — Kiro CLI, Gemini CLI,
// Goose, Claude or Codex through their ACP adapters — as the `agent` skill's LLM loop (SPEC §20).
// `model: { agent: agent-acp, acp: { command, args, env, allowAgentTools } }`. The agent gets one
// tool, `invoke`, from an in-process MCP server; its code runs through the agent skill's invokeRef
// like any provider's. The loop is src/acp (loaded when this runs); see README.md here.
import type { Context } from 'agent-apps';
import { runAcpProvider, type AcpProviderArgs } from 'agent-apps/agent';
import { writeCassette } from './record.ts';

export const frontmatter = {
  name: 'agent-acp',
  description: 'Agent provider: drives any ACP agent (model.acp.command, e.g. Gemini CLI, Goose, an ACP adapter of Claude or Codex) with one invoke tool served over MCP; model.provider: replay plays a cassette instead.',
  metadata: {
    visibility: 'hidden',
    role: 'skill',
    tags: ['meta-internal'],
    params: {
      type: 'object',
      properties: {
        prompt: { type: 'string', description: 'System prompt: the first prompt\'s first content block.' },
        config: { type: 'object', description: 'The cascade\'s model configuration: acp { command, args, env, allowAgentTools, startTimeoutMs }, maxTurns, record, deltas, provider (replay), cassette, baseDir …' },
        invokeRef: { type: 'string', description: 'Callback ref that executes the invoke tool\'s code: invoked with { code }.' },
        hookRef: { type: 'string', description: 'Callback ref for lifecycle events; its answer is a directive.' },
        userMessage: { type: 'string', description: 'The first user message: the first prompt\'s second content block.' },
        skillName: { type: 'string', description: 'The skill whose pipeline started this agent.' },
        agentSignal: { description: 'AbortSignal that cancels the session (in-process callers only).' },
      },
      required: ['prompt', 'invokeRef'],
    },
    returns: {},
  },
};

export default async function agentAcp(ctx: Context, args: AcpProviderArgs): Promise<unknown> {
  return runAcpProvider(ctx, args, { provider: 'agent-acp', writeCassette });
}
