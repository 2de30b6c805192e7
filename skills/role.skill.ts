import { ConfigurationError, ctxTarget, type Context } from 'agent-apps';

export const frontmatter = {
  name: 'role',
  description: "Copies the cascade's `role` (skill | middleware) into the served tool's declaration.",
  metadata: { role: 'middleware', visibility: 'hidden', tags: ['meta-internal', 'meta-metadata'], params: { type: 'string', enum: ['skill', 'middleware'] }, returns: {} },
};

export default async function role(ctx: Context, value: unknown) {
  const target = ctxTarget(ctx);
  if (value !== 'skill' && value !== 'middleware') throw new ConfigurationError(`role must be skill or middleware, got ${JSON.stringify(value)}`);
  target.run.tool.role = value;
  return target.manager.next();
}
