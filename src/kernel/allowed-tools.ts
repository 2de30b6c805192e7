// allowed-tools specs (SPEC §3, seed 004): space-delimited picomatch globs, each optionally
// constraining args — `file-read event-* schedule-create(ref=my-*)`. Compiled once per spec.
import picomatch from 'picomatch';
import { AgentAppsError } from './errors.ts';

interface Rule {
  match: (name: string) => boolean;
  constraints: { key: string; match: (value: string) => boolean }[];
  text: string;
}

export interface AllowedTools {
  spec: string;
  rules: Rule[];
  /** True when the spec contains a bare `*` (discovery mode, seed 004). */
  wildcard: boolean;
  /** Names the spec lists literally (no glob characters). */
  named: string[];
  allows(name: string, args?: unknown): boolean;
}

const cache = new Map<string, AllowedTools>();

export function parseAllowedTools(spec: string): AllowedTools {
  const hit = cache.get(spec);
  if (hit) return hit;
  const rules: Rule[] = [];
  const tokens = spec.match(/[^\s(]+(?:\([^)]*\))?/g) ?? [];
  for (const token of tokens) {
    const m = /^([^(]+)(?:\((.*)\))?$/.exec(token);
    if (!m) throw new AgentAppsError('E_CONFIG', `allowed-tools: cannot parse '${token}'`);
    const constraints = (m[2] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map((c) => {
        const eq = c.indexOf('=');
        if (eq <= 0) throw new AgentAppsError('E_CONFIG', `allowed-tools: constraint '${c}' in '${token}' must look like key=glob`);
        const key = c.slice(0, eq).trim();
        const glob = c.slice(eq + 1).trim();
        return { key, match: picomatch(glob, { dot: true }) as (v: string) => boolean };
      });
    rules.push({ match: picomatch(m[1]!, { dot: true }) as (v: string) => boolean, constraints, text: token });
  }
  const wildcard = tokens.some((t) => t === '*');
  const named = tokens.map((t) => t.replace(/\(.*\)$/, '')).filter((t) => !/[*?[\]{}!]/.test(t));
  const result: AllowedTools = {
    spec,
    rules,
    wildcard,
    named,
    allows(name, args) {
      return rules.some((r) => r.match(name) && r.constraints.every((c) => {
        const v = args !== null && typeof args === 'object' ? (args as Record<string, unknown>)[c.key] : undefined;
        return v !== undefined && c.match(typeof v === 'string' ? v : JSON.stringify(v));
      }));
    },
  };
  if (cache.size > 1000) cache.clear();
  cache.set(spec, result);
  return result;
}
