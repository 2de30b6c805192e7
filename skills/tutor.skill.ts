import { AgentAppsError, type Context, terminalOf } from 'agent-apps';

export const frontmatter = {
  name: 'tutor',
  description: 'A guided tour in your own workspace: writes and runs a code skill, a middleware in main.md, an agent skill from a cassette, and debugs it — checking each step. Run it again to resume. Needs a terminal.',
  metadata: {
    tags: ['interactive'],
    params: { type: 'object', properties: { restart: { type: 'boolean', default: false, description: 'Start again from the first step.' } }, additionalProperties: false },
    returns: { description: 'Nothing: the tour is drawn on the terminal, stdout stays empty.' },
  },
};

/**
 * The ink tutor (src/surfaces/tui/tutor.ts, docs/terminal.md): its steps write under skills/tutor/, its progress
 * is kept in .agent-apps/tutor.json. It draws on stderr and returns nothing for stdout.
 */
export default async function tutor(ctx: Context, args: { restart: boolean }): Promise<undefined> {
  if (!ctx.run.interactive) {
    throw new AgentAppsError('E_NOT_INTERACTIVE', 'tutor needs an interactive terminal (stdin and stdout must be a TTY): run `agent-apps tutor` in a terminal');
  }
  const { tui, screen, owned } = await terminalOf(ctx);
  try {
    await tui.runTutor(ctx, { screen, restart: args.restart });
  } finally {
    if (owned) await screen.close();
  }
  return undefined;
}
