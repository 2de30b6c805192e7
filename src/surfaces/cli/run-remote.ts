// `run SKILL … --remote [--remote-timeout MS] [--queue NAME]` (docs/scale.md): a worker runs the skill.
// These flags may come anywhere after the skill name (before `--`); `--queue` is the work queue's
// only with `--remote` — without it, it is the skill's own arg (event-wait has a `queue`).
import { AgentAppsError } from '../../core/errors.ts';
import { checkQueueName } from '../../nats/config.ts';

export interface RemoteRun {
  queue?: string;
  timeoutMs?: number;
}

export function splitRemote(tokens: string[]): { remote?: RemoteRun; tokens: string[] } {
  const end = tokens.indexOf('--');
  const head = end === -1 ? tokens : tokens.slice(0, end);
  if (!head.includes('--remote')) return { tokens };
  const remote: RemoteRun = {};
  const rest: string[] = [];
  for (let i = 0; i < head.length; i++) {
    const t = head[i]!;
    const m = /^--(remote-timeout|queue)(?:=(.*))?$/s.exec(t);
    if (t === '--remote') continue;
    if (!m) {
      rest.push(t);
      continue;
    }
    let value = m[2];
    if (value === undefined) {
      if (i + 1 >= head.length) throw new AgentAppsError('E_USAGE', `--${m[1]} needs a value`);
      value = head[++i]!;
    }
    if (m[1] === 'queue') remote.queue = checkQueueName(value, '--queue');
    else {
      const ms = Number(value);
      if (!Number.isFinite(ms) || ms <= 0) throw new AgentAppsError('E_USAGE', `--remote-timeout: a number of milliseconds > 0, got ${JSON.stringify(value)}`);
      remote.timeoutMs = ms;
    }
  }
  return { remote, tokens: end === -1 ? rest : [...rest, ...tokens.slice(end)] };
}
