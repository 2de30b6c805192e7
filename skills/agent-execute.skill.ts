import { ctxTarget, middlewareKey, servedTool, type Context } from 'agent-apps';

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
  const allowedTools = target.run.tool.allowedTools ?? (middlewareKey(target, 'allowed-tools') as string | undefined);
  // ask-tools (docs/agents.md) is read the same way: the skill's own, else the cascade's.
  const askTools = target.run.tool.askTools ?? (middlewareKey(target, 'ask-tools') as string | undefined);
  let result: unknown;
  try {
    result = await ctx.manager.invoke('agent', {
      prompt: prompt.expanded ?? prompt.raw,
      config: target.locals.config.model ?? {},
      skillName: target.run.tool.name,
      ...(typeof allowedTools === 'string' ? { allowedTools } : {}),
      ...(typeof askTools === 'string' && askTools.trim() ? { askTools } : {}),
      ...(target.run.tool.returns !== undefined ? { returns: target.run.tool.returns } : {}),
    });
  } catch (err) {
    // The $agent phase sees a failed run too (its error on locals.error), then the error goes on up.
    target.locals.error = err;
    // The agent's error is the one the caller gets, whatever an entry after $agent throws.
    await target.manager.next().catch(() => undefined);
    throw err;
  }
  // The $agent phase (docs/ci.md): the entries after the agent — `session` — run now, with the
  // trace on locals.agent and the answer on locals.result; what they leave there is the result.
  target.locals.result = result;
  return target.manager.finish(await target.manager.next());
}
