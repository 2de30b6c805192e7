import { AgentAppsError, type Context, type LogInput } from 'agent-apps';

export const frontmatter = {
  name: 'context-manager',
  description: "Programmatic access to the calling context's manager: get, set, finish, abort, log, tail, configure.",
  metadata: {
    visibility: 'hidden',
    tags: ['meta-internal'],
    params: {
      type: 'object',
      properties: {
        op: { type: 'string', enum: ['get', 'set', 'finish', 'abort', 'log', 'tail', 'configure'] },
        path: { type: 'string' },
        value: {},
        event: {},
        reason: {},
        options: { type: 'object' },
      },
      required: ['op'],
      additionalProperties: false,
    },
    returns: {},
  },
};

export default function contextManager(ctx: Context, args: { op: string; path?: string; value?: unknown; event?: unknown; reason?: unknown; options?: Record<string, unknown> }) {
  const caller = ctx.envelope.parent;
  if (!caller) throw new AgentAppsError('E_CONTEXT', 'context-manager needs a calling context');
  const m = caller.manager;
  switch (args.op) {
    case 'get':
      return m.get(args.path ?? '') ?? null;
    case 'set':
      if (!args.path) throw new AgentAppsError('E_VALIDATION', 'context-manager set needs a path');
      m.set(args.path, args.value);
      return null;
    case 'finish':
      m.finish(args.value);
      return null;
    case 'abort':
      m.abort(args.reason);
      return null;
    case 'log':
      m.log((args.event ?? args.value) as string | LogInput);
      return null;
    case 'tail':
      return m.tail(args.options);
    case 'configure':
      return m.configure(args.options);
    default:
      throw new AgentAppsError('E_VALIDATION', `context-manager: unknown op '${args.op}'`);
  }
}
