import readline from 'node:readline';
import { AgentAppsError, internals, type Context } from 'agent-apps';

export const frontmatter = {
  name: 'tutor',
  description: 'A short interactive tour of agent-apps in your own workspace: skills, the pipeline, the cascade, agents. Needs a terminal.',
  metadata: {
    tags: ['interactive'],
    params: { type: 'object', properties: { lesson: { type: 'integer', minimum: 1, default: 1, description: 'Start at this lesson.' } }, additionalProperties: false },
    returns: { type: 'object', properties: { completed: { type: 'integer' } } },
  },
};

interface Lesson {
  title: string;
  text: string;
  show?: (ctx: Context) => Promise<string>;
}

const LESSONS: Lesson[] = [
  {
    title: 'Skills',
    text: 'A skill is a Markdown prompt (NAME.md, run by an agent) or a code module (NAME.skill.ts) on a search path.\nThese are the skills this workspace can run:',
    show: async (ctx) => (await internals.kernel(ctx).list(ctx.locals.config.paths)).map((s) => `  ${s.name.padEnd(18)} ${s.kind.padEnd(9)} ${s.description ?? ''}`).join('\n'),
  },
  {
    title: 'The pipeline',
    text: 'Every call — from the terminal, another skill or an agent — runs through a chain of middleware, which are skills too.\nThis is the chain of `file-read`, in order:',
    show: async (ctx) => (await internals.kernel(ctx).describe('file-read', ctx.locals.config.paths, ctx.locals.config.cwd)).chain.map((e, i) => `  ${i + 1}. ${e.name}`).join('\n'),
  },
  {
    title: 'The cascade',
    text: 'Metadata flows down from the library\'s main, through your skills/main.md and folder mains, to each skill, then --set.\nAny key that names a skill becomes middleware: `model:` configures the agent, `debug: true` instruments everything.\nTry: agent-apps describe SKILL   and   agent-apps --set debug=true run SKILL',
  },
  {
    title: 'Agents',
    text: 'A Markdown skill runs an LLM agent that acts by writing JavaScript; the code runs in an isolated-vm sandbox and calls\nother skills by name, through the same pipeline, limited by allowed-tools. Cassettes replay a model offline:\n  model: { provider: replay, cassette: NAME.cassette.yaml }',
  },
  {
    title: 'Next steps',
    text: 'agent-apps new NAME [--code] scaffolds a skill; agent-apps run repl gives you a prompt; agent-apps tail shows what the last run did.\nThe docs/ folder has concepts, writing skills and middleware, agents, events and the CLI reference.',
  },
];

export default async function tutor(ctx: Context, args: { lesson: number }) {
  if (!ctx.run.interactive) {
    throw new AgentAppsError('E_NOT_INTERACTIVE', 'tutor needs an interactive terminal (stdin and stdout must be a TTY): run `agent-apps run tutor` in a terminal');
  }
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  let completed = 0;
  let closed = false;
  rl.on('close', () => (closed = true));
  const ask = (q: string) => new Promise<string>((resolve) => (closed ? resolve('q') : rl.question(q, resolve)));
  try {
    for (let i = Math.max(0, args.lesson - 1); i < LESSONS.length; i++) {
      const l = LESSONS[i]!;
      process.stdout.write(`\n${i + 1}/${LESSONS.length}  ${l.title}\n\n${l.text}\n`);
      if (l.show) process.stdout.write((await l.show(ctx).catch((e: Error) => `  (${e.message})`)) + '\n');
      completed++;
      if (i < LESSONS.length - 1 && (await ask('\nEnter for the next lesson, q to stop: ')).trim().toLowerCase() === 'q') break;
    }
  } finally {
    rl.close();
  }
  return { completed };
}
