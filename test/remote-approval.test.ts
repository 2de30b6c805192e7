// Remote approvals (docs/serve.md, "Remote approvals"), the policy's half: the ApprovalBroker
// (src/policy/remote-approval.ts) with a real agent run — the agent skill, the Strands loop on the
// replay model, isolated-vm, the bridge's approval gate — whose gate goes out through a channel.
// The channel here is the transport boundary (the email, Slack and web channels are tested with
// real clients in test/serve-*.test.ts): it records what was sent, and the test answers as a
// channel passes on a verified answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApprovalBroker, withRemoteApprovals, type ApprovalChannel, type PendingApproval } from '../src/policy/remote-approval.ts';
import { attackWorkspace, GATED_ECHO as gated, runtimeIn } from './security/attack.ts';
import { logs } from './helpers.ts';
import { until } from './mcp-server-helpers.ts';
import type { Runtime } from '../src/index.ts';

function channel() {
  const sent: { p: PendingApproval; token: string }[] = [];
  const settled: { id: string; decision: string; who?: string; via: string }[] = [];
  const ch: ApprovalChannel = {
    async send(p, token) {
      sent.push({ p, token });
    },
    async settled(p, o) {
      settled.push({ id: p.id, decision: o.decision, ...(o.who ? { who: o.who } : {}), via: o.via });
    },
  };
  return { ch, sent, settled };
}

function setup(timeoutMs = 60_000) {
  const lines: string[] = [];
  const broker = new ApprovalBroker({ approvers: ['U0BOSS', 'ops@example.com'], timeoutMs, log: (l, t) => lines.push(`${l}: ${t}`) });
  const c = channel();
  broker.register('team', c.ch);
  return { broker, lines, ...c };
}

/** Runs `gated` as a gateway message would: its approvals go through `team`. */
function runGated(rt: Runtime, broker: ApprovalBroker) {
  const nonlocals = withRemoteApprovals({}, broker.askerFor({ skill: 'gated', trigger: 'slack team' }, 'team'));
  return rt.invoke('gated', {}, { context: { nonlocals } }).then(
    (value) => ({ value }),
    (error: { code?: string; message: string }) => ({ error }),
  );
}

test('an approver allows: the gated call runs; the decision records who, through what and when', async (t) => {
  const rt = await runtimeIn(t, attackWorkspace(t, { gated }));
  const { broker, sent, settled } = setup();
  const run = runGated(rt, broker);
  await until(() => sent.length === 1, 20_000, 'the gate to be sent');
  const { p, token } = sent[0]!;
  assert.equal(p.question.tool, 'shell');
  assert.deepEqual(p.question.args, { command: 'echo gated' });
  assert.deepEqual(p.run, { skill: 'gated', trigger: 'slack team' });
  assert.deepEqual(broker.pending().map((x) => x.id), [p.id]);
  // Someone who is not an approver, then a wrong token: refused, the gate still waits.
  assert.deepEqual(broker.answer({ id: p.id, token, value: 'allow', who: 'U0INTRUDER', via: 'team' }), { ok: false, code: 'E_NOT_APPROVER', message: 'U0INTRUDER is not one of approvals.approvers' });
  assert.equal((broker.answer({ id: p.id, token: token.slice(1), value: 'allow', who: 'U0BOSS', via: 'team' }) as { code: string }).code, 'E_BAD_TOKEN');
  assert.equal((broker.answer({ id: p.id, token, value: 'allow', who: 'U0BOSS', via: 'web' }) as { code: string }).code, 'E_BAD_TOKEN');
  assert.equal(broker.answer({ id: p.id, token, value: 'allow', who: 'U0BOSS', via: 'team' }).ok, true);
  assert.deepEqual(await run, { value: 'gated' });
  // A second (replayed) answer is refused: the gate is settled.
  const again = broker.answer({ id: p.id, token, value: 'deny', who: 'U0BOSS', via: 'team' });
  assert.equal((again as { code: string }).code, 'E_STALE');
  assert.match((again as { message: string }).message, /already settled \(allow by U0BOSS through team\)/);
  assert.deepEqual(settled, [{ id: p.id, decision: 'allow', who: 'U0BOSS', via: 'team' }]);
  const decision = logs(rt, { type: 'approval' })[0]!;
  assert.equal(decision.decision, 'allow');
  assert.equal(decision.answeredBy, 'U0BOSS');
  assert.equal(decision.answeredVia, 'team');
  assert.match(String(decision.answeredAt), /^\d{4}-\d\d-\d\dT/);
  assert.match(String(decision.text), /allowed once by U0BOSS through team/);
});

