// The slack gateway (src/surfaces/serve/slack.ts, docs/serve.md "slack"): signed Events API bodies
// and interactivity payloads on a real HTTP server, the skill run by a real runtime through serve's
// own dispatch (src/surfaces/serve/dispatch.ts: gateway-message, the untrusted caller, a run's
// remote approvals), and the real @slack/web-api client posting to a stand-in of Slack's Web API
// on 127.0.0.1 (test/slack-stand-in.ts). Remote approvals end to end: an agent skill on the replay
// model whose call of `shell` is gated, in a real `agent-apps serve` process and in process.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { runtimeAt, workspace as filesWorkspace } from './helpers.ts';
import { contextFor, ranLog } from './serve-gateway-helpers.ts';
import { startServe, until, workspace as serveWorkspace } from './serve-helpers.ts';
import { attackWorkspace, GATED_ECHO as gated, runtimeIn, WORDCOUNT } from './security/attack.ts';
import { writeAgentSkills } from './agent-helpers.ts';
import { blockActions, eventCallback, interactivityBody, postSigned, slackSigned, slackStandIn, type SlackStandIn } from './slack-stand-in.ts';
import { codeBlock, gateBlocks, responseTarget, slackEscape, slackGateway, slackMessage } from '../src/surfaces/serve/slack.ts';
import { makeDispatch } from '../src/surfaces/serve/dispatch.ts';
import { ApprovalBroker, type PendingApproval } from '../src/policy/remote-approval.ts';
import { APPROVAL_CHOICES } from '../src/core/ask.ts';
import type { Runtime } from '../src/index.ts';
import type { Gateway, InboundMessage } from '../src/surfaces/serve/gateway.ts';
import type { JsonObject } from '../src/core/types.ts';

const SECRET = 'slack-signing-secret-for-tests';
const TOKEN = 'xoxb-test-token';
const SECRET_ENV = 'AGENT_APPS_TEST_SLACK_SECRET';
const TOKEN_ENV = 'AGENT_APPS_TEST_SLACK_TOKEN';
process.env[SECRET_ENV] = SECRET;
process.env[TOKEN_ENV] = TOKEN;

// Records each run in ran.log beside skills/; replies when asked to, fails when asked to.
const HELPER = `import fs from 'node:fs';
export const frontmatter = { name: 'helper', description: 'Answers in the thread.', metadata: { params: { type: 'object', properties: { text: { type: 'string' }, user: { type: 'string' }, channel: { type: 'string' }, ts: { type: 'string' }, thread_ts: { type: 'string' }, team: { type: 'string' } }, required: ['text', 'user', 'channel', 'ts'] } } };
export default async (ctx, args) => {
  fs.appendFileSync(new URL('../ran.log', import.meta.url), JSON.stringify(args) + '\\n');
  if (args.text.startsWith('reply ')) {
    await ctx.nonlocals.gateway.reply('you said: ' + args.text.slice(6));
    return 'not posted: the skill replied';
  }
  if (args.text === 'boom') throw Object.assign(new Error('it <broke> & fell'), { code: 'E_BOOM' });
  if (args.text === 'quiet') return undefined;
  if (args.text === 'hush') return {};
  return { echo: args.text, gateway: ctx.nonlocals.gateway.name };
};
`;

const runs = (dir: string) => ranLog(dir) as JsonObject[];

interface Slack {
  rt: Runtime;
  dir: string;
  gateway: Gateway;
  base: string;
  slack: SlackStandIn;
  messages: InboundMessage[];
  logged: string[];
  events: string;
  interactivity: string;
}

/**
 * The gateway `team` over a runtime at `dir`, on a real server on 127.0.0.1, with serve's dispatch
 * (and `broker` as ctx.approvals, the runs' gates going through `team`).
 */
