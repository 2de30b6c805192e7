// The email gateway (src/surfaces/serve/email.ts, docs/serve.md "email"): real mail both ways — a
// `nodemailer` client sends to the gateway's SMTP listener on 127.0.0.1, and a local `smtp-server`
// sink (the outbound relay) receives the replies, parsed with `mailparser`. The skills run on a
// real runtime through the serve surface's own dispatch (src/surfaces/serve/dispatch.ts), or in a
// real `agent-apps serve` process; approvals go through the real ApprovalBroker with an agent run
// on the replay model whose call is gated (test/remote-approval.test.ts).
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import { allowed, approvalRef, emailGateway, MAX_MESSAGE, readAnswer, replyBody, showArgs } from '../src/surfaces/serve/email.ts';
import { makeDispatch } from '../src/surfaces/serve/dispatch.ts';
import { ApprovalBroker } from '../src/policy/remote-approval.ts';
import { contextFor } from './serve-gateway-helpers.ts';
import { runtimeAt, workspace as filesWorkspace } from './helpers.ts';
import { attackWorkspace, runtimeIn } from './security/attack.ts';
import { startServe, until, workspace as serveWorkspace } from './serve-helpers.ts';
import { BIN, baseEnv } from './mcp-server-helpers.ts';
import type { Runtime } from '../src/index.ts';
import type { Gateway, InboundMessage } from '../src/surfaces/serve/gateway.ts';
import type { JsonObject } from '../src/core/types.ts';

// ── the relay: an SMTP sink on 127.0.0.1 that keeps what it receives ─────────────────────────

interface Received {
  envelope: { from: string; to: string[] };
  mail: ParsedMail;
}

async function sink(t: TestContext): Promise<{ url: string; mails: Received[]; next(match: (m: Received) => boolean, what: string): Promise<Received> }> {
  const mails: Received[] = [];
  const server = new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    onData(stream, session, callback) {
      simpleParser(stream).then(
        (mail) => {
          mails.push({ envelope: { from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address) }, mail });
          callback();
        },
        (err: Error) => callback(err),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.server.address() as net.AddressInfo).port;
  const seen = new Set<Received>();
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    async next(match, what) {
      const m = await until(() => mails.find((x) => !seen.has(x) && match(x)), 30_000, what);
      seen.add(m);
      return m;
    },
  };
}

/** Sends one mail to the gateway with nodemailer; resolves with the SMTP answer, or the refusal. */
async function send(port: number, message: SendMailOptions): Promise<{ ok: true; response: string } | { ok: false; code: number | undefined; response: string }> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
  try {
    const info = await transport.sendMail(message);
    return { ok: true, response: info.response };
  } catch (err) {
    const e = err as { responseCode?: number; response?: string; message: string };
    return { ok: false, code: e.responseCode, response: e.response ?? e.message };
  } finally {
    transport.close();
  }
}

const textOf = (m: Received) => (m.mail.text ?? '').trim();
const toOf = (m: Received) => m.envelope.to.map((a) => a.toLowerCase());

// ── an email gateway in this process, over a real runtime and the serve surface's dispatch ────

interface Mailbox {
  rt: Runtime;
  dir: string;
  gateway: Gateway;
  port: number;
  messages: InboundMessage[];
  logged: string[];
}

async function inbox(t: TestContext, rt: Runtime, dir: string, config: JsonObject, approvals?: { broker: ApprovalBroker; via: string }): Promise<Mailbox> {
  const messages: InboundMessage[] = [];
  const logged: string[] = [];
  const stop = new AbortController();
  const ctx = contextFor(rt, 'inbox', 'email', { type: 'email', host: '127.0.0.1', port: 0, ...config }, { messages, logged });
  const dispatch = makeDispatch({ runtime: rt, name: 'inbox', type: 'email', maxMs: 60_000, signal: stop.signal, track: (p) => p, ...(approvals ? { approvals } : {}) });
  ctx.dispatch = (m) => {
    messages.push(m);
    return dispatch(m);
  };
  if (approvals) Object.assign(ctx, { approvals: approvals.broker, approvalsVia: approvals.via });
  const gateway = await emailGateway(ctx);
  const lines = (await gateway.start!()) ?? [];
  t.after(async () => {
    await gateway.close();
    stop.abort();
  });
  const port = Number(/listening on 127\.0\.0\.1:(\d+) \(SMTP\)/.exec(lines[0] ?? '')?.[1]);
  assert.ok(port > 0, lines.join('\n'));
  return { rt, dir, gateway, port, messages, logged };
}

