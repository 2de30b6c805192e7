// The untrusted-caller policy (docs/security.md, "The callers"): one set of rules for everything
// that reaches the runtime from a party it does not trust — agent code through the bridge
// (src/agent/bridge.ts), and every way in from outside the process: MCP clients of `mcp serve`,
// NATS publishers to a worker's queue, events from NATS that run a route or ref handler, ACP
// clients of `agent-apps acp`, gateway senders. Each rule is checked before anything is resolved,
// imported or run on the caller's behalf:
//
// - the invoked ref is a bare tool name, never a path, URI or definition;
// - no `$`-key (`$context` would add middleware) and no `__proto__` key at any depth of the args of
//   a request from outside; agent code may pass `$context.middleware`, checked (sanitizeArgs);
// - the caller's allow-list decides what it may call, arg constraints included (callable.ts); a
//   surface offers the workspace's own skills by default, the library's built-ins only when named;
// - every arg a tool declares as a ref (`x-ref`) is a bare name of a tool the caller could call
//   itself with the handler's args; every path arg (`x-path`) stays inside the workspace (and a
//   SKILL.md skill's folder) unless an absolute pattern in the allow-list admits it;
// - `trust: deny` tools are refused; `trust: ask` ones wait on an approval gate where the surface
//   can ask a person, and are refused "needs approval" where it cannot;
// - terminal-only skills (`repl`, `tutor`, anything tagged `interactive`) are not for surfaces.
import path from 'node:path';
import { AgentAppsError } from '../core/errors.ts';
import { isPlainObject } from '../core/path.ts';
import { isPathRef } from '../loader/names.ts';
import { isInside, parseAllowedTools, realPath } from '../kernel/allowed-tools.ts';
import type { Kernel } from '../kernel/orchestrator.ts';
import type { Context, InvokeOptions, JsonObject, LoadedTool, Nonlocals, ToolDef } from '../core/types.ts';
import { runDesk, type AskDesk } from '../kernel/asking.ts';
import { isCallable, type Callable, type VisibleOptions } from './callable.ts';
import { ApprovalState, passGate, refuseByTrust, trustOf } from './approval.ts';

/** What an untrusted caller may do: who may be called (callable.ts) and where path args may reach. */
export interface CallerPolicy extends VisibleOptions {
  /** Real paths that path args may reach without an absolute pattern: the workspace, a SKILL.md skill's folder. */
  roots: readonly string[];
}

/** How a caller is named in refusals: the surface's name, else agent code. */
const who = (policy: VisibleOptions) => policy.surface ?? 'agent code';

/** Whether a loaded tool is the library's, per tool and library: its file never changes (a reload is a new LoadedTool). */
const builtins = new WeakMap<LoadedTool, { library: string; builtin: boolean }>();

/** A tool of the library's own `skills/` folder (file-read, shell, event-*, skill-describe …). */
export function isBuiltin(kernel: Kernel, tool: LoadedTool): boolean {
  if (tool.file === undefined) return false;
  const library = kernel.registry.library;
  const hit = builtins.get(tool);
  if (hit !== undefined && hit.library === library) return hit.builtin;
  const builtin = isInside(tool.file, library);
  builtins.set(tool, { library, builtin });
  return builtin;
}

/** Skills that need a person at a terminal (`repl`, `tutor`, `interactive: true`): never for a surface. */
export function isTerminalOnly(tool: LoadedTool): boolean {
  return tool.decl.tags.includes('interactive') || tool.metadata.interactive === true;
}

// ── the rules on args ─────────────────────────────────────────────────────────────────────────

/**
 * JSON may carry an own `__proto__` key; copied with assignment anywhere on the host it would
 * become a prototype, whose inherited values no own-key check sees. Refused at any depth.
 */
export function noProtoKeys(value: unknown, what: string, policy: VisibleOptions = {}, depth = 0): void {
  if (value === null || typeof value !== 'object' || depth > 64) return;
  if (Array.isArray(value)) {
    for (const v of value) noProtoKeys(v, what, policy, depth + 1);
    return;
  }
  for (const k of Object.keys(value)) {
    if (k === '__proto__') throw new AgentAppsError('E_UNTRUSTED_REF', `${who(policy)} may not pass a '__proto__' key (in ${what})`);
    noProtoKeys((value as Record<string, unknown>)[k], what, policy, depth + 1);
  }
}

