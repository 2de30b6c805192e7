import { ctxTarget, middlewareKey, parseAllowedTools, type Context } from 'agent-apps';

export const frontmatter = {
  name: 'validate-allowed-tools',
  description: "Enforces the served tool's allowed-tools (picomatch globs, with arg constraints such as `schedule-create(ref=my-*)`) on every tool it invokes.",
  metadata: { role: 'middleware', visibility: 'hidden', tags: ['meta-internal'], params: { type: 'boolean' }, returns: {} },
};

// Not an async function (docs/serve.md, "Performance"): nothing here waits; what throws still rejects.
export default function validateAllowedTools(ctx: Context, enabled: unknown): Promise<unknown> {
  const target = ctxTarget(ctx);
  // A cascaded allowed-tools (a project main, --set) restricts the project's skills, not the
  // runtime's own machinery (the agent, its provider, callback refs: tagged meta-internal).
  const internal = target.run.tool.tags.includes('meta-internal');
  const spec = target.run.tool.allowedTools ?? (internal ? undefined : (middlewareKey(target, 'allowed-tools') as string | undefined));
  if (enabled !== false && typeof spec === 'string') {
    parseAllowedTools(spec); // a malformed spec is E_CONFIG before anything runs
    // Per invocation: locals.internals does not propagate to the tools this one invokes.
    target.locals.internals = { ...target.locals.internals, allowedTools: spec };
  }
  return target.manager.next();
}
