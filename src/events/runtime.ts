// The bus as the runtime uses it: one in-memory EventBus per runtime over globals.internals (the
// process's own: `shutdown`, and everything when no other backend is configured), and the
// configured backend behind the Bus interface (backend.ts) that the event skills use — NATS
// JetStream when `events: { backend: nats }` says so (docs/scale.md), loaded only then. Tool-ref
// handlers run through the full pipeline from the root context; handler errors are logged
// (never thrown into event-emit).
import { EventBus, getEventState, type EventBusOptions, type RefHandler } from './bus.ts';
import { MemoryBus, type Bus } from './backend.ts';
import { eventsConfig } from '../nats/config.ts';
import { closeNats, natsFor } from '../nats/connect.ts';
import type { Context, Event, EventHandler, RuntimeState } from '../core/types.ts';
import { withTraceParent } from '../core/tracing.ts';

/** The in-memory bus of this runtime (synchronous; the process-local one). */
export function eventBus(ctx: Context): EventBus {
  const internals = ctx.globals.internals;
  let bus = internals.eventBus;
  if (bus) return bus;
  bus = new EventBus(getEventState(internals), busOptions(ctx));
  internals.eventBus = bus;
  return bus;
}

function busOptions(ctx: Context): EventBusOptions {
  const root = ctx.globals.internals.root;
  return {
    // The handler gets its subscription's own args and the envelope under `event`, nothing else
    // (docs/events.md, "Handler args"): an event's fields never reach the top level, where
    // `$context` would add middleware and a key named like a route arg would override it.
    dispatch: async (handler, event, from, traceparent) => {
      if (from === 'nats' && (await refuseRemoteEvent(root, handler, event))) return undefined;
      // Tracing (docs/ci.md, "Tracing"): the handler runs under the emitter's span (the event's traceparent header).
      const traced = traceparent && root.globals.internals.tracer ? { context: { nonlocals: withTraceParent({}, traceparent) } } : undefined;
      return root.manager.invoke(handler.ref, { ...((handler.args as object | undefined) ?? {}), event }, traced);
    },
    onHandlerError: (error: unknown, event: Event, handler: EventHandler) => {
      const name = typeof handler === 'function' ? handler.name || 'function handler' : handler.ref;
      root.manager.log({
        type: 'handler-error',
        tag: 'events',
        level: 'error',
        code: (error as { code?: string })?.code ?? 'E_HANDLER',
        text: `handler '${name}' for event ${event.type} on '${event.topic}' failed: ${(error as Error)?.message ?? error}`,
        topic: event.topic,
        eventId: event.id,
      });
    },
  };
}

/**
 * An event that came over NATS was written by whoever may publish on its subject (docs/security.md,
 * "The callers"): it is data. Its handler and the handler's args are this process's own config and
 * run as they are; the event itself may carry no `$`-key or `__proto__` at any depth, and a ref
 * the handler's params declare inside `event` (`x-ref`) must be a bare name — a URI there would
 * load code. A refused event is logged (type `refused`, level warn) and settled, so it is acked
 * and never redelivered; true when refused.
 */
async function refuseRemoteEvent(root: Context, handler: RefHandler, event: Event): Promise<boolean> {
  const surface = { surface: 'an event from NATS' };
  try {
    // Loaded here, not at the top: a run that uses no NATS never pays for the policy module.
    const { dataOnly, refsAreNames } = await import('../policy/untrusted.ts');
    dataOnly(event, surface);
    const { paths, cwd } = root.locals.config;
    const tool = await root.globals.internals.kernel.resolve(handler.ref, paths, cwd);
    refsAreNames(tool.name, tool.decl.params, { event }, surface);
    return false;
  } catch (error) {
    root.manager.log({
      type: 'refused',
      tag: 'events',
      level: 'warn',
      code: (error as { code?: string })?.code ?? 'E_UNTRUSTED_REF',
      text: `refused event ${String(event?.type).slice(0, 80)} on '${String(event?.topic).slice(0, 80)}' for handler '${handler.ref}': ${(error as Error)?.message ?? error}`,
      topic: event?.topic,
      eventId: event?.id,
    });
    return true;
  }
}

/** The configured backend (memory or NATS), made on first use; a failed NATS connection is retried on the next use. */
export function eventBackend(ctx: Context): Promise<Bus> {
  const internals = ctx.globals.internals;
  if (!internals.eventBackend) {
    const made = makeBackend(ctx);
    internals.eventBackend = made;
    made.then(
      (bus) => void (internals.eventBackendResolved = bus),
      () => {
        if (internals.eventBackend === made) internals.eventBackend = undefined;
      },
    );
  }
  return internals.eventBackend;
}

