// The in-process MCP server the ACP provider hands its agent in `session/new` (docs/agents.md): one tool,
// `invoke`, whose code runs exactly as any provider's does — through the agent skill's invokeRef
// (sandbox, full pipeline, allowed-tools). Streamable HTTP on 127.0.0.1, a random port and a
// random bearer token that only the agent process is given; the serving itself (DNS-rebinding
// checks, the token, both protocol eras) is `mcp serve --http`'s (src/mcp/http.ts).
import { randomBytes } from 'node:crypto';
import { Server, type CallToolResult } from '@modelcontextprotocol/server';
import { serveHttp } from '../mcp/http.ts';
import { VERSION } from '../core/version.ts';

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

export interface InvokeServer {
  /** What goes into `session/new`'s `mcpServers`. */
  entry: { type: 'http'; name: string; url: string; headers: { name: string; value: string }[] };
  close(): Promise<void>;
}

/**
 * Starts the server. `run` is called once per `tools/call` of `invoke` with the code (already
 * checked to be a string) and the call's signal (the agent cancelled it, or the connection went).
 */
export async function startInvokeServer(run: (code: string, signal: AbortSignal) => Promise<InvokeOutcome>, onError?: (e: Error) => void): Promise<InvokeServer> {
  const token = randomBytes(32).toString('base64url');
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
  const serving = await serveHttp(make, { host: '127.0.0.1', port: 0, token, ...(onError ? { onError } : {}) });
  return {
    entry: { type: 'http', name: SERVER_NAME, url: serving.url, headers: [{ name: 'Authorization', value: `Bearer ${token}` }] },
    close: serving.close,
  };
}

function error(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}
