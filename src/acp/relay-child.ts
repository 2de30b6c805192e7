// The stdio MCP relay (docs/agents.md, "ACP agents without HTTP MCP"): what an ACP agent that takes
// only stdio MCP servers starts as our MCP server — `agent-apps __acp-mcp-relay`, with the run's
// private channel in its environment (never in argv, which any local user can read). It joins
// its stdin and stdout to that channel, a socket the run listens on (relay-channel.ts), after one
// line with the run's token; the MCP server itself — the official SDK's, over its stdio
// transport — is the run's, so every call goes through the run's own checks. It ends when its
// stdin closes (the agent is done with it) or the channel closes (the run ended).
//
// Nothing here loads an SDK: the relay starts in the time Node takes to start.
import net from 'node:net';

/** Where the run's channel is: `unix:<socket path>` (a named pipe's path on Windows). */
export const RELAY_URL_ENV = 'AGENT_APPS_RELAY_URL';
/** The run's random token, the channel's first line. */
export const RELAY_TOKEN_ENV = 'AGENT_APPS_RELAY_TOKEN';
/** The hidden subcommand (src/surfaces/cli/acp-relay.ts). */
export const RELAY_COMMAND = '__acp-mcp-relay';

/** After stdin closed: how long the run may take to close the channel before the relay closes it. */
const END_GRACE_MS = 2000;

export interface RelayIO {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** Relays until either side ends; resolves with the exit code (0, 1 the run cannot be reached, 2 misuse). */
export async function runRelay(env: NodeJS.ProcessEnv, io: RelayIO): Promise<number> {
  const say = (text: string) => io.stderr.write(`agent-apps ${RELAY_COMMAND}: ${text}\n`);
  const url = env[RELAY_URL_ENV];
  const token = env[RELAY_TOKEN_ENV];
  if (!url || !url.startsWith('unix:') || !token) {
    say(`the ACP provider starts this relay for its agent, with ${RELAY_URL_ENV} and ${RELAY_TOKEN_ENV} set; it is not a command to run by hand`);
    return 2;
  }
  const socket = net.connect({ path: url.slice('unix:'.length) });
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
  } catch (err) {
    say(`cannot reach the agent-apps run that started this agent (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): it has ended`);
    return 1;
  }
  socket.on('error', () => socket.destroy());
  socket.write(token + '\n');
  io.stdin.pipe(socket);
  socket.pipe(io.stdout, { end: false });
  return new Promise<number>((resolve) => {
    socket.once('close', () => {
      io.stdin.unpipe(socket);
      resolve(0);
    });
    // stdin's end ends the socket (the pipe does); the run then closes its side.
    io.stdin.once('end', () => setTimeout(() => socket.destroy(), END_GRACE_MS).unref());
  });
}
