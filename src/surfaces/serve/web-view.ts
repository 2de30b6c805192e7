// The web view of `agent-apps serve` (docs/serve.md, "The web view"), on serve's own listener:
//   GET /                  the workspace's recent runs (what `agent-apps runs` lists, with their
//                          tokens and cost), newest first, and the approval gates that wait — with
//                          Allow / Deny for the gates a web gateway carries: the same single-use
//                          answers as the approval link (the form posts the gate's token to
//                          /approvals/ID, web-approvals.ts), the others listed read-only;
//   GET /runs/ID           a run as `agent-apps runs show` prints it; while the run goes on, the
//                          page follows
//   GET /runs/ID/events    the transcript lines each record appended to the run file adds, as
//                          Server-Sent Events, then `end` with the whole transcript when it ends.
// Pages are rendered here, with no build step: one inline script, allowed by a nonce made for each
// response. Every value that comes from a run is escaped — a run's text (a model's answer, what a
// skill logged, an error) is untrusted. A web gateway's route wins over the view on its own paths
// (docs/decisions.md), and the view needs serve's bearer token as every route does: a browser
// signs in once with `/?token=TOKEN`, which sets a cookie (viewSession below).
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import type { LogEvent } from '../../core/types.ts';
import { redact } from '../../core/redact.ts';
import type { ApprovalBroker, PendingApproval } from '../../policy/remote-approval.ts';
import { plain } from '../shared/output.ts';
import { RUNS_DIR } from '../shared/reporters.ts';
import { findRun, formatCost, formatDuration, formatTime, readRun, readRuns, runUsage, shortestIds, stillGoing, summarize, transcript, transcriptEntry, triggerText, type RunFile, type RunSummary } from '../shared/runs.ts';
import { answerForm, escapeHtml, gateHtml, page } from './web-approvals.ts';

/** How many runs the list shows (`agent-apps runs --limit 50`). */
export const VIEW_RUNS = 50;
/** The cookie a browser gets for serve's bearer token. */
export const VIEW_COOKIE = 'agent_apps_serve';

/** How often a followed run is looked at besides fs.watch's news (which can miss on some file systems), and whether it still goes on. */
const POLL_MS = 1000;
/** A comment this often keeps an idle event stream open through proxies. */
const KEEPALIVE_MS = 15_000;

/** Run ids as the CLI makes them (a UUID); a file in the runs folder named otherwise is not shown. */
const RUN_ID = /^[0-9A-Za-z][0-9A-Za-z-]{0,127}$/;
const RUN_PATH = /^\/runs\/([^/]+)(\/events)?\/?$/;

const sha = (s: string) => createHash('sha256').update(s).digest();

// ── the bearer token in a browser ───────────────────────────────────────────────────────────

export interface ViewSession {
  /** The request carries the view's cookie (it stands for the token on serve's HTTP routes). */
  admits(req: IncomingMessage): boolean;
  /**
   * `GET /?token=TOKEN` (or a run's page) with serve's token: sets the cookie and redirects to
   * the page without the token in its address; true when it answered.
   */
  signIn(req: IncomingMessage, res: ServerResponse, url: URL): boolean;
}

function cookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * The cookie for serve's `token`: HttpOnly (no script reads it), SameSite=Strict (no other site's
 * page sends it), Path=/, for the browser's session. Its value is derived from the token (an HMAC
 * keyed with it), so the browser never stores the token itself, and a restart with the same token
 * keeps it valid.
 */
