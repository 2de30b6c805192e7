import { AgentAppsError, isPathRef, type Context, kernelOf } from 'agent-apps';
import { agentFilter, scrub } from 'agent-apps/agent';

export const frontmatter = {
  name: 'skill-describe',
  description: "Describes one skill: its declaration (description, params, returns), origin, resolved metadata and middleware chain.",
  metadata: {
    tags: ['discovery'],
    params: { type: 'object', properties: { name: { type: 'string', 'x-ref': true } }, required: ['name'], additionalProperties: false },
    returns: { type: 'object' },
  },
};

export default async function skillDescribe(ctx: Context, args: { name: string }) {
  const kernel = kernelOf(ctx);
  // Called by agent code: only what the agent's discovery would show it (docs/agents.md).
  const callable = agentFilter(ctx);
  if (callable) {
    // The bridge checked this already (docs/security.md); a ref from agent code is never resolved as a path or URI.
    if (isPathRef(args.name)) throw new AgentAppsError('E_UNTRUSTED_REF', `agent code may only name tools by name; ${JSON.stringify(args.name.slice(0, 80))} is a path or URI`);
    const tool = await kernel.resolve(args.name, ctx.locals.config.paths, ctx.locals.config.cwd);
    if (!callable(tool.name, tool.decl.visibility === 'hidden')) throw new AgentAppsError('E_ALLOWED_TOOLS', `'${args.name}' is not available to this agent (allowed-tools, hidden, or the agent itself)`);
  }
  const described = await kernel.describe(args.name, ctx.locals.config.paths, ctx.locals.config.cwd);
  // Agent code never reads config secrets (docs/security.md): the cascade's values are redacted for it.
  return callable ? scrub(described, 'describe') : described;
}
