// The host-call bridge for untrusted agent code (docs/security.md, "The bridge"): the rules on refs,
// args, paths and trust are the untrusted-caller policy every way in shares (src/policy/); what is
// agent code's own — the host memory budget, get / set / log, sub-agent ceilings — is here.
// Agent code comes from a model, so from anyone who can put text in front of it: every host call
// it makes — `ctx.manager.invoke / finish / fail / abort / next / get / set / log` — lands here,
// and each rule below is checked before the host does anything on its behalf:
//
// - refs are bare tool names: `invoke`'s ref, and every arg a skill declares as a ref (`x-ref` in
//   its params: skill-describe's `name`, event-subscribe's `ref`, delegate …), checked before
//   anything is resolved or imported, and the named tool must be one this agent could invoke itself;
// - every call passes allowed-tools (arg constraints on normalised, symlink-resolved paths); a
//   sub-agent's tools are what its caller granted (`agent(allowedTools=…)`, docs/agents.md);
// - path args (`x-path`) stay inside the workspace (and a SKILL.md skill's folder) unless an
//   absolute pattern in allowed-tools admits them;
// - `$context` may add only middleware the agent could invoke, never `fn` or `remove`, and never
//   the config middleware (cwd, paths, model, log);
// - a call an `ask-tools` rule matches, or of a tool whose `trust` is ask, waits on an approval
//   gate (approval.ts); a tool whose `trust` is deny is refused; every refusal is recorded;
// - a sub-agent's model config may only lower limits (`subAgentConfig`);
// - the payloads an agent run hands the host are bounded together (`HostBudget`);
// - `get` never returns internals, config or secrets; `set` never reaches them, the trace or usage;
// - every host call runs under the execution's signal, so it is aborted when the execution ends.
import { AgentAppsError } from '../core/errors.ts';
import { isPathRef } from '../loader/names.ts';
import { parseAllowedTools, type MatchEnv } from '../kernel/allowed-tools.ts';
import { isPlainObject } from '../core/path.ts';
import { isSecretKey, redact, REDACTED } from '../core/redact.ts';
import { isCallable, type VisibleOptions } from '../policy/callable.ts';
import { checkArgs, isBuiltin, noProtoKeys, refsAreNames, sanitizeArgs, untrustedRef, type CallerPolicy, type Gates } from '../policy/untrusted.ts';
import { ApprovalState, denied, isRecorded, passGate, refuseByTrust, trustOf } from '../policy/approval.ts';
import type { Kernel } from '../kernel/orchestrator.ts';
import type { Context, JsonObject, LoadedTool, LogInput } from '../core/types.ts';
import { NEXT_CALL, type AgentJournal, type AskPerson } from './journal.ts';

/** Host memory that one agent run (its sub-agents included) may pin through payloads: JSON characters. */
export interface HostBudget {
  used: number;
  readonly limit: number;
}

/** Default of `model.sandbox.hostMb`. */
export const DEFAULT_HOST_MB = 64;

/** What agent code may do, handed to its context as `locals.internals.agent`. */
export interface AgentPolicy extends CallerPolicy {
  /** The agent's effective model config: the ceiling of any sub-agent its code starts. */
  model: JsonObject;
  budget: HostBudget;
  /** This agent run's approvals and refusals (approval.ts); a sub-agent's parent is its caller's. */
  approvals?: ApprovalState;
}

/** One running execution of agent code, as the bridge sees it. */
export interface ExecutionHandle {
  /** The anonymous `agent-code` context the code runs as. */
  ctx: Context;
  /** Fires when the execution ends: host calls it started are aborted with it. */
  signal: AbortSignal;
  /** Ends the execution at once with E_SANDBOX and `message` (the model sees it). */
  kill(message: string): void;
  /** The code being run: what a person sees at an approval gate. */
  code?: string;
}