/**
 * A request from outside carries data only: no key starting with `$` (the kernel reads `$context`
 * as invoke options — middleware, locals) and no `__proto__`, at any depth. Walked with a stack,
 * not recursion, so a million-deep value is refused or passed without exhausting the host's stack.
 */
export function dataOnly(value: unknown, policy: VisibleOptions): void {
  const stack: { v: unknown; at: string }[] = [{ v: value, at: 'args' }];
  let nodes = 0;
  while (stack.length) {
    const { v, at } = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (++nodes > 1_000_000) throw new AgentAppsError('E_VALIDATION', `${who(policy)} sent args of more than 1,000,000 values`);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push({ v: v[i], at: nodes < 64 ? `${at}[${i}]` : at });
      continue;
    }
    for (const k of Object.keys(v)) {
      if (k === '__proto__' || k.startsWith('$')) {
        throw new AgentAppsError('E_UNTRUSTED_REF', `${who(policy)} may not pass '${k.slice(0, 40)}' (at ${at}): requests from outside carry data only — no $-keys, no __proto__`);
      }
      stack.push({ v: (v as Record<string, unknown>)[k], at: nodes < 64 ? `${at}.${k.slice(0, 40)}` : at });
    }
  }
}

export function untrustedRef(where: string, ref: unknown, policy: VisibleOptions = {}): AgentAppsError {
  const shown = typeof ref === 'string' ? JSON.stringify(ref.slice(0, 80)) : typeof ref === 'object' && ref !== null ? 'a definition' : JSON.stringify(ref);
  return new AgentAppsError('E_UNTRUSTED_REF', `${who(policy)} may only ${where === 'invoke' ? 'invoke tools' : 'name tools'} by name; ${shown} is a path, URI or definition${where === 'invoke' ? '' : ` (${where})`}`);
}

/**
 * Args a tool declares as refs (`x-ref`) or paths (`x-path`), found by walking its params schema
 * along the value (properties, additionalProperties, items, anyOf / oneOf / allOf).
 */
type Visit = (kind: 'ref' | 'path', value: string, holder: Record<string, unknown> | undefined, key: string) => void;

function walk(schema: unknown, value: unknown, visit: Visit, holder: Record<string, unknown> | undefined, key: string, depth = 0): void {
  if (!isPlainObject(schema) || depth > 32) return;
  if (typeof value === 'string') {
    if (schema['x-ref'] === true) visit('ref', value, holder, key);
    if (schema['x-path'] === true) visit('path', value, holder, key);
  }
  for (const k of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = schema[k];
    if (Array.isArray(list)) for (const s of list) walk(s, value, visit, holder, key, depth + 1);
  }
  if (isPlainObject(value)) {
    const props = isPlainObject(schema.properties) ? schema.properties : undefined;
    const extra = schema.additionalProperties;
    for (const [k, v] of Object.entries(value)) walk(props && Object.hasOwn(props, k) ? props[k] : extra, v, visit, value, k, depth + 1);
  } else if (Array.isArray(value) && isPlainObject(schema.items)) {
    for (const item of value) walk(schema.items, item, visit, holder, key, depth + 1);
  }
}

/** Every ref arg (`x-ref`) is a bare tool name (E_UNTRUSTED_REF otherwise); nothing is resolved. */
export function refsAreNames(tool: string, params: unknown, args: unknown, policy: VisibleOptions = {}): void {
  walk(params, args, (kind, value, _holder, key) => {
    if (kind === 'ref' && isPathRef(value)) throw untrustedRef(`${tool}'s ${key || 'ref'}`, value, policy);
  }, undefined, '');
}

/**
 * The arg rules for a call from an untrusted caller to `tool` with `args`: a ref arg is a bare
 * name of a tool the caller could invoke with the handler's `args`; a path arg stays inside the
 * policy's roots unless an absolute pattern in the caller's allow-list admits it.
 */
