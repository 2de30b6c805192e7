import readline from 'node:readline';
import { AgentAppsError, internals, type Context } from 'agent-apps';

export const frontmatter = {
  name: 'repl',
  description: 'An interactive prompt: type `SKILL --name value …` to run skills through the pipeline, `:list`, `:describe SKILL`, `:help`, `:quit`. Needs a terminal.',
  metadata: {
    tags: ['interactive'],
    params: { type: 'object', properties: { prompt: { type: 'string', default: 'agent-apps> ' } }, additionalProperties: false },
    returns: { type: 'object', properties: { ran: { type: 'integer' } } },
  },
};

const HELP = `  SKILL --name value …   run a skill (args as on the command line; --args-json '{…}' works too)
  :list                   the skills on the search paths
  :describe SKILL         a skill's params and middleware chain
  :help                   this text
  :quit                   leave (Ctrl-D too)`;

export default async function repl(ctx: Context, args: { prompt: string }) {
  if (!ctx.run.interactive) {
    throw new AgentAppsError('E_NOT_INTERACTIVE', 'repl needs an interactive terminal (stdin and stdout must be a TTY): run `agent-apps run repl` in a terminal');
  }
  const kernel = internals.kernel(ctx);
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr, prompt: args.prompt, terminal: true });
  const onAbort = () => rl.close();
  ctx.run.signal.addEventListener('abort', onAbort, { once: true });
  process.stderr.write(`agent-apps repl — ${HELP.split('\n').length} commands, :help lists them\n`);
  let ran = 0;
  rl.prompt();
  try {
    for await (const raw of rl) {
      const line = raw.trim();
      if (!line) {
        rl.prompt();
        continue;
      }
      try {
        if (line === ':quit' || line === ':q' || line === ':exit') break;
        if (line === ':help') process.stderr.write(HELP + '\n');
        else if (line === ':list') {
          for (const s of await kernel.list(ctx.locals.config.paths)) process.stdout.write(`${s.name.padEnd(20)} ${s.error ? `ERROR ${s.error}` : (s.description ?? '')}\n`);
        } else if (line.startsWith(':describe')) {
          const name = line.split(/\s+/)[1];
          if (!name) throw new AgentAppsError('E_USAGE', ':describe needs a skill name');
          const d = await kernel.describe(name, ctx.locals.config.paths, ctx.locals.config.cwd);
          process.stdout.write(JSON.stringify({ tool: d.tool, chain: d.chain.map((e) => e.name) }, null, 2) + '\n');
        } else if (line.startsWith(':')) {
          throw new AgentAppsError('E_USAGE', `unknown command ${line.split(/\s+/)[0]} — :help lists them`);
        } else {
          const [name, ...rest] = splitWords(line);
          const tool = await kernel.resolve(name!, ctx.locals.config.paths, ctx.locals.config.cwd);
          const json = rest.indexOf('--args-json');
          let callArgs: Record<string, unknown> = {};
          if (json !== -1) {
            callArgs = JSON.parse(rest[json + 1] ?? '{}');
            rest.splice(json, 2);
          }
          callArgs = { ...callArgs, ...internals.parseSkillArgs(rest, tool.decl.params) };
          const result = await ctx.manager.invoke(name!, callArgs);
          ran++;
          if (result !== undefined) process.stdout.write((typeof result === 'string' ? result : JSON.stringify(result, null, 2)) + '\n');
        }
      } catch (err) {
        const e = err as { code?: string; message?: string };
        process.stderr.write(`error${e.code ? ` [${e.code}]` : ''}: ${e.message ?? err}\n`);
      }
      rl.prompt();
    }
  } finally {
    ctx.run.signal.removeEventListener('abort', onAbort);
    rl.close();
  }
  return { ran };
}

/** Shell-like words: spaces separate, single or double quotes group. */
function splitWords(line: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(line))) out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : (m[2] ?? m[3]!));
  return out;
}
