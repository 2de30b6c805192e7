// The `email` gateway (docs/serve.md, "email"): an SMTP listener of its own (the `smtp-server`
// package) that runs the entry's skill for each mail from an allowed sender, and answers by mail
// through an outbound relay (`nodemailer`), threaded on the sender's message. It also carries
// remote approvals (docs/serve.md, "Remote approvals"): a gate is mailed to the approvers, and
// their reply "yes" or "no" settles it.
//
//   gateways:
//     inbox:
//       type: email
//       host: 127.0.0.1                 # default 127.0.0.1
//       port: 2525                      # 0: a free port, printed
//       allowFrom: [ops@example.com, '*@example.org']
//       skill: triage
//       smtp: { url: "smtp://127.0.0.1:2526", user?: NAME, passwordEnv?: SMTP_PASSWORD }
//       from: agent@example.com         # optional: the From of what it sends
//
// A mail is a message from outside (docs/security.md, "The callers"): the skill runs as an
// untrusted caller (ctx.dispatch → src/policy/untrusted.ts) with args that are data only, built
// here from the parsed mail:
//   { from, to, subject, text, html?, attachments: [{ name, size, type }], messageId }
//   - from: the header From's address (it and the envelope's MAIL FROM both matched allowFrom);
//   - to: the envelope's recipients; text: the plain text (converted from the HTML when the mail
//     has none); html: the HTML part, when there is one, its cid: links left as they are;
//   - attachments: their names, sizes and types — never their contents.
// The `gateway-message` event's data is the same without html.
//
// Who may send: `allowFrom` (required) lists addresses and `*@domain`s, compared case-insensitively
// with the envelope's MAIL FROM (others get 550 there, before any data) and with the header From
// (others get 550 at the end of the data): nothing runs for either. That is a filter, not a proof
// of who wrote the mail — an SMTP sender chooses its From — so on a port others can reach, put the
// gateway behind a mail server that checks SPF / DKIM / DMARC (docs/decisions.md). No AUTH, no
// STARTTLS: a mail is at most 10 MiB (552 over that).
//
// Answers: `nonlocals.gateway.reply(value)` mails the sender (To: the header From, never Reply-To)
// with Subject "Re: <subject>" and In-Reply-To / References naming the mail, so it threads. A
// string is the body; `{ text?, html? }` those parts; anything else JSON. A skill that returns a
// result and did not reply is answered with the result; one that fails with its error's code and
// message. A mail marked Auto-Submitted (an out-of-office, a bounce) runs, but is never answered.
//
// Approvals: when the serve's `approvals:` exist, this gateway registers its channel (under its
// name); a gate goes to every approver that is an email address, Subject "Approve TOOL? [approval
// ID.TOKEN]", Message-ID <approval-ID@agent-apps>. A mail whose Subject, In-Reply-To or References
// names an approval is an answer, never a message for the skill: its first line that is not quoted
// is read — yes / y / allow / approve, or no / n / deny and an optional reason — and passed to
// `approvals.answer()` with who = the sender, which keeps the policy's rules (approvers only, the
// gate's token, once, in time: src/policy/remote-approval.ts). Approvers may send answers even
// when allowFrom does not list them; only answers.
import net from 'node:net';
import type { SMTPServer, SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import type { ParsedMail } from 'mailparser';
import type { Transporter } from 'nodemailer';
import { ConfigurationError, type AgentAppsError } from '../../core/errors.ts';
import type { JsonObject } from '../../core/types.ts';
import { isPlainObject } from '../../core/path.ts';
import { claimKey, MemoryClaims } from '../../events/claims.ts';
import type { ApprovalChannel, PendingApproval } from '../../policy/remote-approval.ts';
import type { Gateway, GatewayContext, GatewayFactory } from './gateway.ts';

/** The largest mail taken (552 over it). */
export const MAX_MESSAGE = 10 * 1024 * 1024;
/** How long close() lets an SMTP transaction under way finish before it is cut (421). */
const CLOSE_MS = 3000;
/** The most of a gate's args a mail shows. */
const MAX_ARGS_SHOWN = 4000;

const ADDRESS = /^[^\s@<>()[\],;:"]+@[^\s@<>()[\],;:"]+$/;

/** `allowFrom` as given: addresses and `*@domain`s, lower-cased. */
export function parseAllowFrom(raw: unknown): string[] | undefined {
  if (!Array.isArray(raw) || raw.length === 0) return undefined;
  const out: string[] = [];
  for (const v of raw) {
    if (typeof v !== 'string') return undefined;
    const s = v.trim().toLowerCase();
    if (!ADDRESS.test(s.startsWith('*@') ? `x${s.slice(1)}` : s)) return undefined;
    out.push(s);
  }
  return out;
}

/** Whether `address` is one `allowFrom` lists: itself, or its domain as `*@domain` (not subdomains). */
export function allowed(patterns: readonly string[], address: string | undefined): boolean {
  if (!address) return false;
  const a = address.trim().toLowerCase();
  const at = a.lastIndexOf('@');
  if (at < 1) return false;
  const domain = a.slice(at + 1);
  return patterns.some((p) => (p.startsWith('*@') ? p.slice(2) === domain : p === a));
}

/** A text for a mail an approver reads: control, bidi and line-separator characters escaped. */
export function printable(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A gate's args as JSON on one line, every control character escaped, cut at MAX_ARGS_SHOWN. */
export function showArgs(args: unknown): string {
  let json: string;
  try {
    json = JSON.stringify(args ?? null) ?? 'null';
  } catch {
    json = String(args);
  }
  const shown = printable(json.replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t'));
  return shown.length > MAX_ARGS_SHOWN ? `${shown.slice(0, MAX_ARGS_SHOWN)}… (${shown.length - MAX_ARGS_SHOWN} more characters)` : shown;
}

const SUBJECT_REF = /\[approval ([0-9a-f]{16})\.([A-Za-z0-9_-]{16,128})\]/;
const HEADER_REF = /<approval-([0-9a-f]{16})@agent-apps>/;
/**
 * What names an approval — its id in the subject (with or without the token) or in the headers:
 * such a mail is never run as a message. A subject like "[approval needed]" is ordinary mail.
 */
const LOOKS_LIKE = /\[approval [0-9a-f]{16}\b|<approval-[0-9a-f]{16}@agent-apps>/i;

export interface ApprovalRef {
  /** The gate's id, from the subject or the headers. */
  id?: string;
  /** Its token, from the subject (the headers never carry it). */
  token?: string;
}

/** The approval a mail answers, when it names one (undefined: an ordinary mail). */
export function approvalRef(subject: string, inReplyTo: string | undefined, references: string | string[] | undefined): ApprovalRef | undefined {
  const refs = [inReplyTo ?? '', ...(Array.isArray(references) ? references : [references ?? ''])].join(' ');
  if (!LOOKS_LIKE.test(subject) && !LOOKS_LIKE.test(refs)) return undefined;
  const s = SUBJECT_REF.exec(subject);
  if (s) return { id: s[1]!, token: s[2]! };
  const h = HEADER_REF.exec(refs) ?? /\[approval ([0-9a-f]{16})\b/.exec(subject);
  return h ? { id: h[1]! } : {};
}

const ALLOW = new Set(['yes', 'y', 'allow', 'approve']);
const DENY = new Set(['no', 'n', 'deny']);

/**
 * An approver's answer: the first line of the text that is neither empty nor quoted (`>`) — its
 * first word yes / y / allow / approve, or no / n / deny followed by an optional reason.
 */
export function readAnswer(text: string): { value: 'allow' | 'deny'; reason?: string } | undefined {
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('>')) continue;
    const m = /^([A-Za-z]+)[\s.,:;!-]*(.*)$/.exec(line);
    if (!m) return undefined;
    const word = m[1]!.toLowerCase();
    if (ALLOW.has(word)) return { value: 'allow' };
    if (DENY.has(word)) {
      const reason = printable(m[2]!.trim()).slice(0, 500);
      return { value: 'deny', ...(reason ? { reason } : {}) };
    }
    return undefined;
  }
  return undefined;
}

/** What a reply says: a string, `{ text?, html? }`, or anything else as JSON. */
export function replyBody(value: unknown): { text?: string; html?: string } {
  if (typeof value === 'string') return { text: value };
  if (isPlainObject(value)) {
    const keys = Object.keys(value);
    const parts = keys.length > 0 && keys.every((k) => (k === 'text' || k === 'html') && typeof value[k] === 'string');
    if (parts) return { ...(typeof value.text === 'string' ? { text: value.text } : {}), ...(typeof value.html === 'string' ? { html: value.html } : {}) };
  }
  let json: string | undefined;
  try {
    json = JSON.stringify(value, null, 2);
  } catch {
    json = undefined;
  }
  return { text: json ?? String(value) };
}

/** A result worth answering with: not undefined, null, '', {} or []. */
function worthSending(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isPlainObject(value)) return Object.keys(value).length > 0;
  return true;
}

const re = (subject: string) => (/^re:/i.test(subject.trim()) ? subject.trim() : `Re: ${subject.trim()}`);

/** The addresses of an address header, lower-cased (groups flattened). */
function addresses(h: ParsedMail['from'] | ParsedMail['to']): string[] {
  const objects = h === undefined ? [] : Array.isArray(h) ? h : [h];
  const out: string[] = [];
  const add = (list: { address?: string; group?: { address?: string }[] }[]) => {
    for (const e of list) {
      if (e.address) out.push(e.address.toLowerCase());
      if (e.group) add(e.group);
    }
  };
  for (const o of objects) add(o.value);
  return out;
}

/** An SMTP refusal for the client. */
function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

/** A URL with its credentials left out, for a log line. */
function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.href.replace(/\/$/, '');
  } catch {
    return '(not a URL)';
  }
}

