// The bus as the runtime uses it: one EventBus per runtime over globals.internals, whose
// tool-ref handlers run through the full pipeline from the root context, and whose handler
// errors are logged (never thrown into event-emit).
import { EventBus, getEventState } from './bus.ts';
import { onClose } from '../kernel/runtime.ts';
import type { Kernel } from '../kernel/orchestrator.ts';
import type { Context, Event, EventHandler } from '../kernel/types.ts';

/** How long `shutdown` handlers may run (the CLI's default `--shutdown-grace`, and runtime.close()). */
export const SHUTDOWN_GRACE = 3000;

export function eventBus(ctx: Context): EventBus {
  const internals = ctx.globals.internals;
  let bus = internals.eventBus as EventBus | undefined;
  if (bus) return bus;
  const root = internals.root as Context;
  const state = getEventState(internals);
  bus = new EventBus(state, {
    dispatch: (handler, event) => root.manager.invoke(handler.ref, { ...((handler.args as object | undefined) ?? {}), event }),
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
  // SPEC §13: runtime.close() emits `shutdown` — unless it was emitted already (the CLI does on a
  // signal) — and gives the handlers it dispatched up to the grace before the root is aborted.
  onClose(internals.kernel as Kernel, () => emitShutdown(root, bus));
  return bus;
}

async function emitShutdown(root: Context, bus: EventBus): Promise<void> {
  if (root.globals.internals.shutdownEmitted === true) return;
  // Nobody listening: nothing to announce (and no pipeline to pay for on every close).
  if (!bus.state.events.get('shutdown')?.length && !bus.state.eventQueues.has('shutdown')) return;
  try {
    const before = (root.globals.internals.dispatched as Promise<void>[] | undefined)?.length ?? 0;
    await root.manager.invoke('event-emit', { topic: 'shutdown', type: 'close', data: { reason: 'runtime closed' }, source: 'runtime' });
    const dispatched = ((root.globals.internals.dispatched as Promise<void>[] | undefined) ?? []).slice(before);
    if (dispatched.length) await settle(Promise.all(dispatched).then(() => undefined), SHUTDOWN_GRACE);
  } catch {
    // Closing goes on even if announcing it failed.
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
