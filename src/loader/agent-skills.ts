// Agent Skills folders (`NAME/SKILL.md`, docs/writing-skills.md): the open format's fields and rules, checked
// the way its client guide asks — lenient where a skill written for another client would still
// work, strict where it could not run here. One check serves the loader (errors make the skill
// broken, warnings ride along on it) and `agent-apps validate` (every problem, placed).
//
// The one thing that differs from our own skill files: `metadata` is the author's opaque string
// map, kept on `run.origin.frontmatter` and never read as settings. agent-apps settings for a
// SKILL.md live under the top-level key `agent-apps:`, read exactly like `metadata` in NAME.md and
// `.skill.ts` files. The other top-level keys keep the meaning the format or Claude Code gives
// them and never become middleware; only `allowed-tools` and `model` are honoured directly.
import path from 'node:path';
import { AgentAppsError } from '../core/errors.ts';
import { isPlainObject } from '../core/path.ts';
import type { Diagnostic, Frontmatter, JsonObject, ToolDecl } from '../core/types.ts';
import { declare, keyLines, parseMarkdown } from './frontmatter.ts';
import { agentSkillNameProblems, suggest } from './names.ts';
import { binaryProblem, checkSkillFile, frontmatterProblem, readSkillFile } from './read.ts';

export const MAX_DESCRIPTION_LENGTH = 1024;
export const MAX_COMPATIBILITY_LENGTH = 500;

/** The Agent Skills specification's fields (agentskills.io). */
export const STANDARD_FIELDS = ['name', 'description', 'license', 'compatibility', 'metadata', 'allowed-tools'] as const;
/**
 * Claude Code's extensions. `argument-hint`, `disable-model-invocation`, `user-invocable` and
 * `model` are honoured here; the others keep Claude Code's meaning and are left alone — in
 * particular `agent`, `shell`, `paths`, `hooks` and `context`, which name built-ins here, never
 * become middleware.
 */
export const CLAUDE_CODE_FIELDS = [
  'when_to_use',
  'argument-hint',
  'arguments',
  'disable-model-invocation',
  'user-invocable',
  'model',
  'effort',
  'context',
  'agent',
  'hooks',
  'paths',
  'shell',
  'version',
] as const;
/** The one key agent-apps reads its own settings from (docs/writing-skills.md). */
export const SETTINGS_KEY = 'agent-apps';

const KNOWN = new Set<string>([...STANDARD_FIELDS, ...CLAUDE_CODE_FIELDS, SETTINGS_KEY]);

export interface AgentSkill {
  name: string;
  decl: ToolDecl;
  /** The tool's cascade level: the `agent-apps:` map, with a top-level `model` folded in. */
  metadata: JsonObject;
  frontmatter: Frontmatter;
  body: string;
  /** Warnings only: a skill with an error is not built. */
  diagnostics: Diagnostic[];
  skill: { argumentHint?: string; userInvocable: boolean; modelInvocable: boolean; dir: string };
}

/** Reads a SKILL.md (regular file, under the caps) and checks it; a file that cannot be read is one error. */
export function checkAgentSkillFile(file: string): { skill?: AgentSkill; diagnostics: Diagnostic[] } {
  const { problem } = checkSkillFile(file);
  if (problem) return { diagnostics: [{ severity: 'error', rule: 'file', message: problem }] };
  let text: string;
  try {
    text = readSkillFile(file);
  } catch (err) {
    return { diagnostics: [{ severity: 'error', rule: 'file', message: stripPlace((err as Error).message, file) }] };
  }
  return checkAgentSkill(text, file);
}

/**
 * Every problem of a SKILL.md's text, and the skill when there is no error. `file` is the
 * SKILL.md's path: its folder's name is the name the skill's `name` must equal.
 */
