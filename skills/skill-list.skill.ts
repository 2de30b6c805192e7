import { type Context, kernelOf } from 'agent-apps';
import { agentFilter } from 'agent-apps/agent';

export const frontmatter = {
  name: 'skill-list',
  description: 'Lists the skills on the search paths: name, kind, description, origin (hidden ones with all: true).',
  metadata: {
    tags: ['discovery'],
    params: {
      type: 'object',
      properties: { all: { type: 'boolean', default: false }, tag: { type: 'string' }, query: { type: 'string', description: 'Substring to match in name or description.' } },
      additionalProperties: false,
    },
    returns: { type: 'array', items: { type: 'object' } },
  },
};

export default async function skillList(ctx: Context, args: { all: boolean; tag?: string; query?: string }) {
  const kernel = kernelOf(ctx);
  // Called by agent code: the same filter as the agent's discovery (docs/agents.md, resolveVisibleTools),
  // so the agent is shown what it may call — not hidden tools, itself, or the agent and provider.
  // Names it may not call are filtered before loading: never imported (docs/security.md).
  const callable = agentFilter(ctx);
  let list = await kernel.registry.list(ctx.locals.config.paths, { all: args.all, ...(callable ? { only: (name: string) => callable(name, false) } : {}) });
  if (callable) list = list.filter((s) => callable(s.name, s.visibility === 'hidden'));
  if (args.query) {
    const q = args.query.toLowerCase();
    list = list.filter((s) => s.name.includes(q) || (s.description ?? '').toLowerCase().includes(q));
  }
  if (args.tag) {
    const out = [];
    for (const s of list) {
      try {
        const d = await kernel.describe(s.name, ctx.locals.config.paths, ctx.locals.config.cwd);
        if (d.tool.tags.includes(args.tag)) out.push(s);
      } catch {}
    }
    list = out;
  }
  return list;
}
