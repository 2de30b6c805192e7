import path from 'node:path';
import { ctxTarget, type Context, kernelOf, type McpHub, servedTool } from 'agent-apps';

export const frontmatter = {
  name: 'mcp',
  description:
    "Configures MCP servers whose tools become tools of the runtime (docs/mcp.md): `mcp: { servers: { NAME: { command, args, env, cwd } | { url, headers } } }` (plus timeoutMs, protocol). Their tools are `NAME-TOOL` and mcp://NAME/TOOL; servers start on first use.",
  metadata: {
    role: 'middleware',
    visibility: 'hidden',
    tags: ['meta-internal', 'meta-config'],
    // Documentation only: the middleware checks its value itself, so that a malformed entry is an
    // E_CONFIG naming the file and key that set it (a schema here would report neither).
    params: {
      description: 'mcp: { servers: { NAME: { command, args, env, cwd } | { url, headers } } }',
      properties: {
        servers: {
          description: 'Server name → its entry. A tool TOOL of server NAME is the tool NAME-TOOL (normalised) and mcp://NAME/TOOL.',
          additionalProperties: {
            properties: {
              command: { description: 'stdio: the program to start.' },
              args: { description: 'stdio: its arguments.' },
              env: { description: 'stdio: environment variables for it (it sees only HOME, LOGNAME, PATH, SHELL, TERM, USER besides).' },
              cwd: { description: 'stdio: its working directory (default: the workspace).' },
              url: { description: 'HTTP: the Streamable HTTP endpoint.' },
              headers: { description: 'HTTP: request headers (Authorization …).' },
              type: { description: '"stdio" or "http" (default: by command / url).' },
              timeoutMs: { description: 'Idle timeout of a call, reset by progress (default 60000).' },
              protocol: { description: "'2026-07-28' or '2025-11-25': skips the protocol-era probe." },
            },
          },
        },
      },
    },
    returns: {},
  },
};

/**
 * Servers configured in a `main` are known before any chain runs (the registry reads mains'
 * `mcp` keys and `.mcp.json` to resolve `SERVER-TOOL` names); this makes the ones set anywhere
 * else in a cascade known too, and puts the value on `locals.config.mcp`. Nothing connects here.
 */
export default async function mcp(ctx: Context, value: unknown) {
  const target = ctxTarget(ctx);
  if (value !== undefined && value !== null && value !== false) {
    const registry = kernelOf(ctx).registry;
    // The registry's `mcp` tool source: the MCP hub createRuntime added.
    const hub = await registry.source<McpHub>('mcp', target.locals.config.cwd);
    if (hub && !hub.defined(value)) {
      // Once per cascade value: the file that set the key (the tool's own metadata, or the
      // nearest main above it) is where a malformed entry is reported, and the folder whose
      // cascade the servers' tools run with.
      const tool = servedTool(target).decl;
      let file = tool.metadata.mcp !== undefined ? tool.file : undefined;
      if (!file) {
        for (const main of registry.authorities(tool).reverse()) {
          const level = await registry.load(main).catch(() => undefined);
          if (level?.metadata.mcp !== undefined) {
            file = main.file;
            break;
          }
        }
      }
      hub.define(value, { file, authority: tool.root && file ? { root: tool.root, dir: path.dirname(file) } : undefined });
    }
    target.locals.config.mcp = value;
  }
  return target.manager.next();
}
