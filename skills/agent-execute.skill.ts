import { AgentAppsError, ctxTarget, internals, type Context } from 'agent-apps';

export const frontmatter = {
  name: 'agent-execute',
  description: 'Runs the agent for prompt tools (Markdown skills): hands the expanded prompt, model config, allowed-tools and returns schema to the `agent` skill.',
  metadata: { role: 'middleware', visibility: 'hidden', tags: ['meta-internal'], params: { type: 'boolean' }, returns: {} },
};

export default async function agentExecute(ctx: Context) {
  const target = ctxTarget(ctx);
  const prompt = target.locals.prompt;
  if (prompt === undefined || internals.hasFunction(target)) return target.manager.next();
  const kernel = internals.kernel(ctx);
  if (!kernel.registry.has('agent', target.locals.config.paths)) {
    throw new AgentAppsError('E_MODEL', `no agent provider yet: '${target.run.tool.name}' is a prompt skill and needs the 'agent' skill`);
  }
  const result = await ctx.manager.invoke('agent', {
    prompt: prompt.expanded ?? prompt.raw,
    config: target.locals.config.model ?? {},
    ...(target.run.tool.allowedTools !== undefined ? { allowedTools: target.run.tool.allowedTools } : {}),
    ...(target.run.tool.returns !== undefined ? { returns: target.run.tool.returns } : {}),
  });
  target.manager.finish(result);
  return result;
}
