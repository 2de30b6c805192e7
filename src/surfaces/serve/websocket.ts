// The `websocket` gateway (docs/serve.md, "websocket"): `/ws/NAME` on the serve process's shared
// listener. Every text frame is one message, run as an untrusted caller (ctx.dispatch →
// src/policy/untrusted.ts, docs/security.md "The callers"), and answered on the same socket.
// The protocol is the `ws` package's (a maintained implementation, not a hand-written one).
//
//   gateways:
//     chat:
//       type: websocket
//       skill: chat            # the route's skill: a plain text frame is its `message` arg
//       skills: [chat, search] # optional: the skills a frame may name (the allow-list)
//       origins: [https://app.example.com]  # optional: browser origins that may connect
//
// Browsers apply no same-origin rule to WebSocket, so any page a person has open could connect
// to a socket on their machine and send it frames (cross-site WebSocket hijacking;
// docs/security.md, "The callers"). An upgrade with an Origin header is taken only when that
// origin is the request's own Host (a page the web gateway served) or is listed in `origins`;
// a client without one (not a browser) connects. Others get 403 before the handshake.
//
// A frame in:
//   - plain text (anything that is not an envelope below): the route skill's args `{ message: TEXT }`;
//   - an envelope, a JSON object with only the keys id, skill, args, message:
//     `{ id?, skill?, args? }` or `{ id?, skill?, message? }` — `skill` defaults to the route's
//     `skill` and must be in `skills`; `message` is `args: { message }`; `id` (a string or number)
//     tags the frames that answer it.
// Frames out, JSON, each tagged with the id of the frame it answers (null without one):
//   { id, type: 'result', result }               the skill's result
//   { id, type: 'error', error: { code, message } }  a refusal or a failure (the socket stays open)
//   { id, type: 'reply', value }                 what the skill sends through nonlocals.gateway.reply
// A frame is at most 1 MiB (ws closes the socket with 1009 over that); binary frames are refused.
// When the socket closes, its runs are aborted (their signal); at most 32 run at once per socket.
// Log frames (`{ id, type: 'log', … }`) are not sent yet.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, WebSocket, type RawData } from 'ws';
import { ConfigurationError, type AgentAppsError } from '../../core/errors.ts';
import type { JsonObject } from '../../core/types.ts';
import type { Gateway, GatewayContext, GatewayFactory } from './gateway.ts';

/** The largest frame a sender may send. */
export const MAX_FRAME = 1024 * 1024;
/** Runs under way on one socket at once; a frame over that is answered E_BAD_REQUEST. */
export const MAX_RUNNING = 32;

const ENVELOPE_KEYS = new Set(['id', 'skill', 'args', 'message']);

type Id = string | number | null;

interface Frame {
  id: Id;
  skill?: unknown;
  args: unknown;
}

/** Reads a text frame as an envelope or as a plain message (see the top of the file). */
export function parseFrame(text: string): Frame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { id: null, args: { message: text } };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { id: null, args: { message: text } };
  const keys = Object.keys(value);
  if (keys.length === 0 || !keys.every((k) => ENVELOPE_KEYS.has(k))) return { id: null, args: { message: text } };
  const o = value as Record<string, unknown>;
  const id: Id = typeof o.id === 'string' || typeof o.id === 'number' ? o.id : null;
  const args = o.args !== undefined ? o.args : o.message !== undefined ? { message: o.message } : {};
  return { id, ...(o.skill !== undefined ? { skill: o.skill } : {}), args };
}