const SKILLS: Record<string, string> = {
  // Writes its args to a marker file and returns what it saw.
  'skills/triage.skill.ts': `import fs from 'node:fs';
export const frontmatter = { name: 'triage', description: 'Triage a mail.' };
export default (_ctx: unknown, args: Record<string, unknown>) => {
  fs.writeFileSync(new URL('../ran.json', import.meta.url), JSON.stringify(args));
  return { seen: args.subject, words: String(args.text).split(/\\s+/).filter(Boolean).length };
};
`,
  // Answers through nonlocals.gateway.reply and returns a result too.
  'skills/answers.skill.ts': `export const frontmatter = { name: 'answers', description: 'Replies itself.' };
export default async (ctx: { nonlocals: { gateway: { reply(v: unknown): Promise<void> } } }, args: { subject: string }) => {
  await ctx.nonlocals.gateway.reply({ text: 'on it: ' + args.subject });
  return { done: true };
};
`,
  'skills/fails.skill.ts': `export const frontmatter = { name: 'fails', description: 'Fails.' };
export default () => { throw Object.assign(new Error('the queue is full'), { code: 'E_BUSY' }); };
`,
  'skills/quiet.skill.ts': `import fs from 'node:fs';
export const frontmatter = { name: 'quiet', description: 'Returns nothing.' };
export default () => { fs.writeFileSync(new URL('../quiet', import.meta.url), '1'); };
`,
};

async function codeInbox(t: TestContext, config: JsonObject): Promise<Mailbox> {
  const dir = filesWorkspace(t, SKILLS);
  const rt = await runtimeAt(t, dir);
  return inbox(t, rt, dir, config);
}

