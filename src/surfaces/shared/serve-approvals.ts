// `--approvals-via NAME` (docs/serve.md, "Remote approvals"): a headless run's approval gates go
// to the `agent-apps serve` of its workspace, which sends them through its gateway NAME and answers
// once an approver has (src/surfaces/serve/approvals.ts). One HTTP request per gate, held open
// until it is settled; the run's abort withdraws it. node:http rather than fetch: fetch gives up on
// a response that has not started within five minutes, and a person may take ten.
// node:http is taken when a gate is asked, not imported: every `run` imports this module, and an
// ES import of node:http reads all its exports, WebSocket's among them, which loads undici
// (~30 ms of each start; docs/cli.md, "Start-up").
import { AgentAppsError } from '../../core/errors.ts';
import type { Answer, Asker } from '../../core/ask.ts';

export const DEFAULT_SERVE_URL = 'http://127.0.0.1:8808';

export interface ServeApprovalsOptions {
  via: string;
  /** serve's listener (AGENT_APPS_SERVE_URL; default http://127.0.0.1:8808). */
  url: string;
  /** serve's bearer token (AGENT_APPS_SERVE_TOKEN), when it has one. */
  token?: string;
  run: { skill: string; runId?: string };
}

export function serveApprovalsAsker(o: ServeApprovalsOptions): Asker {
  const flag = `--approvals-via ${o.via}`;
  return {
    ask(question, signal) {
      if (question.kind !== 'approval') return Promise.reject(new AgentAppsError('E_NOT_INTERACTIVE', `${flag}: only approval gates go through serve; nobody can answer '${question.text}' here`));
      let target: URL;
      try {
        target = new URL('/approvals/request', o.url);
      } catch {
        return Promise.reject(new AgentAppsError('E_USAGE', `${flag}: AGENT_APPS_SERVE_URL '${o.url}' is not a URL (http://127.0.0.1:8808)`));
      }
      const body = JSON.stringify({ via: o.via, question, run: o.run });
      return new Promise<Answer>((resolve, reject) => {
        const req = process.getBuiltinModule(target.protocol === 'https:' ? 'node:https' : 'node:http').request(
          target,
          { method: 'POST', signal, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(o.token ? { authorization: `Bearer ${o.token}` } : {}) } },
          (res) => {
            let text = '';
            res.setEncoding('utf8').on('data', (d: string) => (text += d));
            res.on('end', () => {
              let data: { code?: string; message?: string } & Partial<Answer>;
              try {
                data = JSON.parse(text);
              } catch {
                return reject(new AgentAppsError('E_CONFIG', `${flag}: ${target.origin} answered ${res.statusCode} with something that is not agent-apps serve's answer`));
              }
              if (res.statusCode !== 200) return reject(new AgentAppsError(res.statusCode === 401 ? 'E_DENIED' : 'E_CONFIG', `${flag}: agent-apps serve at ${target.origin} refused the gate (${res.statusCode}${data.code ? ` ${data.code}` : ''}): ${data.message ?? text.slice(0, 200)}${res.statusCode === 401 ? ' — set AGENT_APPS_SERVE_TOKEN to its token' : ''}`));
              resolve(data as Answer);
            });
          },
        );
        req.on('error', (err: NodeJS.ErrnoException) => {
          if (signal.aborted) return reject(signal.reason);
          reject(new AgentAppsError('E_CONFIG', `${flag}: cannot reach agent-apps serve at ${target.origin} (${err.code ?? err.message}) — start \`agent-apps serve\` in this workspace, or set AGENT_APPS_SERVE_URL to where it listens`));
        });
        req.end(body);
      });
    },
  };
}
