import { ctxTarget, type Context, servedTool } from 'agent-apps';

export const frontmatter = {
  name: 'execute',
  description: "Runs the served tool's own function and finishes the chain with its result; passes through for tools without one.",
  metadata: { role: 'middleware', visibility: 'hidden', tags: ['meta-internal'], params: { type: 'boolean' }, returns: {} },
};

export default async function execute(ctx: Context) {
  const target = ctxTarget(ctx);
  if (!servedTool(target).hasFunction) return target.manager.next();
  let value: unknown;
  try {
    value = await servedTool(target).run();
  } catch (err) {
    // The `agent` skill invoked directly (a sub-agent): the $agent phase sees its failure too.
    if (target.locals.agent !== undefined) {
      target.locals.error = err;
      // The agent's error is the one the caller gets, whatever an entry after $agent throws.
      await target.manager.next().catch(() => undefined);
    }
    throw err;
  }
  // Returning undefined does not clobber a result the tool set itself (ctx.manager.finish).
  const result = value === undefined ? target.locals.result : value;
  // A tool that ran an agent as itself — the `agent` skill invoked directly — has its trace on
  // locals.agent: the entries after $agent (docs/ci.md: `session`) run now. Other tools never get there.
  if (target.locals.agent !== undefined) {
    target.locals.result = result;
    return target.manager.finish(await target.manager.next());
  }
  target.manager.finish(result);
  return value;
}
