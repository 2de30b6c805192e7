import path from 'node:path';
import { ctxTarget, type Context, configError } from 'agent-apps';

export const frontmatter = {
  name: 'cwd',
  description: "Sets the served tool's working directory (locals.config.cwd), relative to the current one.",
  // Its value is checked below, naming the file and key that set it (not validate-args's E_VALIDATION).
  metadata: { role: 'middleware', visibility: 'hidden', tags: ['meta-internal', 'meta-config'], params: { type: 'string' }, returns: {}, 'validate-args': false },
};

export default async function cwd(ctx: Context, dir: unknown) {
  const target = ctxTarget(ctx);
  if (typeof dir !== 'string') throw configError(ctx, `must be a directory (a path), got ${JSON.stringify(dir)}`);
  if (dir) target.locals.config.cwd = path.resolve(target.locals.config.cwd, dir);
  return target.manager.next();
}
