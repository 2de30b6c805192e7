import { AgentAppsError, type Context, eventBusReady } from 'agent-apps';

export const frontmatter = {
  name: 'event-ack',
  description: 'Acknowledges events taken with event-wait { ack: false } (removes them), or with nack: true puts them back at the front of the queue, in order.',
  metadata: {
    tags: ['events'],
    params: {
      type: 'object',
      properties: {
        topic: { type: 'string', minLength: 1 },
        queue: { type: 'string', default: 'default' },
        ids: { type: 'array', items: { type: 'string' } },
        nack: { type: 'boolean', default: false },
        strict: { type: 'boolean', default: true, description: 'Fail when an id is not pending (default); false reports unknown ids in the result.' },
      },
      required: ['topic', 'ids'],
      additionalProperties: false,
    },
    returns: { type: 'object' },
  },
};

export default async function eventAck(ctx: Context, args: { topic: string; queue: string; ids: string[]; nack: boolean; strict: boolean }) {
  const result = await (await eventBusReady(ctx)).ack({ topic: args.topic, queue: args.queue, ids: args.ids, nack: args.nack });
  if (result.unknown.length && args.strict) {
    throw new AgentAppsError('E_UNKNOWN_EVENT', `event-ack: not pending on '${args.topic}' queue '${args.queue}': ${result.unknown.join(', ')}${result.acked.length + result.nacked.length ? ` (the other ${result.acked.length + result.nacked.length} were ${args.nack ? 'nacked' : 'acked'})` : ''}`);
  }
  return result;
}