export function viewSession(token: string): ViewSession {
  const value = createHmac('sha256', token).update('agent-apps serve web view').digest('base64url');
  const wanted = sha(value);
  const tokenDigest = sha(token);
  return {
    admits(req) {
      const got = cookie(req.headers.cookie, VIEW_COOKIE);
      return got !== undefined && timingSafeEqual(sha(got), wanted);
    },
    signIn(req, res, url) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return false;
      if (url.pathname !== '/' && !(RUN_PATH.test(url.pathname) && !url.pathname.includes('/events'))) return false;
      const given = url.searchParams.get('token');
      if (given === null || !timingSafeEqual(sha(given), tokenDigest)) return false;
      const to = new URL(url.href);
      to.searchParams.delete('token');
      // Behind a TLS proxy the cookie is sent over HTTPS only.
      const secure = String(req.headers['x-forwarded-proto'] ?? '').split(',')[0]!.trim() === 'https';
      res.writeHead(303, { location: to.pathname + to.search, 'content-length': 0, 'set-cookie': `${VIEW_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }).end();
      return true;
    },
  };
}

// ── pages ───────────────────────────────────────────────────────────────────────────────────

const STYLE = `body{max-width:66rem}
h1{font-size:1.5rem;margin:.4rem 0}h2{font-size:1.2rem;margin:1.4rem 0 .5rem}
a{color:#0b57d0}code{font-size:.95em}
table{border-collapse:collapse;width:100%;font-size:.95rem}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #ddd;vertical-align:top}
th{font-weight:600;background:#f4f4f4}td.num,th.num{text-align:right;white-space:nowrap}
tr.outcome td{border-bottom:1px solid #ddd;padding-top:0;color:#555;font-size:.9rem;word-break:break-word}
tr.has-outcome td{border-bottom:0}
.st{font-weight:600}.st-ok{color:#1f7a3a}.st-failed{color:#a32020}.st-running{color:#0b57d0}.st-refused,.st-interrupted{color:#8a5a00}
.gate{border:1px solid #ccc;border-radius:.5rem;padding:.2rem 1rem .8rem;margin:.6rem 0;background:#fffdf4}
.gate h1{font-size:1.2rem}.gate h2{font-size:1rem;margin:.6rem 0 .3rem}
@media (max-width:40rem){
 table,thead,tbody,tr,td{display:block}thead{display:none}
 tr{border-bottom:1px solid #ddd;padding:.3rem 0}tr.run{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:0 .8rem}
 tr.has-outcome{border-bottom:0}td{border:0;padding:.1rem 0}
 td[data-label]::before{content:attr(data-label) ": ";color:#666}td.num{text-align:left}
}`;

/** The headers of every page: only the inline script and style carrying `nonce` run, no framing, nothing cached. */
function pageHeaders(nonce: string, length: number): Record<string, string | number> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-length': length,
    'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
    'x-frame-options': 'DENY',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };
}

function sendPage(req: IncomingMessage, res: ServerResponse, status: number, title: string, body: (nonce: string) => string): void {
  const nonce = randomBytes(16).toString('base64');
  const text = page(title, body(nonce), { nonce, style: STYLE });
  res.writeHead(status, pageHeaders(nonce, Buffer.byteLength(text)));
  res.end(req.method === 'HEAD' ? undefined : text);
}

/** A value as one line of at most `max` characters. */
function oneLine(value: unknown, max = 200): string {
  let s: string;
  try {
    s = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    s = String(value);
  }
  s = s.replace(/\s+/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** What a run ended with, for the list: a failed run's error, else its last top-level agent's result (a plain skill's result is not recorded). */
function outcomeOf(run: RunFile, summary: RunSummary): string | undefined {
  if (summary.error) return `${summary.error.code ? `[${summary.error.code}] ` : ''}${oneLine(summary.error.message)}`;
  const agents = run.events.filter((e) => e.type === 'agent-run') as (LogEvent & { agentId?: string; parentAgentId?: string; ok?: boolean; result?: unknown; error?: { code?: string; message?: string } })[];
  const ids = new Set(agents.map((a) => a.agentId).filter(Boolean));
  const last = agents.filter((a) => !a.parentAgentId || !ids.has(a.parentAgentId)).at(-1);
  if (!last) return undefined;
  const shown = redact(last.ok === false ? last.error : last.result);
  if (last.ok === false) {
    const e = (shown ?? {}) as { code?: string; message?: string };
    return `${e.code ? `[${e.code}] ` : ''}${oneLine(e.message ?? '')}`;
  }
  return shown === undefined || shown === null ? undefined : oneLine(shown);
}

const statusHtml = (s: RunSummary) => `<span class="st st-${escapeHtml(s.status)}">${escapeHtml(s.status)}</span>${s.exitCode === null ? '' : ` <span class="muted">(exit ${escapeHtml(String(s.exitCode))})</span>`}`;

function runsHtml(dir: string): string {
  // A file in the runs folder not named as the CLI names runs is left out (its link would not resolve).
  const all = readRuns(dir).filter((x) => RUN_ID.test(x.summary.id));
  if (!all.length) return '<p class="muted">No recorded runs yet: <code>agent-apps run …</code> records one, and so does each fire of a schedule.</p>';
  const short = shortestIds(all.map((x) => x.summary.id));
  const rows = all.slice(0, VIEW_RUNS).map(({ run, summary: s }) => {
    const usage = runUsage(run);
    const outcome = outcomeOf(run, s);
    const cells = [
      `<td data-label="Run"><a href="/runs/${escapeHtml(s.id)}"><code>${escapeHtml(short.get(s.id) ?? s.id)}</code></a></td>`,
      `<td data-label="Skill">${escapeHtml(s.skill ?? '?')}</td>`,
      `<td data-label="Trigger">${escapeHtml(triggerText(s))}</td>`,
      `<td data-label="Status">${statusHtml(s)}</td>`,
      `<td data-label="Duration" class="num">${escapeHtml(formatDuration(s.durationMs))}</td>`,
      `<td data-label="Tokens" class="num">${usage ? escapeHtml(String(usage.tokens)) : '-'}</td>`,
      `<td data-label="Cost" class="num">${usage?.costUsd !== undefined ? escapeHtml(formatCost(usage.costUsd)) : '-'}</td>`,
      `<td data-label="Started"><time datetime="${escapeHtml(s.startedAt)}">${escapeHtml(formatTime(s.startedAt))}</time></td>`,
    ];
    const row = `<tr class="run${outcome ? ' has-outcome' : ''}" data-run="${escapeHtml(s.id)}">${cells.join('')}</tr>`;
    return outcome ? `${row}<tr class="outcome"><td colspan="8">${escapeHtml(outcome)}</td></tr>` : row;
  });
  const more = all.length > VIEW_RUNS ? `<p class="muted">The newest ${VIEW_RUNS} of ${all.length}: <code>agent-apps runs</code> lists them all.</p>` : '';
  return `<table><thead><tr><th>Run</th><th>Skill</th><th>Trigger</th><th>Status</th><th class="num">Duration</th><th class="num">Tokens</th><th class="num">Cost</th><th>Started</th></tr></thead><tbody>${rows.join('')}</tbody></table>${more}`;
}

function gatesHtml(broker: ApprovalBroker, tokenOf: WebViewOptions['tokenOf']): string {
  const waiting = broker.pending();
  if (!waiting.length) return '<p class="muted">Nothing waits for an approval.</p>';
  return waiting
    .map((p: PendingApproval) => {
      const token = tokenOf(p.via, p.id);
      const answer = token ? answerForm(p, token) : `<p class="muted">Sent through <b>${escapeHtml(p.via)}</b>: it is answered there, not here.</p>`;
      return `<article class="gate" id="gate-${escapeHtml(p.id)}">${gateHtml(p)}${answer}</article>`;
    })
    .join('');
}

// ── following a run ─────────────────────────────────────────────────────────────────────────

const sse = (res: ServerResponse, event: string, data: unknown, id?: number) => res.write(`event: ${event}\n${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`);

/** The script of a run's page while the run goes on: append what the stream sends, then the whole transcript it ends with. */
const FOLLOW = `(function(){var pre=document.getElementById('transcript'),state=document.getElementById('state');
var es=new EventSource(location.pathname.replace(/\\/$/,'')+'/events?from='+pre.getAttribute('data-from'));
es.addEventListener('record',function(m){pre.append(JSON.parse(m.data).join('\\n')+'\\n');});
es.addEventListener('end',function(m){var d=JSON.parse(m.data);pre.textContent=d.transcript;state.textContent=d.status;state.className='st st-'+d.status;es.close();});
})();`;

// ── the view ────────────────────────────────────────────────────────────────────────────────

export interface WebViewOptions {
  /** The workspace serve runs (its runs are in <workspace>/.agent-apps/runs). */
  workspace: string;
  /** The remote approvals, when the main configures `approvals:`. */
  approvals?: ApprovalBroker;
  /** The token of a waiting gate the web gateway `via` sent (web-approvals' tokenOf); undefined for another channel's gate. */
  tokenOf(via: string, id: string): string | undefined;
}

export interface WebView {
  /** Answers `/`, `/runs/ID` and `/runs/ID/events` (true), or leaves the request (false). */
  http(req: IncomingMessage, res: ServerResponse, url: URL): boolean;
  /** Ends the event streams that are open (serve stops). */
  close(): void;
}

export function webView(o: WebViewOptions): WebView {
  const dir = path.join(o.workspace, RUNS_DIR);
  const streams = new Set<() => void>();

  function index(req: IncomingMessage, res: ServerResponse): void {
    const name = path.basename(o.workspace);
    sendPage(req, res, 200, `${name} — agent-apps serve`, () => {
      const gates = o.approvals ? `<section id="approvals"><h2>Waiting for approval${o.approvals.pending().length ? ` (${o.approvals.pending().length})` : ''}</h2>${gatesHtml(o.approvals, o.tokenOf)}</section>` : '';
      return `<header><h1>${escapeHtml(name)}</h1><p class="muted">agent-apps serve · ${escapeHtml(formatTime(Date.now()))} · <a href="/">reload</a></p></header>${gates}<section id="runs"><h2>Recent runs</h2>${runsHtml(dir)}</section>`;
    });
  }

  function notFound(req: IncomingMessage, res: ServerResponse): void {
    sendPage(req, res, 404, 'No such run', () => '<p><a href="/">← Runs</a></p><h1>No such run</h1><p>There is no run with this id in the workspace (it may have been pruned).</p>');
  }

  /** The run `given` names (a whole id or a unique prefix), when it is one. */
  function runOf(given: string): string | undefined {
    let id: string;
    try {
      id = findRun(dir, decodeURIComponent(given));
    } catch {
      return undefined;
    }
    return RUN_ID.test(id) ? id : undefined;
  }

  function runPage(req: IncomingMessage, res: ServerResponse, id: string): void {
    let run: RunFile;
    try {
      run = readRun(dir, id);
    } catch {
      return notFound(req, res);
    }
    const summary = summarize(dir, run);
    // Redacted as `runs show` shows it: a run file from an older version may hold a secret.
    const text = transcript({ ...run, events: run.events.map((e) => redact(e) as LogEvent) }, summary, plain);
    const live = summary.status === 'running';
    sendPage(req, res, 200, `Run ${id.slice(0, 8)} — ${summary.skill ?? '?'}`, (nonce) => {
      const state = `<p id="state" class="st st-${escapeHtml(summary.status)}">${escapeHtml(summary.status)}${live ? ' — new lines appear as the run goes on' : ''}</p>`;
      const script = live ? `<script nonce="${escapeHtml(nonce)}">${FOLLOW}</script>` : '';
      return `<p><a href="/">← Runs</a></p><h1>Run <code>${escapeHtml(id.slice(0, 8))}</code> · ${escapeHtml(summary.skill ?? '?')}</h1>${state}<pre id="transcript" data-from="${run.bytes}">${escapeHtml(text)}</pre>${script}`;
    });
  }

  /** `/runs/ID/events`: the run file from a byte offset (`Last-Event-ID`, else `?from=`, else 0) as it grows. */
  function follow(req: IncomingMessage, res: ServerResponse, url: URL, id: string): void {
    const file = path.join(dir, `${id}.jsonl`);
    const at = (v: unknown) => (typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : undefined);
    let offset = at(req.headers['last-event-id']) ?? at(url.searchParams.get('from')) ?? 0;
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', connection: 'keep-alive' });
    res.write(': following the run file\n\n');
    let done = false;
    let sawEnd = false;
    let idle = 0;
    let watcher: fs.FSWatcher | undefined;
    const stop = () => {
      if (done) return;
      done = true;
      clearInterval(timer);
      watcher?.close();
      streams.delete(end);
    };
    const end = () => {
      stop();
      res.end();
    };
    /** Sends what was appended since `offset`, whole lines only. */
    const drain = () => {
      if (done) return;
      let buf: Buffer;
      try {
        const fd = fs.openSync(file, 'r');
        try {
          const size = fs.fstatSync(fd).size;
          if (size <= offset) return;
          buf = Buffer.alloc(size - offset);
          fs.readSync(fd, buf, 0, buf.length, offset);
        } finally {
          fs.closeSync(fd);
        }
      } catch {
        return; // pruned: the poll below ends the stream
      }
      const whole = buf.lastIndexOf(0x0a) + 1;
      let pos = offset;
      for (const line of buf.subarray(0, whole).toString('utf8').split('\n').slice(0, -1)) {
        pos += Buffer.byteLength(line) + 1;
        let e: LogEvent;
        try {
          e = JSON.parse(line) as LogEvent;
        } catch {
          continue;
        }
        if (e === null || typeof e !== 'object' || typeof e.type !== 'string') continue;
        if (e.type === 'run-end' && e.tag === 'cli') sawEnd = true;
        const lines = transcriptEntry(redact(e) as LogEvent, plain);
        if (lines.length) sse(res, 'record', lines, pos);
      }
      offset = pos;
    };
    /** The run ended (its run-end came, or its process is gone): the whole transcript, and the stream ends. */
    const finish = () => {
      if (done) return;
      let data: { status: string; transcript: string } | undefined;
      try {
        const run = readRun(dir, id);
        const summary = summarize(dir, run);
        data = { status: summary.status, transcript: transcript({ ...run, events: run.events.map((e) => redact(e) as LogEvent) }, summary, plain) };
      } catch {
        data = undefined;
      }
      if (data) sse(res, 'end', data);
      end();
    };
    const look = () => {
      drain();
      if (sawEnd) return finish();
      if (!stillGoing(dir, id)) {
        drain(); // what it wrote last, before its marker went
        return finish();
      }
      if ((idle += POLL_MS) >= KEEPALIVE_MS) {
        idle = 0;
        res.write(': still going\n\n');
      }
    };
    const timer = setInterval(look, POLL_MS);
    timer.unref();
    streams.add(end);
    res.on('close', stop);
    try {
      watcher = fs.watch(file, () => {
        drain();
        if (sawEnd) finish();
      });
      watcher.on('error', () => {});
    } catch {
      // No watching here: the poll still follows the file.
    }
    look();
  }

  return {
    http(req, res, url) {
      const m = RUN_PATH.exec(url.pathname);
      if (url.pathname !== '/' && !m) return false;
      const method = req.method ?? 'GET';
      if (method !== 'GET' && (method !== 'HEAD' || m?.[2])) {
        res.writeHead(405, { allow: m?.[2] ? 'GET' : 'GET, HEAD', 'content-type': 'application/json' }).end(JSON.stringify({ code: 'E_VALIDATION', message: `${method} is not allowed on ${url.pathname}` }));
        return true;
      }
      if (!m) {
        index(req, res);
        return true;
      }
      const id = runOf(m[1]!);
      if (!id) notFound(req, res);
      else if (m[2]) follow(req, res, url, id);
      else runPage(req, res, id);
      return true;
    },
    close() {
      for (const end of [...streams]) end();
    },
  };
}
