// createCallbackRef (docs/agents.md): an ephemeral programmatic tool with a generated name, so that a
// function can be handed across a serializable boundary (the agent provider) as a plain ref.
import { randomId } from '../core/ids.ts';
import type { Context, ToolFn } from '../core/types.ts';

export interface CallbackRef {
  ref: string;
  release(): void;
}

export function createCallbackRef(ctx: Context, prefix: string, fn: ToolFn, description = 'callback ref'): CallbackRef {
  const kernel = ctx.globals.internals.kernel;
  const ref = `${prefix}-${randomId().slice(0, 8)}`;
  // Hidden, and outside every cascade: the default pipeline still runs around it.
  kernel.registry.register({ name: ref, frontmatter: { name: ref, description, metadata: { visibility: 'hidden', tags: ['meta-internal', 'callback'] } }, fn }, 'programmatic', { ephemeral: true });
  return { ref, release: () => kernel.registry.unregister(ref, { ephemeral: true }) };
}