test('an approver denies: E_DENIED naming who, the denial records it; a non-approver and a stale answer are logged', async (t) => {
  const rt = await runtimeIn(t, attackWorkspace(t, { gated }));
  const { broker, sent, lines } = setup();
  const run = runGated(rt, broker);
  await until(() => sent.length === 1, 20_000, 'the gate to be sent');
  const { p, token } = sent[0]!;
  broker.answer({ id: p.id, token, value: 'allow', who: 'someone@else', via: 'team' });
  assert.equal(broker.answer({ id: p.id, token, value: 'deny', who: 'ops@example.com', via: 'team', reason: 'not today' }).ok, true);
  const { error } = (await run) as { error: { code: string; message: string } };
  // The agent's code got E_DENIED; the agent ends with the error its code did not catch.
  assert.match(error.message, /ops@example\.com denied the call of 'shell' through team: not today/);
  assert.ok(lines.some((l) => /warn: approval [0-9a-f]{16}: refused an answer from someone@else through team: someone@else is not one of approvals\.approvers/.test(l)), lines.join('\n'));
  assert.ok(lines.some((l) => /info: approval [0-9a-f]{16} of shell: denied by ops@example\.com through team/.test(l)), lines.join('\n'));
  const decision = logs(rt, { type: 'approval' })[0]!;
  assert.deepEqual([decision.decision, decision.answeredBy, decision.reason], ['deny', 'ops@example.com', 'not today']);
});

test('no answer within timeoutMs is a deny; an answer after it is stale', async (t) => {
  const rt = await runtimeIn(t, attackWorkspace(t, { gated }));
  const { broker, sent, settled } = setup(200);
  const { error } = (await runGated(rt, broker)) as { error: { message: string } };
  assert.match(error.message, /nobody answered through team in time, so the call of 'shell' was denied: no answer through team within 200 ms \(approvals\.timeoutMs\)/);
  const { p, token } = sent[0]!;
  assert.equal((broker.answer({ id: p.id, token, value: 'allow', who: 'U0BOSS', via: 'team' }) as { code: string }).code, 'E_STALE');
  assert.deepEqual(settled.map((s) => [s.decision, s.via]), [['deny', 'timeout']]);
  assert.equal(logs(rt, { type: 'approval' })[0]!.by, 'timeout');
});

test('a run aborted while its gate waits withdraws the gate: a later answer is stale', async (t) => {
  const rt = await runtimeIn(t, attackWorkspace(t, { gated }));
  const { broker, sent } = setup();
  const ac = new AbortController();
  const nonlocals = withRemoteApprovals({}, broker.askerFor({ skill: 'gated' }, 'team'));
  const run = rt.invoke('gated', {}, { context: { nonlocals, signal: ac.signal } }).catch((e: { code?: string }) => e.code);
  await until(() => sent.length === 1, 20_000, 'the gate to be sent');
  ac.abort();
  assert.equal(await run, 'E_ABORTED');
  const { p, token } = sent[0]!;
  assert.equal((broker.answer({ id: p.id, token, value: 'allow', who: 'U0BOSS', via: 'team' }) as { code: string }).code, 'E_STALE');
  assert.deepEqual(broker.pending(), []);
});

test('a gateway that cannot carry approvals, or a channel that fails to send: the gate is refused or denied, never allowed', async (t) => {
  const rt = await runtimeIn(t, attackWorkspace(t, { gated }));
  const lines: string[] = [];
  const broker = new ApprovalBroker({ approvers: ['U0BOSS'], log: (l, x) => lines.push(`${l}: ${x}`) });
  const nowhere = withRemoteApprovals({}, broker.askerFor({ skill: 'gated' }, 'missing'));
  const r1 = await rt.invoke('gated', {}, { context: { nonlocals: nowhere } }).catch((e: Error) => e.message);
  assert.match(String(r1), /approvals\.via: no gateway 'missing' that can carry approvals is running/);
  broker.register('broken', { send: async () => Promise.reject(new Error('relay refused')) });
  const broken = withRemoteApprovals({}, broker.askerFor({ skill: 'gated' }, 'broken'));
  const r2 = await rt.invoke('gated', {}, { context: { nonlocals: broken } }).catch((e: Error) => e.message);
  assert.match(String(r2), /the approval could not be sent through broken \(relay refused\)/);
});