export function checkAgentSkill(source: string, file: string): { skill?: AgentSkill; diagnostics: Diagnostic[] } {
  const text = source.replace(/\r\n?/g, '\n');
  const diagnostics: Diagnostic[] = [];
  const error = (rule: string, message: string, place: { line?: number; column?: number } = {}) => diagnostics.push({ severity: 'error', rule, message, ...place });
  const warn = (rule: string, message: string, place: { line?: number; column?: number } = {}) => diagnostics.push({ severity: 'warning', rule, message, ...place });
  const dir = path.dirname(file);
  const folder = path.basename(dir);
  const base = path.basename(file);

  const binary = binaryProblem(text, file);
  if (binary) return { diagnostics: [{ severity: 'error', rule: 'binary', message: binary, line: 1, column: 1 }] };
  const big = frontmatterProblem(text);
  if (big) return { diagnostics: [{ severity: 'error', rule: 'frontmatter-size', message: big, line: 1, column: 1 }] };
  if (base !== 'SKILL.md') warn('file-name', `the file is ${base}: the format names it SKILL.md, and other clients look for that name only`, { line: 1, column: 1 });
  if (!/^---[ \t]*\n/.test(text)) {
    error('frontmatter-missing', `${base} has no frontmatter: it must start with a --- block holding at least name and description`, { line: 1, column: 1 });
    return { diagnostics };
  }

  if (!/\n---[ \t]*(\n|$)/.test(text.slice(3))) {
    warn('frontmatter-unclosed', 'the frontmatter has no closing --- line: the whole file is read as frontmatter and the body is empty', { line: 1, column: 1 });
  }
  let parsed: ReturnType<typeof parseMarkdown>;
  try {
    parsed = parseMarkdown(text, file, { lenient: true });
  } catch (err) {
    const place = (err as AgentAppsError).place;
    error('yaml', stripPlace((err as Error).message, file), { line: place?.line ?? 1, ...(place?.column !== undefined ? { column: place.column } : {}) });
    return { diagnostics };
  }
  const fm = parsed.frontmatter;
  const lines = keyLines(text);
  const at = (key: string, value = false) => {
    const p = lines.get(key);
    return p ? { line: p.line, column: value ? p.column : 1 } : { line: 1, column: 1 };
  };
  for (const r of parsed.recovered ?? []) {
    warn('yaml-colon', `${r.key}: the value holds an unquoted ': ', which YAML reads as a nested mapping; it was read as if quoted — quote it ("…") so that every client reads it`, { line: r.line, column: 1 });
  }

  // ── name ──────────────────────────────────────────────────────────────────────────────────
  let name: string | undefined;
  if (fm.name === undefined || fm.name === null) {
    name = folder;
    warn('name-missing', `no name: the skill takes its folder's name '${folder}' (the format requires name)`, { line: 1, column: 1 });
    for (const p of agentSkillNameProblems(folder)) diagnostics.push({ ...p, message: `the folder's ${p.message}`, line: 1, column: 1 });
  } else if (typeof fm.name !== 'string') {
    error('name-type', `name must be a string (got ${typeName(fm.name)})`, at('name', true));
  } else {
    name = fm.name;
    for (const p of agentSkillNameProblems(fm.name, folder)) diagnostics.push({ ...p, ...at('name', true) });
  }

  // ── description, license, compatibility ───────────────────────────────────────────────────
  const description = fm.description;
  if (description === undefined || description === null) {
    error('description-missing', 'description is missing: the format requires it (it is how agents decide to use the skill)', { line: 1, column: 1 });
  } else if (typeof description !== 'string') {
    error('description-type', `description must be a string (got ${typeName(description)})`, at('description', true));
  } else if (!description.trim()) {
    error('description-empty', 'description is empty: the format requires one (it is how agents decide to use the skill)', at('description', true));
  } else if (chars(description) > MAX_DESCRIPTION_LENGTH) {
    warn('description-length', `description is ${chars(description)} characters, over the format's ${MAX_DESCRIPTION_LENGTH}`, at('description', true));
  }
  if (fm.license !== undefined && typeof fm.license !== 'string') warn('license-type', `license should be a string (got ${typeName(fm.license)})`, at('license', true));
  const compatibility = fm.compatibility;
  if (compatibility !== undefined) {
    if (typeof compatibility !== 'string') warn('compatibility-type', `compatibility should be a string (got ${typeName(compatibility)})`, at('compatibility', true));
    else if (chars(compatibility) > MAX_COMPATIBILITY_LENGTH) warn('compatibility-length', `compatibility is ${chars(compatibility)} characters, over the format's ${MAX_COMPATIBILITY_LENGTH}`, at('compatibility', true));
  }

  // ── metadata: the author's map, data here ─────────────────────────────────────────────────
  const metadata = fm.metadata;
  if (metadata !== undefined && metadata !== null) {
    if (!isPlainObject(metadata)) {
      warn('metadata-type', `metadata should be a map of strings (got ${typeName(metadata)}); it is kept as data`, at('metadata', true));
    } else {
      const odd = Object.entries(metadata).filter(([, v]) => typeof v !== 'string');
      if (odd.length) {
        const keys = odd.map(([k, v]) => `${k} (${typeName(v)})`).join(', ');
        warn('metadata-values', `metadata is a map of strings in the format; ${keys} ${odd.length === 1 ? 'is' : 'are'} not. In a SKILL.md metadata is the author's data, never settings — agent-apps settings go under ${SETTINGS_KEY}:`, at('metadata'));
      }
    }
  }

  // ── what agent-apps honours ───────────────────────────────────────────────────────────────
  let allowed = fm['allowed-tools'] as unknown;
  if (Array.isArray(allowed) && allowed.every((t) => typeof t === 'string')) allowed = allowed.join(' ');
  if (allowed !== undefined && allowed !== null && typeof allowed !== 'string') {
    error('allowed-tools-type', `allowed-tools must be a string of tool names or a list of them (got ${typeName(allowed)})`, at('allowed-tools', true));
  }
  const settings = fm[SETTINGS_KEY];
  if (settings !== undefined && settings !== null && !isPlainObject(settings)) {
    error('agent-apps-type', `${SETTINGS_KEY} must be a mapping of agent-apps settings, like metadata in a NAME.md (got ${typeName(settings)})`, at(SETTINGS_KEY, true));
  }
  let model: JsonObject | undefined;
  if (typeof fm.model === 'string') model = { modelId: fm.model };
  else if (isPlainObject(fm.model)) model = fm.model as JsonObject;
  else if (fm.model !== undefined && fm.model !== null) error('model-type', `model must be a model id (a string) or a model configuration (a mapping), got ${typeName(fm.model)}`, at('model', true));
  const hint = fm['argument-hint'];
  if (hint !== undefined && hint !== null && typeof hint !== 'string') warn('argument-hint-type', `argument-hint should be a string (got ${typeName(hint)}); it is ignored`, at('argument-hint', true));
  for (const flag of ['disable-model-invocation', 'user-invocable']) {
    const v = fm[flag];
    if (v !== undefined && v !== null && typeof v !== 'boolean') warn('flag-type', `${flag} should be true or false (got ${JSON.stringify(v)}); it is ignored`, at(flag, true));
  }
  for (const key of Object.keys(fm)) {
    if (KNOWN.has(key)) continue;
    const near = suggest(key.toLowerCase().replace(/_/g, '-'), [...KNOWN], 1);
    const hintText = near.length ? ` — did you mean '${near[0]}'?` : ` (agent-apps settings go under ${SETTINGS_KEY}:)`;
    warn('unknown-field', `unknown field '${key}': not an Agent Skills or Claude Code field; it is ignored${hintText}`, at(key));
  }

  // In the file's order, as a compiler reports (stable: same place, order of the checks).
  diagnostics.sort((a, b) => (a.line ?? 1) - (b.line ?? 1) || (a.column ?? 1) - (b.column ?? 1));
  if (diagnostics.some((d) => d.severity === 'error') || name === undefined) return { diagnostics };

  // ── the declaration and the cascade level ─────────────────────────────────────────────────
  const own: JsonObject = isPlainObject(settings) ? { ...(settings as JsonObject) } : {};
  if (model) own.model = isPlainObject(own.model) ? { ...model, ...(own.model as JsonObject) } : (own.model ?? model);
  let declared: ReturnType<typeof declare>;
  try {
    declared = declare({ name, description, metadata: own, ...(typeof allowed === 'string' ? { 'allowed-tools': allowed } : {}) }, folder, file, { settingsKey: SETTINGS_KEY });
  } catch (err) {
    const key = (err as AgentAppsError).place?.key;
    const top = key?.split('.')[0];
    error('settings', stripPlace((err as Error).message, file).replace(/^\(([^)]*)\): /, '$1 '), top ? at(top) : { line: 1, column: 1 });
    return { diagnostics };
  }
  const decl = declared.decl;
  const modelInvocable = fm['disable-model-invocation'] !== true;
  // Hidden from agents' discovery (a person can still run it): agents are offered a hidden skill
  // only when their allowed-tools name it, the same rule as for every hidden skill.
  if (!modelInvocable) decl.visibility = 'hidden';
  return {
    diagnostics,
    skill: {
      name: declared.name,
      decl,
      metadata: declared.metadata,
      frontmatter: fm,
      body: parsed.body,
      diagnostics,
      skill: {
        ...(typeof hint === 'string' ? { argumentHint: hint } : {}),
        userInvocable: fm['user-invocable'] !== false,
        modelInvocable,
        dir,
      },
    },
  };
}

/** A diagnostic as one line: `message [rule]` (what `list --json` carries as a warning). */
export function diagnosticText(d: Diagnostic): string {
  return `${d.message} [${d.rule}]`;
}

/** `FILE:LINE:COL: ` off a ConfigurationError's message, when it names this file. */
function stripPlace(message: string, file: string): string {
  return message.startsWith(file) ? message.slice(file.length).replace(/^(:\d+)*(:\s*)?/, '').trimStart() : message;
}

/** Characters as the format counts them: code points, not UTF-16 units. */
function chars(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (isPlainObject(v)) return 'a mapping';
  return `${typeof v === 'number' ? 'a number' : typeof v === 'boolean' ? 'a boolean' : typeof v} ${JSON.stringify(v)?.slice(0, 40) ?? ''}`.trim();
}
