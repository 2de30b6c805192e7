import { type Context, eventBusReady } from 'agent-apps';

export const frontmatter = {
  name: 'event-wait',
  description: 'Waits for events on a topic (a named queue is a consumer group): drains what is queued at once, else blocks until an event arrives or `timeout` ms pass ([]). With ack: false, events stay pending until event-ack.',
  metadata: {
    tags: ['events'],
    params: {
      type: 'object',
      properties: {
        topic: { type: 'string', minLength: 1 },
        queue: { type: 'string', default: 'default' },
        timeout: { type: 'number', minimum: 0 },
        max: { type: 'integer', minimum: 1 },
        ack: { type: 'boolean', default: true },
      },
      required: ['topic'],
      additionalProperties: false,
    },
    returns: { type: 'array', items: { type: 'object' } },
  },
};

export default async function eventWait(ctx: Context, args: { topic: string; queue: string; timeout?: number; max?: number; ack: boolean }) {
  const bus = await eventBusReady(ctx);
  // Honour the caller's abort: the wait ends, and its waiter leaves the queue, the moment the
  // invoking context is aborted — an orphaned wait never takes the next event.
  const signal = ctx.run.signal;
  const events = await bus.wait({ topic: args.topic, queue: args.queue, timeout: args.timeout, max: args.max, ack: args.ack, signal });
  // docs/security.md: an abort between the hand-off and the result reaching the caller (the invocation
  // then rejects) puts the events back at the front of the queue, out of pending. This signal
  // stops following the caller's once the invocation has returned.
  bus.requeueOnAbort({ topic: args.topic, queue: args.queue, events, ack: args.ack }, signal);
  return events;
}
