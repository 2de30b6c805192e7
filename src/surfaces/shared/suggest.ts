// "Did you mean": the closest of some names to what was typed — the same name mis-cased first,
// else a near miss (optimal string alignment distance ≤ 2, and at most a third of the name).

export function closest(typed: string, names: readonly string[], opts: { nearMisses?: boolean } = {}): string | undefined {
  const lower = typed.toLowerCase();
  const exact = names.find((n) => n.toLowerCase() === lower);
  if (exact !== undefined || opts.nearMisses === false) return exact;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const n of names) {
    const d = editDistance(lower, n.toLowerCase());
    if (d <= Math.min(2, Math.floor(n.length / 3)) && d < bestDistance) [best, bestDistance] = [n, d];
  }
  return best;
}

/** Levenshtein distance plus adjacent transpositions (`nmae` → `name` is 1). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}
