// Frontmatter → tool declaration (docs/writing-skills.md). Checked where it enters: a bad shape is a
// configuration error naming the file (and YAML line), never a crash later on.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { ConfigurationError } from '../core/errors.ts';
import { isPlainObject } from '../core/path.ts';
import type { Frontmatter, JsonObject, ToolDecl } from '../core/types.ts';
import { yaml, type Yaml } from '../core/yaml.ts';
import { nameProblem } from './names.ts';

type Matter = (text: string, options: object) => { data: unknown; content: string };
let matter: { parse: Matter; engine: object; yaml: Yaml } | undefined;

/** YAML aliases a frontmatter may expand (the `yaml` package's guard against alias bombs). */
const MAX_ALIAS_COUNT = 100;

/**
 * gray-matter with the `yaml` package as its engine, loaded on first use: together they cost
 * ~25 ms of start-up, and a run whose Markdown was parsed at build time (the library's, see
 * library-cache.ts) never needs them. gray-matter comes from the build's bundle when built
 * (without js-yaml and esprima, which it loads for a default engine never used here).
 */
function loadMatter(): { parse: Matter; engine: object; yaml: Yaml } {
  if (!matter) {
    const require = createRequire(import.meta.url);
    const YAML = yaml();
    const bundle = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '../../dist/bundles/gray-matter.cjs' : '../bundles/gray-matter.cjs', import.meta.url));
    matter = {
      parse: require(existsSync(bundle) ? bundle : 'gray-matter') as Matter,
      engine: {
        parse: (source: string) => YAML.parse(source, { prettyErrors: true, maxAliasCount: MAX_ALIAS_COUNT }) as object,
        stringify: (data: object) => YAML.stringify(data),
      },
      yaml: YAML,
    };
  }
  return matter;
}

export interface ParsedMarkdown {
  frontmatter: Frontmatter;
  body: string;
  /**
   * Top-level keys whose unquoted value held `: ` and was read as if quoted (`lenient` only):
   * `description: Use when: …`, the mistake the Agent Skills client guide asks clients to forgive.
   */
  recovered?: { key: string; line: number }[];
}

