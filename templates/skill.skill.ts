// `{{name}}`: a code skill. The frontmatter declares its name, description and the params
// schema that `agent-apps run {{name}} --input …` coerces flags with and validate-args enforces.
import type { Context } from 'agent-apps';

export const frontmatter = {
  name: '{{name}}',
  description: 'TODO — what {{name}} does, in one line.',
  metadata: {
    params: {
      type: 'object',
      properties: { input: { type: 'string', description: 'What to work on.', default: 'something' } },
      additionalProperties: false,
    },
    returns: { type: 'string' },
  },
};

export default async function (ctx: Context, args: { input: string }) {
  // Call other skills through the same pipeline: await ctx.manager.invoke('other-skill', { … })
  return `{{name}} worked on ${args.input}`;
}
