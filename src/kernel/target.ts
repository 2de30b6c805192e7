// ctxTarget (docs/concepts.md): the served context of a middleware, with a guard.
import { AgentAppsError } from '../core/errors.ts';
import type { Context, Frontmatter, ToolDef, ToolFn } from '../core/types.ts';

export function ctxTarget(ctx: Context): Context {
  const target = ctx.envelope.target;
  if (target === ctx) {
    throw new AgentAppsError('E_NOT_MIDDLEWARE', `'${ctx.run.tool.name}' was not invoked as middleware: it has no other target`);
  }
  return target;
}

/** A typed ToolDef for code skills and `runtime.register`. */
export function defineSkill<A = any>(frontmatter: Frontmatter, fn: (ctx: Context, args: A) => unknown): ToolDef {
  return { name: frontmatter.name, frontmatter, fn: fn as ToolFn };
}
