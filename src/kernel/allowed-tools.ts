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

/**
 * Anthropic Agent Skills name Claude Code's tools (`Read`, `Bash(git status:*)`); SKILL.md
 * folders run unchanged, so those map onto the built-ins that do the same job, their patterns
 * becoming arg constraints. Tools with no counterpart here allow nothing.
 */
const AGENT_SKILLS_TOOLS: Record<string, { tool: string; arg: string }> = {
  Read: { tool: 'file-read', arg: 'path' },
  Write: { tool: 'file-write', arg: 'path' },
  Edit: { tool: 'file-write', arg: 'path' },
  MultiEdit: { tool: 'file-write', arg: 'path' },
  Bash: { tool: 'shell', arg: 'command' },
};

function fromAgentSkills(token: string): string[] {
  const m = /^([A-Z][A-Za-z]*)(?:\((.*)\))?$/.exec(token);
  if (!m) return [token];
  const alias = AGENT_SKILLS_TOOLS[m[1]!];
  if (!alias) return [];
  if (m[2] === undefined || m[2].trim() === '*') return [alias.tool];
  // Claude Code's `prefix:*` means "starts with prefix".
  const pattern = m[2].trim().replace(/:\*$/, '*');
  return [`${alias.tool}(${alias.arg}=${pattern.replace(/[,)]/g, '')})`];
}

export function parseAllowedTools(spec: string): AllowedTools {
  const hit = cache.get(spec);
  if (hit) return hit;
  const rules: Rule[] = [];
  // Spaces separate tokens, and so do commas outside parentheses (Agent Skills write `Read, Bash`).
  const tokens = (spec.match(/[^\s(,]+(?:\([^)]*\))?/g) ?? []).flatMap(fromAgentSkills);
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
        // In arg values `*` crosses `/` (paths, shell commands): picomatch's bash mode.
        return { key, match: picomatch(glob, { dot: true, bash: true, format: (v: string) => v.replace(/^\.\//, '') }) as (v: string) => boolean };
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