export interface BridgeOptions {
  kernel: Kernel;
  /** The skill being served (its context is what `get` / `set` / `log` act on). */
  served: Context;
  policy: AgentPolicy;
  skillName: string;
  /** How the agent is shown in logs. */
  display: string;
  /** `target.manager.next()` is available (the served skill is middleware). */
  middleware: boolean;
  finish(exec: ExecutionHandle, value: unknown): Promise<null>;
  abort(reason: unknown): void;
  /** The run's journal of this agent (docs/runs.md): `invoke` and `next` are journaled, and played back on a resume. */
  journal?: AgentJournal;
}

export type HostCall = (exec: ExecutionHandle, method: string, args: unknown[], size: number) => Promise<unknown>;

/** Every host call from sandbox code: only JSON in, only JSON out. */
export function createBridge(o: BridgeOptions): HostCall {
  const { kernel, served, policy, skillName } = o;
  const paths = served.locals.config.paths;
  const cwd = served.locals.config.cwd;
  const approvals = (policy.approvals ??= new ApprovalState());
  /** The gates of one execution's calls: ask-tools, trust (approval.ts). */
  const gates = (exec: ExecutionHandle): Gates => ({
    async pass(tool, args, callable, via) {
      const base = { served, display: o.display, state: approvals, tool: tool.name, args, ...(via ? { via } : {}) };
      const trust = await trustOf(kernel, tool, paths);
      if (trust.value === 'deny') refuseByTrust(base, trust);
      const because = callable.gate !== undefined ? { kind: 'ask-tools' as const, pattern: callable.gate } : trust.value === 'ask' ? { kind: 'trust' as const, source: trust.source } : undefined;
      if (!because) return;
      await passGate({ ...base, params: tool.decl.params, cwd, because, code: exec.code, signal: exec.signal });
    },
    refused(tool, error) {
      return denied({ state: approvals, tool }, error);
    },
  });

  return async function bridge(exec, method, a, size) {
    switch (method) {
      case 'invoke': {
        const [ref, callArgs] = a as [unknown, unknown];
        const g = gates(exec);
        // docs/runs.md: a call the journal of a resumed run holds a result for is played back, not made.
        const call = o.journal?.call(typeof ref === 'string' ? ref : String(ref), callArgs, exec.kill);
        if (call?.recorded) return call.replay((tool, err) => g.refused(tool, err));
        let clean: unknown;
        try {
          if (typeof ref !== 'string' || isPathRef(ref)) throw untrustedRef('invoke', ref);
          charge(policy.budget, size, method, exec);
          noProtoKeys(callArgs, 'invoke args');
          const tool = await kernel.resolve(ref, paths, cwd);
          // Ref args first: a path or URI is refused for what it is, before allowed-tools looks at it.
          refsAreNames(tool.name, tool.decl.params, callArgs);
          const env: MatchEnv = { cwd, params: tool.decl.params };
          const check = isCallable(tool.name, tool.decl.visibility === 'hidden', policy, callArgs ?? {}, env, isBuiltin(kernel, tool));
          if (!check.ok) throw new AgentAppsError('E_ALLOWED_TOOLS', `'${skillName}' may not invoke '${ref}': ${check.why}`);
          clean = await sanitizeArgs(kernel, paths, cwd, callArgs, policy, skillName, g);
          await checkArgs(kernel, paths, cwd, tool.name, tool.decl.params, clean, policy, skillName, 0, g);
          // A call that started in the run being resumed and left no result: run it again only if allowed.
          if (call?.unverified) await call.confirm({ idempotent: await idempotent(kernel, tool, paths), ask: asker(served) });
          // Last, once every rule has passed: trust, and the gate (a person is never asked about a call that would be refused).
          await g.pass(tool, clean, check);
        } catch (err) {
          // A refusal of this call (not an error of the tool it calls) is a denial of the agent run.
          const e = err as AgentAppsError;
          const refusal = e instanceof AgentAppsError && (e.code === 'E_ALLOWED_TOOLS' || e.code === 'E_UNTRUSTED_REF' || e.code === 'E_DENIED');
          if (refusal && e.code !== 'E_DENIED' && !isRecorded(e)) {
            g.refused(typeof ref === 'string' ? ref : '(not a name)', e);
          }
          call?.failed(err, { started: false, denied: refusal && isRecorded(e) });
          throw err;
        }
        // The trust middleware checks that calls from agent code came through here (trust.skill.ts).
        const context = { signal: exec.signal, locals: { internals: { gated: true } }, ...(call ? { nonlocals: { journalCall: call.scope } } : {}) };
        if (!call) return jsonSafe(await exec.ctx.manager.invoke(ref as string, clean as JsonObject, { context }));
        return journaled(call, () => exec.ctx.manager.invoke(ref as string, clean as JsonObject, { context }));
      }
      case 'finish':
        return o.finish(exec, a[0]);
      case 'fail': {
        const e = a[0] as { message?: string; code?: string } | string | undefined;
        const msg = typeof e === 'string' ? e : (e?.message ?? 'failed');
        throw new AgentAppsError(typeof e === 'object' && typeof e?.code === 'string' && e.code ? e.code : 'E_SKILL', msg);
      }
      case 'abort':
        o.abort(a[0] ?? `agent of '${skillName}' aborted`);
        return null;
      case 'next': {
        if (!o.middleware) throw new AgentAppsError('E_NOT_MIDDLEWARE', `'${skillName}' is not serving another pipeline: there is no target.manager.next()`);
        const call = o.journal?.call(NEXT_CALL, null, exec.kill);
        if (!call) return jsonSafe(await served.envelope.target.manager.next());
        if (call.recorded) return call.replay((tool, err) => gates(exec).refused(tool, err));
        if (call.unverified) await call.confirm({ idempotent: undefined, ask: asker(served) });
        return journaled(call, () => served.envelope.target.manager.next());
      }
      case 'get': {
        const p = checkGetPath(a[0]);
        return scrub(served.manager.get(p), p);
      }
      case 'set': {
        const p = checkSetPath(a[0]);
        charge(policy.budget, size, method, exec);
        noProtoKeys(a[1], 'a set() value');
        served.manager.set(p, a[1]);
        return null;
      }
      case 'log': {
        charge(policy.budget, size, method, exec);
        served.manager.log({ ...logInput(a[0]), tag: 'agent', tool: o.display });
        return null;
      }
      default:
        throw new AgentAppsError('E_SANDBOX', `unknown host call '${method}'`);
    }
  };
}

