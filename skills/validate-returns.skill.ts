import { ValidationError, ctxTarget, type Context, checkSchema } from 'agent-apps';

export const frontmatter = {
  name: 'validate-returns',
  description: "Wraps the rest of the chain and checks the served tool's result against its `returns` JSON Schema on the way up.",
  metadata: { role: 'middleware', visibility: 'hidden', tags: ['meta-internal'], params: { type: 'boolean' }, returns: {} },
};

// Not an async function: it runs for every invocation, and a skill with no returns schema needs
// no async frame of its own (docs/serve.md, "Performance"). What throws still rejects.
export default function validateReturns(ctx: Context, enabled: unknown): Promise<undefined> {
  const target = ctxTarget(ctx);
  return target.manager.next().then((result) => {
    const schema = target.run.tool.returns;
    if (enabled !== false && schema !== undefined && !target.run.signal.aborted) return check(target, schema, result);
    return undefined;
  });
}

async function check(target: Context, schema: boolean | object, result: unknown): Promise<undefined> {
  const errors = await checkSchema(schema, result === undefined ? null : result, untrusted(target));
  if (errors.length) throw new ValidationError(`result of '${target.run.tool.name}' does not match its returns schema`, errors, 'returns');
  return undefined;
}

/**
 * A SKILL.md folder may come from anywhere (a downloaded collection): its returns schema's patterns
 * run in linear time (docs/security.md, "What a cloned workspace can do"). MCP tools' schemas are
 * marked where the MCP client reads them.
 */
function untrusted(target: Context): { untrusted?: { code: 'E_CONFIG'; label: string } } {
  const uri = target.run.origin.uri;
  return uri?.startsWith('file://') && uri.endsWith('/SKILL.md') ? { untrusted: { code: 'E_CONFIG', label: `${decodeURIComponent(new URL(uri).pathname)} (returns)` } } : {};
}