export async function checkArgs(kernel: Kernel, paths: readonly string[], cwd: string, tool: string, params: unknown, args: unknown, policy: CallerPolicy, skillName: string, depth = 0, gates: Gates = NO_GATES): Promise<void> {
  const found: { kind: 'ref' | 'path'; value: string; holder: Record<string, unknown> | undefined; key: string }[] = [];
  walk(params, args, (kind, value, holder, key) => found.push({ kind, value, holder, key }), undefined, '');
  for (const f of found) {
    if (f.kind === 'ref') {
      if (isPathRef(f.value)) throw untrustedRef(`${tool}'s ${f.key || 'ref'}`, f.value, policy);
      const named = await kernel.resolve(f.value, paths, cwd);
      const handlerArgs = isPlainObject(f.holder?.args) ? f.holder!.args : {};
      // The handler's args become the top-level args of its invocation, later and from elsewhere
      // (the bus, a delegate): no `$context` or other `$`-key may ride along in them.
      const dollar = Object.keys(handlerArgs).find((k) => k.startsWith('$'));
      if (dollar) throw new AgentAppsError('E_UNTRUSTED_REF', `${who(policy)} may not pass '${dollar}' in the args of ${tool}'s ${f.key || 'ref'}`);
      const check = isCallable(named.name, named.decl.visibility === 'hidden', policy, handlerArgs, { cwd, params: named.decl.params }, isBuiltin(kernel, named));
      if (!check.ok) throw new AgentAppsError('E_ALLOWED_TOOLS', `'${skillName}' may not name '${f.value}' as ${tool}'s ${f.key || 'ref'}: ${check.why}`);
      // …and they pass the same arg rules as if the caller invoked the handler itself,
      if (depth < 8) await checkArgs(kernel, paths, cwd, named.name, named.decl.params, handlerArgs, policy, skillName, depth + 1, gates);
      // …and its trust and gates: naming a tool is calling it later, where no gate would open.
      await gates.pass(named, handlerArgs, check, `${tool}'s ${f.key || 'ref'}`);
    } else {
      const real = realPath(path.resolve(cwd, f.value));
      if (policy.roots.some((root) => isInside(real, root))) continue;
      const admitted = policy.allowedTools !== undefined && parseAllowedTools(policy.allowedTools).allowsOutside(tool, f.key, args, { cwd, params });
      if (!admitted) {
        const list = policy.surface !== undefined ? 'the allow-list' : 'allowed-tools';
        throw new AgentAppsError(
          'E_ALLOWED_TOOLS',
          `'${skillName}' may not reach ${JSON.stringify(f.value.slice(0, 200))} with ${tool}: it is outside the workspace; an absolute pattern in ${list} admits it (${tool}(${f.key}=/some/dir/*))`,
        );
      }
    }
  }
}

/**
 * Agent code may pass `$context: { middleware }`, but only middleware it could invoke itself —
 * hidden ones (delegate, validate-*) only when allowed-tools names them, arg constraints and ref /
 * path args checked against the middleware's args (`delegate(ref=my-*)`) — and never `fn` or
 * `remove` (which would drop a validation from the chain of the tool it calls).
 */
const EXTRA_ENTRY_KEYS = ['args', 'before', 'after', 'remove', 'fn'];