/** Runs a journaled call: its call-start, the call, its call-end (the result as the code gets it, or the error). */
async function journaled(call: NonNullable<ReturnType<AgentJournal['call']>>, run: () => Promise<unknown>): Promise<unknown> {
  call.start();
  // A journal kept elsewhere (a worker's, in NATS KV): the tool runs once its call-start is kept.
  await call.agent.run.durable();
  let result: unknown;
  try {
    result = jsonSafe(await run());
  } catch (err) {
    call.failed(err, { started: true });
    throw err;
  }
  call.end(result);
  return result;
}

/**
 * Whether an unverified call of `tool` may run again without asking (docs/runs.md): `idempotent: true`
 * in its metadata (its own, or a folder's main above it) — running it twice is harmless; or it is an
 * agent skill (a prompt, no code of its own) — its agent resumes from the journal, call by call.
 */
async function idempotent(kernel: Kernel, tool: LoadedTool, paths: readonly string[]): Promise<'idempotent' | 'agent' | undefined> {
  const plan = await kernel.planner.plan(tool, paths);
  if (plan.cascade.metadata.idempotent === true) return 'idempotent';
  return tool.fn === undefined && typeof tool.prompt === 'string' ? 'agent' : undefined;
}

/** Asks the person at the terminal, as `ctx.manager.ask` of the served skill does. */
const asker = (served: Context): AskPerson => (question, choices) => served.manager.ask(question, { choices });

/**
 * Counts an accepted payload against the run's host budget, in O(1): `size` is the JSON length the
 * sandbox already measured. The call that would pass the budget is refused and ends its execution.
 */
