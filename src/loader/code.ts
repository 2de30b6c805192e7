// Importing code skills: `.skill.ts` through Node's type stripping, `tsx` only when stripping
// cannot run the file (enums, namespaces, parameter properties …).
import { pathToFileURL } from 'node:url';
import { ConfigurationError } from '../kernel/errors.ts';
import type { ToolDef } from '../kernel/types.ts';

export interface CodeModule {
  frontmatter?: unknown;
  fn?: ToolDef['fn'];
}

export async function importCodeSkill(file: string, version: number): Promise<CodeModule> {
  const url = pathToFileURL(file).href + (version > 1 ? `?v=${version}` : '');
  let mod: Record<string, unknown>;
  try {
    mod = (await import(url)) as Record<string, unknown>;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX' && file.endsWith('.ts')) {
      try {
        const { tsImport } = await import('tsx/esm/api');
        mod = (await tsImport(url, import.meta.url)) as Record<string, unknown>;
      } catch (inner) {
        throw importError(file, inner);
      }
    } else {
      throw importError(file, err);
    }
  }
  return fromModule(mod, file);
}

export async function importInline(source: string): Promise<CodeModule> {
  const url = `data:text/javascript,${encodeURIComponent(source)}`;
  try {
    return fromModule((await import(url)) as Record<string, unknown>, 'inline://');
  } catch (err) {
    if (err instanceof ConfigurationError) throw err;
    throw importError('inline://', err);
  }
}

function fromModule(mod: Record<string, unknown>, file: string): CodeModule {
  const def = mod.default;
  // `export default defineSkill(frontmatter, fn)` and `export const frontmatter` + `export default fn` both work.
  if (def && typeof def === 'object' && typeof (def as ToolDef).fn === 'function') {
    const td = def as ToolDef;
    return { frontmatter: td.frontmatter ?? mod.frontmatter ?? (td.name ? { name: td.name } : undefined), fn: td.fn };
  }
  if (typeof def !== 'function') {
    throw new ConfigurationError('a code skill must `export default async function (ctx, args) { … }`', { place: { file } });
  }
  return { frontmatter: mod.frontmatter, fn: def as ToolDef['fn'] };
}

function importError(file: string, err: unknown): ConfigurationError {
  const e = err as { message?: string };
  const first = String(e?.message ?? err).split('\n')[0];
  return new ConfigurationError(`cannot load skill: ${first}`, { place: { file }, cause: err });
}