export async function sanitizeArgs(kernel: Kernel, paths: readonly string[], cwd: string, value: unknown, policy: CallerPolicy, skillName: string, gates: Gates = NO_GATES): Promise<unknown> {
  if (!isPlainObject(value)) return value ?? {};
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) {
    if (!k.startsWith('$')) {
      out[k] = v as JsonObject[string];
      continue;
    }
    if (k !== '$context') throw new AgentAppsError('E_UNTRUSTED_REF', `agent code may not pass '${k}' to invoke`);
    const c = (isPlainObject(v) ? v : {}) as JsonObject;
    for (const key of Object.keys(c)) {
      if (key !== 'middleware' && key !== 'locals') throw new AgentAppsError('E_UNTRUSTED_REF', `agent code may only pass $context.middleware, not $context.${key}`);
    }
    const locals = isPlainObject(c.locals) ? c.locals : {};
    for (const key of Object.keys(locals)) {
      if (key !== 'middleware') throw new AgentAppsError('E_UNTRUSTED_REF', `agent code may only pass $context.locals.middleware, not $context.locals.${key}`);
    }
    const mw: JsonObject = { ...(isPlainObject(c.middleware) ? c.middleware : {}), ...(isPlainObject(locals.middleware) ? locals.middleware : {}) };
    for (const [name, spec] of Object.entries(mw)) {
      // The kernel reads `{ args, before, after, remove, fn }` (those keys only) as an entry spec, anything else as args.
      const keys = isPlainObject(spec) ? Object.keys(spec) : [];
      const isSpec = keys.length > 0 && keys.every((key) => EXTRA_ENTRY_KEYS.includes(key));
      if (isSpec && (keys.includes('fn') || keys.includes('remove'))) throw new AgentAppsError('E_ALLOWED_TOOLS', `agent code may not add middleware '${name}' with fn or remove`);
      const mwArgs = isSpec ? (spec as JsonObject).args : spec;
      if (isPathRef(name)) throw untrustedRef('$context.middleware', name);
      let tool;
      try {
        tool = await kernel.resolve(name, paths, cwd);
      } catch {
        throw new AgentAppsError('E_ALLOWED_TOOLS', `agent code may not add middleware '${name}': no such skill`);
      }
      const decl = tool.decl;
      refsAreNames(name, decl.params, mwArgs);
      // Config middleware (cwd, paths, model, log, mcp) chooses search paths, providers and
      // endpoints: what agent code may never choose, even where allowed-tools names it.
      if (decl.tags.includes('meta-config')) throw new AgentAppsError('E_ALLOWED_TOOLS', `agent code may not add middleware '${name}': it configures the runtime (search paths, cwd, model, logging)`);
      // Trust and approval are the person's, never the model's: `trust` cannot be overridden from a call.
      if (decl.tags.includes('meta-trust')) throw new AgentAppsError('E_ALLOWED_TOOLS', `agent code may not add middleware '${name}': it decides what agent code may do`);
      const check = isCallable(name, decl.visibility === 'hidden', policy, mwArgs ?? {}, { cwd, params: decl.params }, isBuiltin(kernel, tool));
      if (!check.ok) throw new AgentAppsError('E_ALLOWED_TOOLS', `agent code may not add middleware '${name}': ${check.why}`);
      await checkArgs(kernel, paths, cwd, name, decl.params, mwArgs, policy, skillName, 0, gates);
      await gates.pass(tool, mwArgs ?? {}, check, '$context.middleware');
    }
    out.$context = { middleware: mw };
  }
  return out;
}

// ── gates ───────────────────────────────────────────────────────────────────────────────────

/** Trust and approval for a tool an untrusted caller calls, names as a ref, or adds as middleware. */
export interface Gates {
  /** Refuses (trust: deny) or waits on a gate (ask-tools, trust: ask); returns when the call may go on. */
  pass(tool: LoadedTool, args: unknown, callable: Callable & { ok: true }, via?: string): Promise<void>;
  /** Records a refusal on the agent run; returns the error to throw. */
  refused(tool: string, error: AgentAppsError): AgentAppsError;
}

/** Outside a bridge (no execution, no person): a gate is refused, trust: deny too. */
export const NO_GATES: Gates = {
  async pass(tool, _args, callable) {
    if (callable.gate !== undefined) throw new AgentAppsError('E_ALLOWED_TOOLS', `'${tool.name}' needs approval (ask-tools '${callable.gate}'); run in a terminal or pass --approve`);
  },
  refused: (_tool, error) => error,
};

// ── ways in from outside the process ─────────────────────────────────────────────────────────

