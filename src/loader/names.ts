// Tool names and refs (SPEC §3, §4): a bare name matches NAME_RE; everything else is a path ref.
import type { ToolDef } from '../kernel/types.ts';

export const NAME_RE = /^[a-z0-9][a-z0-9-]*$/;

/**
 * Why `name` cannot be a tool name, or undefined (SPEC §3.1): names are ASCII `[a-z0-9-]` — a
 * name must be callable as a bare ref — and neither start nor end with '-'.
 */
export function nameProblem(name: string): string | undefined {
  if (NAME_RE.test(name) && !name.endsWith('-')) return undefined;
  if (name === '') return 'a name cannot be empty';
  if (/[^\x00-\x7f]/.test(name)) return `a name must be ASCII [a-z0-9-] (lower-case letters, digits and '-'), callable as a bare ref — '${name}' is not ASCII`;
  if (/^[a-z0-9-]+$/.test(name)) return "a name cannot start or end with '-'";
  return `names match ${NAME_RE} (lower-case ASCII letters, digits and '-')`;
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