function charge(budget: HostBudget, size: number, method: string, exec: ExecutionHandle): void {
  if (budget.used + size > budget.limit) {
    const message = `host memory budget exceeded: ctx.manager.${method} would take this agent run's payloads past ${Math.round(budget.limit / 2 ** 20)} MiB (model.sandbox.hostMb)`;
    exec.kill(message);
    throw new AgentAppsError('E_SANDBOX', message);
  }
  budget.used += size;
}

// ── sub-agents ──────────────────────────────────────────────────────────────────────────────

/**
 * The ceilings on a sub-agent's tools (docs/agents.md, docs/security.md). A caller whose allowed-tools admitted
 * this very `agent` call through a constraint on `allowedTools` (`agent(allowedTools=wordcount)`)
 * granted those tools explicitly; otherwise the sub-agent may use only what its caller may too.
 */
export function subAgentWithin(caller: AgentPolicy, args: unknown, cwd: string, params: unknown): readonly VisibleOptions[] | undefined {
  const granted = caller.allowedTools !== undefined && parseAllowedTools(caller.allowedTools).rules.some(
    (r) => r.match('agent') && r.constraints.some((c) => c.key === 'allowedTools') && parseAllowedTools(r.text).allows('agent', args, { cwd, params }),
  );
  return granted ? caller.within : [caller, ...(caller.within ?? [])];
}

/** Limits agent code may lower for a sub-agent (docs/security.md); `temperature` it may set. */
const LOWERABLE = ['maxTurns', 'maxSteps'] as const;
const LOWERABLE_SANDBOX = ['timeoutMs', 'memoryMb'] as const;

/**
 * The model config of a sub-agent started by agent code: its caller's effective config, with the
 * limits `requested` lowers and its `temperature`. Anything else — the provider skill, `baseURL`,
 * credentials and their env vars, `record` / `cassette`, `sandbox.isolation` — or a value that
 * would raise a limit is refused, not clamped (E_ALLOWED_TOOLS naming the key).
 */
export function subAgentConfig(caller: JsonObject, requested: unknown): JsonObject {
  const refuse = (key: string, why: string) => new AgentAppsError('E_ALLOWED_TOOLS', `agent code may not ${why} model.${key} of a sub-agent: it runs on its caller's model config and may only lower maxTurns, maxSteps, sandbox.timeoutMs and sandbox.memoryMb or set temperature`);
  const out: JsonObject = structuredClone(caller);
  const sandbox: JsonObject = isPlainObject(out.sandbox) ? { ...out.sandbox } : {};
  if (requested !== undefined && requested !== null && !isPlainObject(requested)) throw refuse('config', 'set');
  for (const [key, value] of Object.entries((requested ?? {}) as JsonObject)) {
    if ((LOWERABLE as readonly string[]).includes(key)) {
      out[key] = lowered(key, value, out[key], refuse);
    } else if (key === 'temperature') {
      if (typeof value !== 'number' || !Number.isFinite(value)) throw refuse(key, 'set a non-number');
      out[key] = value;
    } else if (key === 'sandbox' && isPlainObject(value)) {
      for (const [k, v] of Object.entries(value)) {
        if (!(LOWERABLE_SANDBOX as readonly string[]).includes(k)) throw refuse(`sandbox.${k}`, 'set');
        sandbox[k] = lowered(`sandbox.${k}`, v, sandbox[k], refuse);
      }
    } else {
      throw refuse(key, 'set');
    }
  }
  out.sandbox = sandbox;
  return out;
}

function lowered(key: string, value: unknown, ceiling: unknown, refuse: (key: string, why: string) => AgentAppsError): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) throw refuse(key, 'set a non-positive or non-number');
  if (typeof ceiling === 'number' && value > ceiling) throw refuse(key, `raise (${ceiling} → ${value})`);
  return value;
}

// ── get / set / log ─────────────────────────────────────────────────────────────────────────

/** Never readable from agent code, at any path (docs/security.md: no config secrets, no internals). */
const HIDDEN = ['globals', 'manager', 'envelope.parent', 'envelope.target', 'locals.internals', 'locals.config', 'locals.middleware', 'nonlocals.middleware', 'run.signal'];
/** Never writable from agent code: the hidden paths, and what audit middleware reads. */
const PROTECTED = [...HIDDEN, 'locals.agent', 'locals.history', 'nonlocals.agent', 'nonlocals.debug', 'nonlocals.rootContextId', 'nonlocals.journalCall'];

