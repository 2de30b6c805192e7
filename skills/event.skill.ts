import { ctxTarget, type Context, checkConfig, configError, eventBusReady, kernelOf } from 'agent-apps';

export const frontmatter = {
  name: 'event',
  description: 'Metadata middleware: `event: { routes: [{ topic, ref }], route: TOPIC }` subscribes skills to topics (route: the served skill itself). Registered once, however often the skill runs. `bufferSize` sets how many events each topic keeps for replay (default 1000; at most 64 MiB of them either way).',
  metadata: {
    role: 'middleware',
    visibility: 'hidden',
    tags: ['meta-internal', 'events'],
    params: {
      type: 'object',
      properties: {
        routes: { type: 'array', items: { type: 'object', properties: { topic: { type: 'string' }, ref: { type: 'string', 'x-ref': true }, args: { type: 'object' } }, required: ['topic', 'ref'] } },
        route: { anyOf: [{ type: 'string' }, { type: 'object', properties: { topic: { type: 'string' }, args: { type: 'object' } }, required: ['topic'] }] },
        bufferSize: { type: 'integer', minimum: 0 },
      },
    },
    returns: {},
    // Its value is checked below, naming the file and key that set it (not validate-args's E_VALIDATION).
    'validate-args': false,
  },
};

type Route = { topic: string; ref: string; args?: object };

export default async function event(ctx: Context, value: { routes?: Route[]; route?: string | { topic: string; args?: object }; bufferSize?: number }) {
  const target = ctxTarget(ctx);
  await checkConfig(ctx, value);
  const routes: Route[] = [...(value?.routes ?? [])];
  if (value?.route !== undefined) {
    const r = typeof value.route === 'string' ? { topic: value.route } : value.route;
    routes.push({ topic: r.topic, ref: target.run.tool.name, args: r.args });
  }
  const kernel = kernelOf(ctx);
  const bus = await eventBusReady(ctx);
  if (value?.bufferSize !== undefined) {
    const size = value.bufferSize;
    if (!Number.isInteger(size) || size < 0) throw configError(ctx, `must be a whole number ≥ 0, got ${JSON.stringify(size)}`, ['bufferSize']);
    await bus.setBufferSize(size); // the replay buffer of every topic (docs/events.md: 1,000 by default, configurable)
  }
  for (const [i, r] of routes.entries()) {
    if (!r || typeof r.topic !== 'string' || typeof r.ref !== 'string') throw configError(ctx, `each route needs a topic and a ref, got ${JSON.stringify(r)}`, ['routes', String(i)]);
    await kernel.resolve(r.ref, target.locals.config.paths, target.locals.config.cwd);
    await bus.subscribe({ topic: r.topic, ref: r.ref, args: r.args }); // idempotent
  }
  return target.manager.next();
}
