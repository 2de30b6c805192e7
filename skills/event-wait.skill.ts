import { internals, type Context } from 'agent-apps';

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
  // Honour the caller's abort: the wait ends when the invoking context is aborted.
  return (await internals.eventBusReady(ctx)).wait({ topic: args.topic, queue: args.queue, timeout: args.timeout, max: args.max, ack: args.ack, signal: ctx.run.signal });
}
