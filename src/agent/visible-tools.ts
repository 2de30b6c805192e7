// resolveVisibleTools (docs/agents.md): the one filter the agent and the toolchain
// share. Hidden tools only when named in allowed-tools; allowed-tools globs apply; the invoking
// skill is excluded unless named (self-recursion); the agent and its provider always excluded.
// `ask-tools` (docs/agents.md) lists tools the agent may call with a person's approval: a call one of
// its rules matches is callable with a `gate` (the bridge opens it), whatever allowed-tools says.
import { parseAllowedTools } from '../kernel/allowed-tools.ts';
import type { Kernel } from '../kernel/orchestrator.ts';
import type { JsonObject } from '../core/types.ts';
import { ALWAYS_EXCLUDED, isCallable, type VisibleOptions } from '../policy/callable.ts';

export { isCallable, type Callable, type VisibleOptions } from '../policy/callable.ts';

export interface ToolDoc {
  name: string;
  description?: string;
  params?: JsonObject;
  returns?: JsonObject;
  role: 'skill' | 'middleware';
  /** Listed in ask-tools: a call needs a person's approval (said in the tool's documentation). */
  approval?: boolean;
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

export async function resolveVisibleTools(kernel: Kernel, paths: readonly string[], cwd: string, opts: VisibleOptions): Promise<VisibleTools> {
  const spec = opts.allowedTools ? parseAllowedTools(opts.allowedTools) : undefined;
  const mode = !spec || spec.wildcard ? 'discovery' : 'constrained';
  const excluded = [...ALWAYS_EXCLUDED, ...(opts.provider ? [opts.provider] : [])];
  // docs/security.md: discovery loads (imports) only the names the agent may call; the rest stay unread.
  const ask = opts.askTools ? parseAllowedTools(opts.askTools) : undefined;
  const isNamed = (name: string) => (spec?.named.includes(name) ?? false) || (ask?.named.includes(name) ?? false);
  const only = (name: string) => isCallable(name, false, opts).ok && (mode !== 'discovery' || isNamed(name));
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
    const named = isNamed(name);
    const callable = isCallable(name, summary.visibility === 'hidden', opts);
    if (!callable.ok) continue;
    // Constrained-mode rules need a match; arg constraints are checked when the call happens.
    if (spec && !spec.rules.some((r) => r.match(name)) && !ask?.rules.some((r) => r.match(name))) continue;
    // Discovery mode inlines only the tools the spec names explicitly.
    if (mode === 'discovery' && !named) continue;
    let doc: ToolDoc;
    try {
      const tool = await kernel.resolve(name, paths, cwd);
      doc = { name, description: tool.decl.description, params: tool.decl.params, returns: tool.decl.returns, role: tool.decl.role, ...(callable.gate !== undefined ? { approval: true } : {}) };
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
