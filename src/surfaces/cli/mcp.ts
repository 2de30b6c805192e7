// `agent-apps mcp serve` (docs/mcp.md): the workspace's skills for any MCP client. The server and
// the MCP SDK are imported only when the command runs.
import type { Command } from 'commander';
import { addGlobalOptions, globalsOf } from '../shared/runtime-options.ts';
import type { CliIO } from '../shared/io.ts';

export function registerMcp(program: Command, io: CliIO): void {
  const mcp = program
    .command('mcp')
    .description('MCP: serve the workspace’s skills to MCP clients (Claude Code, Claude Desktop, Cursor …)')
    .addHelpText(
      'after',
      `
Examples:
  $ agent-apps mcp serve                         stdio, for a client that starts the server
  $ agent-apps mcp serve --http 8808             Streamable HTTP at http://127.0.0.1:8808/mcp`,
    );
  const serve = mcp
    .command('serve')
    .description("serve the workspace's skills as MCP tools (Markdown and SKILL.md skills also as prompts)")
    .option('--http <[host:]port>', 'Streamable HTTP at /mcp instead of stdio; the host defaults to 127.0.0.1')
    .option('--token-file <path>', 'read the bearer token HTTP clients must send from this file (default: AGENT_APPS_MCP_TOKEN); a token is required off loopback')
    .option('--token <token>', 'the bearer token itself — visible to other local users in the process list: prefer --token-file or AGENT_APPS_MCP_TOKEN')
    .option('--allow <patterns>', 'serve only the skills these allowed-tools patterns name, e.g. "greet file-read(path=docs/*)"')
    .addHelpText(
      'after',
      `
Tools are the workspace's own public skills, in name order (the library's built-ins — file-read,
shell, event-*, skill-describe … — only when --allow names them; trust: deny and terminal-only
skills never): inputSchema is a skill's params, outputSchema its returns when that is an object
schema. Every request is checked as an untrusted caller's: no $-keys, refs by name, paths inside
the workspace (docs/security.md). A call runs the skill through
its full pipeline; a skill error comes back as a result with isError and the text "CODE: message".
With a progress token, log events (info and up) and agent events are sent as progress; a
cancellation aborts the skill. stdout carries only protocol messages (stdio); logs go to stderr.

Examples:
  $ agent-apps mcp serve
  $ agent-apps mcp serve --allow "hello file-read(path=docs/*)"
  $ agent-apps mcp serve --http 8808
  $ agent-apps mcp serve --http 0.0.0.0:8808 --token-file ~/.config/agent-apps/mcp-token
  $ AGENT_APPS_MCP_TOKEN=s3cret agent-apps mcp serve --http 0.0.0.0:8808
  $ claude mcp add skills -- agent-apps mcp serve --cwd ~/project

Over HTTP, a 2025-11-25 client's initialize opens a session; when the session table is full, a
new one is refused with 503 (sessions in use are never closed for it; idle ones close after 30
minutes).

Exit codes: 0 when the client closed stdin, 2 usage error (e.g. a non-loopback --http without a
token, an unreadable or empty --token-file, --token with --token-file), 130 SIGINT, 143 SIGTERM.`,
    )
    .action(async (opts: { http?: string; token?: string; tokenFile?: string; allow?: string }, cmd: Command) => {
      const { serve: run } = await import('../mcp-serve/serve.ts');
      (program as Command & { exitCodeOverride?: number }).exitCodeOverride = await run(opts, globalsOf(cmd), io);
    });
  addGlobalOptions(serve, true);
}
