import { ValidationError, ctxTarget, internals, type Context } from 'agent-apps';

export const frontmatter = {
  name: 'validate-args',
  description: "Checks the served tool's args against its `params` JSON Schema and lists every violation.",
  metadata: { role: 'middleware', visibility: 'hidden', tags: ['meta-internal'], params: { type: 'boolean' }, returns: {} },
};

export default async function validateArgs(ctx: Context, enabled: unknown) {
  const target = ctxTarget(ctx);
  const schema = target.run.tool.params;
  if (enabled !== false && schema !== undefined) {
    const errors = await internals.check(schema, target.args);
    if (errors.length) throw new ValidationError(`invalid args for '${target.run.tool.name}'`, errors, 'args');
  }
  return target.manager.next();
}
