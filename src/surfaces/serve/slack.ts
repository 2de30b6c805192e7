// The `slack` gateway (docs/serve.md, "slack"): a Slack app's Events API and interactivity on the
// serve process's shared listener, and remote approvals by Slack buttons.
//
//   gateways:
//     team:
//       type: slack
//       signingSecretEnv: SLACK_SECRET   # the variable holding the app's signing secret
//       tokenEnv: SLACK_TOKEN            # the variable holding its bot token (xoxb-…)
//       channels: [C0123]                # the channels whose messages run the skill
//       skill: helper
//       apiUrl: https://slack.com/api    # optional: Slack's Web API (a stand-in's, in tests)
//   approvals: { via: team, approvers: [U0BOSS], timeoutMs: 600000 }
//
// Routes: `POST /slack/NAME/events` (the Events API's Request URL) and `POST /slack/NAME/interactivity`
// (the app's Interactivity Request URL). Slack is a party on the network (docs/security.md, "The
// callers"): both are verified — Slack's v0 signature over the raw body, within five minutes
// (verify.ts) — before a byte of the body is parsed; a bad one is 401 and nothing runs.
//
// Events: a `message` (no subtype, from no bot — so the gateway never answers itself) or an
// `app_mention` in one of `channels` is answered 200 at once (Slack wants an answer within 3 s and
// retries otherwise) and then runs the skill, as an untrusted caller (ctx.dispatch), with
// `{ text, user, channel, ts, thread_ts?, team? }`. `nonlocals.gateway.reply(textOrObject)` posts in
// the message's thread (chat.postMessage, `thread_ts` = its thread_ts ?? ts); a result the skill
// returns without replying is posted there too (an empty one is not), and a failure as a short error
// (docs/decisions.md). An `event_id` seen before — Slack's retry, `X-Slack-Retry-Num` — and the
// second event of one message (a mention is a `message` and an `app_mention`) are acknowledged,
// not run again: the serve's claims (src/events/claims.ts), shared by every serve on NATS.
//
// Approvals: with `approvals.via` naming this gateway, each gate goes to every approver as a
// direct message (chat.postMessage to the user id) with the call and two buttons whose value is
// the gate's id and single-use token; a notice goes in the thread of the message whose run asks.
// A click arrives as a signed `block_actions` payload: the policy (src/policy/remote-approval.ts)
// takes the clicker's user id, the id and the token, and settles the gate once; the direct
// messages are then updated (chat.update) to say how it ended. A refused click (not an approver,
// already answered, too late) is told so through the payload's `response_url`, which is followed
// only on apiUrl's host (or a subdomain of it: hooks.slack.com for slack.com) — never a URL
// anywhere else, whatever the payload says.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { Logger, WebClient } from '@slack/web-api';
import type { AgentAppsError } from '../../core/errors.ts';
import { isPlainObject } from '../../core/path.ts';
import type { JsonObject } from '../../core/types.ts';
import { claimKey, MemoryClaims } from '../../events/claims.ts';
import type { AnswerResult, ApprovalChannel, Outcome, PendingApproval } from '../../policy/remote-approval.ts';
import type { Gateway, GatewayContext, GatewayFactory } from './gateway.ts';
import { entryOf } from './entry.ts';
import { header, readPosted, send, sendError } from './http-io.ts';
import { verifySlack } from './verify.ts';

export const DEFAULT_API_URL = 'https://slack.com/api';
/** The buttons of an approval message. */
export const ALLOW_ACTION = 'approval_allow';
export const DENY_ACTION = 'approval_deny';

/** Slack cuts a message's text at 40,000 characters; a section's text may hold 3,000. */
const MAX_TEXT = 39_000;
const MAX_SECTION = 2_900;

// ── Slack text ───────────────────────────────────────────────────────────────────────────────

/**
 * Text from outside (a model's args, agent code) as Slack shows it and no more: control and
 * bidirectional characters escaped as `\uXXXX` (newlines and tabs kept), and `&`, `<`, `>` as
 * Slack's entities — so no `<!channel>`, `<@U…>` or `<http://…|link>` is ever formed from it.
 */
