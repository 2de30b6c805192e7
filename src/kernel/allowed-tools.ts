// allowed-tools specs (docs/writing-skills.md, docs/security.md, docs/agents.md): space-delimited picomatch globs, each optionally
// constraining args — `file-read event-* schedule-create(ref=my-*)`. Compiled once per spec.
//
// A constraint matches its arg by the arg's kind (docs/security.md):
// - a path (`x-path` in the tool's params, or a key named path / file / dir / cwd …) is resolved
//   against the caller's cwd, `..` folded and symlinks followed, then matched against the pattern
//   resolved the same way: `*` never crosses `/`, and `docs/*` never admits `docs/../x`;
// - a command (`x-command`, or a key named command) must be one simple command — no `;`, `&`,
//   `|`, backtick, `$`, `<`, `>` or newline — and then matches with `*` crossing `/`;
// - anything else (refs, names, ids) matches as text, `*` crossing `/`.
import fs from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';
import { AgentAppsError } from '../core/errors.ts';

export type ArgKind = 'path' | 'command' | 'text';

/** What a constraint needs to match path args: the cwd they are relative to, and the tool's params. */
export interface MatchEnv {
  cwd: string;
  params?: unknown;
}

interface Constraint {
  key: string;
  glob: string;
  /** A path pattern that starts at `/`: the only way a path outside the workspace is admitted. */
  absolute: boolean;
  text: (value: string) => boolean;
}

interface Rule {
  match: (name: string) => boolean;
  constraints: Constraint[];
  text: string;
}

export interface AllowedTools {
  spec: string;
  rules: Rule[];
  /** True when the spec contains a bare `*` (discovery mode, docs/agents.md). */
  wildcard: boolean;
  /** Names the spec lists literally (no glob characters). */
  named: string[];
  /** May `name` be invoked with `args`? Without `env`, path args resolve against `process.cwd()`. */
  allows(name: string, args?: unknown, env?: MatchEnv): boolean;
  /**
   * True when a rule admits this call with an absolute pattern on `key`: the explicit permission
   * file tools need to reach a path outside the workspace (docs/security.md).
   */
  allowsOutside(name: string, key: string, args: unknown, env: MatchEnv): boolean;
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
  const pattern = m[2].trim().replace(/[,)]/g, '');
  // Claude Code's `prefix:*` means the command `prefix`, alone or with arguments (docs/writing-skills.md:
  // `Bash(git:*)` → `shell(command=git *)`).
  const prefix = /^(.*):\*$/.exec(pattern);
  if (prefix) return [`${alias.tool}(${alias.arg}=${prefix[1]})`, `${alias.tool}(${alias.arg}=${prefix[1]} *)`];
  return [`${alias.tool}(${alias.arg}=${pattern})`];
}

const PATH_KEY = /^(?:path|paths|file|files|filename|filepath|dir|dirs|directory|cwd|folder)$|(?:Path|File|Dir|_path|_file|_dir|-path|-file|-dir)$/;
const COMMAND_KEY = /^(?:command|cmd)$/;

/** How the arg `key` of a tool with `params` is matched: its schema's `x-path` / `x-command`, else its name. */
export function argKind(key: string, params?: unknown): ArgKind {
  const prop = (params as { properties?: Record<string, Record<string, unknown>> } | undefined)?.properties?.[key];
  if (prop && typeof prop === 'object') {
    if (prop['x-path'] === true) return 'path';
    if (prop['x-command'] === true) return 'command';
  }
  if (PATH_KEY.test(key)) return 'path';
  if (COMMAND_KEY.test(key)) return 'command';
  return 'text';
}

/**
 * A shell command with nothing that chains, substitutes, expands or redirects: one simple command
 * (docs/security.md). `$` is refused outright — `$VAR` would read the host's environment, credentials
 * included — as are other line breaks (U+2028/9) that a shell or a reader may treat as one.
 */
export function isSimpleCommand(command: string): boolean {
  return !/[;&|`<>\n\r\u2028\u2029$\0]/.test(command);
}

/** The real path of `file`: symlinks of its longest existing prefix resolved, the rest appended. */
export function realPath(file: string): string {
  const abs = path.resolve(file);
  let head = abs;
  const tail: string[] = [];
  for (;;) {
    try {
      const real = fs.realpathSync(head);
      return tail.length ? path.join(real, ...tail.reverse()) : real;
    } catch {
      const parent = path.dirname(head);
      if (parent === head) return abs;
      tail.push(path.basename(head));
      head = parent;
    }
  }
}

/** True when `file` is `dir` or inside it (both real paths). */
export function isInside(file: string, dir: string): boolean {
  const rel = path.relative(dir, file);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

const pathMatchers = new Map<string, (file: string) => boolean>();

/** The glob resolved against `cwd` like the value: its static base through realpath, `..` folded. */
function pathMatcher(glob: string, cwd: string): (file: string) => boolean {
  const key = `${cwd}\0${glob}`;
  let m = pathMatchers.get(key);
  if (!m) {
    const abs = path.isAbsolute(glob) ? path.normalize(glob) : path.join(cwd, glob);
    const scan = picomatch.scan(abs);
    const base = realPath(scan.base || '/');
    const pattern = scan.glob ? `${base === '/' ? '' : base}/${scan.glob}` : base;
    m = picomatch(pattern, { dot: true }) as (file: string) => boolean;
    if (pathMatchers.size > 1000) pathMatchers.clear();
    pathMatchers.set(key, m);
  }
  return m;
}

function matches(c: Constraint, kind: ArgKind, value: string, env: MatchEnv | undefined): boolean {
  switch (kind) {
    case 'path': {
      const cwd = realPath(env?.cwd ?? process.cwd());
      return pathMatcher(c.glob, cwd)(realPath(path.resolve(cwd, value)));
    }
    case 'command':
      return isSimpleCommand(value) && c.text(value);
    default:
      return c.text(value);
  }
}

function ruleAllows(rule: Rule, args: unknown, env: MatchEnv | undefined): boolean {
  return rule.constraints.every((c) => {
    const v = args !== null && typeof args === 'object' ? (args as Record<string, unknown>)[c.key] : undefined;
    if (v === undefined) return false;
    if (typeof v !== 'string') return c.text(JSON.stringify(v));
    return matches(c, argKind(c.key, env?.params), v, env);
  });
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
      .map((c): Constraint => {
        const eq = c.indexOf('=');
        if (eq <= 0) throw new AgentAppsError('E_CONFIG', `allowed-tools: constraint '${c}' in '${token}' must look like key=glob`);
        const key = c.slice(0, eq).trim();
        const glob = c.slice(eq + 1).trim();
        return { key, glob, absolute: glob.startsWith('/'), text: picomatch(glob, { dot: true, bash: true }) as (v: string) => boolean };
      });
    rules.push({ match: picomatch(m[1]!, { dot: true }) as (v: string) => boolean, constraints, text: token });
  }
  const wildcard = tokens.some((t) => t === '*');
  const named = [...new Set(tokens.map((t) => t.replace(/\(.*\)$/, '')).filter((t) => !/[*?[\]{}!]/.test(t)))];
  const result: AllowedTools = {
    spec,
    rules,
    wildcard,
    named,
    allows(name, args, env) {
      return rules.some((r) => r.match(name) && ruleAllows(r, args, env));
    },
    allowsOutside(name, key, args, env) {
      return rules.some((r) => r.match(name) && r.constraints.some((c) => c.key === key && c.absolute) && ruleAllows(r, args, env));
    },
  };
  if (cache.size > 1000) cache.clear();
  cache.set(spec, result);
  return result;
}
