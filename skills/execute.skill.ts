import { ctxTarget, type Context, servedTool } from 'agent-apps';

export const frontmatter = {
  name: 'execute',
  description: "Runs the served tool's own function and finishes the chain with its result; passes through for tools without one.",
  metadata: { role: 'middleware', visibility: 'hidden', tags: ['meta-internal'], params: { type: 'boolean' }, returns: {} },
};

export default async function execute(ctx: Context) {
  const target = ctxTarget(ctx);
  if (!servedTool(target).hasFunction) return target.manager.next();
  const value = await servedTool(target).run();
  // Returning undefined does not clobber a result the tool set itself (ctx.manager.finish).
  target.manager.finish(value === undefined ? target.locals.result : value);
  return value;
}
