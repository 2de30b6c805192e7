// The `webhook` gateway (docs/serve.md, "webhook"): `POST /hooks/NAME` on the serve process's
// shared listener runs the entry's skill with the delivery as its args. A webhook sender is a
// party on the network (docs/security.md, "The callers"), so the request is verified against the
// shared secret before its body is parsed or anything runs, and the skill runs as an untrusted
// caller (ctx.dispatch → src/policy/untrusted.ts: data-only args, the route's skill only).
//
//   gateways:
//     github:
//       type: webhook
//       verify: github            # github | slack | hmac-sha256 | none (none: loopback only)
//       secretEnv: GITHUB_SECRET  # the environment variable holding the shared secret
//       header: X-Signature       # hmac-sha256 only: the header carrying the hex HMAC of the body
//       deliveryHeader: X-Id      # optional: the header whose value is the delivery id (github: X-GitHub-Delivery)
//       eventHeader: X-Event      # optional: the header naming the event (default X-GitHub-Event)
//       headers: [x-request-id]   # optional: more headers to hand the skill
//       skill: on-push
//
// The skill's args:
//   { payload, headers, event?, delivery? }
//   - payload: the body parsed as JSON (a form-encoded body as an object of its fields; GitHub's
//     form `payload=<json>` as that JSON); an empty body is null.
//   - headers: the selected headers, lower-cased (content-type, user-agent, the provider's
//     event / delivery / retry headers and those the entry's `headers` names) — never the
//     signature, cookies or authorization.
//   - event: X-GitHub-Event (or the entry's eventHeader); for verify: slack the payload's
//     `event.type`, else its `type`.
//   - delivery: the delivery id, when the request has one (X-GitHub-Delivery, the entry's
//     deliveryHeader; for verify: slack the payload's `event_id`).
// The `gateway-message` event's data is `{ delivery, event, headers }`.
//
// The answer: 200 with the skill's result as the JSON body (null for none). The skill runs while
// the sender waits, so that its result and its failure (a status and `{ error: { code, message } }`)
// reach the sender; GitHub gives up after 10 s and Slack after 3 s, so a skill that takes longer
// should hand the work on (an event, a remote run) and answer at once. A sender that gives up
// does not stop the run: the delivery was verified and accepted, and its retry is deduplicated.
//
// Refusals, before anything runs: a method other than POST 405, a body over 1 MiB 413, a bad or
// missing signature 401, a body that is not JSON 400. A delivery id seen before is acknowledged
// without running again — 200 `{ duplicate: true, delivery }` (202 while the first run is still
// under way); an id whose run failed is forgotten, so that a redelivery runs it again. The ids
// are the serve's claims (src/events/claims.ts): on the in-memory backend this process's own (the
// last 10,000, least recently seen dropped first; a restart forgets them), on NATS a key-value
// bucket every serve of the namespace shares for a day — a retry that reaches another serve
// process is acknowledged there, not run twice.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentAppsError } from '../../core/errors.ts';
import type { JsonObject } from '../../core/types.ts';
import type { Gateway, GatewayContext, GatewayFactory } from './gateway.ts';
import { verifyGithub, verifyHmacSha256, verifySlack } from './verify.ts';
import { claimKey, MemoryClaims } from '../../events/claims.ts';
import { header, readPosted, send, sendError } from './http-io.ts';
import { entryOf } from './entry.ts';

export { DeliveryMemory } from '../../events/claims.ts';

export { MAX_BODY } from './http-io.ts';

const SCHEMES = ['github', 'slack', 'hmac-sha256', 'none'] as const;
type Scheme = (typeof SCHEMES)[number];

/** Headers every skill gets when present: what a provider says about a delivery, nothing secret. */
const BASE_HEADERS = ['content-type', 'user-agent', 'x-github-event', 'x-github-delivery', 'x-github-hook-id', 'x-slack-request-timestamp', 'x-slack-retry-num', 'x-slack-retry-reason'];
/** Never handed on, whatever the entry's `headers` says. */
const SECRET_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization', 'x-hub-signature', 'x-hub-signature-256', 'x-slack-signature']);

