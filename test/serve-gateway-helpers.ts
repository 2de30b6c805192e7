// A gateway under test without `agent-apps serve`: a real node:http server on 127.0.0.1:0 whose
// 'request' / 'upgrade' events go to the gateway's hooks, and a GatewayContext whose dispatch runs
// the message through a real runtime as an untrusted caller (src/policy/untrusted.ts), the way
// the serve surface does (docs/serve.md).
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import { runtimeAt, workspace } from './helpers.ts';
import { invokeUntrusted } from '../src/policy/untrusted.ts';
import type { Runtime } from '../src/index.ts';
import type { Gateway, GatewayContext, GatewayFactory, InboundMessage } from '../src/surfaces/serve/gateway.ts';
import type { JsonObject } from '../src/core/types.ts';

export interface Served {
  rt: Runtime;
  dir: string;
  gateway: Gateway;
  base: string;
  port: number;
  /** The messages dispatched, in order. */
  messages: InboundMessage[];
  logged: string[];
}

/** What a test skill appended to `ran.log` beside skills/ (a JSON line a run), in order. */
export function ranLog(dir: string): unknown[] {
  const file = path.join(dir, 'ran.log');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
}

/** A context for `factory` over a runtime at `dir` (no server): for start-up checks. */
export function contextFor(rt: Runtime, name: string, type: string, config: JsonObject, opts: { loopback?: boolean; messages?: InboundMessage[]; logged?: string[] } = {}): GatewayContext {
  const messages = opts.messages ?? [];
  const logged = opts.logged ?? [];
  return {
    runtime: rt,
    name,
    type,
    config,
    place: { key: `gateways.${name}` },
    loopback: opts.loopback ?? true,
    log: (level, text) => logged.push(`${level}: ${text}`),
    dispatch(message) {
      messages.push(message);
      return invokeUntrusted(rt.root, { name: `the ${type} gateway '${name}'`, allow: message.allow ?? message.skill }, message.skill, message.args, message.signal ? { signal: message.signal } : {});
    },
  };
}

export async function serveGateway(t: TestContext, files: Record<string, string>, factory: GatewayFactory, name: string, type: string, config: JsonObject): Promise<Served> {
  const dir = workspace(t, files);
  const rt = await runtimeAt(t, dir);
  const messages: InboundMessage[] = [];
  const logged: string[] = [];
  const gateway = await factory(contextFor(rt, name, type, config, { messages, logged }));
  const server = http.createServer();
  server.on('request', (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    void Promise.resolve(gateway.http ? gateway.http(req, res, url) : false).then((taken) => {
      if (!taken) {
        res.statusCode = 404;
        res.end();
      }
    });
  });
  server.on('upgrade', (req, socket, head) => {
    if (!gateway.upgrade?.(req, socket, head)) socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  t.after(async () => {
    await gateway.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { rt, dir, gateway, base: `http://127.0.0.1:${port}`, port, messages, logged };
}
