import { ctxTarget, type Context, servedTool } from 'agent-apps';

export const frontmatter = {
  name: 'agent-execute',
  description: 'Runs the agent for prompt tools (Markdown skills): hands the expanded prompt, model config, allowed-tools and returns schema to the `agent` skill, and finishes with its result.',
  metadata: { role: 'middleware', visibility: 'hidden', tags: ['meta-internal'], params: { type: 'boolean' }, returns: {} },
};

export default async function agentExecute(ctx: Context, enabled: unknown) {
  const target = ctxTarget(ctx);
  const prompt = target.locals.prompt;
  // Code tools have already been run by `execute`; only prompt tools need the agent.
  if (enabled === false || prompt === undefined || servedTool(target).hasFunction) return target.manager.next();
  // The same spec validate-allowed-tools enforces: the skill's own, else the cascade's.
  const allowedTools = target.run.tool.allowedTools ?? (target.run.middleware['allowed-tools'] as string | undefined);
  // ask-tools (SPEC §17) is read the same way: the skill's own, else the cascade's.
  const askTools = target.run.tool.askTools ?? (target.run.middleware['ask-tools'] as string | undefined);
  const result = await ctx.manager.invoke('agent', {
    prompt: prompt.expanded ?? prompt.raw,
    config: target.locals.config.model ?? {},
    skillName: target.run.tool.name,
    ...(typeof allowedTools === 'string' ? { allowedTools } : {}),
    ...(typeof askTools === 'string' && askTools.trim() ? { askTools } : {}),
    ...(target.run.tool.returns !== undefined ? { returns: target.run.tool.returns } : {}),
  });
  target.manager.finish(result);
  return result;
}
