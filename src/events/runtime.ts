// The bus as the runtime uses it: one EventBus per runtime over globals.internals, whose
// tool-ref handlers run through the full pipeline from the root context, and whose handler
// errors are logged (never thrown into event-emit).
import { EventBus, getEventState } from './bus.ts';
import type { Context, Event, EventHandler } from '../kernel/types.ts';

export function eventBus(ctx: Context): EventBus {
  const internals = ctx.globals.internals;
  let bus = internals.eventBus as EventBus | undefined;
  if (bus) return bus;
  const root = internals.root as Context;
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
