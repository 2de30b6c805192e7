// Tab completion in the repl (docs/terminal.md), with no ink in it: the first word completes to a skill
// name (or a `:command`), a later word starting with `-` to one of that skill's `--params`, and
// the word after `:describe` to a skill name.

export interface CompletionSource {
  /** The repl's own commands (`:help` …). */
  commands: readonly string[];
  /** Skill names on the search paths. */
  skills(): Promise<string[]>;
  /** `--name` flags of a skill's params (empty when it has none or is unknown). */
  params(skill: string): Promise<string[]>;
}

export interface Completion {
  /** The word being completed: code points [from, to) of the line. */
  from: number;
  to: number;
  word: string;
  /** Every candidate that starts with `word`, sorted. */
  candidates: string[];
  /** What to put in place of the word: the one candidate and a space, or the candidates' common prefix. */
  replacement: string;
}

/** The completion at `cursor` in `line`, or undefined when nothing fits. */
export async function complete(line: string, cursor: number, source: CompletionSource): Promise<Completion | undefined> {
  const chars = Array.from(line);
  const before = chars.slice(0, cursor).join('');
  let from = cursor;
  while (from > 0 && chars[from - 1] !== ' ') from--;
  let to = cursor;
  while (to < chars.length && chars[to] !== ' ') to++;
  const word = chars.slice(from, cursor).join('');
  const words = before.slice(0, before.length - word.length).trim().split(/\s+/).filter(Boolean);
  let pool: string[];
  if (words.length === 0) pool = word.startsWith(':') ? [...source.commands] : await source.skills();
  else if (words[0] === ':describe' && words.length === 1) pool = await source.skills();
  else if (words[0]!.startsWith(':')) return undefined;
  else if (word === '' || word.startsWith('-')) {
    // Flags already given are not offered again.
    const given = new Set(words.filter((w) => w.startsWith('--')).map((w) => w.split('=')[0]));
    pool = (await source.params(words[0]!)).filter((f) => !given.has(f));
  } else return undefined;
  const candidates = [...new Set(pool.filter((c) => c.startsWith(word)))].sort();
  if (!candidates.length) return undefined;
  const replacement = candidates.length === 1 ? `${candidates[0]} ` : commonPrefix(candidates);
  return { from, to: candidates.length === 1 ? to : cursor, word, candidates, replacement };
}

export function commonPrefix(items: string[]): string {
  if (!items.length) return '';
  let p = items[0]!;
  for (const s of items) while (!s.startsWith(p)) p = p.slice(0, -1);
  return p;
}

/** A params schema's top-level properties as `--name` flags. */
export function flagsOf(params: unknown): string[] {
  const props = (params as { properties?: unknown } | undefined)?.properties;
  if (!props || typeof props !== 'object' || Array.isArray(props)) return [];
  return Object.keys(props).map((k) => `--${k}`);
}
