import { type Context, eventBusReady, kernelOf } from 'agent-apps';

export const frontmatter = {
  name: 'event-subscribe',
  description: 'Subscribes to a topic: with `ref`, that skill is invoked for each event; without, creates a queue for event-wait. Idempotent: an existing queue or handler is left as it is. `replay` delivers buffered events to a new one.',
  metadata: {
    tags: ['events'],
    params: {
      type: 'object',
      properties: {
        topic: { type: 'string', minLength: 1 },
        ref: { type: 'string', 'x-ref': true },
        args: { type: 'object' },
        queue: { type: 'string', default: 'default' },
        replay: { anyOf: [{ type: 'boolean' }, { type: 'integer', minimum: 0 }] },
      },
      required: ['topic'],
      additionalProperties: false,
    },
    returns: { type: 'object' },
  },
};

export default async function eventSubscribe(ctx: Context, args: { topic: string; ref?: string; args?: object; queue: string; replay?: boolean | number }) {
  if (args.ref !== undefined) {
    // A bad ref fails here, at subscribe time, not silently at emit time.
    const kernel = kernelOf(ctx);
    await kernel.resolve(args.ref, ctx.locals.config.paths, ctx.locals.config.cwd);
    return await (await eventBusReady(ctx)).subscribe({ topic: args.topic, ref: args.ref, args: args.args, replay: args.replay });
  }
  return await (await eventBusReady(ctx)).subscribe({ topic: args.topic, queue: args.queue, replay: args.replay });
}