async function makeBackend(ctx: Context): Promise<Bus> {
  const local = eventBus(ctx);
  const config = await eventsConfig(ctx);
  if (config.backend === 'memory') {
    if (config.bufferSize !== undefined) local.state.bufferSize = config.bufferSize;
    return new MemoryBus(local);
  }
  const [{ NatsBus }, nats] = await Promise.all([import('./nats-bus.ts'), natsFor(ctx, 'events')]);
  return new NatsBus(nats, local, busOptions(ctx));
}

/**
 * Emits without waiting, for code that reports as it goes (an agent's lifecycle events): on the
 * configured backend once it is known, else on the in-memory bus at once, as before any was.
 */
export function publishEvent(ctx: Context, input: Parameters<EventBus['emit']>[0]): void {
  const resolved = ctx.globals.internals.eventBackendResolved;
  if (resolved && resolved.backend !== 'memory') {
    const tracer = ctx.globals.internals.tracer;
    if (tracer && input.traceparent === undefined) input = { ...input, traceparent: tracer.traceparent(ctx) };
    resolved.emit(input).catch((error: unknown) => {
      ctx.globals.internals.root.manager.log({ type: 'emit-error', tag: 'events', level: 'error', code: (error as { code?: string })?.code ?? 'E_EVENTS', text: `event ${input.type} on '${input.topic}': ${(error as Error)?.message ?? error}` });
    });
    return;
  }
  eventBus(ctx).emit(input);
}

/** Closes the backend and the NATS connection if there is one (runtime.close()). */
export async function closeEvents(internals: RuntimeState): Promise<void> {
  const made = internals.eventBackend;
  internals.eventBackend = undefined;
  internals.eventBackendResolved = undefined;
  internals.eventRoutes = undefined;
  if (made) {
    try {
      await (await made).close();
    } catch {
      // a backend that never came up has nothing to close
    }
  }
  await closeNats(internals);
}

/**
 * The bus once the routes that projects declare centrally are in place: an `event: { routes }`
 * in the root `main` of a search root (docs/events.md) subscribes its
 * skills as soon as events are used — not only after some skill of that project has run.
 */
export function eventBusReady(ctx: Context): Promise<Bus> {
  const internals = ctx.globals.internals;
  let ready = internals.eventRoutes;
  if (!ready) {
    const made = eventBackend(ctx).then(async (bus) => {
      await registerMainRoutes(ctx, bus);
      return bus;
    });
    internals.eventRoutes = ready = made;
    made.catch(() => {
      if (internals.eventRoutes === made) internals.eventRoutes = undefined;
    });
  }
  return ready;
}

async function registerMainRoutes(ctx: Context, bus: Bus): Promise<void> {
  const kernel = ctx.globals.internals.kernel;
  const root = ctx.globals.internals.root;
  const { paths, cwd } = kernel.base;
  for (const dir of paths) {
    if (dir === kernel.registry.library) continue;
    const main = kernel.registry.root(dir).mains.get(dir);
    if (!main) continue;
    try {
      const tool = await kernel.registry.load(main);
      const event = tool.metadata.event as { routes?: { topic?: unknown; ref?: unknown; args?: unknown }[] } | undefined;
      for (const r of Array.isArray(event?.routes) ? event.routes : []) {
        if (typeof r?.topic !== 'string' || typeof r.ref !== 'string') continue;
        await kernel.resolve(r.ref, paths, cwd);
        await bus.subscribe({ topic: r.topic, ref: r.ref, args: r.args });
      }
    } catch (err) {
      root.manager.log({ type: 'route-error', tag: 'events', level: 'error', code: (err as { code?: string })?.code ?? 'E_CONFIG', text: `event routes of ${main.file}: ${(err as Error)?.message ?? err}` });
    }
  }
}

/** Settles when every handler dispatched so far has settled, or after `ms` (the shutdown grace). */
export function settle(dispatched: Promise<void>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    timer.unref?.();
    dispatched.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

declare module '../core/types.ts' {
  interface RuntimeState {
    /** The in-memory event bus (docs/events.md), made on first use; its maps live beside it (bus.ts). */
    eventBus?: EventBus;
    /** The root mains' routes, registered once on the configured backend (eventBusReady). */
    eventRoutes?: Promise<Bus>;
    /** The configured backend (docs/scale.md), made on first use (eventBackend). */
    eventBackend?: Promise<Bus>;
    /** The same, once it is made (publishEvent reads it without waiting). */
    eventBackendResolved?: Bus;
    /** `shutdown` was emitted already (SIGINT/SIGTERM in the CLI): close() does not emit it again. */
    shutdownEmitted?: boolean;
    /** Handler runs event-emit dispatched, for the CLI's shutdown grace. */
    dispatched?: Promise<void>[];
  }
}
