import { type Context } from 'agent-apps';

export const frontmatter = {
  name: 'ask',
  description:
    "Asks the person running agent-apps a question and returns their answer: one of `choices`, or the text they type when there are none. Fails with E_NOT_INTERACTIVE when nobody can answer (no terminal). Hidden: name it in an agent's allowed-tools to let its code ask.",
  metadata: {
    visibility: 'hidden',
    params: {
      type: 'object',
      properties: {
        question: { type: 'string', minLength: 1, maxLength: 4000, description: 'The question, one or a few lines.' },
        choices: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 200 }, maxItems: 20, uniqueItems: true, description: 'The answers to choose from; leave out for free text.' },
      },
      required: ['question'],
      additionalProperties: false,
    },
    returns: { type: 'string' },
  },
};

export default async function ask(ctx: Context, args: { question: string; choices?: string[] }) {
  return ctx.manager.ask(args.question, args.choices?.length ? { choices: args.choices } : {});
}
