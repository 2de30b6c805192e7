import { ConfigurationError, ctxTarget, type Context } from 'agent-apps';

export const frontmatter = {
  name: 'observe',
  description: 'Hook: reports every invocation — { phase: enter | exit | error, tool, args, result, contextId } — to a callback ref (`observe: { ref }`) or a topic (`observe: { topic }`).',
  metadata: {
    $hook: { $self: '$invoke' },
    role: 'middleware',
    visibility: 'hidden',
    tags: ['meta-internal', 'observability'],
    params: {},
    returns: {},
  },
};

type Config = { topic?: string; ref?: string; args?: object } | boolean | string;

export default async function observe(ctx: Context) {
  const target = ctxTarget(ctx);
  const hook = ctx.locals.hook as { config: Config };
  const config = hook.config;
  if (config === false) return target.manager.next();
  const c = typeof config === 'string' ? { topic: config } : config === true ? { topic: 'observe' } : config;
  if (!c.topic && !c.ref) throw new ConfigurationError('observe needs a topic or a ref: observe: { topic: NAME } or observe: { ref: SKILL }');
  const base = { tool: target.run.tool.name, args: target.args, contextId: target.envelope.id };
  // The observer's own invocations must not be observed (or hooked) again.
  const quiet = { $context: { nonlocals: { debug: false } } };
  // Hooks observe, they do not gate: an observer that fails is logged, and the observed call goes on.
  const report = async (data: Record<string, unknown>) => {
    try {
      if (c.ref) await ctx.manager.invoke(c.ref, { ...(c.args ?? {}), ...data, ...quiet });
      else await ctx.manager.invoke('event-emit', { topic: c.topic!, type: `observe-${data.phase}`, data, source: 'observe', ...quiet });
    } catch (err) {
      ctx.manager.log({ type: 'observe-failed', tag: 'observability', level: 'error', code: (err as { code?: string })?.code, tool: target.run.tool.name, contextId: target.envelope.id, text: `observe ${c.ref ? `ref '${c.ref}'` : `topic '${c.topic}'`} failed on ${String(data.phase)}: ${(err as Error)?.message ?? err}` });
    }
  };
  await report({ phase: 'enter', ...base });
  let result: unknown;
  try {
    result = await target.manager.next();
  } catch (err) {
    await report({ phase: 'error', ...base, error: { message: (err as Error)?.message ?? String(err), code: (err as { code?: string })?.code } });
    throw err;
  }
  await report({ phase: 'exit', ...base, result });
  return undefined;
}