export function slackEscape(text: string): string {
  return visible(text, true).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Control and bidirectional characters as `\uXXXX` (newlines and tabs kept when `lines`). */
function visible(text: string, lines: boolean): string {
  // eslint-disable-next-line no-control-regex
  const unseen = lines ? /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g : /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
  return text.replace(unseen, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `text` as a mrkdwn code block: escaped, at most `max` characters, no run of backticks that would end it. */
export function codeBlock(text: string, max = MAX_SECTION - 20): string {
  const clipped = text.length > max ? `${text.slice(0, max)}\n… ${text.length - max} more characters` : text;
  const body = slackEscape(clipped).replace(/`{3,}/g, (run) => '\\u0060'.repeat(run.length));
  return `\`\`\`\n${body.length > MAX_SECTION ? body.slice(0, MAX_SECTION) : body}\n\`\`\``;
}

/** One line for a plain_text field (a header): printable, at most `max` characters. */
function plainLine(text: string, max: number): string {
  const s = visible(text, false);
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

const isSlackUser = (id: string) => /^[UW][A-Z0-9]{2,}$/.test(id);
const mention = (id: string | undefined) => (id && isSlackUser(id) ? `<@${id}>` : slackEscape(id ?? 'nobody'));

/**
 * What a skill's reply or result becomes: a text as it is (Slack mrkdwn, as the skill wrote it);
 * `{ text?, blocks? }` as a message of those; anything else as its JSON in a code block.
 */
export function slackMessage(value: unknown): { text: string; blocks?: unknown[] } {
  if (typeof value === 'string') return { text: value.length > MAX_TEXT ? `${value.slice(0, MAX_TEXT)}…` : value };
  if (isPlainObject(value) && (typeof value.text === 'string' || Array.isArray(value.blocks))) {
    const text = typeof value.text === 'string' ? value.text.slice(0, MAX_TEXT) : '';
    return { text, ...(Array.isArray(value.blocks) ? { blocks: value.blocks } : {}) };
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return { text: String(value) };
  let json: string;
  try {
    json = JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    json = String(value);
  }
  return { text: codeBlock(json, MAX_TEXT - 100) };
}

// ── the approval message ─────────────────────────────────────────────────────────────────────

const asJson = (v: unknown) => {
  try {
    return JSON.stringify(v ?? null, null, 2) ?? 'null';
  } catch {
    return String(v);
  }
};

/** How a gate ended, as the updated message says it. */
export function outcomeLine(o: Outcome): string {
  const reason = o.reason ? `: ${slackEscape(o.reason)}` : '';
  if (o.via === 'timeout') return `Denied: nobody answered in time${reason}`;
  if (o.via === 'withdrawn') return 'Withdrawn: the run ended before an answer';
  if (o.via === 'unsent' || !o.who || o.who === 'nobody') return `Denied${reason || ': no answer'}`;
  return `${o.decision === 'allow' ? 'Allowed' : 'Denied'} by ${mention(o.who)}${reason}`;
}

/** The Block Kit of an approval: the call, who asks, and — while it waits — the two buttons. */
export function gateBlocks(p: PendingApproval, answer: { token: string } | { outcome: string }): unknown[] {
  const q = p.question;
  const because = q.because.kind === 'ask-tools' ? `ask-tools \`${slackEscape(q.because.pattern)}\`` : `trust: ask (${slackEscape(q.because.source)})`;
  const who = [q.agent ? `agent *${slackEscape(q.agent)}*` : undefined, `run of *${slackEscape(p.run.skill)}*${p.run.trigger ? ` (${slackEscape(p.run.trigger)})` : ''}`, because].filter(Boolean).join(' · ');
  const blocks: unknown[] = [
    { type: 'header', text: { type: 'plain_text', text: plainLine(`Approve ${q.tool}?`, 150) } },
    { type: 'section', text: { type: 'mrkdwn', text: `*Args*\n${codeBlock(asJson(q.args), 2000)}` } },
  ];
  if (q.code) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `*The code that calls it*\n${codeBlock(q.code, 1500)}` } });
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `${who} · denied if unanswered by ${new Date(p.expiresAt).toISOString()}` }] });
  if ('token' in answer) {
    const value = `${p.id}.${answer.token}`;
    blocks.push({
      type: 'actions',
      block_id: `approval_${p.id}`,
      elements: [
        { type: 'button', action_id: ALLOW_ACTION, text: { type: 'plain_text', text: 'Allow' }, style: 'primary', value },
        { type: 'button', action_id: DENY_ACTION, text: { type: 'plain_text', text: 'Deny' }, style: 'danger', value },
      ],
    });
  } else blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `*${answer.outcome}*` } });
  return blocks;
}

