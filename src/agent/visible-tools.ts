// resolveVisibleTools (seed 004, "Tool Discovery"): the one filter the agent and the toolchain
// share. Hidden tools only when named in allowed-tools; allowed-tools globs apply; the invoking
// skill is excluded unless named (self-recursion); the agent and its provider always excluded.
import { parseAllowedTools, type MatchEnv } from '../kernel/allowed-tools.ts';
import type { Kernel } from '../kernel/orchestrator.ts';
import type { JsonObject } from '../kernel/types.ts';
import { ALWAYS_EXCLUDED } from './provider.ts';

export interface ToolDoc {
  name: string;
  description?: string;
  params?: JsonObject;
  returns?: JsonObject;
  role: 'skill' | 'middleware';
}

export interface VisibleTools {
  /** constrained: an explicit list, all inlined. discovery: no list or a bare `*`. */
  mode: 'constrained' | 'discovery';
  /** Documented in full in the system prompt. */
  tools: ToolDoc[];
  /** Middleware with params, documented separately (activated via frontmatter options). */
  middleware: ToolDoc[];
  /** The provider and agent names that are never offered. */
  excluded: string[];
}

export interface VisibleOptions {
  allowedTools?: string;
  /** The skill whose agent this is. */
  self?: string;
  /** The agent provider in use (always excluded). */
  provider?: string;
  /**
   * The policies of the agents whose code started this one without granting it tools explicitly
   * (SPEC §15: a sub-agent's limits are ceilings from its caller): a call must pass them too.
   */
  within?: readonly VisibleOptions[];
}

/** May agent code invoke `name` (with `args`)? The same rules as discovery, applied at call time. */
export function isCallable(name: string, hidden: boolean, opts: VisibleOptions, args?: unknown, env?: MatchEnv): { ok: true } | { ok: false; why: string } {
  const own = callableBy(name, hidden, opts, args, env);
  if (!own.ok) return own;
  for (const outer of opts.within ?? []) {
    const check = callableBy(name, hidden, outer, args, env);
    if (!check.ok) return { ok: false, why: `the agent whose code started this one may not use it either (${check.why})` };
  }
  return own;
}

function callableBy(name: string, hidden: boolean, opts: VisibleOptions, args?: unknown, env?: MatchEnv): { ok: true } | { ok: false; why: string } {
  const spec = opts.allowedTools ? parseAllowedTools(opts.allowedTools) : undefined;
  const named = spec?.named.includes(name) ?? false;
  // Without args (discovery) the name decides; arg constraints are checked when the call happens.
  const permitted = !spec || (args === undefined ? spec.rules.some((r) => r.match(name)) : spec.allows(name, args, env));
  if (!permitted) return { ok: false, why: `not allowed by allowed-tools '${opts.allowedTools}'` };
  if ((ALWAYS_EXCLUDED.includes(name) || name === opts.provider) && !named) return { ok: false, why: 'the agent and its provider cannot be invoked from agent code unless named in allowed-tools' };
  if (name === opts.self && !named) return { ok: false, why: `a skill's agent cannot invoke the skill itself ('${name}') unless allowed-tools names it` };
  if (hidden && !named) return { ok: false, why: `'${name}' is hidden: name it in allowed-tools to use it` };
  return { ok: true };
}

export async function resolveVisibleTools(kernel: Kernel, paths: readonly string[], cwd: string, opts: VisibleOptions): Promise<VisibleTools> {
  const spec = opts.allowedTools ? parseAllowedTools(opts.allowedTools) : undefined;
  const mode = !spec || spec.wildcard ? 'discovery' : 'constrained';
  const excluded = [...ALWAYS_EXCLUDED, ...(opts.provider ? [opts.provider] : [])];
  // SPEC §15: discovery loads (imports) only the names the agent may call; the rest stay unread.
  const only = (name: string) => isCallable(name, false, opts).ok && (mode !== 'discovery' || (spec?.named.includes(name) ?? false));
  // MCP servers are started only when a rule could name one of their tools (`fs-*`, `fs-read`):
  // in discovery mode only named tools are inlined, the rest found on demand with skill-list.
  const mcpServers = (prefix: string) => {
    const p = `${prefix}-`;
    if (mode === 'discovery') return (spec?.named ?? []).some((n) => n.startsWith(p));
    return spec!.rules.some((r) => {
      const literal = /^[^*?[\]{}!(]*/.exec(r.text)![0];
      return literal.startsWith(p) || p.startsWith(literal);
    });
  };
  const all = await kernel.registry.list(paths, { all: true, only, mcpServers });
  const tools: ToolDoc[] = [];
  const middleware: ToolDoc[] = [];
  for (const summary of all) {
    if (summary.error) continue;
    const name = summary.name;
    const named = spec?.named.includes(name) ?? false;
    if (!isCallable(name, summary.visibility === 'hidden', opts).ok) continue;
    // Constrained-mode rules need a match; arg constraints are checked when the call happens.
    if (spec && !spec.rules.some((r) => r.match(name))) continue;
    // Discovery mode inlines only the tools the spec names explicitly.
    if (mode === 'discovery' && !named) continue;
    let doc: ToolDoc;
    try {
      const tool = await kernel.resolve(name, paths, cwd);
      doc = { name, description: tool.decl.description, params: tool.decl.params, returns: tool.decl.returns, role: tool.decl.role };
    } catch {
      continue;
    }
    if (doc.role === 'middleware') {
      if (doc.params) middleware.push(doc);
    } else tools.push(doc);
  }
  if (mode === 'discovery') {
    // Discovery mode always offers the two tools that explore the rest on demand.
    for (const name of ['skill-list', 'skill-describe']) {
      if (tools.some((t) => t.name === name)) continue;
      try {
        const tool = await kernel.resolve(name, paths, cwd);
        tools.push({ name, description: tool.decl.description, params: tool.decl.params, returns: tool.decl.returns, role: 'skill' });
      } catch {}
    }
  }
  return { mode, tools, middleware, excluded };
}
