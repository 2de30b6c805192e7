// `agent-apps __acp-mcp-relay` (docs/agents.md, "ACP agents without HTTP MCP"): hidden, not for people.
// The ACP provider names it as the stdio MCP server of an agent that takes no HTTP MCP servers;
// the agent starts it, and it joins its stdio to the run that started the agent
// (src/acp/relay-child.ts). Loaded only when it runs.
import type { Command } from 'commander';
import type { CliIO } from '../shared/io.ts';

export function registerAcpRelay(program: Command, io: CliIO): void {
  program
    .command('__acp-mcp-relay')
    .description('relay an ACP agent’s stdio MCP connection to the agent-apps run that started the agent (started by the ACP provider)')
    .action(async () => {
      const { runRelay } = await import('../../acp/relay-child.ts');
      (program as Command & { exitCodeOverride?: number }).exitCodeOverride = await runRelay(process.env, io);
    });
}
