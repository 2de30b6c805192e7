import { type Context, readSchedules, updateSchedules, AgentAppsError } from 'agent-apps';

// docs/serve.md, "Schedules": removes one from .agent-apps/schedules.json; a running serve
// watches the file and disarms it.
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
  const workspace = ctx.locals.config.workspace;
  if (!workspace || !readSchedules(workspace).some((s) => s.name === args.name)) {
    throw new AgentAppsError('E_TOOL_NOT_FOUND', `no schedule named '${args.name}' (agent-apps run schedule-list lists them)`);
  }
  const found = readSchedules(workspace).find((s) => s.name === args.name)!;
  // A skill's own schedule: key comes back at the next serve: it is removed from the skill.
  if (found.declaredBy !== undefined) throw new AgentAppsError('E_USAGE', `schedule '${args.name}' is declared by the skill ${found.declaredBy} (its schedule: key): remove it there`);
  updateSchedules(workspace, (list) => {
    list.splice(list.findIndex((s) => s.name === args.name), 1);
  });
  return { deleted: args.name };
}
