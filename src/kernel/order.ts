// Ordering of chain entries (docs/middleware.md): a stable topological sort over before/after
// constraints, with the phase sentinels $configure < $post-configure < $pre-execute < $agent as
// virtual anchors that never appear in the output ($agent, docs/ci.md: after agent-execute — what
// runs after the agent, such as `session`). Insertion order breaks ties. A constraint naming an
// entry that is not in the chain is ignored; in a whole chain, an entry whose constraints are all
// ignored gets the default slot, so removing one middleware never moves another out of its phase.
// A cycle is a ConfigurationError that prints the cycle and names where each of its edges was
// declared.
import { ConfigurationError, type Place } from '../core/errors.ts';

export const SENTINELS = ['$configure', '$post-configure', '$pre-execute', '$agent'] as const;
export const DEFAULT_BEFORE: readonly string[] = Object.freeze(['$post-configure']);
export const DEFAULT_AFTER: readonly string[] = Object.freeze(['$configure']);

export interface Orderable {
  name: string;
  before?: readonly string[];
  after?: readonly string[];
  /** Where the `before` / `after` lists were declared (the cascade's `$order.NAME.before` …). */
  orderFrom?: { before?: Place; after?: Place };
}

export interface SortOptions {
  /**
   * The entries are a whole chain (a plan, or a plan with extra middleware): an entry whose
   * constraints all name entries absent from it sits in the default slot, after `$configure` and
   * before `$post-configure` (docs/middleware.md). Not for re-sorting the rest of a running chain
   * (`inject`), where a constraint naming an executed entry is simply stripped (docs/concepts.md).
   */
  defaultSlot?: boolean;
  /** The tool whose chain this is, for the cycle's message. */
  chain?: string;
  /** Where to point when no edge of a cycle says where it was declared. */
  place?: Place;
}

export function sortEntries<T extends Orderable>(entries: readonly T[], opts: SortOptions = {}): T[] {
  if (entries.length === 0) return [];
  // Nodes: the three sentinels, then one node per entry (names may repeat, e.g. two `:arg`
  // directives); a constraint naming a name applies to every entry of that name.
  const S = SENTINELS.length;
  const n = S + entries.length;
  const byName = new Map<string, number[]>();
  SENTINELS.forEach((s, i) => byName.set(s, [i]));
  entries.forEach((e, i) => {
    const list = byName.get(e.name);
    if (list) list.push(S + i);
    else byName.set(e.name, [S + i]);
  });
  const out: number[][] = Array.from({ length: n }, () => []);
  const indeg = new Array<number>(n).fill(0);
  const edge = (a: number, b: number): number => {
    out[a]!.push(b);
    indeg[b]!++;
    return 1;
  };
  for (let i = 1; i < S; i++) edge(i - 1, i);
  const CONFIGURE = 0; // node ids of the sentinels, as in SENTINELS
  const POST_CONFIGURE = 1;
  entries.forEach((e, i) => {
    const self = S + i;
    let kept = 0;
    // A constraint naming an entry that is not in the chain is ignored.
    for (const b of e.before ?? []) {
      for (const other of byName.get(b) ?? []) if (other !== self) kept += edge(self, other);
    }
    for (const a of e.after ?? []) {
      for (const other of byName.get(a) ?? []) if (other !== self) kept += edge(other, self);
    }
    if (kept === 0 && opts.defaultSlot) {
      edge(CONFIGURE, self);
      edge(self, POST_CONFIGURE);
    }
  });
  // Kahn's algorithm taking the smallest insertion index first keeps the sort stable.
  const ready: number[] = [];
  for (let i = 0; i < n; i++) if (indeg[i] === 0) ready.push(i);
  const result: T[] = [];
  let emitted = 0;
  while (ready.length) {
    let best = 0;
    for (let i = 1; i < ready.length; i++) if (ready[i]! < ready[best]!) best = i;
    const node = ready[best]!;
    ready[best] = ready[ready.length - 1]!;
    ready.pop();
    emitted++;
    if (node >= S) result.push(entries[node - S]!);
    for (const m of out[node]!) if (--indeg[m]! === 0) ready.push(m);
  }
  if (emitted < n) throw cycleError(entries, findCycle(n, out, indeg), opts);
  return result;
}

/** `a → b → … → a`, and for each edge the `$order` list that declared it and where. */
function cycleError(entries: readonly Orderable[], cycle: number[], opts: SortOptions): ConfigurationError {
  const S = SENTINELS.length;
  const label = (i: number) => (i < S ? SENTINELS[i]! : entries[i - S]!.name);
  const declared: { edge: string; place: Place }[] = [];
  for (let k = 0; k + 1 < cycle.length; k++) {
    const a = cycle[k]!;
    const b = cycle[k + 1]!;
    const edge = `${label(a)} before ${label(b)}`;
    const ea = a >= S ? entries[a - S]! : undefined;
    const eb = b >= S ? entries[b - S]! : undefined;
    // The edge a → b is a's `before: [b]` or b's `after: [a]` (or the phases' own order).
    if (ea?.before?.includes(label(b))) declared.push({ edge, place: ea.orderFrom?.before ?? { key: `$order.${ea.name}.before` } });
    else if (eb?.after?.includes(label(a))) declared.push({ edge, place: eb.orderFrom?.after ?? { key: `$order.${eb.name}.after` } });
  }
  const at = declared.find((d) => d.place.file || d.place.source)?.place ?? opts.place;
  const where = (p: Place) => {
    const from = p.file ?? p.source;
    return from && from !== (at?.file ?? at?.source) ? `${p.key} in ${from}` : p.key;
  };
  const edges = declared.length ? ` (${declared.map((d) => `${d.edge}: ${where(d.place)}`).join('; ')})` : '';
  const whose = opts.chain ? ` of '${opts.chain}'` : '';
  const file = at?.file ? { file: at.file } : at?.source ? { source: at.source } : undefined;
  return new ConfigurationError(`the middleware order${whose} has a cycle: ${cycle.map(label).join(' → ')}${edges}`, file ? { place: file } : undefined);
}

function findCycle(n: number, out: number[][], indeg: number[]): number[] {
  // Every node left unsorted has an unsorted predecessor, so walking backwards must repeat.
  const remaining = new Set<number>();
  for (let i = 0; i < n; i++) if (indeg[i]! > 0) remaining.add(i);
  const preds = (node: number) => {
    for (const r of remaining) if (out[r]!.includes(node)) return r;
    return undefined;
  };
  let cur = remaining.values().next().value as number;
  const seen = new Map<number, number>();
  const path: number[] = [];
  while (!seen.has(cur)) {
    seen.set(cur, path.length);
    path.push(cur);
    const prev = preds(cur);
    if (prev === undefined) break;
    cur = prev;
  }
  const cyc = path.slice(seen.get(cur) ?? 0).reverse();
  cyc.push(cyc[0]!);
  return cyc;
}