/** What a refused click is told. */
export function refusalLine(r: Extract<AnswerResult, { ok: false }>, outcome: Outcome | undefined): string {
  switch (r.code) {
    case 'E_NOT_APPROVER':
      return 'Refused: not an approver (approvals.approvers)';
    case 'E_STALE':
      if (!outcome) return 'Refused: this approval is not waiting here (it may have been sent before the server restarted)';
      return `Refused: ${outcome.via === 'timeout' ? 'too late' : 'already answered'} — ${outcomeLine(outcome)}`;
    case 'E_BAD_TOKEN':
      return 'Refused: this button does not belong to a waiting approval';
  }
}

/**
 * The URL a payload's `response_url` may be posted to: one on apiUrl's host — its scheme, host and
 * port, or a subdomain of a named host (hooks.slack.com for slack.com) — else undefined.
 */
export function responseTarget(api: URL, given: unknown): URL | undefined {
  if (typeof given !== 'string') return undefined;
  let u: URL;
  try {
    u = new URL(given);
  } catch {
    return undefined;
  }
  if (u.protocol !== api.protocol || u.port !== api.port || u.username || u.password) return undefined;
  const host = u.hostname.toLowerCase();
  const apiHost = api.hostname.toLowerCase();
  if (host === apiHost) return u;
  const named = !isIP(apiHost) && !apiHost.startsWith('[') && apiHost.includes('.');
  return named && host.endsWith(`.${apiHost}`) ? u : undefined;
}

// ── the gateway ──────────────────────────────────────────────────────────────────────────────

interface Where {
  channel: string;
  thread_ts: string;
}

interface Posted {
  channel: string;
  ts: string;
  /** The notice in the asking run's thread (no buttons), not a direct message. */
  notice?: boolean;
}

/** A result not worth a post (as the email gateway's: docs/decisions.md). */
const empty = (v: unknown) => v === undefined || v === null || v === '' || (Array.isArray(v) ? v.length === 0 : isPlainObject(v) && Object.keys(v).length === 0);

/** An id from outside, for a log line. */
const safe = (s: unknown) => String(s).replace(/[^\x20-\x7e]/g, '?').slice(0, 80);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

