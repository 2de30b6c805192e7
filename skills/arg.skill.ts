import { ctxTarget, type Context } from 'agent-apps';

export const frontmatter = {
  name: 'arg',
  description: "Directive `:arg{name=X}`: replaces itself with the invocation's arg X as text.",
  metadata: {
    role: 'middleware',
    visibility: 'hidden',
    tags: ['directive'],
    params: { type: 'object', properties: { name: { type: 'string' }, directive: { type: 'object' } }, required: ['name'] },
    returns: {},
  },
};

export default async function arg(ctx: Context, args: { name?: string; directive?: { index: number } }) {
  const target = ctxTarget(ctx);
  const value = args?.name !== undefined && target.args && typeof target.args === 'object' ? (target.args as Record<string, unknown>)[args.name] : undefined;
  const text = value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  const prompt = target.locals.prompt;
  if (prompt && args?.directive) (prompt.replacements ??= {})[args.directive.index] = text;
  return target.manager.next();
}
