import { type Context, scheduleStore, AgentAppsError } from 'agent-apps';

// docs/serve.md, "Schedules": removes one from .agent-apps/schedules.json (or NATS KV); a running
// serve watches the store and disarms it.
export const frontmatter = {
  name: 'schedule-delete',
  description: 'Deletes the schedule `name` of this workspace.',
  metadata: {
    tags: ['schedules'],
    params: { type: 'object', properties: { name: { type: 'string', minLength: 1 } }, required: ['name'], additionalProperties: false },
    returns: { type: 'object' },
  },
};

export default async function scheduleDelete(ctx: Context, args: { name: string }) {
  const notFound = () => new AgentAppsError('E_TOOL_NOT_FOUND', `no schedule named '${args.name}' (agent-apps run schedule-list lists them)`);
  if (!ctx.locals.config.workspace) throw notFound();
  const store = await scheduleStore(ctx);
  // Checked and removed in one step of the store: another writer in between is read again.
  await store.update((list) => {
    const i = list.findIndex((s) => s.name === args.name);
    if (i < 0) throw notFound();
    // A skill's own schedule: key comes back at the next serve: it is removed from the skill.
    if (list[i]!.declaredBy !== undefined) throw new AgentAppsError('E_USAGE', `schedule '${args.name}' is declared by the skill ${list[i]!.declaredBy} (its schedule: key): remove it there`);
    list.splice(i, 1);
  });
  return { deleted: args.name };
}