describe('email gateway', () => {
  test('a mail from an allowed sender runs the skill with the mail as data; the result comes back threaded', async (t) => {
    const relay = await sink(t);
    const box = await codeInbox(t, { allowFrom: ['ops@example.com'], skill: 'triage', smtp: { url: relay.url }, from: 'agent@example.com' });
    const sent = await send(box.port, {
      envelope: { from: 'OPS@example.com', to: ['inbox@agent.example'] },
      from: 'Ops <Ops@Example.com>',
      to: 'inbox@agent.example',
      subject: 'disk full on db-2',
      messageId: '<m1@ops.example.com>',
      text: 'the disk on db-2 is full',
      html: '<p>the disk on <b>db-2</b> is full</p>',
      attachments: [{ filename: 'df.txt', content: 'Filesystem  Use%\n/dev/sda1  100%\n', contentType: 'text/plain' }],
    });
    assert.equal(sent.ok, true, JSON.stringify(sent));
    const reply = await relay.next(() => true, 'the reply');
    assert.deepEqual(toOf(reply), ['ops@example.com']);
    assert.equal(reply.mail.subject, 'Re: disk full on db-2');
    assert.equal(reply.mail.inReplyTo, '<m1@ops.example.com>');
    assert.equal(reply.mail.references, '<m1@ops.example.com>');
    assert.equal(reply.mail.from?.value[0]?.address, 'agent@example.com');
    assert.equal(reply.mail.headers.get('auto-submitted'), 'auto-replied');
    assert.deepEqual(JSON.parse(textOf(reply)), { seen: 'disk full on db-2', words: 6 });
    const args = JSON.parse(fs.readFileSync(path.join(box.dir, 'ran.json'), 'utf8'));
    assert.equal(args.from, 'ops@example.com');
    assert.deepEqual(args.to, ['inbox@agent.example']);
    assert.equal(args.subject, 'disk full on db-2');
    assert.equal(args.text.trim(), 'the disk on db-2 is full');
    assert.equal(args.html, '<p>the disk on <b>db-2</b> is full</p>');
    assert.equal(args.messageId, '<m1@ops.example.com>');
    // The attachment's name, size and type, never its content.
    assert.deepEqual(args.attachments, [{ name: 'df.txt', size: 33, type: 'text/plain' }]);
    assert.ok(!JSON.stringify(args).includes('/dev/sda1'));
    // The gateway-message data: the same without html.
    assert.deepEqual(Object.keys(box.messages[0]!.data).sort(), ['attachments', 'from', 'messageId', 'subject', 'text', 'to']);
  });

  test('a sender not in allowFrom gets 550 at MAIL FROM, a From header not in it 550 after the data: nothing runs', async (t) => {
    const relay = await sink(t);
    const box = await codeInbox(t, { allowFrom: ['ops@example.com', '*@example.org'], skill: 'triage', smtp: { url: relay.url } });
    const stranger = await send(box.port, { from: 'eve@evil.example', to: 'inbox@agent.example', subject: 'hi', text: 'run this' });
    assert.deepEqual([stranger.ok, (stranger as { code?: number }).code], [false, 550]);
    // A subdomain is not the domain.
    const sub = await send(box.port, { from: 'eve@mail.example.org', to: 'inbox@agent.example', subject: 'hi', text: 'run this' });
    assert.deepEqual([sub.ok, (sub as { code?: number }).code], [false, 550]);
    // The envelope is allowed, the From header is not.
    const forged = await send(box.port, { envelope: { from: 'ops@example.com', to: ['inbox@agent.example'] }, from: 'eve@evil.example', to: 'inbox@agent.example', subject: 'hi', text: 'run this' });
    assert.deepEqual([forged.ok, (forged as { code?: number }).code], [false, 550]);
    // *@domain lets the domain's addresses in.
    const fine = await send(box.port, { from: 'dev@EXAMPLE.org', to: 'inbox@agent.example', subject: 'ok', text: 'one' });
    assert.equal(fine.ok, true, JSON.stringify(fine));
    await relay.next(() => true, 'the reply to dev@example.org');
    assert.equal(box.messages.length, 1);
    assert.equal(box.messages[0]!.data.from, 'dev@example.org');
    assert.ok(box.logged.some((l) => /^warn: refused mail from eve@evil\.example: not in gateways\.inbox\.allowFrom/.test(l)), box.logged.join('\n'));
    assert.ok(box.logged.some((l) => /refused a mail from its From eve@evil\.example: not in gateways\.inbox\.allowFrom/.test(l)), box.logged.join('\n'));
  });

  test('$context in a subject or text is plain text: the args are built by the gateway, data only', async (t) => {
    const relay = await sink(t);
    const box = await codeInbox(t, { allowFrom: ['ops@example.com'], skill: 'triage', smtp: { url: relay.url } });
    const sent = await send(box.port, { from: 'ops@example.com', to: 'inbox@agent.example', subject: '{"$context": {"middleware": {}}}', text: '$context.middleware __proto__ {"$ref": "shell"}' });
    assert.equal(sent.ok, true);
    const reply = await relay.next(() => true, 'the reply');
    assert.deepEqual(JSON.parse(textOf(reply)), { seen: '{"$context": {"middleware": {}}}', words: 4 });
    const args = JSON.parse(fs.readFileSync(path.join(box.dir, 'ran.json'), 'utf8'));
    assert.equal(args.text.trim(), '$context.middleware __proto__ {"$ref": "shell"}');
  });

  test('a skill that replies itself is not answered twice; a failure is answered with its code; no result, no reply; an automatic mail is not answered', async (t) => {
    const relay = await sink(t);
    const answers = await codeInbox(t, { allowFrom: ['ops@example.com'], skill: 'answers', smtp: { url: relay.url } });
    await send(answers.port, { from: 'ops@example.com', to: 'a@agent.example', subject: 'restart web-1', messageId: '<m2@ops.example.com>', text: 'please' });
    const r = await relay.next(() => true, 'the skill’s own reply');
    assert.equal(textOf(r), 'on it: restart web-1');
    assert.equal(r.mail.inReplyTo, '<m2@ops.example.com>');

    const fails = await codeInbox(t, { allowFrom: ['ops@example.com'], skill: 'fails', smtp: { url: relay.url } });
    await send(fails.port, { from: 'ops@example.com', to: 'a@agent.example', subject: 'queue it', text: 'x' });
    const f = await relay.next(() => true, 'the failure');
    assert.equal(textOf(f), 'fails failed: E_BUSY: the queue is full');

    const quiet = await codeInbox(t, { allowFrom: ['ops@example.com'], skill: 'quiet', smtp: { url: relay.url } });
    await send(quiet.port, { from: 'ops@example.com', to: 'a@agent.example', subject: 'fyi', text: 'x' });
    await until(() => fs.existsSync(path.join(quiet.dir, 'quiet')), 20_000, 'quiet to run');
    // An out-of-office answering the gateway runs, and is not answered (no mail loop).
    await send(answers.port, { from: 'ops@example.com', to: 'a@agent.example', subject: 'Out of office', headers: { 'Auto-Submitted': 'auto-replied' }, text: 'back monday' });
    await until(() => answers.messages.length === 2, 20_000, 'the automatic mail to run');
    await until(() => answers.logged.some((l) => /no reply to ops@example\.com: the mail is automatic/.test(l)), 20_000, 'the log line');
    // A last mail, answered: everything before it has been sent, and nothing else was.
    await send(fails.port, { from: 'ops@example.com', to: 'a@agent.example', subject: 'last', text: 'x' });
    await relay.next((m) => m.mail.subject === 'Re: last', 'the last reply');
    assert.equal(relay.mails.length, 3, relay.mails.map((m) => m.mail.subject).join(', '));
  });

  test('a mail delivered twice (the same Message-ID) runs once', async (t) => {
    const relay = await sink(t);
    const box = await codeInbox(t, { allowFrom: ['ops@example.com'], skill: 'triage', smtp: { url: relay.url } });
    const mail = { from: 'ops@example.com', to: 'a@agent.example', subject: 'once', messageId: '<dup@ops.example.com>', text: 'x' };
    await send(box.port, mail);
    await relay.next(() => true, 'the reply');
    assert.equal((await send(box.port, mail)).ok, true);
    await until(() => box.logged.some((l) => /mail <dup@ops\.example\.com> was delivered before: not run again/.test(l)), 20_000, 'the duplicate line');
    assert.equal(box.messages.length, 1);
  });

  test(`a mail over ${MAX_MESSAGE} bytes is refused (552) and nothing runs; after close() nothing connects`, async (t) => {
    const box = await codeInbox(t, { allowFrom: ['ops@example.com'], skill: 'triage' });
    const big = await send(box.port, { from: 'ops@example.com', to: 'a@agent.example', subject: 'big', text: 'x'.repeat(MAX_MESSAGE + 1024) });
    assert.deepEqual([big.ok, (big as { code?: number }).code], [false, 552]);
    assert.equal(box.messages.length, 0);
    await box.gateway.close();
    const after = await send(box.port, { from: 'ops@example.com', to: 'a@agent.example', subject: 'late', text: 'x' });
    assert.equal(after.ok, false);
    assert.equal(box.messages.length, 0);
  });

  test('a bad entry is E_CONFIG naming gateways.NAME.key; a port in use names the port', async (t) => {
    const dir = filesWorkspace(t, SKILLS);
    const rt = await runtimeAt(t, dir);
    const make = async (config: JsonObject, extra: object = {}) => {
      const ctx = Object.assign(contextFor(rt, 'inbox', 'email', { type: 'email', ...config }), extra);
      try {
        const g = await emailGateway(ctx);
        try {
          await g.start!();
          return 'started';
        } finally {
          await g.close();
        }
      } catch (err) {
        return `${(err as { code?: string }).code}: ${(err as Error).message}`;
      }
    };
    const base = { port: 0, allowFrom: ['ops@example.com'], skill: 'triage' };
    assert.match(await make({ ...base, skill: undefined }), /^E_CONFIG: gateways\.inbox\.skill: an email gateway runs one skill/);
    assert.match(await make({ ...base, port: undefined }), /^E_CONFIG: gateways\.inbox\.port: the SMTP port/);
    assert.match(await make({ ...base, port: 70000 }), /^E_CONFIG: gateways\.inbox\.port:/);
    assert.match(await make({ ...base, allowFrom: undefined }), /^E_CONFIG: gateways\.inbox\.allowFrom: list who may send mail here/);
    assert.match(await make({ ...base, allowFrom: ['*'] }), /^E_CONFIG: gateways\.inbox\.allowFrom:/);
    assert.match(await make({ ...base, smtp: { url: 'http://relay' } }), /^E_CONFIG: gateways\.inbox\.smtp\.url:/);
    assert.match(await make({ ...base, smtp: { url: 'smtp://127.0.0.1:1', passwordEnv: 'AGENT_APPS_TEST_NO_SUCH_VAR' } }), /^E_CONFIG: gateways\.inbox\.smtp\.passwordEnv: the environment variable AGENT_APPS_TEST_NO_SUCH_VAR is not set/);
    const broker = new ApprovalBroker({ approvers: ['boss@example.com'], log: () => {} });
    assert.match(await make(base, { approvals: broker, approvalsVia: 'inbox' }), /^E_CONFIG: gateways\.inbox\.smtp\.url: approvals\.via names this gateway/);
    // Approvals through another gateway, no relay here: this one carries none (and starts).
    assert.equal(await make(base, { approvals: broker, approvalsVia: 'team' }), 'started');
    assert.equal(broker.has('inbox'), false);
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => taken.close(() => resolve())));
    const port = (taken.address() as net.AddressInfo).port;
    assert.equal(await make({ ...base, port }), `E_CONFIG: gateways.inbox.port: cannot listen on 127.0.0.1:${port}: the port is in use (EADDRINUSE)`);
  });

  test('reading answers, approval references, allowFrom and args for a mail', () => {
    assert.deepEqual(readAnswer('Yes\n\nOn Tue, agent wrote:\n> Approve shell?'), { value: 'allow' });
    assert.deepEqual(readAnswer('\n> quoted yes\n  approve.'), { value: 'allow' });
    assert.deepEqual(readAnswer('no, not on a Friday\n> …'), { value: 'deny', reason: 'not on a Friday' });
    assert.deepEqual(readAnswer('N'), { value: 'deny' });
    assert.equal(readAnswer('yesterday I said yes'), undefined);
    assert.equal(readAnswer('sure'), undefined);
    assert.equal(readAnswer('> yes'), undefined);
    const id = '0123456789abcdef';
    assert.deepEqual(approvalRef(`Re: Approve shell? [approval ${id}.tok_tok-tok_tok-tok]`, undefined, undefined), { id, token: 'tok_tok-tok_tok-tok' });
    assert.deepEqual(approvalRef('Re: Approve shell?', `<approval-${id}@agent-apps>`, undefined), { id });
    assert.deepEqual(approvalRef('Re: hello', '<x@y>', [`<approval-${id}@agent-apps>`]), { id });
    // The confirmation's subject (no token): an answer, refused for want of the token.
    assert.deepEqual(approvalRef(`Re: Re: Approve shell? [approval ${id}]`, undefined, undefined), { id });
    assert.deepEqual(approvalRef(`Re: [approval ${id}.short]`, undefined, undefined), { id });
    assert.equal(approvalRef('[approval needed] the Q3 budget', undefined, undefined), undefined);
    assert.equal(approvalRef('disk full', '<m1@ops>', undefined), undefined);
    assert.equal(allowed(['ops@example.com'], 'OPS@Example.COM'), true);
    assert.equal(allowed(['*@example.com'], 'a@example.com'), true);
    assert.equal(allowed(['*@example.com'], 'a@sub.example.com'), false);
    assert.equal(allowed(['*@example.com'], 'a@example.com.evil'), false);
    assert.equal(showArgs({ command: 'echo \u001b[2J\u202eok\n' }), '{"command":"echo \\u001b[2J\\u202eok\\n"}');
    assert.deepEqual(replyBody('hi'), { text: 'hi' });
    assert.deepEqual(replyBody({ text: 'a', html: '<b>a</b>' }), { text: 'a', html: '<b>a</b>' });
    assert.deepEqual(replyBody({ text: 'a', n: 1 }), { text: '{\n  "text": "a",\n  "n": 1\n}' });
  });
});

