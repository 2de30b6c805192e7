import fs from 'node:fs/promises';
import path from 'node:path';
import { AgentAppsError, type Context } from 'agent-apps';

export const frontmatter = {
  name: 'file-read',
  description: 'Reads a text file (path relative to the working directory) and returns its contents.',
  metadata: {
    tags: ['fs'],
    params: {
      type: 'object',
      properties: {
        path: { type: 'string', 'x-path': true, description: 'File to read, relative to the working directory.' },
        maxBytes: { type: 'integer', minimum: 1, default: 1048576, description: 'Refuse files larger than this.' },
      },
      required: ['path'],
      additionalProperties: false,
    },
    returns: { type: 'string' },
  },
};

export default async function fileRead(ctx: Context, args: { path: string; maxBytes: number }) {
  const file = path.resolve(ctx.locals.config.cwd, args.path);
  let stat;
  try {
    stat = await fs.stat(file);
  } catch (err) {
    throw new AgentAppsError('E_FILE', `file-read: cannot read ${args.path} (${(err as NodeJS.ErrnoException).code ?? err})`);
  }
  if (!stat.isFile()) throw new AgentAppsError('E_FILE', `file-read: ${args.path} is not a file`);
  if (stat.size > args.maxBytes) throw new AgentAppsError('E_FILE', `file-read: ${args.path} is ${stat.size} bytes, over maxBytes ${args.maxBytes}`);
  return fs.readFile(file, 'utf8');
}
