import fs from 'node:fs/promises';
import path from 'node:path';
import { AgentAppsError, type Context } from 'agent-apps';

export const frontmatter = {
  name: 'file-write',
  description: 'Writes (or appends) text to a file relative to the working directory, creating folders as needed. Hidden: name it in allowed-tools to use it.',
  metadata: {
    visibility: 'hidden',
    tags: ['fs'],
    params: {
      type: 'object',
      properties: {
        path: { type: 'string', 'x-path': true },
        content: { type: 'string' },
        append: { type: 'boolean', default: false },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    returns: { type: 'object', properties: { path: { type: 'string' }, bytes: { type: 'integer' } }, required: ['path', 'bytes'] },
  },
};

export default async function fileWrite(ctx: Context, args: { path: string; content: string; append: boolean }) {
  const file = path.resolve(ctx.locals.config.cwd, args.path);
  try {
    await fs.mkdir(path.dirname(file), { recursive: true });
    if (args.append) await fs.appendFile(file, args.content);
    else await fs.writeFile(file, args.content);
  } catch (err) {
    throw new AgentAppsError('E_FILE', `file-write: cannot write ${args.path} (${(err as NodeJS.ErrnoException).code ?? err})`);
  }
  return { path: file, bytes: Buffer.byteLength(args.content) };
}