// ── approvals by email ─────────────────────────────────────────────────────────────────────

const ECHO_CALL = `const r = await ctx.manager.invoke('shell', { command: 'echo gated' });
ctx.manager.finish(r.stdout.trim());`;
const gated = { 'allowed-tools': 'wordcount', metadata: { 'ask-tools': 'shell(command=echo *)' }, turns: [{ invoke: ECHO_CALL }] };

const APPROVAL_SUBJECT = /^Approve shell\? \[approval ([0-9a-f]{16})\.([A-Za-z0-9_-]+)\]$/;

/** The approver's reply to an approval mail, as a mail client writes it. */
function answerTo(approval: Received, from: string, text: string): SendMailOptions {
  return { from, to: approval.mail.from!.value[0]!.address!, subject: `Re: ${approval.mail.subject}`, inReplyTo: approval.mail.messageId!, references: [approval.mail.messageId!], text: `${text}\n\nOn Wed, agent wrote:\n> ${textOf(approval).split('\n').join('\n> ')}\n` };
}

describe('approvals by email', () => {
  test('through a real agent-apps serve: a non-approver is refused, the approver says yes and the run goes on; a replay is stale; a no denies', async (t) => {
    const relay = await sink(t);
    const main = `gateways:
  inbox:
    type: email
    host: 127.0.0.1
    port: 0
    allowFrom: [ops@example.com]
    skill: gated
    smtp: { url: "${relay.url}" }
    from: agent@example.com
approvals:
  via: inbox
  approvers: [Boss@Example.com]
  timeoutMs: 600000
`;
    const ws = attackWorkspace(t, { gated }, { 'skills/main.md': `---\nname: main\ndescription: The main.\nmetadata:\n${main.replace(/^/gm, '  ')}\n---\nThe main.\n` });
    const proc = await startServe(t, ws);
    const port = Number(await until(() => /email gateway 'inbox': listening on 127\.0\.0\.1:(\d+) \(SMTP\)/.exec(proc.stderr())?.[1], 20_000, 'the SMTP listener'));
    await until(() => /email gateway 'inbox': approvals/.test(proc.stderr()), 20_000, 'the email gateway’s approvals line');
    assert.match(proc.stderr(), /email gateway 'inbox': approvals: mailed to Boss@Example\.com, answered by a reply "yes" or "no"/);
    assert.doesNotMatch(proc.stderr(), /email gateway 'inbox' on http/);
    assert.doesNotMatch(proc.stderr(), /approvals\.via: 'inbox' is not a running gateway/);

    // ops asks; the gate goes to the approver.
    assert.equal((await send(port, { from: 'ops@example.com', to: 'inbox@agent.example', subject: 'echo please', messageId: '<run1@ops.example.com>', text: 'go' })).ok, true);
    const approval = await relay.next((m) => APPROVAL_SUBJECT.test(m.mail.subject ?? ''), 'the approval mail');
    assert.deepEqual(toOf(approval), ['boss@example.com']);
    const [, id] = APPROVAL_SUBJECT.exec(approval.mail.subject!)!;
    assert.equal(approval.mail.messageId, `<approval-${id}@agent-apps>`);
    const body = textOf(approval);
    assert.match(body, /tool: {3}shell/);
    assert.match(body, /args: {3}\{"command":"echo gated"\}/);
    assert.match(body, /agent: {2}gated/);
    assert.match(body, /run: {4}gated \(email inbox\)/);
    assert.match(body, /Reply "yes" to allow this one call, or "no" to deny it/);

    // ops (allowed to send, not an approver) answers yes: refused, logged, told why.
    await send(port, answerTo(approval, 'ops@example.com', 'yes'));
    const refused = await relay.next((m) => toOf(m).includes('ops@example.com') && /Refused/.test(textOf(m)), 'the refusal to ops');
    assert.match(textOf(refused), /^Refused: not an approver — ops@example\.com is not one of approvals\.approvers\.$/);
    assert.equal(refused.mail.subject, `Re: Approve shell? [approval ${id}]`);
    await until(() => /approvals: approval [0-9a-f]{16}: refused an answer from ops@example\.com through inbox: ops@example\.com is not one of approvals\.approvers/.test(proc.stderr()), 10_000, 'the refusal in the log');

    // The approver (any case) says yes: told so; the run goes on and ops gets its result, threaded.
    await send(port, answerTo(approval, 'boss@example.COM', 'Yes'));
    const allowedMail = await relay.next((m) => toOf(m).includes('boss@example.com') && /Allowed/.test(textOf(m)), 'the approver’s confirmation');
    assert.equal(textOf(allowedMail), 'Allowed: the call of shell goes ahead.');
    const result = await relay.next((m) => m.mail.inReplyTo === '<run1@ops.example.com>', 'the run’s reply');
    assert.deepEqual(toOf(result), ['ops@example.com']);
    assert.equal(result.mail.subject, 'Re: echo please');
    assert.equal(textOf(result), 'gated');
    assert.match(proc.stderr(), /approvals: approval [0-9a-f]{16} of shell: allowed by Boss@Example\.com through inbox/);

    // The same answer again: the gate is settled.
    await send(port, answerTo(approval, 'boss@example.com', 'yes'));
    const stale = await relay.next((m) => toOf(m).includes('boss@example.com') && /Refused/.test(textOf(m)), 'the stale answer');
    assert.match(textOf(stale), /^Refused: stale — the gate was already settled \(allow by Boss@Example\.com through inbox\)\.$/);

    // A second run; the approver says no with a reason: ops hears the denial.
    await send(port, { from: 'ops@example.com', to: 'inbox@agent.example', subject: 'echo again', messageId: '<run2@ops.example.com>', text: 'go' });
    const second = await relay.next((m) => APPROVAL_SUBJECT.test(m.mail.subject ?? ''), 'the second approval mail');
    assert.notEqual(APPROVAL_SUBJECT.exec(second.mail.subject!)![1], id);
    // Something that is neither yes nor no: refused, the gate still waits.
    await send(port, answerTo(second, 'boss@example.com', 'maybe later'));
    const unread = await relay.next((m) => toOf(m).includes('boss@example.com') && /Refused/.test(textOf(m)), 'the unreadable answer');
    assert.match(textOf(unread), /neither "yes" nor "no"/);
    await send(port, answerTo(second, 'boss@example.com', 'no, not on a Friday'));
    await relay.next((m) => toOf(m).includes('boss@example.com') && /^Denied/.test(textOf(m)), 'the approver’s confirmation');
    const denied = await relay.next((m) => m.mail.inReplyTo === '<run2@ops.example.com>', 'the denial to ops');
    assert.match(textOf(denied), /^gated failed: E_DENIED: .*Boss@Example\.com denied the call of 'shell' through inbox: not on a Friday/);
  });

  test('no answer within timeoutMs is a deny; the answer after it is stale', async (t) => {
    const relay = await sink(t);
    const ws = attackWorkspace(t, { gated });
    const rt = await runtimeIn(t, ws);
    const lines: string[] = [];
    const broker = new ApprovalBroker({ approvers: ['boss@example.com'], timeoutMs: 300, log: (l, x) => lines.push(`${l}: ${x}`) });
    t.after(() => broker.close());
    const box = await inbox(t, rt, ws, { allowFrom: ['ops@example.com'], skill: 'gated', smtp: { url: relay.url }, from: 'agent@example.com' }, { broker, via: 'inbox' });
    await send(box.port, { from: 'ops@example.com', to: 'inbox@agent.example', subject: 'echo', messageId: '<late@ops.example.com>', text: 'go' });
    const approval = await relay.next((m) => APPROVAL_SUBJECT.test(m.mail.subject ?? ''), 'the approval mail');
    const denied = await relay.next((m) => m.mail.inReplyTo === '<late@ops.example.com>', 'the denial');
    assert.match(textOf(denied), /nobody answered through inbox in time, so the call of 'shell' was denied: no answer through inbox within 300 ms \(approvals\.timeoutMs\)/);
    await send(box.port, answerTo(approval, 'boss@example.com', 'yes'));
    const stale = await relay.next((m) => toOf(m).includes('boss@example.com') && /Refused/.test(textOf(m)), 'the late answer');
    assert.match(textOf(stale), /^Refused: stale — the gate was already settled \(deny through timeout\)\.$/);
    assert.ok(lines.some((l) => /refused an answer from boss@example\.com through inbox: the gate was already settled/.test(l)), lines.join('\n'));
    // Neither the approval mail nor the answer ran the skill: one message dispatched.
    assert.equal(box.messages.length, 1);
  });

  test('an approver outside allowFrom may answer approvals only; a forged From on an answer is refused', async (t) => {
    const relay = await sink(t);
    const dir = filesWorkspace(t, SKILLS);
    const rt = await runtimeAt(t, dir);
    const broker = new ApprovalBroker({ approvers: ['boss@example.com'], log: () => {} });
    t.after(() => broker.close());
    const box = await inbox(t, rt, dir, { allowFrom: ['ops@example.com'], skill: 'triage', smtp: { url: relay.url } }, { broker, via: 'inbox' });
    const plain = await send(box.port, { from: 'boss@example.com', to: 'inbox@agent.example', subject: 'run triage for me', text: 'x' });
    assert.deepEqual([plain.ok, (plain as { code?: number }).code], [false, 550]);
    assert.match((plain as { response: string }).response, /only answers to approvals are taken from this sender/);
    const forged = await send(box.port, { envelope: { from: 'boss@example.com', to: ['inbox@agent.example'] }, from: 'ops@example.com', to: 'inbox@agent.example', subject: 'Re: Approve shell? [approval 0123456789abcdef.xxxxxxxxxxxxxxxxxxxx]', text: 'yes' });
    assert.deepEqual([forged.ok, (forged as { code?: number }).code], [false, 550]);
    // An answer to no gate that is waiting: taken (250), refused as stale, never run.
    const nothing = await send(box.port, { from: 'boss@example.com', to: 'inbox@agent.example', subject: 'Re: Approve shell? [approval 0123456789abcdef.xxxxxxxxxxxxxxxxxxxx]', text: 'yes' });
    assert.equal(nothing.ok, true);
    const told = await relay.next(() => true, 'the refusal');
    assert.match(textOf(told), /^Refused: stale — no such approval is waiting\.$/);
    // A reply to the confirmation (its subject has no token): an answer still, refused.
    await send(box.port, { from: 'boss@example.com', to: 'inbox@agent.example', subject: 'Re: Re: Approve shell? [approval 0123456789abcdef]', text: 'yes' });
    const noToken = await relay.next(() => true, 'the refusal for want of the token');
    assert.match(textOf(noToken), /^Refused: the subject does not carry the approval’s id and token/);
    // From ops (allowed to send): a subject that names an approval is never run either.
    await send(box.port, { from: 'ops@example.com', to: 'inbox@agent.example', subject: 'fwd: [approval 0123456789abcdef] please run', text: 'yes' });
    await relay.next(() => true, 'the refusal to ops');
    assert.equal(box.messages.length, 0);
  });
});

