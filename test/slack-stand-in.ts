// A stand-in for Slack on 127.0.0.1, for the slack gateway's tests (docs/serve.md, "slack"): the
// Web API methods the gateway calls (chat.postMessage, chat.update) answer `{ ok: true, channel,
// ts }` as Slack does — a post to a user id lands in a DM channel `D…` — and the interactivity
// `response_url`s it hands out (`/actions/N`) take posts; every request is recorded. The real
// @slack/web-api WebClient talks to it through the gateway's `apiUrl`. Signed bodies are made as
// Slack signs them (v0, api.slack.com "Verifying requests from Slack").
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';

export interface SlackCall {
  /** `chat.postMessage`, `chat.update`, or `response` (a post to a response_url). */
  method: string;
  /** The call's fields (blocks parsed from their JSON), or the response_url's JSON body. */
  args: Record<string, any>;
  authorization?: string;
  path: string;
}

export interface SlackStandIn {
  /** `http://127.0.0.1:PORT/api`: the gateway's apiUrl. */
  apiUrl: string;
  origin: string;
  calls: SlackCall[];
  /** A fresh response_url on the stand-in. */
  responseUrl(): string;
  /** The calls of `method` (and matching `where`), in order. */
  of(method: string, where?: (args: Record<string, any>) => boolean): SlackCall[];
}

export async function slackStandIn(t: TestContext): Promise<SlackStandIn> {
  const calls: SlackCall[] = [];
  let seq = 0;
  let hooks = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const answer = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (url.pathname.startsWith('/actions/')) {
        calls.push({ method: 'response', args: JSON.parse(text || 'null'), path: url.pathname });
        return answer({ ok: true });
      }
      const method = url.pathname.replace(/^\/api\//, '');
      const args: Record<string, any> = {};
      const type = String(req.headers['content-type'] ?? '');
      if (type.includes('json')) Object.assign(args, JSON.parse(text || '{}'));
      else for (const [k, v] of new URLSearchParams(text)) args[k] = k === 'blocks' ? JSON.parse(v) : v;
      calls.push({ method, args, path: url.pathname, ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) });
      if (method === 'chat.postMessage') {
        const channel = /^U/.test(args.channel) ? `D${args.channel.slice(1)}` : args.channel;
        return answer({ ok: true, channel, ts: `1700000000.${String(++seq).padStart(6, '0')}`, message: { text: args.text } });
      }
      if (method === 'chat.update') return answer({ ok: true, channel: args.channel, ts: args.ts, text: args.text });
      answer({ ok: false, error: 'unknown_method' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    apiUrl: `${origin}/api`,
    origin,
    calls,
    responseUrl: () => `${origin}/actions/${++hooks}`,
    of: (method, where) => calls.filter((c) => c.method === method && (!where || where(c.args))),
  };
}

/** Slack's v0 signature headers for `body` under `secret`, at `ts` (seconds; default now). */
export function slackSigned(secret: string, body: string, ts = Math.floor(Date.now() / 1000)): Record<string, string> {
  const sig = crypto.createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex');
  return { 'x-slack-request-timestamp': String(ts), 'x-slack-signature': `v0=${sig}` };
}

/** An Events API `event_callback` carrying `event`. */
export function eventCallback(event: Record<string, unknown>, eventId: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { token: 'x', team_id: 'T0TEAM', api_app_id: 'A0APP', type: 'event_callback', event_id: eventId, event_time: 1700000000, event: { event_ts: event.ts, channel_type: 'channel', ...event }, authorizations: [{ team_id: 'T0TEAM', user_id: 'U0BOT', is_bot: true }], ...extra };
}

/** A `block_actions` payload: `user` clicked the button `actionId` carrying `value`. */
export function blockActions(user: string, actionId: string, value: string, responseUrl: string, container: { channel: string; ts: string } = { channel: 'D0BOSS', ts: '1700000000.000001' }): Record<string, unknown> {
  return {
    type: 'block_actions',
    user: { id: user, username: user.toLowerCase(), team_id: 'T0TEAM' },
    api_app_id: 'A0APP',
    team: { id: 'T0TEAM', domain: 'example' },
    container: { type: 'message', message_ts: container.ts, channel_id: container.channel, is_ephemeral: false },
    channel: { id: container.channel, name: 'directmessage' },
    trigger_id: '1.2.3',
    response_url: responseUrl,
    actions: [{ type: 'button', action_id: actionId, block_id: `approval_${value.split('.')[0]}`, value, text: { type: 'plain_text', text: actionId === 'approval_allow' ? 'Allow' : 'Deny' }, action_ts: '1700000001.000000' }],
  };
}

/** POSTs a signed Events API body; `headers` may override the signature. */
export async function postSigned(url: string, secret: string, body: string, headers: Record<string, string> = {}, contentType = 'application/json'): Promise<{ status: number; json: any }> {
  const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': contentType, ...slackSigned(secret, body), ...headers } });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = text;
  }
  return { status: res.status, json };
}

/** The form body Slack posts to the interactivity URL. */
export const interactivityBody = (payload: unknown) => `payload=${encodeURIComponent(JSON.stringify(payload))}`;
