// A plain code skill that the summarize agent calls from its sandboxed code.
import type { Context } from 'agent-apps';

export const frontmatter = {
  name: 'wordcount',
  description: 'Count the words in a text.',
  metadata: {
    params: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
    returns: { type: 'integer' },
  },
};

export default async function wordcount(_ctx: Context, args: { text: string }) {
  return args.text.split(/\s+/).filter(Boolean).length;
}
