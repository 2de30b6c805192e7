// Tool names and refs (docs/writing-skills.md, docs/concepts.md): a bare name matches NAME_RE; everything else is a path ref.
import type { ToolDef } from '../core/types.ts';

export const NAME_RE = /^[a-z0-9][a-z0-9-]*$/;

/**
 * Why `name` cannot be a tool name, or undefined (docs/writing-skills.md): names are ASCII `[a-z0-9-]` — a
 * name must be callable as a bare ref — and neither start nor end with '-'.
 */
export function nameProblem(name: string): string | undefined {
  if (NAME_RE.test(name) && !name.endsWith('-')) return undefined;
  if (name === '') return 'a name cannot be empty';
  if (/[^\x00-\x7f]/.test(name)) return `a name must be ASCII [a-z0-9-] (lower-case letters, digits and '-'), callable as a bare ref — '${name}' is not ASCII`;
  if (/^[a-z0-9-]+$/.test(name)) return "a name cannot start or end with '-'";
  return `names match ${NAME_RE} (lower-case ASCII letters, digits and '-')`;
}

/** The longest name the Agent Skills format allows (longer ones load, with a warning: docs/writing-skills.md). */
export const MAX_NAME_LENGTH = 64;

/**
 * Every problem with a `SKILL.md` name, for the format's rules (docs/writing-skills.md): errors for what
 * cannot be a bare ref here (non-ASCII, upper case, other characters, a leading or trailing
 * '-'), warnings for what loads anyway (`--`, over 64 characters, not the folder's name).
 */
export function agentSkillNameProblems(name: string, folder?: string): { severity: 'error' | 'warning'; rule: string; message: string }[] {
  const out: { severity: 'error' | 'warning'; rule: string; message: string }[] = [];
  const shown = JSON.stringify(name.length > 80 ? name.slice(0, 77) + '…' : name);
  if (name === '') return [{ severity: 'error', rule: 'name-empty', message: 'name is empty' }];
  if (/[^\x00-\x7f]/.test(name)) {
    out.push({ severity: 'error', rule: 'name-ascii', message: `name ${shown} is not ASCII: a name must be callable as a bare ref, so it uses lower-case letters a-z, digits and '-' only` });
  } else if (/[/\\]/.test(name)) {
    out.push({ severity: 'error', rule: 'name-chars', message: `name ${shown} holds a path separator: a name is one word of lower-case letters, digits and '-'` });
  } else if (/[A-Z]/.test(name) && /^[A-Za-z0-9-]+$/.test(name)) {
    out.push({ severity: 'error', rule: 'name-case', message: `name ${shown} must be lower-case (${JSON.stringify(name.toLowerCase())})` });
  } else if (!/^[a-z0-9-]+$/.test(name)) {
    out.push({ severity: 'error', rule: 'name-chars', message: `name ${shown} has characters other than lower-case letters, digits and '-'` });
  }
  if (name.startsWith('-') || name.endsWith('-')) out.push({ severity: 'error', rule: 'name-hyphen', message: `name ${shown} cannot start or end with '-'` });
  if (name.includes('--')) out.push({ severity: 'warning', rule: 'name-hyphens', message: `name ${shown} has '--': the format does not allow consecutive hyphens` });
  if (name.length > MAX_NAME_LENGTH) out.push({ severity: 'warning', rule: 'name-length', message: `name is ${name.length} characters, over the format's ${MAX_NAME_LENGTH}` });
  if (folder !== undefined && folder !== name) out.push({ severity: 'warning', rule: 'name-folder', message: `name ${shown} is not the folder's name ${JSON.stringify(folder)}: other clients expect them equal` });
  return out;
}

/** True for anything that is not a bare tool name: paths, `file://`, `inline://`, `mcp://`, ToolDefs. */
export function isPathRef(ref: string | ToolDef): boolean {
  return typeof ref !== 'string' || !NAME_RE.test(ref);
}

const CODE_SUFFIXES = ['.skill.ts', '.skill.js', '.skill.mjs'] as const;

/** `greet.skill.ts` → `greet`; null for files that are not code skills. */
export function codeSkillStem(file: string): string | null {
  for (const suffix of CODE_SUFFIXES) if (file.endsWith(suffix)) return file.slice(0, -suffix.length);
  return null;
}

/** Near names for "did you mean" (edit distance, prefixes). */
export function suggest(ref: string, names: Iterable<string>, max = 3): string[] {
  const scored: [number, string][] = [];
  // One edit per three characters (at least one): close enough to be a typo, not a different word.
  const limit = Math.max(1, Math.floor(ref.length / 3));
  for (const name of new Set(names)) {
    const d = distance(ref, name);
    if (d <= limit || name.startsWith(ref) || (ref.length >= 3 && name.includes(ref))) scored.push([d, name]);
  }
  scored.sort((a, b) => a[0] - b[0] || a[1].localeCompare(b[1]));
  return scored.slice(0, max).map(([, n]) => n);
}

function distance(a: string, b: string): number {
  const prev = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}