/** The HTTP status for a run's failure: refusals are the sender's (4xx), the rest the server's. */
export function statusFor(code: string | undefined): number {
  switch (code) {
    case 'E_UNTRUSTED_REF':
    case 'E_ALLOWED_TOOLS':
      return 403;
    case 'E_VALIDATION':
    case 'E_BAD_REQUEST':
    case 'E_USAGE':
      return 400;
    case 'E_TIMEOUT':
      return 504;
    default:
      return 500;
  }
}

/** The body as the skill's payload: JSON, a form's fields (GitHub's form `payload=` as its JSON), empty as null. */
function parsePayload(raw: Buffer, contentType: string | undefined): unknown {
  const text = raw.toString('utf8');
  if (text.trim() === '') return null;
  if (contentType?.toLowerCase().includes('application/x-www-form-urlencoded')) {
    const fields: Record<string, string> = Object.create(null);
    for (const [k, v] of new URLSearchParams(text)) fields[k] = v;
    const keys = Object.keys(fields);
    if (keys.length === 1 && keys[0] === 'payload') return JSON.parse(fields.payload!);
    return { ...fields };
  }
  return JSON.parse(text);
}

export const webhookGateway: GatewayFactory = (ctx: GatewayContext): Gateway => {
  const { config, name } = ctx;
  const { str, fail, secret: secretOf } = entryOf(ctx);

  const skill = str('skill');
  if (!skill) throw fail('skill', 'a webhook runs one skill: name it');
  const scheme = config.verify as Scheme;
  if (!SCHEMES.includes(scheme)) throw fail('verify', `verify must be one of ${SCHEMES.join(', ')} (got ${JSON.stringify(config.verify ?? null)})`);
  // An unsigned hook anyone who can reach the port may call: only where no one else can reach it.
  if (scheme === 'none' && !ctx.loopback) throw fail('verify', 'verify: none is allowed only on a loopback listener (docs/security.md): sign the hook, or serve on 127.0.0.1');

  const secret = scheme === 'none' ? '' : secretOf('secretEnv', `the webhook's secret (verify: ${scheme})`);
  const signatureHeader = str('header');
  if (scheme === 'hmac-sha256' && !signatureHeader) throw fail('header', 'verify: hmac-sha256 needs header, the request header carrying the signature');

  const deliveryHeader = str('deliveryHeader') ?? (scheme === 'github' ? 'x-github-delivery' : undefined);
  const eventHeader = str('eventHeader') ?? 'x-github-event';
  const extra = Array.isArray(config.headers) ? config.headers.filter((h): h is string => typeof h === 'string').map((h) => h.toLowerCase()) : [];
  const selected = [...new Set([...BASE_HEADERS, eventHeader.toLowerCase(), ...(deliveryHeader ? [deliveryHeader.toLowerCase()] : []), ...extra])].filter((h) => !SECRET_HEADERS.has(h) && h !== signatureHeader?.toLowerCase());

  const route = `/hooks/${name}`;
  const seen = ctx.claims ?? new MemoryClaims();
  let closed = false;

  function verified(req: IncomingMessage, raw: Buffer): boolean {
    switch (scheme) {
      case 'github':
        return verifyGithub(secret, raw, header(req, 'x-hub-signature-256'));
      case 'slack':
        return verifySlack(secret, raw, header(req, 'x-slack-request-timestamp'), header(req, 'x-slack-signature'));
      case 'hmac-sha256':
        return verifyHmacSha256(secret, raw, header(req, signatureHeader!));
      case 'none':
        return true;
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST') return sendError(res, 405, 'E_BAD_REQUEST', `${route} takes POST`, { allow: 'POST' });
    if (closed) return sendError(res, 503, 'E_ABORTED', 'the server is shutting down', { 'retry-after': '5' });
    const raw = await readPosted(req, res);
    if (raw === undefined) return;
    // Nothing of the body is looked at before this line.
    if (!verified(req, raw)) {
      ctx.log('warn', `${name}: refused a webhook delivery with a bad or missing signature (verify: ${scheme})`);
      return sendError(res, 401, 'E_SIGNATURE', `the request is not signed with this webhook's secret (verify: ${scheme})`);
    }
    let payload: unknown;
    try {
      payload = parsePayload(raw, header(req, 'content-type'));
    } catch {
      return sendError(res, 400, 'E_BAD_REQUEST', 'the body is not JSON');
    }
    // Slack's Events API checks a new endpoint with a challenge to echo, signed like any request.
    if (scheme === 'slack' && payload !== null && typeof payload === 'object' && (payload as JsonObject).type === 'url_verification') {
      return send(res, 200, { challenge: (payload as JsonObject).challenge ?? null });
    }

    // Slack names no delivery header; its Events API retries carry the same payload `event_id`.
    let delivery = deliveryHeader ? header(req, deliveryHeader) : undefined;
    if (delivery === undefined && scheme === 'slack' && payload !== null && typeof payload === 'object' && typeof (payload as JsonObject).event_id === 'string') delivery = (payload as JsonObject).event_id as string;
    const claim = delivery === undefined ? undefined : claimKey('hook', name, delivery);
    if (claim !== undefined) {
      const state = await seen.take(claim, 'running');
      if (state !== undefined) return send(res, state === 'done' ? 200 : 202, { duplicate: true, delivery });
    }
    const headers: JsonObject = {};
    for (const h of selected) {
      const v = header(req, h);
      if (v !== undefined) headers[h] = v;
    }
    let event = header(req, eventHeader);
    if (event === undefined && scheme === 'slack' && payload !== null && typeof payload === 'object') {
      const p = payload as JsonObject;
      const inner = p.event !== null && typeof p.event === 'object' && !Array.isArray(p.event) ? (p.event as JsonObject).type : undefined;
      event = typeof inner === 'string' ? inner : typeof p.type === 'string' ? p.type : undefined;
    }
    const args: JsonObject = { payload: payload as JsonObject[string], headers, ...(event !== undefined ? { event } : {}), ...(delivery !== undefined ? { delivery } : {}) };
    try {
      const traceparent = header(req, 'traceparent');
      const result = await ctx.dispatch({ skill: skill!, args, data: { delivery: delivery ?? null, event: event ?? null, headers }, ...(traceparent ? { traceparent } : {}) });
      if (claim !== undefined) await seen.set(claim, 'done').catch((err: unknown) => ctx.log('warn', `${name}: cannot mark delivery ${delivery} done (${(err as Error).message}): a retry of it answers 202`));
      send(res, 200, result);
    } catch (err) {
      if (claim !== undefined) await seen.drop(claim).catch((e: unknown) => ctx.log('warn', `${name}: cannot forget the failed delivery ${delivery} (${(e as Error).message}): a retry of it answers 202 for a day`));
      const e = err as AgentAppsError;
      const code = typeof e?.code === 'string' ? e.code : 'E_SKILL';
      send(res, statusFor(code), { error: { code, message: e instanceof Error ? e.message : String(err) } });
    }
  }

  return {
    http(req, res, url) {
      if (url.pathname !== route && url.pathname !== `${route}/`) return false;
      return handle(req, res).then(
        () => true,
        (err: unknown) => {
          ctx.log('error', `${name}: ${err instanceof Error ? err.message : String(err)}`);
          if (!res.headersSent) sendError(res, 500, 'E_INTERNAL', 'the webhook could not be handled');
          else res.end();
          return true;
        },
      );
    },
    async close() {
      closed = true;
    },
  };
};
