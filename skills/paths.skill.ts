import path from 'node:path';
import { ctxTarget, type Context, configError } from 'agent-apps';

export const frontmatter = {
  name: 'paths',
  description: "Prepends search paths for the served tool's invocations, then re-resolves the tool (manager.refresh()).",
  metadata: {
    role: 'middleware',
    visibility: 'hidden',
    tags: ['meta-internal', 'meta-config'],
    params: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
    returns: {},
    // Its value is checked below, naming the file and key that set it (not validate-args's E_VALIDATION).
    'validate-args': false,
  },
};

export default async function paths(ctx: Context, value: unknown) {
  const target = ctxTarget(ctx);
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.some((p) => typeof p !== 'string')) {
    throw configError(ctx, `must be a path or a list of paths, got ${JSON.stringify(value)}`);
  }
  const config = target.locals.config;
  const added = list.map((p: string) => path.resolve(config.cwd, p)).filter((p: string) => !config.paths.includes(p));
  if (added.length) {
    config.paths = Object.freeze([...added, ...config.paths]) as string[];
    await target.manager.refresh();
  }
  return target.manager.next();
}
