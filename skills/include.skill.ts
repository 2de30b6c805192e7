import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigurationError, ctxTarget, type Context } from 'agent-apps';

export const frontmatter = {
  name: 'include',
  description: "Directive `::include{file=PATH}`: replaces itself with a file's text (path relative to the skill).",
  metadata: {
    role: 'middleware',
    visibility: 'hidden',
    tags: ['directive'],
    params: { type: 'object', properties: { file: { type: 'string' }, directive: { type: 'object' } }, required: ['file'] },
    returns: {},
  },
};

export default async function include(ctx: Context, args: { file?: string; directive?: { index: number } }) {
  const target = ctxTarget(ctx);
  const uri = target.run.origin.uri;
  const base = uri?.startsWith('file://') ? path.dirname(fileURLToPath(uri)) : target.locals.config.cwd;
  if (!args?.file) throw new ConfigurationError(`::include in '${target.run.tool.name}' needs a file attribute: ::include{file=PATH}`);
  const file = path.resolve(base, args.file);
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigurationError(`::include{file=${args.file}} in '${target.run.tool.name}': cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? err})`);
  }
  const prompt = target.locals.prompt;
  if (prompt && args.directive) (prompt.replacements ??= {})[args.directive.index] = text.replace(/\n$/, '');
  return target.manager.next();
}
