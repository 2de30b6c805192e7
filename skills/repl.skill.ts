import { AgentAppsError, type Context, terminalOf } from 'agent-apps';

export const frontmatter = {
  name: 'repl',
  description: 'An interactive prompt: type `SKILL --name value …` to run skills through the pipeline; Tab completes, ↑ ↓ walk the history, :help lists the commands. Needs a terminal.',
  metadata: {
    tags: ['interactive'],
    params: { type: 'object', properties: {}, additionalProperties: false },
    returns: { description: 'Nothing: results are drawn on the terminal, stdout stays empty.' },
  },
};

/**
 * The ink repl (src/surfaces/tui/repl.ts, docs/terminal.md). It draws on stderr and returns nothing, so leaving it
 * (Ctrl-D, Ctrl-C twice on an empty line, :quit) prints nothing on stdout. It takes no args: with
 * no params to check, its own start does not load ajv, which keeps the prompt ready sooner.
 */
export default async function repl(ctx: Context): Promise<undefined> {
  if (!ctx.run.interactive) {
    throw new AgentAppsError('E_NOT_INTERACTIVE', 'repl needs an interactive terminal (stdin and stdout must be a TTY): run `agent-apps repl` in a terminal');
  }
  const { tui, screen, cliOptions, owned } = await terminalOf(ctx);
  try {
    await tui.runRepl(ctx, { screen, ...(cliOptions ? { cliOptions } : {}) });
  } finally {
    if (owned) await screen.close();
  }
  return undefined;
}
