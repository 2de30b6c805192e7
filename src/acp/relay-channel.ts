// The run's side of the stdio MCP relay (docs/agents.md, "ACP agents without HTTP MCP"): a socket only
// this run's relay reaches — a unix socket in a fresh folder only our user may enter (a named pipe
// on Windows) — and a random token, the first line every connection must send. Past that line
// the connection is an MCP stdio stream, served by the official SDK (`serveStdio` with a
// `StdioServerTransport` over the socket, the SDK's own way to serve stdio over a socket) from
// the same server factory as the HTTP invoke server: one `invoke` tool, the same run, the same
// checks. Closing the channel (the run ended) closes every connection, and the relay exits.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type { Server } from '@modelcontextprotocol/server';

export interface RelayChannel {
  /** `unix:<path>`: the relay's AGENT_APPS_RELAY_URL. */
  url: string;
  /** The relay's AGENT_APPS_RELAY_TOKEN. */
  token: string;
  close(): Promise<void>;
}

/** The token line: a connection that has not sent it in this time, or sends more, is dropped. */
const HANDSHAKE_MS = 10_000;
const MAX_TOKEN_LINE = 512;

export async function startRelayChannel(make: () => Server, onError: (e: Error) => void = () => {}): Promise<RelayChannel> {
  const { serveStdio, StdioServerTransport } = await import('@modelcontextprotocol/server/stdio');
  const token = randomBytes(32).toString('base64url');
  const expected = digest(token);
  const dir = process.platform === 'win32' ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-relay-'));
  const where = dir ? path.join(dir, 'mcp.sock') : `\\\\.\\pipe\\agent-apps-relay-${randomBytes(12).toString('hex')}`;
  const sockets = new Set<net.Socket>();
  const served = new Set<{ close(): Promise<void> }>();

  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => socket.destroy());
    let head = Buffer.alloc(0);
    const timer = setTimeout(() => socket.destroy(), HANDSHAKE_MS);
    timer.unref();
    socket.once('close', () => {
      clearTimeout(timer);
      sockets.delete(socket);
    });
    const onHead = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const nl = head.indexOf(0x0a);
      if (nl < 0) {
        if (head.length > MAX_TOKEN_LINE) socket.destroy();
        return;
      }
      socket.off('data', onHead);
      clearTimeout(timer);
      if (nl > MAX_TOKEN_LINE || !timingSafeEqual(digest(head.subarray(0, nl).toString('utf8').trim()), expected)) {
        onError(new Error('refused a connection to the stdio relay channel without the run’s token'));
        socket.destroy();
        return;
      }
      // What came after the token line is the first of the MCP stream: it goes first, then the
      // rest of the socket, into the stream the SDK's transport reads.
      const input = new PassThrough();
      input.write(head.subarray(nl + 1));
      socket.pipe(input);
      const handle = serveStdio(make, { transport: new StdioServerTransport(input, socket), onerror: onError });
      served.add(handle);
      const end = () => {
        served.delete(handle);
        void handle.close().catch(() => {});
        socket.destroy();
      };
      // The relay's stdin closed (the socket's end), or the socket went.
      input.once('end', end);
      socket.once('close', end);
    };
    socket.on('data', onHead);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(where, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', onError);
  return {
    url: `unix:${where}`,
    token,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
      await Promise.allSettled([...served].map((h) => h.close()));
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Compared as SHA-256 digests, in constant time whatever the lengths. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
