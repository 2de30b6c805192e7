// The bus as the runtime uses it: one EventBus per runtime over globals.internals, whose
// tool-ref handlers run through the full pipeline from the root context, and whose handler
// errors are logged (never thrown into event-emit).
import { EventBus, getEventState } from './bus.ts';
import type { Context, Event, EventHandler } from '../core/types.ts';
import type { Kernel } from '../kernel/orchestrator.ts';

export function eventBus(ctx: Context): EventBus {
  const internals = ctx.globals.internals;
  let bus = internals.eventBus;
  if (bus) return bus;
  const root = internals.root;
  const state = getEventState(internals);
  bus = new EventBus(state, {
    // Seed 003: the handler is invoked "with the event envelope as args" — its fields at the top
    // level, the whole envelope under `event` too, over the subscription's own args.
    dispatch: (handler, event) => root.manager.invoke(handler.ref, { ...((handler.args as object | undefined) ?? {}), ...event, event }),
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
  });
  internals.eventBus = bus;
  return bus;
}

/**
 * The bus once the routes that projects declare centrally are in place: an `event: { routes }`
 * in the root `main` of a search root (seed 003, "centralized routing config") subscribes its
 * skills as soon as events are used — not only after some skill of that project has run.
 */
export function eventBusReady(ctx: Context): Promise<EventBus> {
  const internals = ctx.globals.internals;
  const bus = eventBus(ctx);
  let ready = internals.eventRoutes;
  if (!ready) {
    ready = registerMainRoutes(ctx, bus).then(() => bus);
    internals.eventRoutes = ready;
  }
  return ready;
}

async function registerMainRoutes(ctx: Context, bus: EventBus): Promise<void> {
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
        bus.subscribe({ topic: r.topic, ref: r.ref, args: r.args });
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
    /** The event bus (SPEC §8), made on first use; its maps live beside it (bus.ts). */
    eventBus?: EventBus;
    /** The root mains' routes, registered once (eventBusReady). */
    eventRoutes?: Promise<EventBus>;
    /** `shutdown` was emitted already (SIGINT/SIGTERM in the CLI): close() does not emit it again. */
    shutdownEmitted?: boolean;
    /** Handler runs event-emit dispatched, for the CLI's shutdown grace. */
    dispatched?: Promise<void>[];
  }
}
