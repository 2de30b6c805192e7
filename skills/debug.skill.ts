import readline from 'node:readline';
import { ctxTarget, serializeContext, type Context } from 'agent-apps';

export const frontmatter = {
  name: 'debug',
  description: 'Hook: logs pipeline-enter / pipeline-exit around every pipeline and next-enter / next-exit around every chain entry (tag debug, with tool, entry, depth, duration); `break` pauses at matching tools or entries (in a terminal: continue, step, inspect).',
  metadata: {
    $hook: { $self: ['$invoke', '$next'] },
    role: 'middleware',
    visibility: 'hidden',
    tags: ['meta-internal', 'observability'],
    params: {},
    returns: {},
  },
};

interface HookInfo {
  trigger: '$invoke' | '$next';
  entry?: string;
  config: unknown;
  tool: string;
}

export default async function debug(ctx: Context) {
  const target = ctxTarget(ctx);
  const hook = ctx.locals.hook as HookInfo;
  if (hook.config === false) return target.manager.next();
  const depth = target.locals.history.length - 1; // 0 for what the runtime root invoked
  const base = { tag: 'debug', level: 'info' as const, tool: target.run.tool.name, contextId: target.envelope.id, depth };
  const started = performance.now();
  const kind = hook.trigger === '$invoke' ? 'pipeline' : 'next';
  const entry = hook.entry;
  const internals = ctx.globals.internals;
  if (internals.debugStep === true || matchesBreak(hook.config, target.run.tool.name, entry)) {
    internals.debugStep = false;
    ctx.manager.log({ ...base, type: 'breakpoint-hit', entry, text: `breakpoint at ${target.run.tool.name}${entry ? ` › ${entry}` : ''}` });
    await pause(ctx, target, `${target.run.tool.name}${entry ? ` › ${entry}` : ''}`);
  }
  ctx.manager.log({ ...base, type: `${kind}-enter`, entry });
  let error: unknown;
  try {
    await target.manager.next();
  } catch (err) {
    error = err;
    throw err;
  } finally {
    const duration = Math.round((performance.now() - started) * 1000) / 1000;
    ctx.manager.log({ ...base, type: `${kind}-exit`, entry, duration, ...(error ? { error: (error as Error).message ?? String(error), code: (error as { code?: string }).code } : {}) });
  }
  return undefined;
}

function matchesBreak(config: unknown, tool: string, entry: string | undefined): boolean {
  if (!config || typeof config !== 'object') return false;
  const b = (config as { break?: unknown }).break;
  const list = typeof b === 'string' ? [b] : Array.isArray(b) ? b : [];
  // A tool breaks once, at its pipeline's start; an entry name breaks at every $next of it.
  return list.some((name) => (entry === undefined ? name === tool : name === entry));
}

/**
 * Interactive runs (a terminal on stdin and stdout) stop here: Enter or `c` continues, `s` steps to
 * the next pipeline or chain entry, `i` prints the served context (serializeContext, 3 levels) —
 * in the terminal UI's view when the CLI put one on `internals.breakpoint`, else as a readline
 * question. Otherwise the breakpoint is only logged and the run goes on.
 */
async function pause(ctx: Context, target: Context, where: string): Promise<void> {
  if (ctx.globals.internals.interactive !== true) return;
  // A terminal UI (the CLI's, src/surfaces/tui/debug-view.ts) draws the pipeline tree and reads the keys.
  const view = ctx.globals.internals.breakpoint;
  if (typeof view === 'function') {
    const how = await view({ where, events: ctx.manager.tail({ tag: 'debug' }), inspect: () => serializeContext(target, { depth: 3 }) }, ctx.run.signal);
    if (how === 'step') ctx.globals.internals.debugStep = true;
    return;
  }
  for (;;) {
    const answer = (await ask(ctx, `⏸ breakpoint at ${where} — [c]ontinue, [s]tep, [i]nspect: `)).trim().toLowerCase();
    if (answer === 'i' || answer === 'inspect') {
      process.stderr.write(`${JSON.stringify(serializeContext(target, { depth: 3 }), null, 2)}\n`);
      continue;
    }
    if (answer === 's' || answer === 'step') ctx.globals.internals.debugStep = true;
    return;
  }
}

function ask(ctx: Context, question: string): Promise<string> {
  if (ctx.run.signal.aborted) return Promise.resolve('c');
  return new Promise((resolve) => {
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
    const onAbort = () => {
      rl.close();
      resolve('c');
    };
    ctx.run.signal.addEventListener('abort', onAbort, { once: true });
    rl.question(question, (answer) => {
      ctx.run.signal.removeEventListener('abort', onAbort);
      rl.close();
      resolve(answer);
    });
  });
}

declare module 'agent-apps' {
  interface RuntimeState {
    /** `s` at a breakpoint: pause again at the next chain entry. */
    debugStep?: boolean;
  }
}