async function serveSlack(t: TestContext, dir: string, rt: Runtime, opts: { config?: JsonObject; broker?: ApprovalBroker } = {}): Promise<Slack> {
  const slack = await slackStandIn(t);
  const messages: InboundMessage[] = [];
  const logged: string[] = [];
  const config: JsonObject = { type: 'slack', signingSecretEnv: SECRET_ENV, tokenEnv: TOKEN_ENV, channels: ['C0123'], skill: 'helper', apiUrl: slack.apiUrl, ...opts.config };
  const stop = new AbortController();
  const pending = new Set<Promise<unknown>>();
  const track = <T>(work: Promise<T>): Promise<T> => {
    pending.add(work);
    void work.finally(() => pending.delete(work)).catch(() => {});
    return work;
  };
  const dispatch = makeDispatch({ runtime: rt, name: 'team', type: 'slack', maxMs: 120_000, signal: stop.signal, track, ...(opts.broker ? { approvals: { broker: opts.broker, via: 'team' } } : {}) });
  const ctx = {
    ...contextFor(rt, 'team', 'slack', config, { logged }),
    dispatch: (m: InboundMessage) => (messages.push(m), dispatch(m)),
    track,
    ...(opts.broker ? { approvals: opts.broker } : {}),
  };
  const gateway = await slackGateway(ctx);
  const server = http.createServer((req, res) => {
    void Promise.resolve(gateway.http!(req, res, new URL(req.url ?? '/', 'http://127.0.0.1'))).then((taken) => {
      if (!taken) res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.after(async () => {
    await gateway.close();
    opts.broker?.close();
    await Promise.allSettled([...pending]);
    stop.abort();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { rt, dir, gateway, base, slack, messages, logged, events: `${base}/slack/team/events`, interactivity: `${base}/slack/team/interactivity` };
}

async function codeSkills(t: TestContext, config: JsonObject = {}): Promise<Slack> {
  const dir = filesWorkspace(t, { 'skills/helper.skill.ts': HELPER });
  return serveSlack(t, dir, await runtimeAt(t, dir), { config });
}

const message = (ts: string, text: string, extra: Record<string, unknown> = {}) => ({ type: 'message', channel: 'C0123', user: 'U0ALICE', text, ts, ...extra });
const event = (s: Slack, payload: unknown, headers: Record<string, string> = {}) => postSigned(s.events, SECRET, JSON.stringify(payload), headers);
const click = (url: string, payload: unknown, secret = SECRET) => postSigned(url, secret, interactivityBody(payload), {}, 'application/x-www-form-urlencoded');
/** The posts in the thread of `ts` in C0123. */
const inThread = (s: SlackStandIn, ts: string) => s.of('chat.postMessage', (a) => a.channel === 'C0123' && a.thread_ts === ts);

describe('slack gateway: the Events API', () => {
  test("a message in a listed channel runs the skill; its reply goes in the message's thread, and a result it returns without replying too", async (t) => {
    const s = await codeSkills(t);
    const r = await event(s, eventCallback(message('1700000100.000100', 'reply hello'), 'Ev1'));
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { ok: true });
    await until(() => inThread(s.slack, '1700000100.000100').length === 1, 20_000, 'the reply');
    const [reply] = inThread(s.slack, '1700000100.000100');
    assert.equal(reply!.args.text, 'you said: hello');
    assert.equal(reply!.authorization, `Bearer ${TOKEN}`, "the bot token from tokenEnv");
    assert.deepEqual(runs(s.dir), [{ text: 'reply hello', user: 'U0ALICE', channel: 'C0123', ts: '1700000100.000100', team: 'T0TEAM' }]);
    assert.deepEqual(s.messages[0]!.data, runs(s.dir)[0], 'gateway-message data = the args');

    // In a thread: the answer goes to the thread's root; the result (an object) as a code block.
    await event(s, eventCallback(message('1700000101.000200', 'what <now> & then?', { thread_ts: '1700000090.000050' }), 'Ev2'));
    await until(() => inThread(s.slack, '1700000090.000050').length === 1, 20_000, 'the result');
    const posted = inThread(s.slack, '1700000090.000050')[0]!.args.text as string;
    assert.equal(posted, '```\n{\n  "echo": "what &lt;now&gt; &amp; then?",\n  "gateway": "team"\n}\n```');
    assert.equal(runs(s.dir)[1]!.thread_ts, '1700000090.000050');
    // An app_mention runs it too.
    await event(s, eventCallback({ type: 'app_mention', channel: 'C0123', user: 'U0ALICE', text: '<@U0BOT> reply hi', ts: '1700000102.000300' }, 'Ev3'));
    await until(() => inThread(s.slack, '1700000102.000300').length === 1, 20_000, 'the mention answered');
    assert.match(inThread(s.slack, '1700000102.000300')[0]!.args.text, /"echo": "&lt;@U0BOT&gt; reply hi"/, 'the text as Slack sent it; echoed, the mention is escaped');
    // Nothing returned (or an empty object), nothing posted: the run is recorded, the thread stays quiet.
    await event(s, eventCallback(message('1700000103.000400', 'quiet'), 'Ev4'));
    await event(s, eventCallback(message('1700000103.000450', 'hush'), 'Ev4b'));
    await until(() => runs(s.dir).length === 5, 20_000, 'the quiet runs');
    await event(s, eventCallback(message('1700000104.000500', 'reply last'), 'Ev5'));
    await until(() => inThread(s.slack, '1700000104.000500').length === 1, 20_000, 'the last reply');
    assert.deepEqual([...inThread(s.slack, '1700000103.000400'), ...inThread(s.slack, '1700000103.000450')], []);
  });

  test('another channel, a bot, our own bot user and a message subtype are acknowledged and run nothing', async (t) => {
    const s = await codeSkills(t);
    const ignored = [
      [message('1.1', 'hi', { channel: 'C0OTHER' }), /not one of channels/],
      [message('1.2', 'hi', { bot_id: 'B0BOT' }), /a bot's message/],
      [message('1.3', 'hi', { user: 'U0BOT' }), /a bot's message/],
      [message('1.4', 'hi', { subtype: 'message_changed' }), /subtype message_changed/],
      [{ type: 'reaction_added', user: 'U0ALICE', ts: '1.5' }, /a reaction_added event/],
    ] as const;
    for (const [i, [e, why]] of ignored.entries()) {
      const r = await event(s, eventCallback(e, `EvI${i}`));
      assert.equal(r.status, 200);
      assert.match(r.json.ignored, why);
    }
    assert.equal(s.messages.length, 0, 'nothing was dispatched');
    await event(s, eventCallback(message('1.6', 'reply ok'), 'EvI9'));
    await until(() => inThread(s.slack, '1.6').length === 1, 20_000, 'the one listed message');
    assert.equal(runs(s.dir).length, 1);
    assert.equal(s.slack.of('chat.postMessage').length, 1);
  });

  test('a bad signature, an unsigned body and a timestamp six minutes old are 401 on both routes, and nothing runs', async (t) => {
    const s = await codeSkills(t);
    const body = JSON.stringify(eventCallback(message('2.1', 'reply no'), 'EvB1'));
    const wrong = await postSigned(s.events, 'not-the-secret', body);
    assert.equal(wrong.status, 401);
    assert.equal(wrong.json.error.code, 'E_SIGNATURE');
    const stale = await fetch(s.events, { method: 'POST', body, headers: { 'content-type': 'application/json', ...slackSigned(SECRET, body, Math.floor(Date.now() / 1000) - 6 * 60) } });
    assert.equal(stale.status, 401);
    const unsigned = await fetch(s.events, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    assert.equal(unsigned.status, 401);
    // The signature of another body.
    const swapped = await fetch(s.events, { method: 'POST', body, headers: { 'content-type': 'application/json', ...slackSigned(SECRET, body.replace('reply no', 'reply yes')) } });
    assert.equal(swapped.status, 401);
    const form = interactivityBody(blockActions('U0BOSS', 'approval_allow', 'a.b', s.slack.responseUrl()));
    const unsignedClick = await fetch(s.interactivity, { method: 'POST', body: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(unsignedClick.status, 401);
    assert.equal((await fetch(s.events)).status, 405);
    // Signed but not JSON: 400, after the signature was checked.
    assert.equal((await postSigned(s.events, SECRET, 'not json')).status, 400);
    assert.equal((await postSigned(s.interactivity, SECRET, 'payload=%7Bnope', {}, 'application/x-www-form-urlencoded')).status, 400);
    assert.equal(s.messages.length, 0);
    assert.deepEqual(runs(s.dir), []);
    assert.deepEqual(s.slack.calls, [], 'nothing was posted');
    assert.ok(s.logged.some((l) => /warn: refused a request to \/slack\/team\/events with a bad, missing or stale Slack signature/.test(l)), s.logged.join('\n'));
  });

  test("url_verification is answered with its challenge; Slack's retry of an event and a mention's second event are not run again", async (t) => {
    const s = await codeSkills(t);
    const challenge = await event(s, { token: 'x', challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P', type: 'url_verification' });
    assert.deepEqual(challenge, { status: 200, json: { challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' } });
    const first = eventCallback(message('3.1', 'reply once'), 'EvR1');
    assert.deepEqual((await event(s, first)).json, { ok: true });
    const retry = await event(s, first, { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' });
    assert.deepEqual(retry, { status: 200, json: { ok: true, duplicate: true, event_id: 'EvR1' } });
    // The same message as an app_mention (another event id): the message ran already.
    const mention = await event(s, eventCallback({ type: 'app_mention', channel: 'C0123', user: 'U0ALICE', text: 'reply once', ts: '3.1' }, 'EvR2'));
    assert.equal(mention.json.duplicate, true);
    await until(() => inThread(s.slack, '3.1').length === 1, 20_000, 'the one reply');
    await event(s, eventCallback(message('3.2', 'reply after'), 'EvR3'));
    await until(() => inThread(s.slack, '3.2').length === 1, 20_000, 'the next reply');
    assert.equal(runs(s.dir).filter((r) => r.ts === '3.1').length, 1);
    assert.equal(inThread(s.slack, '3.1').length, 1);
  });

  test('a skill that throws: a short error in the thread and a log line; the gateway keeps serving', async (t) => {
    const s = await codeSkills(t);
    await event(s, eventCallback(message('4.1', 'boom'), 'EvE1'));
    await until(() => inThread(s.slack, '4.1').length === 1, 20_000, 'the error posted');
    assert.equal(inThread(s.slack, '4.1')[0]!.args.text, ':warning: `helper` failed: E_BOOM: it &lt;broke&gt; &amp; fell');
    assert.ok(s.logged.some((l) => l === 'error: helper failed on the message C0123/4.1: E_BOOM: it <broke> & fell'), s.logged.join('\n'));
    await event(s, eventCallback(message('4.2', 'reply still here'), 'EvE2'));
    await until(() => inThread(s.slack, '4.2').length === 1, 20_000, 'the next reply');
    assert.equal(inThread(s.slack, '4.2')[0]!.args.text, 'you said: still here');
  });

  test('start-up: missing secret or token variables, empty channels, no skill and a non-http(s) apiUrl are E_CONFIG naming the key', async (t) => {
    const dir = filesWorkspace(t, { 'skills/helper.skill.ts': HELPER });
    const rt = await runtimeAt(t, dir);
    const good: JsonObject = { type: 'slack', signingSecretEnv: SECRET_ENV, tokenEnv: TOKEN_ENV, channels: ['C0123'], skill: 'helper' };
    const refused = async (config: JsonObject, key: string, why: RegExp) => {
      await assert.rejects(
        async () => slackGateway(contextFor(rt, 'team', 'slack', config)),
        (err: { code?: string; message: string }) => {
          assert.equal(err.code, 'E_CONFIG');
          assert.ok(err.message.includes(`gateways.team.${key}`), err.message);
          assert.match(err.message, why);
          return true;
        },
      );
    };
    await refused({ ...good, signingSecretEnv: 'AGENT_APPS_TEST_SLACK_UNSET' }, 'signingSecretEnv', /AGENT_APPS_TEST_SLACK_UNSET is not set: it holds the Slack app's signing secret/);
    await refused({ ...good, signingSecretEnv: undefined as never }, 'signingSecretEnv', /name the environment variable/);
    await refused({ ...good, tokenEnv: 'AGENT_APPS_TEST_SLACK_UNSET' }, 'tokenEnv', /bot token/);
    await refused({ ...good, channels: [] }, 'channels', /channel ids/);
    await refused({ ...good, channels: undefined as never }, 'channels', /channel ids/);
    await refused({ ...good, skill: undefined as never }, 'skill', /name it/);
    await refused({ ...good, apiUrl: 'file:///etc/passwd' }, 'apiUrl', /http\(s\) URL/);
    await refused({ ...good, apiUrl: 'not a url' }, 'apiUrl', /http\(s\) URL/);
    const ok = await slackGateway(contextFor(rt, 'team', 'slack', good));
    assert.deepEqual((ok as unknown as { describe(): string[] }).describe(), ['POST /slack/team/events → helper (channels C0123)', 'POST /slack/team/interactivity']);
    await ok.close();
  });
});

describe('slack gateway: text', () => {
  test("args, code and results are escaped: control and bidi characters, &, <, > — no mention, link or end of the code block is formed from a model's text", () => {
    assert.equal(slackEscape('<!channel> <@U0X> a&b \u001b[31m \u202eevil'), '&lt;!channel&gt; &lt;@U0X&gt; a&amp;b \\u001b[31m \\u202eevil');
    assert.equal(codeBlock('x ``` <y>'), '```\nx \\u0060\\u0060\\u0060 &lt;y&gt;\n```');
    assert.match(codeBlock('a'.repeat(5000), 100), /^```\na{100}\n… 4900 more characters\n```$/);
    assert.deepEqual(slackMessage('plain *mrkdwn* <@U0X>'), { text: 'plain *mrkdwn* <@U0X>' });
    assert.deepEqual(slackMessage({ text: 'hi', blocks: [{ type: 'divider' }], other: 1 }), { text: 'hi', blocks: [{ type: 'divider' }] });
    assert.deepEqual(slackMessage(42), { text: '42' });
    const q = { kind: 'approval' as const, text: 'Allow shell?', tool: 'shell\u001b]0;x', args: { command: 'echo <!here> ```' }, agent: 'helper', because: { kind: 'ask-tools' as const, pattern: 'shell(command=echo *)' }, choices: [...APPROVAL_CHOICES] };
    const p: PendingApproval = { id: '0123456789abcdef', question: q, run: { skill: 'helper', trigger: 'slack team' }, via: 'team', createdAt: 0, expiresAt: 600_000 };
    const blocks = gateBlocks(p, { token: 'tok' }) as any[];
    assert.equal(blocks[0].text.text, 'Approve shell\\u001b]0;x?');
    assert.equal(blocks[1].text.text, '*Args*\n```\n{\n  "command": "echo &lt;!here&gt; \\u0060\\u0060\\u0060"\n}\n```');
    assert.deepEqual(blocks.at(-1).elements.map((b: any) => [b.action_id, b.value, b.text.text]), [['approval_allow', '0123456789abcdef.tok', 'Allow'], ['approval_deny', '0123456789abcdef.tok', 'Deny']]);
  });

  test("a response_url is followed only on apiUrl's host (or a subdomain of a named host): never anywhere a payload says", () => {
    const slack = new URL('https://slack.com/api');
    assert.equal(responseTarget(slack, 'https://hooks.slack.com/actions/T0/1/abc')?.host, 'hooks.slack.com');
    assert.equal(responseTarget(slack, 'https://slack.com/actions/1')?.host, 'slack.com');
    for (const bad of ['http://hooks.slack.com/actions/1', 'https://evil.example/slack.com', 'https://slack.com.evil.example/x', 'https://hooks.slack.com:8443/x', 'https://user:pw@hooks.slack.com/x', 'https://169.254.169.254/latest', 'not a url', 42]) {
      assert.equal(responseTarget(slack, bad), undefined, String(bad));
    }
    const local = new URL('http://127.0.0.1:4000/api');
    assert.equal(responseTarget(local, 'http://127.0.0.1:4000/actions/1')?.port, '4000');
    assert.equal(responseTarget(local, 'http://127.0.0.1:4001/actions/1'), undefined);
    assert.equal(responseTarget(local, 'http://x.127.0.0.1:4000/actions/1'), undefined);
  });
});

// ── remote approvals ─────────────────────────────────────────────────────────────────────────

/** The approval DMs to U0BOSS (the stand-in answers in D0BOSS), with their buttons' value. */
function approvalsSent(s: SlackStandIn): { value: string; blocks: any[] }[] {
  return s.of('chat.postMessage', (a) => a.channel === 'U0BOSS').map((c) => ({ value: c.args.blocks.at(-1).elements[0].value as string, blocks: c.args.blocks }));
}

describe('slack gateway: remote approvals by Slack buttons', () => {
  test('through a real serve process: the gate is a DM with buttons to the approver; Allow runs the call and its result is posted; a replayed click, a non-approver and a forged payload are refused; Deny denies', async (t) => {
    const slack = await slackStandIn(t);
    const ws = serveWorkspace(
      t,
      `gateways:\n  team: { type: slack, signingSecretEnv: SLACK_SECRET, tokenEnv: SLACK_TOKEN, channels: [C0123], skill: helper, apiUrl: "${slack.apiUrl}" }\napprovals: { via: team, approvers: [U0BOSS], timeoutMs: 600000 }`,
      {},
    );
    fs.writeFileSync(path.join(ws, 'skills', 'wordcount.skill.mjs'), WORDCOUNT);
    writeAgentSkills(path.join(ws, 'skills'), { helper: gated });
    const srv = await startServe(t, ws, [], { SLACK_SECRET: SECRET, SLACK_TOKEN: TOKEN });
    // The gateways start once the server listens: their lines come after the one startServe waits for.
    await until(() => /slack gateway 'team': approvals/.test(srv.stderr()), 20_000, 'the slack gateway’s lines');
    assert.match(srv.stderr(), /slack gateway 'team' on http:\/\/127\.0\.0\.1:\d+: POST \/slack\/team\/events → helper \(channels C0123\), POST \/slack\/team\/interactivity/);
    assert.match(srv.stderr(), /slack gateway 'team': approvals: a direct message to U0BOSS, answered by its Allow \/ Deny buttons/);
    const events = `${srv.url}/slack/team/events`;
    const interactivity = `${srv.url}/slack/team/interactivity`;

    assert.deepEqual((await postSigned(events, SECRET, JSON.stringify(eventCallback(message('5.1', 'please echo'), 'EvA1')))).json, { ok: true });
    await until(() => approvalsSent(slack).length === 1, 30_000, 'the approval DM');
    const dm = slack.of('chat.postMessage', (a) => a.channel === 'U0BOSS')[0]!.args;
    assert.equal(dm.text, 'Approve shell? (run of helper)');
    assert.equal(dm.blocks[0].text.text, 'Approve shell?');
    assert.equal(dm.blocks[1].text.text, '*Args*\n```\n{\n  "command": "echo gated"\n}\n```');
    assert.match(dm.blocks.find((b: any) => b.type === 'context').elements[0].text, /agent \*helper\* · run of \*helper\* \(slack team\) · ask-tools `shell\(command=echo \*\)`/);
    const value = dm.blocks.at(-1).elements[0].value as string;
    assert.match(value, /^[0-9a-f]{16}\.[A-Za-z0-9_-]{32}$/);
    assert.deepEqual(dm.blocks.at(-1).elements.map((b: any) => [b.action_id, b.value]), [['approval_allow', value], ['approval_deny', value]]);
    // The thread of the message is told what it waits for.
    await until(() => inThread(slack, '5.1').length === 1, 20_000, 'the notice in the thread');
    assert.match(inThread(slack, '5.1')[0]!.args.text, /`shell` is waiting for an approver \(<@U0BOSS>\)/);

    // A forged click (bad signature): 401, nothing answered.
    const forged = await click(interactivity, blockActions('U0BOSS', 'approval_allow', value, slack.responseUrl()), 'forged-secret');
    assert.equal(forged.status, 401);
    // Someone who is not an approver: refused, told so; the gate still waits.
    const nosy = slack.responseUrl();
    assert.equal((await click(interactivity, blockActions('U0NOSY', 'approval_allow', value, nosy))).status, 200);
    await until(() => slack.of('response').length === 1, 20_000, 'the refusal');
    assert.deepEqual(slack.of('response')[0]!, { method: 'response', path: new URL(nosy).pathname, args: { response_type: 'ephemeral', replace_original: false, text: 'Refused: not an approver (approvals.approvers)' } });
    assert.deepEqual(inThread(slack, '5.1').length, 1, 'the run still waits');

    // The approver allows: the DM and the notice say so, the run goes on, its result is posted.
    const allow = interactivityBody(blockActions('U0BOSS', 'approval_allow', value, slack.responseUrl()));
    const allowHeaders = { 'content-type': 'application/x-www-form-urlencoded', ...slackSigned(SECRET, allow) };
    assert.equal((await fetch(interactivity, { method: 'POST', body: allow, headers: allowHeaders })).status, 200);
    await until(() => inThread(slack, '5.1').length === 2, 30_000, 'the result in the thread');
    assert.equal(inThread(slack, '5.1')[1]!.args.text, 'gated');
    await until(() => slack.of('chat.update').length === 2, 20_000, 'the DM and the notice updated');
    const updates = slack.of('chat.update');
    assert.deepEqual(updates.map((u) => [u.args.channel, u.args.text]).sort(), [['C0123', '`shell`: Allowed by <@U0BOSS>'], ['D0BOSS', 'Allowed by <@U0BOSS>']]);
    const dmUpdate = updates.find((u) => u.args.channel === 'D0BOSS')!.args;
    assert.equal(dmUpdate.blocks.at(-1).text.text, '*Allowed by <@U0BOSS>*');
    assert.ok(!dmUpdate.blocks.some((b: any) => b.type === 'actions'), 'no buttons left');
    // The same signed request again (a replay within Slack's five minutes): refused, already answered.
    assert.equal((await fetch(interactivity, { method: 'POST', body: allow, headers: allowHeaders })).status, 200);
    await until(() => slack.of('response').length === 2, 20_000, 'the second refusal');
    assert.equal(slack.of('response')[1]!.args.text, 'Refused: already answered — Allowed by <@U0BOSS>');
    // A click on Deny after the Allow: refused the same way.
    await click(interactivity, blockActions('U0BOSS', 'approval_deny', value, slack.responseUrl()));
    await until(() => slack.of('response').length === 3, 20_000, 'the third refusal');
    assert.equal(slack.of('response')[2]!.args.text, 'Refused: already answered — Allowed by <@U0BOSS>');
    assert.equal(inThread(slack, '5.1').length, 2, 'the run ran once');

    // Deny: the run's call is denied, the error posted in its thread.
    await postSigned(events, SECRET, JSON.stringify(eventCallback(message('5.2', 'again'), 'EvA2')));
    await until(() => approvalsSent(slack).length === 2, 30_000, 'the second approval DM');
    const second = approvalsSent(slack)[1]!.value;
    assert.notEqual(second.split('.')[0], value.split('.')[0]);
    await click(interactivity, blockActions('U0BOSS', 'approval_deny', second, slack.responseUrl()));
    await until(() => inThread(slack, '5.2').length === 2, 30_000, 'the denial in the thread');
    assert.match(inThread(slack, '5.2')[0]!.args.text, /`shell` is waiting for an approver/, "the second run's notice in its own thread");
    assert.match(inThread(slack, '5.2')[1]!.args.text, /^:warning: `helper` failed: E_\w+: .*U0BOSS denied the call of 'shell' through team/);
    await until(() => slack.of('chat.update', (a) => a.text === 'Denied by <@U0BOSS>').length === 1, 20_000, 'the DM updated');
    // The settled gate with the first gate's token: refused.
    await click(interactivity, blockActions('U0BOSS', 'approval_allow', `${second.split('.')[0]}.${value.split('.')[1]}`, slack.responseUrl()));
    await until(() => slack.of('response').length === 4, 20_000, 'the fourth refusal');
    assert.match(slack.of('response')[3]!.args.text, /^Refused: already answered — Denied by <@U0BOSS>/);
    await until(() => /approval [0-9a-f]{16} of shell: denied by U0BOSS through team/.test(srv.stderr()), 20_000, 'the log line');
    assert.match(srv.stderr(), /approvals: approval [0-9a-f]{16}: refused an answer from U0NOSY through team: U0NOSY is not one of approvals\.approvers/);
    assert.match(srv.stderr(), /refused a request to \/slack\/team\/interactivity with a bad, missing or stale Slack signature/);
  });

  test('in process: a late click (the gate timed out) is refused as too late; a plain message with the button value answers nothing; a response_url off apiUrl is not followed', async (t) => {
    const ws = attackWorkspace(t, { helper: gated });
    const rt = await runtimeIn(t, ws);
    const lines: string[] = [];
    const broker = new ApprovalBroker({ approvers: ['U0BOSS'], timeoutMs: 600_000, log: (l, x) => lines.push(`${l}: ${x}`) });
    const s = await serveSlack(t, ws, rt, { broker });
    await event(s, eventCallback(message('6.1', 'go'), 'EvL1'));
    await until(() => approvalsSent(s.slack).length === 1, 30_000, 'the approval DM');
    const value = approvalsSent(s.slack)[0]!.value;
    // A message whose text is the button's value: the skill's next run, not an answer.
    await event(s, eventCallback(message('6.2', value), 'EvL2'));
    await until(() => approvalsSent(s.slack).length === 2, 30_000, 'the second run asks too');
    assert.equal(broker.pending().length, 2, 'both gates still wait');
    // A click whose response_url points elsewhere: the refusal is logged, not posted there.
    await click(s.interactivity, blockActions('U0NOSY', 'approval_allow', value, 'http://127.0.0.2:9/steal'));
    await until(() => s.logged.some((l) => l.includes('not following a response_url off 127.0.0.1')), 20_000, 'the log line');
    assert.deepEqual(s.slack.of('response'), []);
    // The gate's id with another token: refused; the gate still waits.
    await click(s.interactivity, blockActions('U0BOSS', 'approval_allow', `${value.split('.')[0]}.${'x'.repeat(32)}`, s.slack.responseUrl()));
    await until(() => s.slack.of('response').length === 1, 20_000, 'the refusal');
    assert.equal(s.slack.of('response')[0]!.args.text, 'Refused: this button does not belong to a waiting approval');
    assert.equal(broker.pending().length, 2);
    // A gate nobody answers within approvals.timeoutMs: denied, its DM says so, and a click after is too late.
    const timed = new ApprovalBroker({ approvers: ['U0BOSS'], timeoutMs: 300, log: () => {} });
    const s2 = await serveSlack(t, ws, rt, { broker: timed });
    await event(s2, eventCallback(message('6.3', 'late'), 'EvL3'));
    await until(() => s2.slack.of('chat.update', (a) => a.channel === 'D0BOSS').length === 1, 30_000, 'the timeout shown');
    assert.match(s2.slack.of('chat.update', (a) => a.channel === 'D0BOSS')[0]!.args.text, /^Denied: nobody answered in time: no answer through team within 300 ms/);
    await until(() => inThread(s2.slack, '6.3').some((c) => /failed/.test(c.args.text)), 30_000, 'the denial posted');
    const late = approvalsSent(s2.slack)[0]!.value;
    await click(s2.interactivity, blockActions('U0BOSS', 'approval_allow', late, s2.slack.responseUrl()));
    await until(() => s2.slack.of('response').length === 1, 20_000, 'the late refusal');
    assert.match(s2.slack.of('response')[0]!.args.text, /^Refused: too late — Denied: nobody answered in time/);
    // The first serve's gates are answered now, so its runs end before the test does.
    for (const v of approvalsSent(s.slack).map((a) => a.value)) {
      const [id, tok] = v.split('.');
      broker.answer({ id: id!, token: tok!, value: 'deny', who: 'U0BOSS', via: 'team' });
    }
  });
});
