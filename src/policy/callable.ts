// May this caller call that tool? The one answer agent code, sub-agents and every way in from
// outside the process share (docs/security.md, "The callers"): allowed-tools globs and arg
// constraints apply; hidden tools only when named; the agent and its provider only when named; a
// skill's agent never calls its own skill unless named (self-recursion). `ask-tools` lists tools
// callable with a person's approval (a `gate`). A surface — an MCP client, a NATS publisher, an ACP
// client, a gateway sender — gets the workspace's own skills by default, and the library's
// built-ins only when its allow-list names them.
import { parseAllowedTools, type MatchEnv } from '../kernel/allowed-tools.ts';

/** The policy skill that starts a provider, and the default provider: never callable unless named. */
export const AGENT_SKILL = 'agent';
export const DEFAULT_AGENT_PROVIDER = 'agent-strands';
export const ALWAYS_EXCLUDED: readonly string[] = [AGENT_SKILL, DEFAULT_AGENT_PROVIDER];

export interface VisibleOptions {
  allowedTools?: string;
  /** `ask-tools`: allowed-tools syntax; a call one of its rules matches needs approval. */
  askTools?: string;
  /** The skill whose agent this is. */
  self?: string;
  /** The agent provider in use (always excluded). */
  provider?: string;
  /**
   * The policies of the agents whose code started this one without granting it tools explicitly
   * (a sub-agent's limits are ceilings from its caller): a call must pass them too.
   */
  within?: readonly VisibleOptions[];
  /**
   * Set for a caller from outside the process (untrusted.ts): how it is named in messages. Without
   * `allowedTools` it may call the workspace's own public skills; a library built-in only when a
   * rule of `allowedTools` other than a bare `*` matches it.
   */
  surface?: string;
}

/**
 * May the caller invoke `name` (with `args`)? The same rules as discovery, applied at call time.
 * `gate`: the call is admitted only with a person's approval — the ask-tools rule (its text) that
 * matched, this agent's or a calling agent's (a sub-agent never escapes its caller's gates).
 * `builtin`: the tool is one of the library's (only surfaces treat those apart).
 */
export type Callable = { ok: true; gate?: string } | { ok: false; why: string };

export function isCallable(name: string, hidden: boolean, opts: VisibleOptions, args?: unknown, env?: MatchEnv, builtin = false): Callable {
  const own = callableBy(name, hidden, opts, args, env, builtin);
  if (!own.ok) return own;
  let gate = own.gate;
  for (const outer of opts.within ?? []) {
    const check = callableBy(name, hidden, outer, args, env, builtin);
    if (!check.ok) return { ok: false, why: `the agent whose code started this one may not use it either (${check.why})` };
    gate ??= check.gate;
  }
  return gate === undefined ? { ok: true } : { ok: true, gate };
}

function callableBy(name: string, hidden: boolean, opts: VisibleOptions, args: unknown, env: MatchEnv | undefined, builtin: boolean): Callable {
  const spec = opts.allowedTools ? parseAllowedTools(opts.allowedTools) : undefined;
  const ask = opts.askTools ? parseAllowedTools(opts.askTools) : undefined;
  const named = (spec?.named.includes(name) ?? false) || (ask?.named.includes(name) ?? false);
  if (opts.surface !== undefined && builtin && !spec?.rules.some((r) => r.text !== '*' && r.match(name))) {
    return { ok: false, why: `'${name}' is a built-in of the agent-apps library: ${opts.surface} may call it only when the surface's allow-list names it (--allow ${name})` };
  }
  // Without args (discovery) the name decides; arg constraints are checked when the call happens.
  const permitted = !spec || (args === undefined ? spec.rules.some((r) => r.match(name)) : spec.allows(name, args, env));
  const gate = ask?.rules.find((r) => r.match(name) && (args === undefined || parseAllowedTools(r.text).allows(name, args, env)))?.text;
  if (!permitted && gate === undefined) {
    const list = opts.surface !== undefined ? `the allow-list '${opts.allowedTools}'` : `allowed-tools '${opts.allowedTools}'`;
    return { ok: false, why: `not allowed by ${list}${ask ? ` nor by ask-tools '${opts.askTools}'` : ''}` };
  }
  if ((ALWAYS_EXCLUDED.includes(name) || name === opts.provider) && !named) return { ok: false, why: `the agent and its provider cannot be invoked from ${opts.surface ?? 'agent code'} unless named in ${opts.surface !== undefined ? 'the allow-list' : 'allowed-tools'}` };
  if (name === opts.self && !named) return { ok: false, why: `a skill's agent cannot invoke the skill itself ('${name}') unless allowed-tools names it` };
  if (hidden && !named) return { ok: false, why: `'${name}' is hidden: name it in ${opts.surface !== undefined ? 'the allow-list' : 'allowed-tools'} to use it` };
  return gate === undefined ? { ok: true } : { ok: true, gate };
}