export const websocketGateway: GatewayFactory = (ctx: GatewayContext): Gateway => {
  const { config, name } = ctx;
  const at = (key: string) => ({ ...(ctx.place.file ? { file: ctx.place.file } : {}), key: `${ctx.place.key}.${key}` });
  const fail = (key: string, message: string) => new ConfigurationError(`${ctx.place.key}.${key}: ${message}`, { place: at(key) });

  const skill = typeof config.skill === 'string' && config.skill !== '' ? config.skill : undefined;
  let skills: string[] | undefined;
  if (config.skills !== undefined) {
    if (!Array.isArray(config.skills) || config.skills.length === 0 || !config.skills.every((s) => typeof s === 'string' && s !== '')) throw fail('skills', 'skills is a list of skill names');
    skills = config.skills as string[];
  }
  if (!skill && !skills) throw fail('skill', 'a websocket route runs a skill: name it (skill), or the skills a frame may name (skills)');
  // The allow-list the policy checks a frame's skill against: the route's skill and its `skills`.
  const allow = [...new Set([...(skill ? [skill] : []), ...(skills ?? [])])].join(' ');

  let origins: string[] = [];
  if (config.origins !== undefined) {
    if (!Array.isArray(config.origins) || !config.origins.every((o) => typeof o === 'string')) throw fail('origins', 'origins is a list of origins (https://app.example.com)');
    origins = (config.origins as string[]).map((o) => o.replace(/\/+$/, '').toLowerCase());
  }

  const route = `/ws/${name}`;
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME });
  const running = new Set<Promise<void>>();
  let closed = false;
  let connections = 0;

  function send(ws: WebSocket, frame: JsonObject): void {
    if (ws.readyState !== WebSocket.OPEN) return;
    let text: string;
    try {
      text = JSON.stringify(frame);
    } catch (err) {
      text = JSON.stringify({ id: frame.id ?? null, type: 'error', error: { code: 'E_INTERNAL', message: `the result is not JSON: ${(err as Error).message}` } });
    }
    ws.send(text);
  }

  /** Whether a browser's Origin may connect: none (not a browser), the request's own Host, or listed. */
  function originAllowed(req: IncomingMessage): boolean {
    const origin = req.headers.origin;
    if (origin === undefined) return true;
    const o = origin.toLowerCase();
    if (origins.includes(o) || origins.includes('*')) return true;
    try {
      return req.headers.host !== undefined && new URL(o).host === req.headers.host.toLowerCase();
    } catch {
      return false;
    }
  }

  const errorFrame = (id: Id, code: string, message: string): JsonObject => ({ id, type: 'error', error: { code, message } });

  wss.on('connection', (ws: WebSocket) => {
    const connection = ++connections;
    const runs = new Set<AbortController>();
    ws.on('close', () => {
      for (const run of runs) run.abort(new Error('the WebSocket closed'));
      runs.clear();
    });
    ws.on('error', (err) => ctx.log('warn', `${name}: connection ${connection}: ${err.message}`));
    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (isBinary) return send(ws, errorFrame(null, 'E_BAD_REQUEST', 'send text frames: a message or a JSON { id, skill, args }'));
      const text = Buffer.isBuffer(data) ? data.toString('utf8') : Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data).toString('utf8');
      const frame = parseFrame(text);
      if (closed) return send(ws, errorFrame(frame.id, 'E_ABORTED', 'the server is shutting down'));
      if (runs.size >= MAX_RUNNING) return send(ws, errorFrame(frame.id, 'E_BAD_REQUEST', `at most ${MAX_RUNNING} messages run at once on a connection`));
      const target = frame.skill ?? skill;
      if (target === undefined) return send(ws, errorFrame(frame.id, 'E_BAD_REQUEST', `name a skill: { "skill": one of ${skills!.join(', ')}, "args": { … } }`));
      if (typeof target !== 'string') return send(ws, errorFrame(frame.id, 'E_UNTRUSTED_REF', 'a frame names a skill by name'));
      if (frame.args === null || typeof frame.args !== 'object' || Array.isArray(frame.args)) return send(ws, errorFrame(frame.id, 'E_VALIDATION', 'args is an object'));
      const controller = new AbortController();
      runs.add(controller);
      const run = (async () => {
        try {
          const result = await ctx.dispatch({
            skill: target,
            args: frame.args as JsonObject,
            data: { id: frame.id, connection, skill: target },
            allow,
            signal: controller.signal,
            reply: (value) => send(ws, { id: frame.id, type: 'reply', value: value as JsonObject[string] }),
          });
          send(ws, { id: frame.id, type: 'result', result: (result ?? null) as JsonObject[string] });
        } catch (err) {
          const e = err as AgentAppsError;
          send(ws, errorFrame(frame.id, typeof e?.code === 'string' ? e.code : 'E_SKILL', e instanceof Error ? e.message : String(err)));
        } finally {
          runs.delete(controller);
        }
      })();
      running.add(run);
      void run.finally(() => running.delete(run));
    });
  });

  return {
    upgrade(req: IncomingMessage, socket: Duplex, head: Buffer) {
      const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
      if (pathname !== route && pathname !== `${route}/`) return false;
      if (closed) {
        socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
        return true;
      }
      if (!originAllowed(req)) {
        ctx.log('warn', `${name}: refused a WebSocket from origin ${JSON.stringify(String(req.headers.origin).slice(0, 100))} (not this host's, not in ${ctx.place.key}.origins)`);
        socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
        return true;
      }
      wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
      return true;
    },
    // The drain: no new connection or frame; the runs under way finish and are answered, then the
    // sockets close with 1001 (going away).
    async close() {
      closed = true;
      await Promise.allSettled([...running]);
      for (const ws of wss.clients) ws.close(1001, 'the server is shutting down');
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
};
