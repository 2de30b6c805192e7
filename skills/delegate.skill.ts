import { ConfigurationError, ctxTarget, type Context } from 'agent-apps';

export const frontmatter = {
  name: 'delegate',
  description: "Invokes another tool with the served tool's args (or the given ones) and finishes with its result.",
  metadata: {
    role: 'middleware',
    visibility: 'hidden',
    tags: ['meta-internal'],
    params: { anyOf: [{ type: 'string', 'x-ref': true }, { type: 'object', properties: { ref: { type: 'string', 'x-ref': true }, args: {} }, required: ['ref'] }] },
    returns: {},
  },
};

export default async function delegate(ctx: Context, value: unknown) {
  const target = ctxTarget(ctx);
  let ref: string;
  let args: unknown = target.args;
  if (typeof value === 'string') ref = value;
  else if (value && typeof value === 'object' && typeof (value as { ref?: unknown }).ref === 'string') {
    ref = (value as { ref: string }).ref;
    if ((value as { args?: unknown }).args !== undefined) args = (value as { args: unknown }).args;
  } else throw new ConfigurationError(`delegate: expected a ref or { ref, args }, got ${JSON.stringify(value)}`);
  const result = await target.manager.invoke(ref, args);
  target.manager.finish(result);
  return result;
}
