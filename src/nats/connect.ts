// The runtime's NATS connection (docs/scale.md), made on first use and shared by the event bus, the
// worker and remote invocations; `import()` keeps the client out of every run that does not use it.
import { AgentAppsError } from '../core/errors.ts';
import type { Context, InvokeOptions, JsonObject, RuntimeState, ToolDef } from '../core/types.ts';
import { ENV, eventsConfig } from './config.ts';
import type { Nats } from './nats.ts';

/** The connection, or E_CONFIG when nothing configures NATS (`what` names the command that needs it). */
export async function natsFor(ctx: Context, what: string): Promise<Nats> {
  const internals = ctx.globals.internals;
  if (!internals.nats) {
    const config = await eventsConfig(ctx);
    if (config.backend !== 'nats') {
      throw new AgentAppsError('E_CONFIG', `${what} needs NATS: set events: { backend: nats, url: nats://127.0.0.1:4222 } in the workspace's main, or ${ENV}=nats://…`);
    }
    const made = import('./nats.ts').then((m) => m.connectNats(config));
    internals.nats = made;
    // A failed first connection is reported where it was asked for; the next use tries again.
    made.catch(() => {
      if (internals.nats === made) internals.nats = undefined;
    });
  }
  return internals.nats;
}

/** `runtime.invoke(ref, args, { remote })`: the invocation runs on a worker (docs/scale.md). */
export async function invokeRemotely(ctx: Context, ref: string | ToolDef, args: unknown, remote: NonNullable<InvokeOptions['remote']>, signal?: AbortSignal): Promise<unknown> {
  if (typeof ref !== 'string') throw new AgentAppsError('E_USAGE', 'invoke { remote }: name the skill (a definition cannot travel to a worker)');
  if (args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args))) throw new AgentAppsError('E_USAGE', 'invoke { remote }: args must be an object');
  const [nats, { invokeRemote }] = await Promise.all([natsFor(ctx, 'invoke { remote: true }'), import('./remote.ts')]);
  const o = typeof remote === 'object' ? remote : {};
  const warn = (text: string) => ctx.manager.log({ type: 'result-ignored', tag: 'nats', level: 'warn', text });
  const options = { ...(o.queue !== undefined ? { queue: o.queue } : {}), ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}), ...(signal ? { signal } : {}), warn };
  const tracer = ctx.globals.internals.tracer;
  if (tracer === undefined) return invokeRemote(nats, ref, (args ?? {}) as JsonObject, options);
  // Tracing (docs/ci.md, "Tracing"): the submitter's span; the worker's is its child (the request's traceparent header).
  const queue = o.queue ?? 'default';
  const span = tracer.span(`remote ${ref}`, { parent: ctx, kind: 'producer', attributes: { 'messaging.system': 'nats', 'messaging.operation.type': 'send', 'messaging.destination.name': nats.names.invoke(queue), 'agent_apps.skill': ref, 'agent_apps.queue': queue } });
  try {
    const result = await invokeRemote(nats, ref, (args ?? {}) as JsonObject, { ...options, traceparent: span.traceparent });
    span.end();
    return result;
  } catch (err) {
    span.end(err);
    throw err;
  }
}

/** Closes the connection if this runtime made one (runtime.close()). */
export async function closeNats(internals: RuntimeState): Promise<void> {
  const made = internals.nats;
  internals.nats = undefined;
  if (!made) return;
  try {
    await (await made).close();
  } catch {
    // never connected: nothing to close
  }
}

declare module '../core/types.ts' {
  interface RuntimeState {
    /** The NATS connection (docs/scale.md), when something configured to use it has. */
    nats?: Promise<Nats>;
  }
}
