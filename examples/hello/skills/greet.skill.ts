// A code skill: frontmatter declares the name, description and the params schema that the CLI
// uses to coerce `--name Ada` and that validate-args enforces.
import type { Context } from 'agent-apps';

export const frontmatter = {
  name: 'greet',
  description: 'Greet someone by name.',
  metadata: {
    params: {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'Who to greet.' },
        excited: { type: 'boolean', default: false },
      },
      required: ['name'],
      additionalProperties: false,
    },
    returns: { type: 'string' },
  },
};

export default async function greet(_ctx: Context, args: { name: string; excited: boolean }) {
  return `Hello, ${args.name}${args.excited ? '!' : '.'}`;
}