function str(config: JsonObject, key: string): string | undefined {
  const v = config[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export const emailGateway: GatewayFactory = async (ctx: GatewayContext): Promise<Gateway> => {
  const { config, name } = ctx;
  const at = (key: string) => ({ ...(ctx.place.file ? { file: ctx.place.file } : {}), key: `${ctx.place.key}.${key}` });
  // `FILE (gateways.NAME.key): …` where the main's file is known, else `gateways.NAME.key: …`.
  const fail = (key: string, message: string) => (ctx.place.file ? new ConfigurationError(message, { place: at(key) }) : new ConfigurationError(`${ctx.place.key}.${key}: ${message}`));

  const skill = str(config, 'skill');
  if (!skill) throw fail('skill', 'an email gateway runs one skill for each mail: name it');
  const host = config.host === undefined ? '127.0.0.1' : config.host;
  if (typeof host !== 'string' || host === '') throw fail('host', 'the address to listen on (default 127.0.0.1)');
  const port = config.port;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535) throw fail('port', `the SMTP port to listen on, 0 to 65535 (0: a free one), got ${JSON.stringify(port ?? null)}`);
  const allowFrom = parseAllowFrom(config.allowFrom);
  if (!allowFrom) throw fail('allowFrom', "list who may send mail here: addresses (ops@example.com) or '*@example.com' — a mail from anyone else is refused (550)");
  let smtp: { url: string; user?: string; pass?: string } | undefined;
  if (config.smtp !== undefined) {
    if (!isPlainObject(config.smtp) || typeof config.smtp.url !== 'string' || !/^smtps?:\/\/[^/]/i.test(config.smtp.url)) throw fail('smtp.url', 'the relay replies go out through: smtp://HOST:PORT or smtps://HOST:PORT');
    const s = config.smtp as JsonObject;
    const user = str(s, 'user');
    const passwordEnv = str(s, 'passwordEnv');
    let pass: string | undefined;
    if (passwordEnv) {
      pass = process.env[passwordEnv];
      if (!pass) throw fail('smtp.passwordEnv', `the environment variable ${passwordEnv} is not set: it holds the relay's password`);
    }
    smtp = { url: s.url as string, ...(user ? { user } : {}), ...(pass !== undefined ? { pass } : {}) };
  }
  const from = str(config, 'from');
  if (from !== undefined && !ADDRESS.test(from.replace(/^.*<([^>]*)>\s*$/, '$1'))) throw fail('from', `an address (agent@example.com), got ${JSON.stringify(from)}`);
  const carriesApprovals = ctx.approvals !== undefined && (ctx.approvalsVia === name || smtp !== undefined);
  if (ctx.approvals && ctx.approvalsVia === name && !smtp) throw fail('smtp.url', 'approvals.via names this gateway: approvals are mailed through smtp.url (smtp://HOST:PORT)');
  // The approvers that can answer by mail, as approvals.approvers spells them.
  const approvers = ctx.approvals ? [...ctx.approvals.approvers].filter((a) => ADDRESS.test(a)) : [];
  const approverAs = (address: string): string | undefined => approvers.find((a) => a.toLowerCase() === address);

  // The packages load here, only when an email gateway is configured (docs/architecture.md).
  const [{ SMTPServer: Server }, { simpleParser }, nodemailer] = await Promise.all([import('smtp-server'), import('mailparser'), import('nodemailer')]);
  const transport: Transporter | undefined = smtp ? nodemailer.createTransport({ url: smtp.url, ...(smtp.user ? { auth: { user: smtp.user, pass: smtp.pass ?? '' } } : {}) }) : undefined;
  const seen = ctx.claims ?? new MemoryClaims();
  let closed = false;
  let server: SMTPServer | undefined;
  let missingRelay = false;

  /** Sends one mail through the relay; a failure is logged, never thrown at the skill. */
  async function mail(message: Parameters<Transporter['sendMail']>[0], what: string): Promise<void> {
    if (!transport) {
      if (!missingRelay) ctx.log('warn', `no smtp.url: ${what} is not sent (replies need a relay)`);
      missingRelay = true;
      return;
    }
    await transport.sendMail(message);
  }

  /** The sender's address for mail this gateway writes: `from`, else the address the mail was sent to. */
  const sender = (to?: string) => from ?? to ?? 'agent-apps@localhost';

  /** Mail in, refused or accepted; what it starts runs after the SMTP answer. */
  async function received(raw: Buffer, session: SMTPServerSession): Promise<(() => Promise<void>) | Error> {
    const envelopeFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address.toLowerCase() : '';
    const rcpts = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
    const parsed = await simpleParser(raw, { keepCidLinks: true });
    const headerFrom = addresses(parsed.from);
    const subject = typeof parsed.subject === 'string' ? parsed.subject : '';
    const autoSubmitted = String(parsed.headers.get('auto-submitted') ?? 'no').trim().toLowerCase();
    const automatic = autoSubmitted !== 'no' && autoSubmitted !== '';
    if (headerFrom.length !== 1) {
      ctx.log('warn', `refused a mail from ${printable(envelopeFrom)}: its From header names ${headerFrom.length} addresses, not one`);
      return smtpError(550, '5.7.1 the From header must name one address');
    }
    const author = headerFrom[0]!;
    const ref = approvalRef(subject, parsed.inReplyTo, parsed.references);
    if (ref !== undefined) {
      // An answer to an approval (or something that looks like one): never a message for the skill.
      if (author !== envelopeFrom) {
        ctx.log('warn', `refused an approval answer: its From (${printable(author)}) is not its envelope sender (${printable(envelopeFrom)})`);
        return smtpError(550, '5.7.1 an approval answer comes from the approver: From and MAIL FROM must be the same address');
      }
      if (automatic) {
        ctx.log('warn', `ignored an automatic mail (Auto-Submitted: ${printable(autoSubmitted)}) from ${printable(author)} that names an approval: an answer is a person's`);
        return async () => {};
      }
      return () => answer(ref, author, parsed, subject);
    }
    if (!allowed(allowFrom!, author) || !allowed(allowFrom!, envelopeFrom)) {
      const who = allowed(allowFrom!, envelopeFrom) ? `its From ${printable(author)}` : printable(envelopeFrom);
      ctx.log('warn', `refused a mail from ${who}: not in ${ctx.place.key}.allowFrom${approverAs(envelopeFrom) ? ' (an approver may only answer approvals)' : ''}`);
      return smtpError(550, `5.7.1 ${approverAs(envelopeFrom) ? 'only answers to approvals are taken from this sender' : 'the sender may not send mail to this gateway'}`);
    }
    const messageId = parsed.messageId ?? '';
    const claim = messageId ? claimKey('mail', name, messageId) : undefined;
    if (claim !== undefined && (await seen.take(claim, 'running')) !== undefined) {
      ctx.log('info', `mail ${printable(messageId)} was delivered before: not run again`);
      return async () => {};
    }
    const attachments = parsed.attachments.map((a) => ({ name: a.filename ?? null, size: a.size, type: a.contentType }));
    const text = parsed.text ?? '';
    const data: JsonObject = { from: author, to: rcpts, subject, text, attachments, messageId };
    const args: JsonObject = { ...data, ...(typeof parsed.html === 'string' ? { html: parsed.html } : {}) };
    const references = [...(Array.isArray(parsed.references) ? parsed.references : parsed.references ? [parsed.references] : []), ...(messageId ? [messageId] : [])];
    const threaded = { from: sender(rcpts[0]), to: author, subject: re(subject), ...(messageId ? { inReplyTo: messageId, references } : {}), headers: { 'Auto-Submitted': 'auto-replied' } };
    let replied = false;
    const reply = async (value: unknown) => {
      replied = true;
      if (automatic) return void ctx.log('info', `no reply to ${printable(author)}: the mail is automatic (Auto-Submitted: ${printable(autoSubmitted)})`);
      await mail({ ...threaded, ...replyBody(value) }, `the reply to ${author}`);
    };
    return async () => {
      try {
        const result = await ctx.dispatch({ skill: skill!, args, data, reply });
        if (claim !== undefined) await seen.set(claim, 'done').catch(() => {});
        if (!replied && worthSending(result)) await reply(result);
      } catch (err) {
        if (claim !== undefined) await seen.drop(claim).catch(() => {});
        const e = err as AgentAppsError;
        const code = typeof e?.code === 'string' ? e.code : 'E_SKILL';
        const message = e instanceof Error ? e.message : String(err);
        ctx.log('warn', `${skill} for the mail from ${printable(author)} failed: ${code}: ${message}`);
        await reply({ text: `${skill} failed: ${code}: ${message}` }).catch((m: unknown) => ctx.log('warn', `cannot send the failure to ${printable(author)} (${(m as Error).message})`));
      }
    };
  }

  /** An approver's mail: read it, pass it to the broker, tell the approver what came of it. */
  async function answer(ref: ApprovalRef, author: string, parsed: ParsedMail, subject: string): Promise<void> {
    const shownSubject = re(subject.replace(SUBJECT_REF, (_m, id: string) => `[approval ${id}]`));
    const tell = (text: string) =>
      mail({ from: sender(), to: author, subject: shownSubject, ...(parsed.messageId ? { inReplyTo: parsed.messageId, references: [parsed.messageId] } : {}), headers: { 'Auto-Submitted': 'auto-replied' }, text }, `the answer to ${author}`).catch((err: unknown) =>
        ctx.log('warn', `cannot tell ${printable(author)} how the answer went (${(err as Error).message})`),
      );
    const refuse = (why: string) => {
      ctx.log('warn', `approval ${ref.id ?? '?'}: refused an answer from ${printable(author)}: ${why}`);
      return tell(`Refused: ${why}.`);
    };
    if (!ctx.approvals || !carriesApprovals) return refuse('this gateway carries no approvals');
    if (!ref.id || !ref.token) return refuse('the subject does not carry the approval’s id and token: reply to the approval mail and keep its subject');
    const read = readAnswer(parsed.text ?? '');
    if (!read) return refuse('the first line of the reply is neither "yes" nor "no"');
    const result = ctx.approvals.answer({ id: ref.id, token: ref.token, value: read.value, who: approverAs(author) ?? author, via: name, ...(read.reason ? { reason: read.reason } : {}) });
    if (result.ok) {
      const tool = printable(result.pending.question.tool);
      return tell(read.value === 'allow' ? `Allowed: the call of ${tool} goes ahead.` : `Denied: the call of ${tool} is refused${read.reason ? ` (${read.reason})` : ''}.`);
    }
    // The broker logged it; the approver hears why.
    const why = result.code === 'E_STALE' ? `stale — ${result.message}` : result.code === 'E_NOT_APPROVER' ? `not an approver — ${result.message}` : result.message;
    return tell(`Refused: ${why}.`);
  }

  const channel: ApprovalChannel = {
    async send(p: PendingApproval, token: string) {
      if (!approvers.length) throw new Error('none of approvals.approvers is an email address');
      if (!transport) throw new Error('no smtp.url to send it through');
      const q = p.question;
      const tool = printable(q.tool);
      const mins = Math.max(1, Math.round((p.expiresAt - p.createdAt) / 60_000));
      const lines = [
        `An agent run wants to call ${tool}, which needs a person's approval.`,
        '',
        `  tool:   ${tool}`,
        `  args:   ${showArgs(q.args)}`,
        ...(q.agent ? [`  agent:  ${printable(q.agent)}`] : []),
        `  run:    ${printable(p.run.skill)}${p.run.trigger ? ` (${printable(p.run.trigger)})` : ''}${p.run.runId ? `, run ${printable(p.run.runId)}` : ''}`,
        ...(q.via ? [`  via:    ${printable(q.via)}`] : []),
        `  why:    ${q.because.kind === 'ask-tools' ? `ask-tools ${printable(q.because.pattern)}` : `trust: ask (${printable(q.because.source)})`}`,
        `  until:  ${new Date(p.expiresAt).toISOString()} (about ${mins} minute${mins === 1 ? '' : 's'}; no answer by then is a no)`,
        '',
        'Reply "yes" to allow this one call, or "no" to deny it — a reason may follow on the same',
        'line ("no, not on a Friday"). Keep the subject: it carries this approval\'s single-use token.',
      ];
      await mail({ from: sender(), to: approvers, subject: `Approve ${tool}? [approval ${p.id}.${token}]`, messageId: `<approval-${p.id}@agent-apps>`, headers: { 'Auto-Submitted': 'auto-generated' }, text: lines.join('\n') + '\n' }, `approval ${p.id}`);
    },
  };

  function onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback: (err?: Error | null, message?: string) => void): void {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => {
      if (!stream.sizeExceeded) chunks.push(c);
    });
    stream.on('end', () => {
      if (stream.sizeExceeded) {
        ctx.log('warn', `refused a mail over ${MAX_MESSAGE} bytes from ${printable(session.envelope.mailFrom ? session.envelope.mailFrom.address : '')}`);
        return callback(smtpError(552, `5.3.4 a mail is at most ${MAX_MESSAGE} bytes`));
      }
      received(Buffer.concat(chunks), session).then(
        (outcome) => {
          if (outcome instanceof Error) return callback(outcome);
          callback(null, 'taken');
          // After the answer: the run may wait for an approval for minutes; the client should not.
          void outcome().catch((err: unknown) => ctx.log('error', `${(err as Error).message}`));
        },
        (err: unknown) => {
          ctx.log('warn', `cannot read a mail from ${printable(session.envelope.mailFrom ? session.envelope.mailFrom.address : '')} (${(err as Error).message})`);
          callback(smtpError(554, '5.6.0 the mail could not be read'));
        },
      );
    });
  }

  const where = () => {
    const a = server?.server.address();
    const p = a && typeof a === 'object' ? a.port : port;
    return `${net.isIPv6(host) ? `[${host}]` : host}:${p}`;
  };

  return {
    async start() {
      const s = new Server({
        name: 'agent-apps',
        banner: 'agent-apps serve',
        logger: false,
        size: MAX_MESSAGE,
        rejectOversized: true,
        disabledCommands: ['AUTH', 'STARTTLS'],
        authOptional: true,
        disableReverseLookup: true,
        closeTimeout: CLOSE_MS,
        onConnect(_session, callback) {
          callback(closed ? smtpError(421, '4.3.2 the server is shutting down') : null);
        },
        onMailFrom(address, _session, callback) {
          const a = address.address.toLowerCase();
          if (allowed(allowFrom!, a) || (carriesApprovals && approverAs(a))) return callback();
          ctx.log('warn', `refused mail from ${printable(a || '<>')}: not in ${ctx.place.key}.allowFrom`);
          callback(smtpError(550, '5.7.1 the sender may not send mail to this gateway'));
        },
        onData,
      });
      await new Promise<void>((resolve, reject) => {
        const onError = (err: NodeJS.ErrnoException) => reject(err);
        s.once('error', onError);
        s.listen(port, host, () => {
          s.off('error', onError);
          s.on('error', (err) => ctx.log('warn', `${err.message}`));
          resolve();
        });
      }).catch((err: NodeJS.ErrnoException) => {
        const why = err.code === 'EADDRINUSE' ? 'the port is in use' : err.code === 'EACCES' ? 'permission denied' : err.code === 'EADDRNOTAVAIL' ? 'no such address on this machine' : err.message;
        throw fail('port', `cannot listen on ${net.isIPv6(host) ? `[${host}]` : host}:${port}: ${why} (${err.code ?? 'error'})`);
      });
      server = s;
      if (carriesApprovals) ctx.approvals!.register(name, channel);
      const lines = [`listening on ${where()} (SMTP): mail from ${allowFrom!.join(', ')} → ${skill}; replies ${smtp ? `through ${shownUrl(smtp.url)}` : 'not sent (no smtp.url)'}`];
      if (carriesApprovals) lines.push(`approvals: mailed to ${approvers.length ? approvers.join(', ') : 'nobody (no approver is an email address)'}, answered by a reply "yes" or "no"`);
      return lines;
    },
    // The drain: no new connection; a transaction under way may finish (CLOSE_MS); what runs goes
    // on and is still answered through the relay.
    async close() {
      closed = true;
      const s = server;
      server = undefined;
      if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
    },
  };
};
