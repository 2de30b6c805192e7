import { ctxTarget, type Context, servedTool } from 'agent-apps';

export const frontmatter = {
  name: 'execute',
  description: "Runs the served tool's own function and finishes the chain with its result; passes through for tools without one.",
  metadata: { role: 'middleware', visibility: 'hidden', tags: ['meta-internal'], params: { type: 'boolean' }, returns: {} },
};

// Not an async function (docs/serve.md, "Performance"): it runs for every invocation of a code
// skill; the same steps in the same order, with `then`. What throws still rejects.
export default function execute(ctx: Context): Promise<unknown> {
  const target = ctxTarget(ctx);
  const served = servedTool(target);
  if (!served.hasFunction) return target.manager.next();
  return served.run().then(
    (value) => ran(target, value),
    (err: unknown) => failed(target, err),
  );
}

function ran(target: Context, value: unknown): unknown {
  // Returning undefined does not clobber a result the tool set itself (ctx.manager.finish).
  const result = value === undefined ? target.locals.result : value;
  // A tool that ran an agent as itself — the `agent` skill invoked directly — has its trace on
  // locals.agent: the entries after $agent (docs/ci.md: `session`) run now. Other tools never get there.
  if (target.locals.agent !== undefined) {
    target.locals.result = result;
    return target.manager.next().then((after) => target.manager.finish(after));
  }
  target.manager.finish(result);
  return value;
}

async function failed(target: Context, err: unknown): Promise<never> {
  // The `agent` skill invoked directly (a sub-agent): the $agent phase sees its failure too.
  if (target.locals.agent !== undefined) {
    target.locals.error = err;
    // The agent's error is the one the caller gets, whatever an entry after $agent throws.
    await target.manager.next().catch(() => undefined);
  }
  throw err;
}
