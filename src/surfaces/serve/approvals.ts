// `approvals:` of a served workspace's main (docs/serve.md, "Remote approvals"):
//
//   approvals:
//     via: team              # the gateway that carries them: a slack, email or web gateway's name
//     approvers: [U0BOSS]    # who may answer: Slack user ids, email addresses, `web` (the link)
//     timeoutMs: 600000      # no answer within it: denied (default 10 minutes)
//
// The rules of an answer are the policy's (src/policy/remote-approval.ts); this file reads the
// configuration.
import { ConfigurationError } from '../../core/errors.ts';
import { isPlainObject } from '../../core/path.ts';
import { DEFAULT_APPROVAL_TIMEOUT_MS } from '../../policy/remote-approval.ts';

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