export function parseMarkdown(text: string, file: string, opts: { lenient?: boolean } = {}): ParsedMarkdown {
  try {
    const m = loadMatter();
    const recovered: { key: string; line: number }[] = [];
    const engine = opts.lenient ? { parse: (source: string) => lenientYaml(m.yaml, source, recovered), stringify: (data: object) => m.yaml.stringify(data) } : m.engine;
    const parsed = m.parse(text, { engines: { yaml: engine }, language: 'yaml' });
    const data = parsed.data ?? {};
    if (!isPlainObject(data)) throw new ConfigurationError('frontmatter must be a YAML mapping', { place: { file, line: 2 } });
    const out: ParsedMarkdown = { frontmatter: data as Frontmatter, body: parsed.content.replace(/^\r?\n/, '') };
    if (recovered.length) out.recovered = recovered;
    return out;
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

/**
 * YAML as written, else — when the only trouble is top-level plain values holding `: ` — the
 * same text with those values quoted. Line numbers stay the file's (one line for one line).
 */
function lenientYaml(YAML: Yaml, source: string, recovered: { key: string; line: number }[]): object {
  const parse = (text: string) => YAML.parse(text, { prettyErrors: true, maxAliasCount: MAX_ALIAS_COUNT }) as object;
  try {
    return parse(source);
  } catch (err) {
    const fixed = quoteColonValues(source);
    if (!fixed.keys.length) throw err;
    let data: object;
    try {
      data = parse(fixed.text);
    } catch {
      throw err;
    }
    recovered.push(...fixed.keys);
    return data;
  }
}

/** `key: a: b` → `key: "a: b"` for top-level plain values (continuation lines folded in, as YAML would). */
function quoteColonValues(source: string): { text: string; keys: { key: string; line: number }[] } {
  const lines = source.split('\n');
  const keys: { key: string; line: number }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^([A-Za-z0-9_][\w.-]*):[ \t]+(.*)$/.exec(lines[i]!);
    if (!m) continue;
    const first = m[2]!.trim();
    // Quoted, flow, block, anchored, tagged or commented values are YAML the author meant.
    if (!first || /^["'[{|>&*!%@`#]/.test(first)) continue;
    let j = i + 1;
    while (j < lines.length && /^[ \t]+\S/.test(lines[j]!) && !/^[ \t]*#/.test(lines[j]!)) j++;
    const parts = [first, ...lines.slice(i + 1, j).map((l) => l.trim())].map((p) => p.replace(/[ \t]+#.*$/, ''));
    const value = parts.join(' ');
    if (!/:(\s|$)/.test(value)) continue;
    lines[i] = `${m[1]}: ${JSON.stringify(value)}`;
    for (let k = i + 1; k < j; k++) lines[k] = '';
    keys.push({ key: m[1]!, line: i + 1 });
    i = j - 1;
  }
  return { text: lines.join('\n'), keys };
}

/** The file line (1-based) of each top-level key of a leading `---` block, and the column of its value. */
export function keyLines(text: string): Map<string, { line: number; column: number }> {
  const out = new Map<string, { line: number; column: number }>();
  if (!text.startsWith('---')) return out;
  const lines = text.split('\n', 20000);
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^---\s*$/.test(line)) break;
    const m = /^(["']?)([^\s#"':][^"':]*?)\1:(?:[ \t]+|$)/.exec(line);
    if (m && !out.has(m[2]!)) out.set(m[2]!, { line: i + 1, column: m[0].length + 1 });
  }
  return out;
}

/** Builds `run.tool` — a closed type — and the tool's own cascade level from its frontmatter. */
export function declare(fm: unknown, fallbackName: string, file?: string, opts: { settingsKey?: string } = {}): { name: string; decl: ToolDecl; metadata: JsonObject; frontmatter: Frontmatter } {
  // Where the settings live: `metadata` in our own files, `agent-apps` in a SKILL.md (docs/writing-skills.md).
  const at = opts.settingsKey ?? 'metadata';
  if (fm === undefined || fm === null) fm = {};
  if (!isPlainObject(fm)) throw new ConfigurationError('frontmatter must be an object', { place: { file } });
  const frontmatter = fm as Frontmatter;
  const metadata = frontmatter.metadata ?? {};
  if (!isPlainObject(metadata)) throw bad(file, at, 'must be a mapping');
  const name = frontmatter.name ?? fallbackName;
  if (typeof name !== 'string') throw bad(file, 'name', `'${String(name)}' is not a valid skill name: a name is a string`);
  const problem = nameProblem(name);
  if (problem) throw bad(file, 'name', `'${name}' is not a valid skill name: ${problem}`);
  const description = frontmatter.description ?? metadata.description;
  if (description !== undefined && typeof description !== 'string') throw bad(file, 'description', 'must be a string');
  const params = metadata.params;
  if (params !== undefined && !isPlainObject(params) && typeof params !== 'boolean') throw bad(file, `${at}.params`, 'must be a JSON Schema object');
  const returns = metadata.returns;
  if (returns !== undefined && !isPlainObject(returns) && typeof returns !== 'boolean') throw bad(file, `${at}.returns`, 'must be a JSON Schema object');
  const visibility = metadata.visibility ?? frontmatter.visibility ?? 'public';
  if (visibility !== 'public' && visibility !== 'hidden') throw bad(file, `${at}.visibility`, `must be public or hidden (got ${JSON.stringify(visibility)})`);
  const role = metadata.role ?? 'skill';
  if (role !== 'skill' && role !== 'middleware') throw bad(file, `${at}.role`, `must be skill or middleware (got ${JSON.stringify(role)})`);
  const tags = metadata.tags ?? [];
  if (!Array.isArray(tags) || tags.some((t) => typeof t !== 'string')) throw bad(file, `${at}.tags`, 'must be a list of strings');
  let allowed = metadata['allowed-tools'] ?? frontmatter['allowed-tools'];
  if (Array.isArray(allowed) && allowed.every((t) => typeof t === 'string')) allowed = allowed.join(' ');
  if (allowed !== undefined && typeof allowed !== 'string') throw bad(file, 'allowed-tools', 'must be a space-separated string of tool globs');
  // ask-tools (docs/agents.md): where allowed-tools is, in the same syntax — tools its agent may call with a person's approval.
  let ask = metadata['ask-tools'] ?? frontmatter['ask-tools'];
  if (Array.isArray(ask) && ask.every((t) => typeof t === 'string')) ask = ask.join(' ');
  if (ask !== undefined && typeof ask !== 'string') throw bad(file, 'ask-tools', 'must be a space-separated string of tool globs (allowed-tools syntax)');
  const decl: ToolDecl = {
    name,
    description,
    params: params as JsonObject | undefined,
    returns: returns as JsonObject | undefined,
    visibility,
    allowedTools: allowed,
    ...(ask !== undefined ? { askTools: ask } : {}),
    role,
    tags: tags as string[],
  };
  return { name, decl, metadata: metadata as JsonObject, frontmatter };
}

function bad(file: string | undefined, key: string, message: string): ConfigurationError {
  return new ConfigurationError(`${key} ${message}`, { place: { file, key } });
}
