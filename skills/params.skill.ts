import { ctxTarget, type Context, type JsonObject } from 'agent-apps';

export const frontmatter = {
  name: 'params',
  description: "Copies the cascade's `params` JSON Schema into the served tool's declaration (run.tool.params).",
  metadata: { role: 'middleware', visibility: 'hidden', tags: ['meta-internal', 'meta-metadata'], params: { type: ['object', 'boolean'] }, returns: {} },
};

export default async function params(ctx: Context, schema: unknown) {
  const target = ctxTarget(ctx);
  if (schema !== undefined && schema !== null) target.run.tool.params = schema as JsonObject;
  return target.manager.next();
}
