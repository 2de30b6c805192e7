// Frontmatter → tool declaration (SPEC §3). Checked where it enters: a bad shape is a
// configuration error naming the file (and YAML line), never a crash later on.
import { createRequire } from 'node:module';
import { ConfigurationError } from '../kernel/errors.ts';
import { isPlainObject } from '../kernel/path.ts';
import type { Frontmatter, JsonObject, ToolDecl } from '../kernel/types.ts';
import { nameProblem } from './names.ts';

type Matter = (text: string, options: object) => { data: unknown; content: string };
let matter: { parse: Matter; engine: object } | undefined;

/**
 * gray-matter with the `yaml` package as its engine, loaded on first use: together they cost
 * ~25 ms of start-up, and a run whose Markdown was parsed at build time (the library's, see
 * library-cache.ts) never needs them.
 */
function loadMatter(): { parse: Matter; engine: object } {
  if (!matter) {
    const require = createRequire(import.meta.url);
    const YAML = require('yaml') as typeof import('yaml');
    matter = {
      parse: require('gray-matter') as Matter,
      engine: {
        parse: (source: string) => YAML.parse(source, { prettyErrors: true }) as object,
        stringify: (data: object) => YAML.stringify(data),
      },
    };
  }
  return matter;
}

export interface ParsedMarkdown {
  frontmatter: Frontmatter;
  body: string;
}

export function parseMarkdown(text: string, file: string): ParsedMarkdown {
  try {
    const m = loadMatter();
    const parsed = m.parse(text, { engines: { yaml: m.engine }, language: 'yaml' });
    const data = parsed.data ?? {};
    if (!isPlainObject(data)) throw new ConfigurationError('frontmatter must be a YAML mapping', { place: { file, line: 2 } });
    return { frontmatter: data as Frontmatter, body: parsed.content.replace(/^\r?\n/, '') };
  } catch (err) {
    if (err instanceof ConfigurationError) throw err;
    const e = err as { linePos?: { line: number; col: number }[]; message?: string; mark?: { line: number } };
    // gray-matter hands the engine the text after the opening `---`, newline included, so the
    // YAML's line numbers are the file's.
    const line = e.linePos?.[0] ? e.linePos[0].line : e.mark ? e.mark.line + 2 : undefined;
    const column = e.linePos?.[0]?.col;
    const message = String(e.message ?? err).split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    throw new ConfigurationError(`malformed frontmatter: ${message}`, { place: { file, line, column }, cause: err });
  }
}

/** Builds `run.tool` — a closed type — and the tool's own cascade level from its frontmatter. */
export function declare(fm: unknown, fallbackName: string, file?: string): { name: string; decl: ToolDecl; metadata: JsonObject; frontmatter: Frontmatter } {
  if (fm === undefined || fm === null) fm = {};
  if (!isPlainObject(fm)) throw new ConfigurationError('frontmatter must be an object', { place: { file } });
  const frontmatter = fm as Frontmatter;
  const metadata = frontmatter.metadata ?? {};
  if (!isPlainObject(metadata)) throw bad(file, 'metadata', 'must be a mapping');
  const name = frontmatter.name ?? fallbackName;
  if (typeof name !== 'string') throw bad(file, 'name', `'${String(name)}' is not a valid skill name: a name is a string`);
  const problem = nameProblem(name);
  if (problem) throw bad(file, 'name', `'${name}' is not a valid skill name: ${problem}`);
  const description = frontmatter.description ?? metadata.description;
  if (description !== undefined && typeof description !== 'string') throw bad(file, 'description', 'must be a string');
  const params = metadata.params;
  if (params !== undefined && !isPlainObject(params) && typeof params !== 'boolean') throw bad(file, 'metadata.params', 'must be a JSON Schema object');
  const returns = metadata.returns;
  if (returns !== undefined && !isPlainObject(returns) && typeof returns !== 'boolean') throw bad(file, 'metadata.returns', 'must be a JSON Schema object');
  const visibility = metadata.visibility ?? frontmatter.visibility ?? 'public';
  if (visibility !== 'public' && visibility !== 'hidden') throw bad(file, 'metadata.visibility', `must be public or hidden (got ${JSON.stringify(visibility)})`);
  const role = metadata.role ?? 'skill';
  if (role !== 'skill' && role !== 'middleware') throw bad(file, 'metadata.role', `must be skill or middleware (got ${JSON.stringify(role)})`);
  const tags = metadata.tags ?? [];
  if (!Array.isArray(tags) || tags.some((t) => typeof t !== 'string')) throw bad(file, 'metadata.tags', 'must be a list of strings');
  let allowed = metadata['allowed-tools'] ?? frontmatter['allowed-tools'];
  if (Array.isArray(allowed) && allowed.every((t) => typeof t === 'string')) allowed = allowed.join(' ');
  if (allowed !== undefined && typeof allowed !== 'string') throw bad(file, 'allowed-tools', 'must be a space-separated string of tool globs');
  const decl: ToolDecl = {
    name,
    description,
    params: params as JsonObject | undefined,
    returns: returns as JsonObject | undefined,
    visibility,
    allowedTools: allowed,
    role,
    tags: tags as string[],
  };
  return { name, decl, metadata: metadata as JsonObject, frontmatter };
}

function bad(file: string | undefined, key: string, message: string): ConfigurationError {
  return new ConfigurationError(`${key} ${message}`, { place: { file, key } });
}
