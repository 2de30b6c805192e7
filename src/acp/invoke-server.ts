// The in-process MCP server the ACP provider hands its agent in `session/new` (docs/agents.md): one tool,
// `invoke`, whose code runs exactly as any provider's does — through the agent skill's invokeRef
// (sandbox, full pipeline, allowed-tools). Two ways to reach it, one server factory behind both:
// - `http` (an agent whose initialize answer has mcpCapabilities.http): Streamable HTTP on
//   127.0.0.1, a random port and a random bearer token that only the agent process is given; the
//   serving itself (DNS-rebinding checks, the token, both protocol eras) is `mcp serve --http`'s
//   (src/mcp/http.ts);
// - `stdio` (every ACP agent takes stdio MCP servers): the agent starts `agent-apps
//   __acp-mcp-relay` (relay-child.ts), which joins its stdio to this run's private channel
//   (relay-channel.ts); the channel's place and token are in the relay's environment only.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Server, type CallToolResult } from '@modelcontextprotocol/server';
import { VERSION } from '../core/version.ts';
import { RELAY_COMMAND, RELAY_TOKEN_ENV, RELAY_URL_ENV } from './relay-child.ts';

/** The launcher the relay runs on: bin/ beside src/ in a checkout and beside dist/ in the package. */
const BIN = fileURLToPath(new URL('../../bin/agent-apps.js', import.meta.url));

/** The name the server is registered under: permission requests for its tools are recognised by it (tools.ts). */
export const SERVER_NAME = 'agent-apps';
export const TOOL_NAME = 'invoke';

export const INVOKE_DESCRIPTION =
  'Run JavaScript with `ctx` in scope, in agent-apps\' sandbox. Call tools with `await ctx.manager.invoke(name, args)` ' +
  '(the tools and their params are listed in your instructions), and return the final result with ' +
  '`ctx.manager.finish(value)`; throw an Error to fail. Put all the steps you can into one code ' +
  'block per call. The code\'s return value and its console output come back as the tool result.';

const INPUT_SCHEMA = {
  type: 'object',
  properties: { code: { type: 'string', description: 'JavaScript to run (top-level await allowed); `ctx` is in scope.' } },
  required: ['code'],
} as const;

/** What running one `invoke` call gave: the text the agent reads, and whether it is an error. */
export interface InvokeOutcome {
  text: string;
  isError?: boolean;
}

/** An ACP `McpServer` entry: HTTP with its bearer token, or stdio (the relay). */
export type InvokeServerEntry =
  | { type: 'http'; name: string; url: string; headers: { name: string; value: string }[] }
  | { name: string; command: string; args: string[]; env: { name: string; value: string }[] };

export interface InvokeServer {
  /** What goes into `session/new`'s `mcpServers`. */
  entry: InvokeServerEntry;
  close(): Promise<void>;
}

/**
 * Starts the server. `run` is called once per `tools/call` of `invoke` with the code (already
 * checked to be a string) and the call's signal (the agent cancelled it, or the connection went).
 */
export async function startInvokeServer(run: (code: string, signal: AbortSignal) => Promise<InvokeOutcome>, onError?: (e: Error) => void, transport: 'http' | 'stdio' = 'http'): Promise<InvokeServer> {
  const make = () => {
    const server = new Server({ name: SERVER_NAME, version: VERSION }, { capabilities: { tools: {} } });
    server.setRequestHandler('tools/list', async () => ({ tools: [{ name: TOOL_NAME, description: INVOKE_DESCRIPTION, inputSchema: INPUT_SCHEMA as { type: 'object' } }] }));
    server.setRequestHandler('tools/call', async (request, ctx): Promise<CallToolResult> => {
      const { name, arguments: args } = request.params;
      if (name !== TOOL_NAME) return error(`E_TOOL_NOT_FOUND: this server has one tool, '${TOOL_NAME}' (asked for '${name}')`);
      const code = (args as { code?: unknown } | undefined)?.code;
      if (typeof code !== 'string') return error('E_VALIDATION: invoke needs { "code": "<JavaScript>" } — the code argument is missing or not a string');
      const out = await run(code, ctx.mcpReq.signal);
      return out.isError ? error(out.text) : { content: [{ type: 'text', text: out.text }] };
    });
    return server;
  };
  if (transport === 'stdio') {
    const { startRelayChannel } = await import('./relay-channel.ts');
    const channel = await startRelayChannel(make, onError);
    return {
      entry: {
        name: SERVER_NAME,
        command: process.execPath,
        args: [BIN, RELAY_COMMAND],
        env: [
          { name: RELAY_URL_ENV, value: channel.url },
          { name: RELAY_TOKEN_ENV, value: channel.token },
        ],
      },
      close: channel.close,
    };
  }
  const token = randomBytes(32).toString('base64url');
  const { serveHttp } = await import('../mcp/http.ts');
  const serving = await serveHttp(make, { host: '127.0.0.1', port: 0, token, ...(onError ? { onError } : {}) });
  return {
    entry: { type: 'http', name: SERVER_NAME, url: serving.url, headers: [{ name: 'Authorization', value: `Bearer ${token}` }] },
    close: serving.close,
  };
}

function error(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}