export const slackGateway: GatewayFactory = async (ctx: GatewayContext): Promise<Gateway> => {
  const { name } = ctx;
  const entry = entryOf(ctx);
  const skill = entry.str('skill');
  if (!skill) throw entry.fail('skill', 'a slack gateway runs one skill on each message: name it');
  const channelList = ctx.config.channels;
  if (!Array.isArray(channelList) || !channelList.length || channelList.some((c) => typeof c !== 'string' || !c.trim())) {
    throw entry.fail('channels', 'list the channel ids whose messages run the skill (channels: [C0123])');
  }
  const channels = new Set(channelList.map((c) => (c as string).trim()));
  const apiText = entry.str('apiUrl') ?? DEFAULT_API_URL;
  let api: URL;
  try {
    api = new URL(apiText);
  } catch {
    throw entry.fail('apiUrl', `expected an http(s) URL of Slack's Web API, got ${JSON.stringify(apiText)}`);
  }
  if (api.protocol !== 'https:' && api.protocol !== 'http:') throw entry.fail('apiUrl', `expected an http(s) URL of Slack's Web API, got ${JSON.stringify(apiText)}`);
  const signingSecret = entry.secret('signingSecretEnv', "the Slack app's signing secret");
  const token = entry.secret('tokenEnv', "the Slack app's bot token (xoxb-…)");

  // Slack's client, loaded only now that a slack gateway is configured (docs/architecture.md).
  const { WebClient: Client, LogLevel } = await import('@slack/web-api');
  const toLog = (level: 'warn' | 'error') => (...msg: unknown[]) => ctx.log(level === 'error' ? 'error' : 'warn', `Slack Web API: ${msg.map(String).join(' ')}`);
  const logger: Logger = { debug() {}, info() {}, warn: toLog('warn'), error: toLog('error'), setLevel() {}, getLevel: () => LogLevel.WARN, setName() {} };
  const client: WebClient = new Client(token, { slackApiUrl: api.href, logger, timeout: 15_000, retryConfig: { retries: 2, factor: 2, minTimeout: 500 }, allowAbsoluteUrls: false });

  const base = `/slack/${name}`;
  const claims = ctx.claims ?? new MemoryClaims();
  const track = <T>(work: Promise<T>): Promise<T> => (ctx.track ? ctx.track(work) : work);
  let closed = false;

  const post = async (where: Where, value: unknown) => {
    await client.chat.postMessage({ channel: where.channel, thread_ts: where.thread_ts, ...slackMessage(value) } as Parameters<WebClient['chat']['postMessage']>[0]);
  };

  /** Runs the skill on one message, after Slack got its 200: replies and failures go to the thread. */
  async function run(args: JsonObject, where: Where): Promise<void> {
    let replied = false;
    const reply = async (value: unknown) => {
      replied = true;
      await post(where, value);
    };
    try {
      const result = await ctx.dispatch({ skill: skill!, args, data: args, reply, origin: { ...where } });
      if (!replied && !empty(result)) await post(where, result);
    } catch (err) {
      const e = err as AgentAppsError;
      const code = typeof e?.code === 'string' ? e.code : 'E_SKILL';
      const message = e instanceof Error ? e.message : String(err);
      ctx.log('error', `${skill} failed on the message ${safe(where.channel)}/${safe(args.ts)}: ${code}: ${message}`);
      const short = message.length > 300 ? `${message.slice(0, 300)}…` : message;
      await post(where, { text: `:warning: \`${slackEscape(skill!)}\` failed: ${code}: ${slackEscape(short)}` }).catch((err2: unknown) => ctx.log('warn', `cannot post the failure in ${safe(where.channel)}: ${(err2 as Error).message}`));
    }
  }

  /** The body of a POST, verified as Slack's; undefined once refused (401, 413). */
  async function signed(req: IncomingMessage, res: ServerResponse, what: string): Promise<Buffer | undefined> {
    if (req.method !== 'POST') {
      sendError(res, 405, 'E_BAD_REQUEST', `${base}/${what} takes POST`, { allow: 'POST' });
      return undefined;
    }
    if (closed) {
      sendError(res, 503, 'E_ABORTED', 'the server is shutting down', { 'retry-after': '5' });
      return undefined;
    }
    const raw = await readPosted(req, res);
    if (raw === undefined) return undefined;
    // Nothing of the body is looked at before this line.
    if (!verifySlack(signingSecret, raw, header(req, 'x-slack-request-timestamp'), header(req, 'x-slack-signature'))) {
      ctx.log('warn', `refused a request to ${base}/${what} with a bad, missing or stale Slack signature`);
      sendError(res, 401, 'E_SIGNATURE', "the request is not signed with this Slack app's signing secret (or its timestamp is more than five minutes off)");
      return undefined;
    }
    return raw;
  }

  /**
   * The verified body as an object: the Events API posts JSON, interactivity a form whose
   * `payload` is the JSON. Undefined once refused (401, 413, 400).
   */
  async function signedJson(req: IncomingMessage, res: ServerResponse, what: 'events' | 'interactivity'): Promise<Record<string, unknown> | undefined> {
    const raw = await signed(req, res, what);
    if (raw === undefined) return undefined;
    let payload: unknown;
    try {
      const text = raw.toString('utf8');
      payload = JSON.parse(what === 'events' ? text : (new URLSearchParams(text).get('payload') ?? ''));
    } catch {
      payload = undefined;
    }
    if (isPlainObject(payload)) return payload;
    sendError(res, 400, 'E_BAD_REQUEST', what === 'events' ? 'expected an Events API payload (JSON)' : 'expected a form with payload=<JSON>');
    return undefined;
  }

  /** The message an event carries, or why it is ignored. */
  function messageOf(payload: Record<string, unknown>): { args: JsonObject; where: Where } | { ignored: string } {
    const e = payload.event as Record<string, unknown>;
    if (e.type !== 'message' && e.type !== 'app_mention') return { ignored: `a ${safe(e.type)} event` };
    if (e.subtype !== undefined) return { ignored: `a message of subtype ${safe(e.subtype)}` };
    // The gateway's own replies come back as message events: never answer a bot, ours above all.
    const bots = new Set((Array.isArray(payload.authorizations) ? payload.authorizations : []).filter((a) => isPlainObject(a) && a.is_bot === true).map((a) => (a as JsonObject).user_id));
    if (e.bot_id !== undefined || e.bot_profile !== undefined || bots.has(e.user as string)) return { ignored: "a bot's message" };
    const channel = str(e.channel);
    if (!channel || !channels.has(channel)) return { ignored: `a message in ${safe(channel)}, not one of channels` };
    const user = str(e.user);
    const ts = str(e.ts);
    if (!user || !ts) return { ignored: 'a message without user or ts' };
    const thread = str(e.thread_ts);
    const team = str(e.team) ?? str(payload.team_id);
    const args: JsonObject = { text: typeof e.text === 'string' ? e.text : '', user, channel, ts, ...(thread ? { thread_ts: thread } : {}), ...(team ? { team } : {}) };
    return { args, where: { channel, thread_ts: thread ?? ts } };
  }

  async function events(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const payload = await signedJson(req, res, 'events');
    if (payload === undefined) return;
    // Slack checks a new Request URL with a challenge to echo, signed like any request.
    if (payload.type === 'url_verification') return send(res, 200, { challenge: payload.challenge ?? null });
    if (payload.type !== 'event_callback' || !isPlainObject(payload.event)) return send(res, 200, { ok: true, ignored: `a ${safe(payload.type)} payload` });
    const m = messageOf(payload);
    if ('ignored' in m) return send(res, 200, { ok: true, ignored: m.ignored });
    // Once per event id (Slack's retries carry the same one) and once per message (a mention
    // arrives as both a `message` and an `app_mention` event): claimed, so that of several serves
    // on NATS one runs it (src/events/claims.ts).
    const eventId = str(payload.event_id);
    const keys = [...(eventId ? [claimKey('slack', name, eventId)] : []), claimKey('slack', name, m.where.channel, m.args.ts as string)];
    for (const key of keys) {
      if ((await claims.take(key, 'running')) !== undefined) return send(res, 200, { ok: true, duplicate: true, ...(eventId ? { event_id: eventId } : {}) });
    }
    // Answered now: the run may take longer than the 3 s Slack waits before it retries.
    send(res, 200, { ok: true });
    void track(
      run(m.args, m.where).finally(() =>
        Promise.all(keys.map((k) => claims.set(k, 'done'))).catch((err: unknown) => ctx.log('warn', `cannot mark event ${safe(eventId)} done (${(err as Error).message})`)),
      ),
    );
  }

  // ── approvals ──────────────────────────────────────────────────────────────────────────────
  /** The messages each waiting gate was posted as, so that they can say how it ended. */
  const posted = new Map<string, Promise<Posted[]>>();

  const channel: ApprovalChannel = {
    send(p, gateToken) {
      const sending = (async () => {
        const approvers = [...(ctx.approvals?.approvers ?? [])].filter(isSlackUser);
        if (!approvers.length) throw new Error('approvals.approvers lists no Slack user id (U…)');
        const q = p.question;
        // The fallback text (notifications) is mrkdwn too: escaped like the blocks.
        const text = `Approve ${slackEscape(plainLine(q.tool, 100))}? (run of ${slackEscape(plainLine(p.run.skill, 100))})`;
        const blocks = gateBlocks(p, { token: gateToken });
        const out: Posted[] = [];
        const failures: string[] = [];
        // A direct message to each approver: chat.postMessage to a user id opens the app's DM with them.
        await Promise.all(
          approvers.map((user) =>
            client.chat.postMessage({ channel: user, text, blocks } as Parameters<WebClient['chat']['postMessage']>[0]).then(
              (r) => void (r.channel && r.ts && out.push({ channel: r.channel, ts: r.ts })),
              (err: unknown) => {
                failures.push(`${user}: ${(err as Error).message}`);
                ctx.log('warn', `approval ${p.id}: cannot send it to ${user} (${(err as Error).message})`);
              },
            ),
          ),
        );
        if (!out.length) throw new Error(failures.join('; ') || 'Slack answered without a message');
        // The run's thread, when this gateway started the run (GateRun.origin).
        const o = p.run.origin;
        const where = p.run.trigger === `slack ${name}` && o && typeof o.channel === 'string' && typeof o.thread_ts === 'string' ? o : undefined;
        if (where) {
          const notice = `:hourglass_flowing_sand: \`${slackEscape(plainLine(q.tool, 100))}\` is waiting for an approver (${approvers.map(mention).join(', ')})`;
          await client.chat.postMessage({ channel: where.channel, thread_ts: where.thread_ts, text: notice }).then(
            (r) => void (r.channel && r.ts && out.push({ channel: r.channel, ts: r.ts, notice: true })),
            (err: unknown) => ctx.log('warn', `approval ${p.id}: cannot post its notice in the thread (${(err as Error).message})`),
          );
        }
        return out;
      })();
      posted.set(p.id, sending);
      return sending.then(() => undefined);
    },
    async settled(p, outcome) {
      const list = await (posted.get(p.id) ?? Promise.resolve([])).catch((): Posted[] => []);
      posted.delete(p.id);
      const line = outcomeLine(outcome);
      await Promise.all(
        list.map((m) => {
          const update = m.notice ? { text: `\`${slackEscape(plainLine(p.question.tool, 100))}\`: ${line}` } : { text: line, blocks: gateBlocks(p, { outcome: line }) };
          return client.chat.update({ channel: m.channel, ts: m.ts, ...update } as Parameters<WebClient['chat']['update']>[0]).catch((err: unknown) => ctx.log('warn', `approval ${p.id}: cannot update its message in ${m.channel} (${(err as Error).message})`));
        }),
      );
    },
  };
  ctx.approvals?.register(name, channel);

  /** Tells the clicker, through the payload's response_url, when it is on apiUrl's host. */
  async function respond(responseUrl: unknown, text: string): Promise<void> {
    const target = responseTarget(api, responseUrl);
    if (!target) {
      ctx.log('warn', `not following a response_url off ${api.host} (${safe(responseUrl)}): told nobody '${text}'`);
      return;
    }
    const r = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify({ response_type: 'ephemeral', replace_original: false, text }), redirect: 'error', signal: AbortSignal.timeout(15_000) });
    await r.body?.cancel();
    if (!r.ok) throw new Error(`${target.host} answered ${r.status}`);
  }

  async function interactivity(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const payload = await signedJson(req, res, 'interactivity');
    if (payload === undefined) return;
    // Slack wants its 200 (empty) within 3 s; what a click did shows in the messages.
    res.writeHead(200, { 'content-length': '0' }).end();
    if (payload.type !== 'block_actions' || !Array.isArray(payload.actions)) return;
    const who = isPlainObject(payload.user) ? (str(payload.user.id) ?? '') : '';
    for (const action of payload.actions) {
      if (!isPlainObject(action) || (action.action_id !== ALLOW_ACTION && action.action_id !== DENY_ACTION)) continue;
      const value = str(action.value) ?? '';
      const dot = value.indexOf('.');
      const id = dot < 0 ? value : value.slice(0, dot);
      const gateToken = dot < 0 ? '' : value.slice(dot + 1);
      let refusal: string | undefined;
      if (!ctx.approvals) {
        ctx.log('warn', `a click on approval ${safe(id)} by ${safe(who)}, but this serve has no approvals: configured`);
        refusal = 'Refused: this server has no approvals configured';
      } else {
        const r = ctx.approvals.answer({ id, token: gateToken, value: action.action_id === ALLOW_ACTION ? 'allow' : 'deny', who, via: name });
        if (!r.ok) refusal = refusalLine(r, ctx.approvals.outcome(id));
      }
      if (refusal) await respond(payload.response_url, refusal).catch((err: unknown) => ctx.log('warn', `cannot tell ${safe(who)} '${refusal}' (${(err as Error).message})`));
    }
  }

  const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => Promise<void>> = { [`${base}/events`]: events, [`${base}/interactivity`]: interactivity };
  return {
    http(req, res, url) {
      const handle = Object.hasOwn(routes, url.pathname) ? routes[url.pathname] : undefined;
      if (!handle) return false;
      return track(handle(req, res)).then(
        () => true,
        (err: unknown) => {
          ctx.log('error', `${url.pathname}: ${err instanceof Error ? err.message : String(err)}`);
          if (!res.headersSent) sendError(res, 500, 'E_INTERNAL', 'the Slack request could not be handled');
          else res.end();
          return true;
        },
      );
    },
    describe: () => [`POST ${base}/events → ${skill} (channels ${[...channels].join(', ')})`, `POST ${base}/interactivity`],
    async start() {
      if (!ctx.approvals || ctx.approvalsVia !== name) return [];
      const approvers = [...ctx.approvals.approvers].filter(isSlackUser);
      if (!approvers.length) ctx.log('warn', 'approvals.via names this gateway, but none of approvals.approvers is a Slack user id (U…): its gates are denied');
      return [`approvals: a direct message to ${approvers.length ? approvers.join(', ') : 'nobody'}, answered by its Allow / Deny buttons`];
    },
    async close() {
      closed = true;
    },
  } as Gateway & { describe(): string[] };
};
