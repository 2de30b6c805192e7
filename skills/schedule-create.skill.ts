import { type Context, type ScheduleInput, kernelOf, makeSchedule, nextFire, scheduleStore } from 'agent-apps';

// docs/serve.md, "Schedules": the store is the workspace's .agent-apps/schedules.json (NATS KV
// on the NATS backend); only `agent-apps serve` fires what it holds. `ref` is declared x-ref, so an untrusted caller (agent
// code, a surface) may name only a tool it could call itself — never a path or inline:// URI.
export const frontmatter = {
  name: 'schedule-create',
  description: 'Creates (or replaces) a schedule: `ref` is invoked with `args` by `agent-apps serve` on a cron expression (with `timezone`), `every` duration ("30s", "5m", "1h" or ms), or once `at` an ISO 8601 time.',
  metadata: {
    tags: ['schedules'],
    params: {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1 },
        cron: { type: 'string', minLength: 1 },
        every: { anyOf: [{ type: 'string', minLength: 1 }, { type: 'integer', minimum: 1 }] },
        at: { type: 'string', minLength: 1 },
        timezone: { type: 'string', minLength: 1 },
        ref: { type: 'string', 'x-ref': true },
        args: { type: 'object' },
        overlap: { enum: ['skip', 'queue'], default: 'skip' },
        catchUp: { enum: ['none', 'latest'], default: 'none' },
      },
      required: ['ref'],
      additionalProperties: false,
    },
    returns: { type: 'object' },
  },
};

/** The store's input, with the defaults the params apply filled in. */
type Args = ScheduleInput & Required<Pick<ScheduleInput, 'overlap' | 'catchUp'>>;

export default async function scheduleCreate(ctx: Context, args: Args) {
  const { paths, cwd } = ctx.locals.config;
  const store = await scheduleStore(ctx);
  // A bad ref fails now, not silently at the first fire.
  await kernelOf(ctx).resolve(args.ref, paths, cwd);
  const schedule = await makeSchedule(args);
  await store.update((list) => {
    const i = list.findIndex((s) => s.name === schedule.name);
    if (i >= 0) list[i] = schedule;
    else list.push(schedule);
  });
  const next = nextFire(schedule, Date.now());
  return { ...schedule, next: next === undefined ? null : new Date(next).toISOString() };
}