function segments(p: unknown, op: string): string[] {
  if (typeof p !== 'string' || !p) throw new AgentAppsError('E_VALIDATION', `${op} needs a dotted path`);
  const parts = p.split('.');
  if (parts.some((s) => s === '' || s === '__proto__' || s === 'constructor' || s === 'prototype')) throw new AgentAppsError('E_UNTRUSTED_REF', `agent code may not ${op} '${p}'`);
  return parts;
}

const under = (p: string, q: string) => p === q || p.startsWith(`${q}.`);

function checkGetPath(p: unknown): string {
  const path = segments(p, 'get').join('.');
  if (HIDDEN.some((h) => under(path, h))) throw new AgentAppsError('E_UNTRUSTED_REF', `agent code may not get '${path}'`);
  return path;
}

function checkSetPath(p: unknown): string {
  const path = segments(p, 'set').join('.');
  if (/^(args|envelope|run)(\.|$)/.test(path)) throw new AgentAppsError('E_IMMUTABLE', `'${path}' is immutable`);
  // A protected path, or one of its ancestors (`set('locals', …)` would replace them all).
  if (PROTECTED.some((h) => under(path, h) || under(h, path))) throw new AgentAppsError('E_UNTRUSTED_REF', `agent code may not set '${path}'`);
  return path;
}

/**
 * What `get(path)` returns: a JSON copy with the hidden paths left out and secrets redacted, at any
 * depth and whichever ancestor was asked for — by the redaction every output shares
 * (src/core/redact.ts, docs/security.md "Secrets"): by key here, as the path is walked, and inside
 * strings over the copy.
 */
export function scrub(value: unknown, at: string): unknown {
  let nodes = 0;
  const seen = new Set<object>();
  const copy = (v: unknown, p: string, key: string): unknown => {
    if (isSecretKey(key, v)) return REDACTED;
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') return undefined;
    if (typeof v === 'bigint') return String(v);
    if (v === null || typeof v !== 'object') return typeof v === 'number' && !Number.isFinite(v) ? null : v;
    if (++nodes > 100_000 || seen.has(v)) return undefined;
    if (v instanceof AbortSignal) return undefined;
    if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return copy((v as { toJSON(): unknown }).toJSON(), p, key);
    seen.add(v);
    try {
      if (Array.isArray(v)) return v.map((item, i) => copy(item, `${p}.${i}`, key) ?? null);
      const out: Record<string, unknown> = {};
      for (const [k, item] of Object.entries(v)) {
        const child = `${p}.${k}`;
        if (HIDDEN.some((h) => child === h)) continue;
        const c = copy(item, child, k);
        if (c !== undefined) out[k] = c;
      }
      return out;
    } finally {
      seen.delete(v);
    }
  };
  return redact(copy(value, at, at.slice(at.lastIndexOf('.') + 1)) ?? null);
}

const LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error']);

/** A log call from agent code: its text, level, type and data only — never the ids or tool it is filed under. */
function logInput(e: unknown): LogInput {
  if (!isPlainObject(e)) return { level: 'info', text: typeof e === 'string' ? e : (JSON.stringify(e) ?? String(e)) };
  const out: LogInput = { level: typeof e.level === 'string' && LEVELS.has(e.level) ? (e.level as LogInput['level']) : 'info' };
  if (e.text !== undefined) out.text = typeof e.text === 'string' ? e.text : JSON.stringify(e.text);
  if (typeof e.type === 'string') out.type = e.type;
  if (e.data !== undefined) (out as Record<string, unknown>).data = e.data;
  return out;
}

/** A host value as JSON data (BigInts as strings; anything unserialisable as its string form). */
export function jsonSafe(value: unknown): unknown {
  if (value === undefined) return null;
  try {
    return JSON.parse(JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? String(v) : v)) ?? 'null');
  } catch {
    return String(value);
  }
}
