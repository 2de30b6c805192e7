import { type Context, eventBusReady } from 'agent-apps';

export const frontmatter = {
  name: 'event-unsubscribe',
  description: 'Removes handlers from a topic: the one for `ref`, or all of them. Queues stay.',
  metadata: {
    tags: ['events'],
    params: { type: 'object', properties: { topic: { type: 'string', minLength: 1 }, ref: { type: 'string', 'x-ref': true } }, required: ['topic'], additionalProperties: false },
    returns: { type: 'object', properties: { removed: { type: 'integer' } } },
  },
};

export default async function eventUnsubscribe(ctx: Context, args: { topic: string; ref?: string }) {
  return await (await eventBusReady(ctx)).unsubscribe({ topic: args.topic, ref: args.ref });
}
