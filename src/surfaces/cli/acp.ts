// `agent-apps acp` (docs/agents.md): agent-apps as an Agent Client Protocol agent over stdio, for ACP
// clients (Zed, JetBrains, Kiro). The agent and the ACP SDK are imported only when it runs.
import type { Command } from 'commander';
import { globalsOf } from '../shared/runtime-options.ts';
import type { CliIO } from '../shared/io.ts';

export function registerAcp(program: Command, io: CliIO): void {
  program
    .command('acp')
    .description('serve the workspace as an ACP agent over stdio, for editors (Zed, JetBrains, Kiro)')
    .option('--skill <name>', 'the skill a prompt runs (default: the workspace’s main)')
    .addHelpText(
      'after',
      `
Each ACP session is a runtime for the workspace at the session's cwd. A prompt runs the skill
with the prompt's text as its \`message\` arg; agent text and tool calls stream as session
updates, the result is the last message (text, or JSON), approval gates are permission
requests, a skill's questions are forms when the client takes them (elicitation), and a cancel
aborts the run. A failed skill answers a JSON-RPC error whose message starts with its code
(E_VALIDATION: …). Each session is recorded in .agent-apps/runs/<session id>.jsonl, so
session/load (replaying it) and session/resume take it up again, in a new process too.
stdout carries only protocol messages; logs go to stderr.

Zed (settings.json):
  "agent_servers": {
    "agent-apps": { "type": "custom", "command": "agent-apps", "args": ["acp"], "env": {} }
  }

Examples:
  $ agent-apps acp                            run the workspace's main for each prompt
  $ agent-apps acp --skill summarize          run 'summarize' instead
  $ agent-apps --set model.provider=replay acp   every agent replays its cassette (offline)

Exit codes: 0 when the client closed stdin, 2 usage error, 130 SIGINT, 143 SIGTERM.`,
    )
    .action(async (opts: { skill?: string }, cmd: Command) => {
      const { serveAcp } = await import('../acp-agent/agent.ts');
      (program as Command & { exitCodeOverride?: number }).exitCodeOverride = await serveAcp(opts, globalsOf(cmd), io);
    });
}
