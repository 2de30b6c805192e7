import { type Context, cronReady, nextFire, scheduleStore } from 'agent-apps';

// docs/serve.md, "Schedules": what .agent-apps/schedules.json (or NATS KV) holds, each with its next due time.
export const frontmatter = {
  name: 'schedule-list',
  description: 'Lists the schedules of this workspace (.agent-apps/schedules.json), each with when it is next due.',
  metadata: {
    tags: ['schedules'],
    params: { type: 'object', properties: {}, additionalProperties: false },
    returns: { type: 'array', items: { type: 'object' } },
  },
};

export default async function scheduleList(ctx: Context) {
  if (!ctx.locals.config.workspace) return [];
  const list = await (await scheduleStore(ctx)).list();
  if (list.some((s) => s.cron !== undefined)) await cronReady();
  const now = Date.now();
  return list.map((s) => {
    let next: number | undefined;
    try {
      next = nextFire(s, now);
    } catch {
      // A store edited by hand may hold a cron croner refuses: listed, with no next time.
    }
    return { ...s, next: next === undefined ? null : new Date(next).toISOString() };
  });
}
