// Remote approvals through a `web` gateway (docs/serve.md, "Remote approvals"): a gate is a page
// behind a single-use link, `/approvals/ID?token=…`, printed on serve's stderr and listed in the
// web view. The page shows the call (every value escaped: tool, args and code come from a model)
// and two buttons; the form posts the token back, and the policy (src/policy/remote-approval.ts)
// settles the gate once: a second click, a replayed post or a late one is refused. The answer is
// `web`'s — `approvals.approvers` must list `web` for a link to count — and, like every route of
// the listener, needs serve's bearer token when it has one.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApprovalBroker, ApprovalChannel, PendingApproval } from '../../policy/remote-approval.ts';

/** The approver a web answer is from. */
export const WEB_APPROVER = 'web';

export function escapeHtml(value: unknown): string {
  const s = typeof value === 'string' ? value : JSON.stringify(value, null, 2) ?? String(value);
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`).replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const STYLE = `body{font:16px/1.45 system-ui,sans-serif;margin:0 auto;max-width:44rem;padding:1rem;color:#1b1b1b}
pre{background:#f4f4f4;padding:.6rem;overflow:auto;white-space:pre-wrap;word-break:break-word}
button{font-size:1.1rem;padding:.6rem 1.4rem;margin-right:.6rem;border-radius:.4rem;border:1px solid #888}
.allow{background:#1f7a3a;color:#fff}.deny{background:#a32020;color:#fff}.muted{color:#666}`;

/** A page; `nonce` goes on its style (a Content-Security-Policy with nonces: the web view), `style` after the common one. */
export function page(title: string, body: string, opts: { nonce?: string; style?: string } = {}): string {
  const nonce = opts.nonce ? ` nonce="${escapeHtml(opts.nonce)}"` : '';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title><style${nonce}>${STYLE}${opts.style ?? ''}</style></head><body>${body}</body></html>`;
}

/** The call a gate is for, as HTML (the web view shows the same). */
export function gateHtml(p: PendingApproval): string {
  const q = p.question;
  return `<h1>Allow <code>${escapeHtml(q.tool)}</code>?</h1>
<p class="muted">Run of <b>${escapeHtml(p.run.skill)}</b>${p.run.trigger ? ` (${escapeHtml(p.run.trigger)})` : ''}${q.agent ? `, agent <b>${escapeHtml(q.agent)}</b>` : ''} · asked ${escapeHtml(new Date(p.createdAt).toISOString())} · denied if unanswered by ${escapeHtml(new Date(p.expiresAt).toISOString())}</p>
<p>Because: ${q.because.kind === 'ask-tools' ? `ask-tools <code>${escapeHtml(q.because.pattern)}</code>` : `trust: ask (${escapeHtml(q.because.source)})`}</p>
<h2>Args</h2><pre>${escapeHtml(q.args)}</pre>${q.code ? `<h2>The code that calls it</h2><pre>${escapeHtml(q.code)}</pre>` : ''}`;
}

/** The form that answers a gate: its token travels in the body, never in a link the page builds. */
export function answerForm(p: PendingApproval, token: string, action = `/approvals/${p.id}`): string {
  return `<form method="post" action="${escapeHtml(action)}"><input type="hidden" name="token" value="${escapeHtml(token)}">
<button class="allow" name="value" value="allow" type="submit">Allow</button><button class="deny" name="value" value="deny" type="submit">Deny</button></form>`;
}

function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => {
      text += d;
      if (text.length > 16_384) {
        req.destroy();
        reject(new Error('the form is too large'));
      }
    });
    req.on('end', () => resolve(new URLSearchParams(text)));
    req.on('error', reject);
  });
}

function html(res: ServerResponse, status: number, title: string, body: string): void {
  const text = page(title, body);
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store', 'x-frame-options': 'DENY', 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'", 'referrer-policy': 'no-referrer' });
  res.end(text);
}

export interface WebApprovals {
  channel: ApprovalChannel;
  /** The token of a waiting gate this channel sent (the web view's buttons). */
  tokenOf(id: string): string | undefined;
  /** Answers `/approvals/ID` (GET: the page; POST: the answer); true when it was this route. */
  http(req: IncomingMessage, res: ServerResponse, url: URL): boolean;
}

export function webApprovals(broker: ApprovalBroker, via: string, log: (level: 'info' | 'warn', text: string) => void): WebApprovals {
  const tokens = new Map<string, string>();
  const channel: ApprovalChannel = {
    async send(p, token) {
      tokens.set(p.id, token);
      log('info', `approval ${p.id}: ${p.question.tool} waits for an answer at /approvals/${p.id}?token=${token} (or the web view at /)`);
    },
    async settled(p) {
      tokens.delete(p.id);
    },
  };
  return {
    channel,
    tokenOf: (id) => tokens.get(id),
    http(req, res, url) {
      const m = /^\/approvals\/([0-9a-f]{16})\/?$/.exec(url.pathname);
      if (!m) return false;
      const id = m[1]!;
      if (req.method === 'GET' || req.method === 'HEAD') {
        const p = broker.pending().find((x) => x.id === id && x.via === via);
        const token = url.searchParams.get('token') ?? '';
        if (!p || tokens.get(id) !== token) {
          const done = broker.outcome(id);
          html(res, done ? 409 : 404, 'Approval', `<h1>${done ? 'Already answered' : 'No such approval'}</h1><p>${done ? `It was ${escapeHtml(done.decision === 'allow' ? 'allowed' : 'denied')}${done.who ? ` by ${escapeHtml(done.who)}` : ''} through ${escapeHtml(done.via)}.` : 'This link is not (or no longer) valid.'}</p>`);
          return true;
        }
        html(res, 200, `Allow ${p.question.tool}?`, gateHtml(p) + answerForm(p, token));
        return true;
      }
      if (req.method !== 'POST') {
        res.writeHead(405, { allow: 'GET, POST' }).end();
        return true;
      }
      void readForm(req).then(
        (form) => {
          const value = form.get('value');
          if (value !== 'allow' && value !== 'deny') return html(res, 400, 'Approval', '<h1>Choose allow or deny</h1>');
          const r = broker.answer({ id, token: form.get('token') ?? '', value, who: WEB_APPROVER, via });
          if (r.ok) return html(res, 200, 'Approval', `<h1>${value === 'allow' ? 'Allowed' : 'Denied'}</h1><p><code>${escapeHtml(r.pending.question.tool)}</code> of ${escapeHtml(r.pending.run.skill)}: your answer was passed on.</p>`);
          const status = r.code === 'E_STALE' ? 409 : 403;
          html(res, status, 'Approval', `<h1>Refused</h1><p>${escapeHtml(r.message)}</p>`);
        },
        () => html(res, 400, 'Approval', '<h1>The form could not be read</h1>'),
      );
      return true;
    },
  };
}
