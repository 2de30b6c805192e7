import { ValidationError, ctxTarget, type Context, checkSchema } from 'agent-apps';

export const frontmatter = {
  name: 'validate-args',
  description: "Checks the served tool's args against its `params` JSON Schema and lists every violation.",
  metadata: { role: 'middleware', visibility: 'hidden', tags: ['meta-internal'], params: { type: 'boolean' }, returns: {} },
};

// Not an async function: it runs for every invocation, and one with nothing to check needs no
// async frame of its own (docs/serve.md, "Performance"). What throws still rejects.
export default function validateArgs(ctx: Context, enabled: unknown): Promise<unknown> {
  const target = ctxTarget(ctx);
  const schema = target.run.tool.params;
  // A tool that takes no args, called with none, needs no validator (nor ajv's load: the repl starts faster).
  if (enabled !== false && schema !== undefined && !(takesNoArgs(schema) && isEmpty(target.args))) return check(target, schema);
  return target.manager.next();
}

async function check(target: Context, schema: boolean | object): Promise<unknown> {
  const errors = await checkSchema(schema, target.args, untrusted(target));
  if (errors.length) throw new ValidationError(`invalid args for '${target.run.tool.name}'`, errors, 'args');
  return target.manager.next();
}

/** `{ type: 'object', properties: {}, additionalProperties: false }` and the like: no arg is accepted or needed. */
function takesNoArgs(schema: unknown): boolean {
  if (!schema || typeof schema !== 'object') return false;
  const s = schema as Record<string, unknown>;
  return s.type === 'object' && Object.keys(s).every((k) => k === 'type' || k === 'properties' || k === 'additionalProperties' || k === 'description') && Object.keys((s.properties as object | undefined) ?? {}).length === 0;
}

function isEmpty(args: unknown): boolean {
  return args === undefined || (typeof args === 'object' && args !== null && Object.keys(args).length === 0);
}

/**
 * A SKILL.md folder may come from anywhere (a downloaded collection): its params schema's patterns
 * run in linear time (docs/security.md, "What a cloned workspace can do"). MCP tools' schemas are
 * marked where the MCP client reads them.
 */
function untrusted(target: Context): { untrusted?: { code: 'E_CONFIG'; label: string } } {
  const uri = target.run.origin.uri;
  return uri?.startsWith('file://') && uri.endsWith('/SKILL.md') ? { untrusted: { code: 'E_CONFIG', label: `${decodeURIComponent(new URL(uri).pathname)} (params)` } } : {};
}