/** A way in: how its callers are named, and what they may call. */
export interface Surface {
  /** How its callers are named in messages: "an MCP client", "a NATS publisher" … */
  name: string;
  /**
   * The surface's allow-list (allowed-tools syntax: `mcp serve --allow`, `worker --allow`, a
   * route's skill); undefined: the workspace's own public skills, no library built-in.
   */
  allow?: string;
}

/** A request that passed every rule: the tool it names and its args, as they will be invoked. */
export interface Admitted {
  tool: LoadedTool;
  args: JsonObject;
  policy: CallerPolicy;
}

/**
 * The real path of a runtime's workspace, resolved once per workspace path: a serve process
 * checks it on every request, and resolving it was one lstat per path segment each time
 * (docs/serve.md, "Performance"). Kept per root context, and resolved again if the root's
 * workspace is another path.
 */
const workspaceRoots = new WeakMap<Context, { workspace: string; roots: readonly string[] }>();

function workspaceRootsOf(root: Context): readonly string[] {
  const workspace = root.locals.config.workspace;
  let hit = workspaceRoots.get(root);
  if (hit === undefined || hit.workspace !== workspace) workspaceRoots.set(root, (hit = { workspace, roots: Object.freeze([realPath(workspace)]) }));
  return hit.roots;
}

/** The policy a surface's callers get: its allow-list, confined to the workspace. */
export function surfacePolicy(root: Context, surface: Surface): CallerPolicy {
  return {
    surface: surface.name,
    ...(surface.allow !== undefined ? { allowedTools: surface.allow } : {}),
    roots: workspaceRootsOf(root),
  };
}

/**
 * Checks a request from outside the process against every rule above, before anything runs on its
 * behalf; throws E_UNTRUSTED_REF / E_ALLOWED_TOOLS (and the resolver's E_TOOL_NOT_FOUND) otherwise.
 * Nothing is imported but the named tool itself (and the tools its ref args name).
 */
export async function admit(root: Context, surface: Surface, ref: unknown, rawArgs: unknown, as: 'call' | 'prompt' = 'call', request: { nonlocals?: Nonlocals; signal?: AbortSignal } = {}): Promise<Admitted> {
  const policy = surfacePolicy(root, surface);
  if (typeof ref !== 'string' || isPathRef(ref)) throw untrustedRef('invoke', ref, policy);
  if (rawArgs !== undefined && rawArgs !== null && !isPlainObject(rawArgs)) throw new AgentAppsError('E_VALIDATION', `${surface.name} sent args that are not an object`);
  const args = (rawArgs ?? {}) as JsonObject;
  dataOnly(args, policy);
  const kernel = root.globals.internals.kernel;
  const { paths, cwd } = root.locals.config;
  // The tool the registry holds already, else the look-up (the same tool either way: Registry.findLoaded).
  const tool = kernel.registry.findLoaded(ref, paths) ?? (await kernel.resolve(ref, paths, cwd));
  if (isTerminalOnly(tool)) throw new AgentAppsError('E_ALLOWED_TOOLS', `'${tool.name}' needs a person at a terminal: ${surface.name} may not run it`);
  const env = { cwd, params: tool.decl.params };
  // A person picks a prompt: a SKILL.md hidden from models only (disable-model-invocation) is theirs to pick.
  const hidden = tool.decl.visibility === 'hidden' && !(as === 'prompt' && tool.skill?.modelInvocable === false);
  const check = isCallable(tool.name, hidden, policy, args, env, isBuiltin(kernel, tool));
  if (!check.ok) throw new AgentAppsError('E_ALLOWED_TOOLS', `${surface.name} may not invoke '${ref}': ${check.why}`);
  // A request whose run asks through a gateway (remote-approval.ts) waits on its gates there.
  const gates = surfaceGates(root, surface, request.nonlocals ? runDesk(request.nonlocals) : undefined, request.signal);
  await checkArgs(kernel, paths, cwd, tool.name, tool.decl.params, args, policy, surface.name, 0, gates);
  await gates.pass(tool, args, check);
  return { tool, args, policy };
}

/**
 * Trust for a surface's callers: deny refuses; ask opens an approval gate, which asks a person
 * where the surface has one to ask (`agent-apps acp` asks its client) and is refused "needs
 * approval" where it does not (approval.ts).
 */
