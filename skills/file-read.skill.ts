import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { AgentAppsError, type Context } from 'agent-apps';
import { agentPolicy, realPath } from 'agent-apps/agent';

export const frontmatter = {
  name: 'file-read',
  description: "Reads a text file (path relative to the working directory — for a SKILL.md skill's agent, to the skill's folder when the file is there) and returns its contents.",
  metadata: {
    tags: ['fs'],
    params: {
      type: 'object',
      properties: {
        path: { type: 'string', 'x-path': true, description: "File to read, relative to the working directory (for a SKILL.md skill's agent: its folder first)." },
        maxBytes: { type: 'integer', minimum: 1, default: 1048576, description: 'Refuse files larger than this.' },
      },
      required: ['path'],
      additionalProperties: false,
    },
    returns: { type: 'string' },
  },
};

export default async function fileRead(ctx: Context, args: { path: string; maxBytes: number }) {
  const file = resolvePath(ctx, args.path);
  let stat;
  try {
    stat = await fsp.stat(file);
  } catch (err) {
    throw new AgentAppsError('E_FILE', `file-read: cannot read ${args.path} (${(err as NodeJS.ErrnoException).code ?? err})`);
  }
  if (!stat.isFile()) throw new AgentAppsError('E_FILE', `file-read: ${args.path} is not a file`);
  if (stat.size > args.maxBytes) throw new AgentAppsError('E_FILE', `file-read: ${args.path} is ${stat.size} bytes, over maxBytes ${args.maxBytes}`);
  return fsp.readFile(file, 'utf8');
}

/**
 * Progressive disclosure (docs/writing-skills.md): the agent of a SKILL.md skill is shown its folder's files
 * by relative path, so a relative path is that folder's first — when the file is there and stays
 * inside it, links resolved. Otherwise, and for every other caller, the working directory's, which
 * is what the bridge checked (src/agent/bridge.ts): the folder is one of the agent's roots, so
 * reading inside it needs no extra permission, and a path that would leave it is read from the
 * working directory or refused there, never followed out of the folder.
 */
function resolvePath(ctx: Context, p: string): string {
  const fromCwd = path.resolve(ctx.locals.config.cwd, p);
  if (path.isAbsolute(p)) return fromCwd;
  for (const dir of skillFolders(ctx)) {
    const candidate = path.resolve(dir, p);
    const real = realPath(candidate);
    if (real !== dir && !real.startsWith(dir + path.sep)) continue;
    if (fs.existsSync(real)) return real;
  }
  return fromCwd;
}

/** The SKILL.md folders among the calling agent's roots (the workspace is the first root, never one). */
function skillFolders(ctx: Context): string[] {
  const policy = agentPolicy(ctx);
  if (!policy) return [];
  return policy.roots.slice(1).filter((dir) => fs.existsSync(path.join(dir, 'SKILL.md')) || fs.existsSync(path.join(dir, 'skill.md')));
}