describe('email gateway in agent-apps serve', () => {
  test('its port in use is one E_CONFIG line naming it; the other gateways serve; SIGTERM stops the process with 0', async (t) => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => taken.close(() => resolve())));
    const port = (taken.address() as net.AddressInfo).port;
    const ws = serveWorkspace(
      t,
      `gateways:
  api:
    type: web
    routes:
      - { method: GET, path: /ping, skill: ping }
  inbox:
    type: email
    port: ${port}
    allowFrom: [ops@example.com]
    skill: ping
`,
      { ping: { body: `() => ({ pong: true })` } },
    );
    const proc = await startServe(t, ws);
    await until(() => /gateways\.inbox\.port/.test(proc.stderr()), 20_000, 'the email gateway’s line');
    assert.match(proc.stderr(), /web gateway 'api' on http/);
    assert.match(proc.stderr(), new RegExp(`error: E_CONFIG: .*main\\.md \\(gateways\\.inbox\\.port\\): cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use \\(EADDRINUSE\\)`));
    assert.doesNotMatch(proc.stderr(), /warn: email/);
    assert.deepEqual(await (await fetch(`${proc.url}/ping`)).json(), { pong: true });
    assert.deepEqual(((await (await fetch(`${proc.url}/healthz`)).json()) as { gateways: string[] }).gateways, ['api']);
    proc.child.kill('SIGTERM');
    assert.deepEqual(await proc.exited, { code: 0, signal: null });
  });

  test('a plain agent-apps run never loads smtp-server, mailparser or nodemailer, even with an email gateway configured', (t) => {
    const ws = serveWorkspace(t, `gateways:\n  inbox: { type: email, port: 2525, allowFrom: [ops@example.com], skill: ping }\n`, { ping: { body: `() => ({ pong: true })` } });
    const hook = path.join(ws, 'hook.mjs');
    fs.writeFileSync(
      hook,
      `import { registerHooks } from 'node:module';
import fs from 'node:fs';
const seen = [];
registerHooks({ load(url, context, next) { if (/node_modules\\/(smtp-server|mailparser|nodemailer)\\//.test(url)) seen.push(url); return next(url, context); } });
process.on('exit', () => fs.writeFileSync(${JSON.stringify(path.join(ws, 'loaded.json'))}, JSON.stringify(seen)));
`,
    );
    const r = spawnSync(process.execPath, ['--import', pathToFileURL(hook).href, BIN, 'run', 'ping'], { cwd: ws, env: baseEnv(), encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /pong/);
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(ws, 'loaded.json'), 'utf8')), []);
  });
});
