import { AgentAppsError, ctxTarget, type Context, configError } from 'agent-apps';

export const frontmatter = {
  name: 'trust',
  description:
    "`trust: ask | deny | allow` (default allow) on a skill, a folder's main or an MCP server entry: every call of the tool from agent code waits on a person's approval (ask) or is refused (deny). The bridge enforces it before the call; this middleware checks the value and that a call from agent code came through the bridge.",
  metadata: {
    role: 'middleware',
    visibility: 'hidden',
    // meta-trust: agent code may never add or override it through `$context` (src/agent/bridge.ts).
    tags: ['meta-internal', 'meta-metadata', 'meta-trust'],
    params: { type: 'string', enum: ['allow', 'ask', 'deny'] },
    returns: {},
    // Its value is checked below, naming the file and key that set it (not validate-args's E_VALIDATION).
    'validate-args': false,
  },
};

export default async function trust(ctx: Context, value: unknown) {
  const target = ctxTarget(ctx);
  if (value !== 'allow' && value !== 'ask' && value !== 'deny') throw configError(ctx, `must be ask, deny or allow, got ${JSON.stringify(value)}`);
  // Called straight from agent code: the bridge applied this trust (refused, or opened the gate)
  // and marked the call. A call without the mark did not come through the bridge: refused.
  const caller = target.envelope.parent;
  if (value !== 'allow' && caller?.locals.internals?.untrustedRef === true && target.locals.internals?.gated !== true) {
    throw new AgentAppsError('E_ALLOWED_TOOLS', `'${target.run.tool.name}' has trust: ${value}; agent code reaches it only through the bridge's approval gate`);
  }
  return target.manager.next();
}
