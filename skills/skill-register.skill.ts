import { type Context, kernelOf, AgentAppsError } from 'agent-apps';

// Registers a skill for the lifetime of this runtime (docs/concepts.md, programmatic tools): a
// Markdown `body` (an agent prompt, run by agent-execute as any Markdown skill), or an alias of
// another skill `ref`. It is listed with kind `registered`. `ref` is declared x-ref: an untrusted
// caller (agent code, a surface) may alias only a tool it could call by name, never a path or an
// inline:// URI (src/policy/untrusted.ts); as a built-in it is callable there only when named in
// the caller's allow-list.
export const frontmatter = {
  name: 'skill-register',
  description: 'Registers a skill for the lifetime of this runtime: a Markdown `body` (an agent prompt) or an alias of the skill `ref`, with optional `params` (JSON Schema).',
  metadata: {
    tags: ['discovery'],
    params: {
      type: 'object',
      properties: {
        name: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,63}$' },
        description: { type: 'string', minLength: 1 },
        body: { type: 'string', minLength: 1 },
        ref: { type: 'string', 'x-ref': true },
        params: { type: 'object' },
      },
      required: ['name', 'description'],
      additionalProperties: false,
    },
    returns: { type: 'object' },
  },
};

// Metadata keys skills commonly carry (docs/writing-skills.md), which a registered skill of that
// name would turn into a chain entry wherever they appear.
const RESERVED = new Set(['tags', 'visibility', 'returns', 'description', 'version', 'author', 'license', 'schedule', 'gateways', 'events', 'hooks', 'ask-tools', 'allowed-tools', 'user-invocable', 'disable-model-invocation']);

interface Args {
  name: string;
  description: string;
  body?: string;
  ref?: string;
  params?: Record<string, unknown>;
}

export default async function skillRegister(ctx: Context, args: Args) {
  if ((args.body === undefined) === (args.ref === undefined)) throw new AgentAppsError('E_USAGE', 'skill-register: give a body (a Markdown prompt) or a ref (the skill it aliases), one of them');
  const kernel = kernelOf(ctx);
  const { paths, cwd } = ctx.locals.config;
  // A registered name is looked up before the search paths, and a metadata key that names a tool
  // becomes middleware (docs/middleware.md): so a name that already names a skill, or that the
  // cascade holds as a key (tags, visibility …), could hijack another skill's pipeline. Refused.
  const existing = await kernel.resolve(args.name, paths, cwd).catch(() => undefined);
  if (existing && existing.kind !== 'registered') throw new AgentAppsError('E_USAGE', `skill-register: '${args.name}' already names a skill (${existing.kind}); registered skills take new names`);
  if (RESERVED.has(args.name) || Object.hasOwn(ctx.run.middleware, args.name)) throw new AgentAppsError('E_USAGE', `skill-register: '${args.name}' is a metadata key: as a skill it would become middleware`);
  // A bad ref fails now, not at the first call of the alias.
  const target = args.ref !== undefined ? await kernel.resolve(args.ref, paths, cwd) : undefined;
  if (target?.name === args.name) throw new AgentAppsError('E_USAGE', `skill-register: '${args.name}' cannot alias itself`);
  const ref = args.ref;
  const params = args.params ?? (target ? target.decl.params : undefined);
  const metadata: Record<string, unknown> = { tags: ['registered'] };
  if (params !== undefined) metadata.params = params;
  kernel.registry.register(
    {
      name: args.name,
      frontmatter: { name: args.name, description: args.description, metadata },
      ...(args.body !== undefined ? { prompt: args.body } : {}),
      // The alias calls its target from its own context: the target's pipeline runs as for any call.
      ...(ref !== undefined ? { fn: (c: Context, a: unknown) => c.manager.invoke(ref, a) } : {}),
    },
    'registered',
  );
  return { registered: args.name, kind: 'registered', ...(ref !== undefined ? { ref } : { body: true }) };
}