function surfaceGates(root: Context, surface: Surface, desk?: AskDesk, signal?: AbortSignal): Gates {
  const kernel = root.globals.internals.kernel;
  const state = new ApprovalState();
  return {
    async pass(tool, args, callable, via) {
      const base = { served: root, display: surface.name, from: surface.name, state, tool: tool.name, args, ...(via ? { via } : {}) };
      const trust = await trustOf(kernel, tool, root.locals.config.paths);
      if (trust.value === 'deny') refuseByTrust(base, trust);
      const because = callable.gate !== undefined ? { kind: 'ask-tools' as const, pattern: callable.gate } : trust.value === 'ask' ? { kind: 'trust' as const, source: trust.source } : undefined;
      if (!because) return;
      await passGate({ ...base, params: tool.decl.params, cwd: root.locals.config.cwd, because, signal: signal ? AbortSignal.any([signal, root.run.signal]) : root.run.signal, ...(desk ? { desk } : {}) });
    },
    refused: (_tool, error) => error,
  };
}

/** One anonymous caller skill per surface and runtime, so that its pipeline is planned once. */
const callers = new WeakMap<Context, Map<string, ToolDef>>();
/** The calls under way, by the id their caller skill is invoked with (args stay plain data). */
const pending = new Map<number, { name: string; args: JsonObject; options: InvokeOptions }>();
let nextCall = 0;

function callerDef(root: Context, surface: Surface): ToolDef {
  let bySurface = callers.get(root);
  if (!bySurface) callers.set(root, (bySurface = new Map()));
  let def = bySurface.get(surface.name);
  if (!def) {
    def = {
      name: 'ingress',
      frontmatter: { name: 'ingress', description: `A request from ${surface.name}.` },
      fn: (ctx: Context, a: { call: number }) => {
        const call = pending.get(a.call);
        pending.delete(a.call);
        if (!call) throw new AgentAppsError('E_UNTRUSTED_REF', 'no such request');
        return ctx.manager.invoke(call.name, call.args, call.options);
      },
    };
    bySurface.set(surface.name, def);
  }
  return def;
}

/**
 * Runs a request from outside the process: `admit`, then the invocation from a caller context
 * marked untrusted — so the skills that look at who called them (skill-describe, skill-list,
 * file-read, trust) apply the same policy, and a URI ref further down is refused by the kernel.
 * A refusal is logged (type `refused`, tag `policy`) and thrown for the surface to report.
 */
export async function invokeUntrusted(root: Context, surface: Surface, ref: unknown, args: unknown, options: { signal?: AbortSignal; context?: InvokeOptions['context']; as?: 'call' | 'prompt' } = {}): Promise<unknown> {
  let admitted: Admitted;
  try {
    admitted = await admit(root, surface, ref, args, options.as, { ...(options.context?.nonlocals ? { nonlocals: options.context.nonlocals } : {}), ...(options.signal ? { signal: options.signal } : {}) });
  } catch (err) {
    const e = err as AgentAppsError;
    if (e?.code === 'E_UNTRUSTED_REF' || e?.code === 'E_ALLOWED_TOOLS') {
      root.manager.log({ type: 'refused', tag: 'policy', level: 'warn', code: e.code, text: `refused a request from ${surface.name}: ${e.message}` });
    }
    throw err;
  }
  const { tool, args: clean, policy } = admitted;
  const agent = { ...policy, model: {}, budget: { used: 0, limit: 64 * 2 ** 20 }, approvals: new ApprovalState() };
  const inner: InvokeOptions = { context: { ...options.context, locals: { ...options.context?.locals, internals: { gated: true } } } };
  const id = ++nextCall;
  pending.set(id, { name: tool.name, args: clean, options: inner });
  try {
    return await root.manager.invoke(callerDef(root, surface), { call: id }, { context: { ...(options.signal ? { signal: options.signal } : {}), locals: { internals: { untrustedRef: true, agent } } } });
  } finally {
    pending.delete(id);
  }
}
