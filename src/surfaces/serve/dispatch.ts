// GatewayContext.dispatch (docs/serve.md, "Gateways"): every inbound message is announced on the
// bus as `gateway-message` — so an event route or a subscriber can see all traffic without the
// gateway knowing them — and then runs its route's skill as an untrusted caller
// (src/policy/untrusted.ts, docs/security.md "The callers"): its args are data only, refs by bare
// name, and the allow-list is the route's own skill, so a sender can never name another one.
import { AsyncLocalStorage } from 'node:async_hooks';
import { AgentAppsError } from '../../core/errors.ts';
import { invokeUntrusted } from '../../policy/untrusted.ts';
import { eventBusReady } from '../../events/runtime.ts';
import type { JsonObject, LogEvent, Reporter } from '../../core/types.ts';
import type { Runtime } from '../../runtime.ts';
import type { InboundMessage } from './gateway.ts';
import { withRemoteApprovals, type ApprovalBroker } from '../../policy/remote-approval.ts';
import { withTraceParent } from '../../core/tracing.ts';

export interface DispatchOptions {
  runtime: Runtime;
  name: string;
  type: string;
  /** Per-message time limit (`--max-ms`): past it the run is aborted and answers E_TIMEOUT. */
  maxMs: number;
  /** The serve process's stop signal: aborts what runs once the drain gives up. */
  signal: AbortSignal;
  /** Counts the messages under way, for the drain. */
  track<T>(run: Promise<T>): Promise<T>;
  /** `approvals:` of the main: the run's approval gates go through `via` (docs/serve.md, "Remote approvals"). */
  approvals?: { broker: ApprovalBroker; via: string };
}

export function makeDispatch(opts: DispatchOptions): (message: InboundMessage) => Promise<unknown> {
  const { runtime, name, type, maxMs } = opts;
  const root = runtime.root;
  // One surface per allow-list, made once: the policy reads only its name and allow-list.
  const surfaces = new Map<string, { name: string; allow: string }>();
  const surface = (message: InboundMessage) => {
    const allow = message.allow ?? message.skill;
    let s = surfaces.get(allow);
    if (!s) surfaces.set(allow, (s = { name: `a ${type} gateway sender`, allow }));
    return s;
  };
  const noReply = () => {};
  // The serve process's stop signal aborts every run under way: one listener for all of them,
  // rather than one added and removed per message.
  const underWay = new Set<AbortController>();
  opts.signal.addEventListener('abort', () => {
    for (const run of underWay) run.abort(opts.signal.reason);
  }, { once: true });
  return (message) =>
    opts.track(
      (async () => {
        const bus = await eventBusReady(root);
        // Announced before the skill runs; a failing subscriber never stops the message.
        try {
          await bus.emit({ topic: 'gateway-message', type, source: name, data: message.data });
        } catch (err) {
          root.manager.log({ type: 'emit-error', tag: 'serve', level: 'error', code: (err as { code?: string })?.code ?? 'E_EVENTS', text: `gateway-message of ${name}: ${(err as Error)?.message ?? err}` });
        }
        // The run's signal: aborted past --max-ms, when the serve process gives up its drain, or
        // when the sender goes away. One controller with listeners that are removed when the run
        // settles — not AbortSignal.timeout + AbortSignal.any, whose composite signal re-checks
        // every source on each `aborted` read, and the kernel reads it at every chain step
        // (docs/serve.md, "Performance").
        const run = new AbortController();
        const sender = message.signal;
        let timedOut = false;
        const timer = setTimeout(() => {
          timedOut = true;
          run.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
        }, maxMs);
        timer.unref();
        const follow = () => run.abort(sender!.reason);
        if (opts.signal.aborted) run.abort(opts.signal.reason);
        else if (sender?.aborted) run.abort(sender.reason);
        underWay.add(run);
        sender?.addEventListener('abort', follow, { once: true });
        const gateway = { name, type, reply: message.reply ?? noReply };
        const nonlocals = { gateway, ...(message.request ? { request: message.request } : {}) };
        if (opts.approvals) withRemoteApprovals(nonlocals, opts.approvals.broker.askerFor({ skill: message.skill, trigger: `${type} ${name}`, ...(message.origin ? { origin: message.origin } : {}) }, opts.approvals.via));
        // Tracing (docs/ci.md, "Tracing"): a span per message, under the sender's traceparent header when it sent one.
        const span = root.globals.internals.tracer?.span(`${type} ${name}`, { ...traceParentOf(message), kind: 'server', attributes: { 'agent_apps.gateway': name, 'agent_apps.gateway.type': type, 'agent_apps.skill': message.skill, 'http.request.method': message.request?.method, 'url.path': message.request?.path } });
        if (span) withTraceParent(nonlocals, span.traceparent);
        let failure: unknown;
        try {
          return await invokeUntrusted(root, surface(message), message.skill, message.args as JsonObject, { signal: run.signal, context: { nonlocals } });
        } catch (err) {
          failure = timedOut ? new AgentAppsError('E_TIMEOUT', `${message.skill}: no answer within ${maxMs} ms (--max-ms)`) : err;
          throw failure;
        } finally {
          span?.end(failure);
          clearTimeout(timer);
          underWay.delete(run);
          sender?.removeEventListener('abort', follow);
        }
      })(),
    );
}

/** `{ parent }`: the message's incoming traceparent (a webhook's header, the web gateway's request header), if it brought one. */
function traceParentOf(message: InboundMessage): { parent?: string } {
  const raw = message.traceparent ?? message.request?.headers.traceparent;
  const value = Array.isArray(raw) ? raw[0] : raw;
  return typeof value === 'string' && value ? { parent: value } : {};
}

// ── a run's log events, for the web gateway's SSE answers ───────────────────────────────────
// One runtime serves every message at once, so a log event is routed to the request it belongs
// to by the async context it was logged in (as `mcp serve` routes progress: docs/mcp.md).
const sinks = new AsyncLocalStorage<(e: LogEvent) => void>();
const SHOWN = new Set(['info', 'warn', 'error']);

/** Runs `fn` with `sink` receiving the log events (info and up) of everything `fn` starts. */
export function withLogs<T>(sink: (e: LogEvent) => void, fn: () => Promise<T>): Promise<T> {
  return sinks.run(sink, fn);
}

/** The reporter serve hands createRuntime. */
export const logsReporter: Reporter = {
  name: 'serve-logs',
  report(e) {
    const sink = sinks.getStore();
    if (sink && SHOWN.has(e.level)) sink(e);
  },
};
