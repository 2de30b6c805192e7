import { type Context, type Event, eventBusReady } from 'agent-apps';

export const frontmatter = {
  name: 'event-emit',
  description: 'Publishes an event to a topic: pushed to every subscribed queue at once, then handlers run asynchronously. Returns the event.',
  metadata: {
    tags: ['events'],
    params: {
      type: 'object',
      properties: {
        topic: { type: 'string', minLength: 1 },
        type: { type: 'string', minLength: 1 },
        data: {},
        source: { type: 'string' },
      },
      required: ['topic', 'type'],
      additionalProperties: false,
    },
    returns: { type: 'object', required: ['id', 'topic', 'type', 'timestamp'] },
  },
};

export default async function eventEmit(ctx: Context, args: { topic: string; type: string; data?: unknown; source?: string }): Promise<Event> {
  const caller = ctx.envelope.parent;
  const { event, dispatched } = await (await eventBusReady(ctx)).emit({
    topic: args.topic,
    type: args.type,
    data: args.data,
    source: args.source ?? (caller && caller.envelope.parent ? caller.run.tool.name : undefined),
    rootContextId: ctx.nonlocals.rootContextId,
    // Tracing (docs/ci.md, "Tracing"): over NATS, the event's handlers run under this span.
    traceparent: ctx.globals.internals.tracer?.traceparent(ctx),
  });
  // runtime.close() announces `shutdown` only if nobody did yet (the CLI does on SIGINT / SIGTERM).
  if (event.topic === 'shutdown') ctx.globals.internals.shutdownEmitted = true;
  // The CLI's shutdown grace waits on what this emit dispatched.
  const pending = ctx.globals.internals.dispatched ?? [];
  pending.push(dispatched);
  if (pending.length > 64) pending.splice(0, pending.length - 64);
  ctx.globals.internals.dispatched = pending;
  return event;
}
