import { ctxTarget, type Context } from 'agent-apps';

export const frontmatter = {
  name: 'profile',
  description: 'Hook: records the duration of every pipeline and every chain entry on globals.internals.profile (count, total, max in ms). `agent-apps --profile` prints them as a table.',
  metadata: {
    $hook: { $self: ['$invoke', '$next'] },
    role: 'middleware',
    visibility: 'hidden',
    tags: ['meta-internal', 'observability'],
    params: {},
    returns: {},
  },
};

export interface Stat {
  count: number;
  total: number;
  max: number;
}
export interface Profile {
  pipelines: Record<string, Stat>;
  entries: Record<string, Stat>;
}

export default async function profile(ctx: Context) {
  const target = ctxTarget(ctx);
  const hook = ctx.locals.hook as { trigger: '$invoke' | '$next'; entry?: string; config: unknown };
  if (hook.config === false) return target.manager.next();
  const started = performance.now();
  try {
    await target.manager.next();
  } finally {
    const ms = performance.now() - started;
    const store = (ctx.globals.internals.profile ??= { pipelines: {}, entries: {} }) as Profile;
    // Entry times are inclusive: an entry's time contains everything downstream of it.
    const key = hook.trigger === '$invoke' ? target.run.tool.name : `${target.run.tool.name} › ${hook.entry}`;
    const table = hook.trigger === '$invoke' ? store.pipelines : store.entries;
    const s = (table[key] ??= { count: 0, total: 0, max: 0 });
    s.count++;
    s.total += ms;
    if (ms > s.max) s.max = ms;
  }
  return undefined;
}
