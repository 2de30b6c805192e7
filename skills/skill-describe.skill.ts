import { internals, type Context } from 'agent-apps';

export const frontmatter = {
  name: 'skill-describe',
  description: "Describes one skill: its declaration (description, params, returns), origin, resolved metadata and middleware chain.",
  metadata: {
    tags: ['discovery'],
    params: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false },
    returns: { type: 'object' },
  },
};

export default async function skillDescribe(ctx: Context, args: { name: string }) {
  return internals.kernel(ctx).describe(args.name, ctx.locals.config.paths, ctx.locals.config.cwd);
}
