import path from 'node:path';
import { ctxTarget, type Context } from 'agent-apps';

export const frontmatter = {
  name: 'cwd',
  description: "Sets the served tool's working directory (locals.config.cwd), relative to the current one.",
  metadata: { role: 'middleware', visibility: 'hidden', tags: ['meta-internal', 'meta-config'], params: { type: 'string' }, returns: {} },
};

export default async function cwd(ctx: Context, dir: unknown) {
  const target = ctxTarget(ctx);
  if (typeof dir === 'string' && dir) target.locals.config.cwd = path.resolve(target.locals.config.cwd, dir);
  return target.manager.next();
}
