// `approvals:` of a served workspace's main (docs/serve.md, "Remote approvals"):
//
//   approvals:
//     via: team              # the gateway that carries them: a slack, email or web gateway's name
//     approvers: [U0BOSS]    # who may answer: Slack user ids, email addresses, `web` (the link)
//     timeoutMs: 600000      # no answer within it: denied (default 10 minutes)
//
// The rules of an answer are the policy's (src/policy/remote-approval.ts); this file reads the
// configuration.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AgentAppsError, ConfigurationError } from '../../core/errors.ts';
import { isPlainObject } from '../../core/path.ts';
import { APPROVAL_CHOICES, type ApprovalQuestion } from '../../core/ask.ts';
import { DEFAULT_APPROVAL_TIMEOUT_MS, type ApprovalBroker } from '../../policy/remote-approval.ts';
import { readBody } from './http-io.ts';

export interface ApprovalsConfig {
  via: string;
  approvers: string[];
  timeoutMs: number;
}

export function parseApprovals(raw: unknown, file: string | undefined): ApprovalsConfig {
  const fail = (key: string, message: string) => new ConfigurationError(`approvals${key ? `.${key}` : ''}: ${message}`, { place: { ...(file ? { file } : {}), key: `approvals${key ? `.${key}` : ''}` } });
  if (!isPlainObject(raw)) throw fail('', 'expected { via: GATEWAY, approvers: [ … ], timeoutMs? }');
  if (typeof raw.via !== 'string' || !raw.via) throw fail('via', 'name the gateway that carries approvals (a slack, email or web gateway under gateways:)');
  const approvers = raw.approvers;
  if (!Array.isArray(approvers) || !approvers.length || approvers.some((a) => typeof a !== 'string' || !a.trim())) {
    throw fail('approvers', 'list who may answer: Slack user ids (U0BOSS), email addresses, or web for the single-use link');
  }
  let timeoutMs = DEFAULT_APPROVAL_TIMEOUT_MS;
  if (raw.timeoutMs !== undefined) {
    if (typeof raw.timeoutMs !== 'number' || !Number.isInteger(raw.timeoutMs) || raw.timeoutMs < 1) throw fail('timeoutMs', `expected a whole number of milliseconds, got ${JSON.stringify(raw.timeoutMs)}`);
    timeoutMs = raw.timeoutMs;
  }
  return { via: raw.via, approvers: approvers.map((a: string) => a.trim()), timeoutMs };
}

// ── approvals for runs outside the serve process (`run --approvals-via NAME`) ───────────────
// A headless `agent-apps run` has no gateway of its own to carry a gate: it hands each one to the
// serve process of its workspace — `POST /approvals/request` on serve's listener (its bearer token
// when it has one) with the gate — and the answer comes back as that request's response, once an
// approver has answered through the gateway (or the timeout denied it). The client going away
// withdraws the gate.

/** The most a gate's request body may hold. */
const MAX_REQUEST = 1024 * 1024;

async function readJson(req: IncomingMessage): Promise<unknown> {
  const raw = await readBody(req, MAX_REQUEST);
  if (raw === undefined) throw new AgentAppsError('E_BAD_REQUEST', `the body is over ${MAX_REQUEST} bytes`);
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new AgentAppsError('E_BAD_REQUEST', 'the body is not JSON');
  }
}

const text = (v: unknown, max = 2000) => (typeof v === 'string' ? v.slice(0, max) : undefined);

/** The gate as the server rebuilds it: only the fields a question has, the choices its own. */
function questionOf(body: Record<string, unknown>): ApprovalQuestion {
  const q = isPlainObject(body.question) ? body.question : {};
  const tool = text(q.tool, 200);
  if (!tool) throw new AgentAppsError('E_BAD_REQUEST', 'question.tool: name the tool the gate is for');
  const because = isPlainObject(q.because) && q.because.kind === 'ask-tools' ? { kind: 'ask-tools' as const, pattern: text(q.because.pattern, 500) ?? '' } : { kind: 'trust' as const, source: isPlainObject(q.because) ? (text(q.because.source, 500) ?? '') : '' };
  const code = text(q.code, 20_000);
  const agent = text(q.agent, 200);
  const via = text(q.via, 200);
  return { kind: 'approval', text: `Allow ${tool}?`, tool, args: q.args ?? null, ...(code !== undefined ? { code } : {}), ...(agent !== undefined ? { agent } : {}), ...(via !== undefined ? { via } : {}), because, choices: [...APPROVAL_CHOICES] };
}

/** Answers `POST /approvals/request` (true when the request was this route's). */
export function approvalRequests(broker: ApprovalBroker | undefined, via: string | undefined, req: IncomingMessage, res: ServerResponse, url: URL): boolean {
  if (url.pathname !== '/approvals/request') return false;
  const send = (status: number, body: unknown) => {
    if (!res.headersSent) res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (req.method !== 'POST') {
    send(405, { code: 'E_BAD_REQUEST', message: '/approvals/request takes POST' });
    return true;
  }
  void (async () => {
    if (!broker) return send(404, { code: 'E_CONFIG', message: "this serve has no approvals: configure approvals: { via, approvers } in the workspace's main" });
    const body = await readJson(req);
    if (!isPlainObject(body)) throw new AgentAppsError('E_BAD_REQUEST', 'expected { via, question, run }');
    const through = text(body.via, 200) ?? via;
    if (!through || !broker.has(through)) return send(404, { code: 'E_CONFIG', message: `no gateway '${through ?? ''}' that can carry approvals is running in this serve` });
    const run = isPlainObject(body.run) ? body.run : {};
    const question = questionOf(body);
    const withdrawn = new AbortController();
    res.once('close', () => withdrawn.abort(new AgentAppsError('E_ABORTED', 'the run that asked went away')));
    const runId = text(run.runId, 100);
    const answer = await broker.request(question, { skill: text(run.skill, 200) ?? '?', trigger: 'run', ...(runId ? { runId } : {}) }, through, withdrawn.signal);
    send(200, answer);
  })().catch((err: unknown) => {
    const e = err as AgentAppsError;
    if (e?.code === 'E_ABORTED') return res.destroy();
    send(e?.code === 'E_BAD_REQUEST' ? 400 : 500, { code: e?.code ?? 'E_INTERNAL', message: e?.message ?? String(err) });
  });
  return true;
}
