// The agent (seed 004): policy, not the LLM loop. It discovers the tools the skill may use,
// builds the system prompt, makes two callback refs — `invoke` runs the model's code as an
// anonymous skill through the full pipeline inside an isolated-vm sandbox, `hook` turns
// lifecycle events into trace entries, bus events and directives (returns reminders,
// persistent mode, limits) — and hands everything serializable to the provider skill.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  AgentAppsError,
  type AgentPolicy,
  type ExecutionHandle,
  ConfigurationError,
  ValidationError,
  createCallbackRef,
  internals,
  resolveVisibleTools,
  type Context,
  type JsonObject,
  type ToolDef,
} from 'agent-apps';

export const frontmatter = {
  name: 'agent',
  description: 'Runs an LLM agent that acts by writing JavaScript which calls other skills through the pipeline, inside an isolated-vm sandbox.',
  metadata: {
    visibility: 'hidden',
    tags: ['meta-internal', 'agent'],
    params: {
      type: 'object',
      properties: {
        prompt: { type: 'string', description: 'System prompt (the skill’s expanded prompt).' },
        config: { type: 'object', description: 'Model configuration: provider, modelId, maxTurns, maxSteps, persistent, sandbox …' },
        allowedTools: { type: 'string', description: 'Space-delimited allowed-tools globs.' },
        returns: { type: ['object', 'boolean'], description: 'JSON Schema the result must match.' },
        events: { type: 'string', description: 'Topic to emit agent events to.' },
        name: { type: 'string', description: 'Display name for logs.' },
        memory: { type: 'object', description: 'Seeds the sandbox `memory` global before the first turn.' },
        skillName: { type: 'string' },
        userMessage: { type: 'string' },
      },
      required: ['prompt'],
      additionalProperties: false,
    },
    returns: {},
  },
};

interface AgentArgs {
  prompt: string;
  config?: JsonObject;
  allowedTools?: string;
  returns?: JsonObject;
  events?: string;
  name?: string;
  memory?: Record<string, unknown>;
  skillName?: string;
  userMessage?: string;
}

interface HookEvent {
  type: string;
  [key: string]: unknown;
}

type Sandbox = Awaited<ReturnType<typeof internals.createSandbox>>;

const EVENT_NAMES: Record<string, string> = {
  'turn-start': 'turn-start',
  'turn-end': 'turn-end',
  'tool-call': 'tool-call',
  'tool-result': 'tool-result',
  message: 'agent-message',
  error: 'agent-error',
};

export default async function agent(ctx: Context, args: AgentArgs) {
  const kernel = internals.kernel(ctx);
  const parent = ctx.envelope.parent;
  // The skill being served: agent-execute's target, or this invocation when called directly.
  const served = parent && parent.envelope.hasOtherTarget ? parent.envelope.target : ctx;
  // Started by agent code (`invoke('agent', …)`): its config is untrusted, its caller's limits are ceilings (SPEC §15).
  const caller = internals.agentPolicy(ctx);
  const config: JsonObject = caller ? internals.subAgentConfig(caller.model, args.config) : { ...(args.config ?? {}) };
  // Relative `cassette` / `record` paths: the `model` middleware resolves them against the skill's
  // folder; for an agent invoked directly, against its served skill's folder, else the cwd.
  if (typeof config.baseDir !== 'string') {
    const uri = served === ctx ? null : served.run.origin.uri;
    config.baseDir = uri?.startsWith('file://') ? path.dirname(fileURLToPath(uri)) : served.locals.config.cwd;
  }
  const provider = typeof config.agent === 'string' ? config.agent : 'agent-strands';
  const persistent = config.persistent === true;
  if (persistent && args.returns) throw new ConfigurationError(`'${served.run.tool.name}': model.persistent cannot be combined with returns (a persistent agent never finishes)`);
  const maxTurns = persistent ? Infinity : positive(config.maxTurns, 30, 'maxTurns');
  const maxSteps = positive(config.maxSteps, 30, 'maxSteps');
  const sandboxConfig = (config.sandbox ?? {}) as { timeoutMs?: number; memoryMb?: number; hostMb?: number; isolation?: 'process' | 'inline' };
  // Checked now: the sandbox starts lazily, and a bad limit must not reach the model as a tool error.
  for (const [key, min] of [['timeoutMs', 1], ['memoryMb', 8], ['hostMb', 1]] as const) {
    const v: unknown = sandboxConfig[key];
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < min)) throw new ConfigurationError(`model.sandbox.${key} must be a number ≥ ${min} (got ${JSON.stringify(v)})`);
  }
  const isolation: unknown = sandboxConfig.isolation;
  if (isolation !== undefined && isolation !== 'process' && isolation !== 'inline') throw new ConfigurationError(`model.sandbox.isolation must be 'process' or 'inline' (got ${JSON.stringify(isolation)})`);
  const skillName = args.skillName ?? served.run.tool.name;
  // The `name` arg (seed 004): how this agent invocation is shown in logs and by the reporter.
  const display = args.name ?? skillName;
  const topic = args.events ?? (served.nonlocals.agent?.events as string | undefined) ?? (typeof config.events === 'string' ? config.events : undefined);
  const started = Date.now();

  // The persistent agent scope (seed 004): events topic and the agent tree's ids. It is set on
  // this context too, so that the provider, the agent code and any agent it invokes (a nested
  // agent's ancestorContextId, its inherited events topic) descend from it.
  const scope = { ...(served.nonlocals.agent ?? {}), events: topic, contextId: served.envelope.id, ancestorContextId: ctx.nonlocals.agent?.contextId };
  served.nonlocals.agent = scope;
  ctx.nonlocals.agent = scope;
  const trace: (HookEvent & { timestamp: number })[] = [];
  const usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  served.locals.agent = { trace, usage };
  const bus = topic ? internals.eventBus(ctx) : undefined;
  const emit = (type: string, data: unknown) => bus?.emit({ topic: topic!, type, data, source: skillName, rootContextId: ctx.nonlocals.rootContextId });
  const progress = ctx.globals.internals.progress as ((e: HookEvent & { skill: string }) => void) | undefined;

  const paths = served.locals.config.paths;
  const cwd = served.locals.config.cwd;
  // What this agent's code may do (src/agent/bridge.ts). A sub-agent's effective model config is
  // this one without `record` (the caller's recording is the caller's) and not persistent.
  const { record: _record, persistent: _persistent, ...effective } = config;
  const origin = served.run.origin.uri;
  const skillDir = origin?.startsWith('file://') && origin.endsWith('/SKILL.md') ? path.dirname(fileURLToPath(origin)) : undefined;
  const policy: AgentPolicy = {
    allowedTools: args.allowedTools,
    self: skillName,
    provider,
    // A sub-agent may use only what its caller may, unless the caller's allowed-tools granted it tools (agent(allowedTools=…)).
    within: caller ? internals.subAgentWithin(caller, args, cwd, ctx.run.tool.params) : undefined,
    roots: [served.locals.config.workspace, ...(skillDir ? [skillDir] : [])].map(internals.realPath),
    model: { ...effective, maxTurns, maxSteps, sandbox: { ...sandboxConfig, timeoutMs: sandboxConfig.timeoutMs ?? 30_000, memoryMb: sandboxConfig.memoryMb ?? 128, hostMb: sandboxConfig.hostMb ?? internals.DEFAULT_HOST_MB } },
    // Sub-agents share their caller's budget: together they pin no more than it may.
    budget: caller?.budget ?? { used: 0, limit: (sandboxConfig.hostMb ?? internals.DEFAULT_HOST_MB) * 2 ** 20 },
  };
  const visible = await resolveVisibleTools(kernel, paths, cwd, policy);
  const servedIsMiddleware = served.envelope.hasOtherTarget;
  const system = internals.systemPrompt(args.prompt, visible, { returns: args.returns, middlewareMode: servedIsMiddleware, maxSteps });
  const message = args.userMessage ?? internals.userMessage(served.args, served.run.tool.params);

  let sandbox: Sandbox | undefined;
  let steps = 0;
  let stepsExhausted = false;
  let finished: { value: unknown } | undefined;
  let lastToolError: AgentAppsError | undefined;
  /** The finish() value of the running execution broke `returns`. */
  let badFinish: ValidationError | undefined;
  /** The running execution's finish() call, settled or not (it may not have been awaited). */
  let finishing: Promise<undefined> | undefined;
  let reminders = 0;
  /** The current turn called tools (a tool-call or tool-result since the last turn-end). */
  let toolTurn = false;
  const stop = new AbortController();
  const onAbort = () => stop.abort(ctx.run.signal.reason);
  ctx.run.signal.addEventListener('abort', onAbort, { once: true });

  // ── the invoke tool: model code → anonymous skill → sandbox ───────────────────────────────
  const anon: ToolDef = {
    name: 'agent-code',
    frontmatter: {
      name: 'agent-code',
      description: `Code written by the agent of '${skillName}'.`,
      metadata: args.allowedTools !== undefined ? { 'allowed-tools': args.allowedTools } : {},
    },
    fn: (codeCtx: Context, a: { code: string }) => runCode(codeCtx, a.code),
  };

  const bridge = internals.createBridge({
    kernel,
    served,
    policy,
    skillName,
    display,
    middleware: servedIsMiddleware,
    finish: (exec, value) => {
      const done = finish(exec.ctx, value);
      finishing = done.then(
        () => undefined,
        () => undefined,
      );
      return done;
    },
    abort: (reason) => {
      // Refusal: the served skill is aborted and the agent stops.
      served.manager.abort(reason);
      stop.abort(reason);
    },
  });

  async function runCode(codeCtx: Context, code: string): Promise<string> {
    sandbox ??= await internals.createSandbox({ timeoutMs: sandboxConfig.timeoutMs, memoryMb: sandboxConfig.memoryMb, isolation: sandboxConfig.isolation, memory: args.memory });
    // One signal per execution: when it ends — completed, failed, timed out, killed — every host
    // call it started is aborted with it (SPEC §15), and a kill by the bridge ends it early.
    const ended = new AbortController();
    const onCodeAbort = () => ended.abort(codeCtx.run.signal.reason);
    codeCtx.run.signal.addEventListener('abort', onCodeAbort, { once: true });
    let killed: string | undefined;
    const exec: ExecutionHandle = {
      ctx: codeCtx,
      signal: ended.signal,
      kill(message) {
        killed ??= message;
        ended.abort(message);
      },
    };
    const host = { call: (method: string, a: unknown[], size: number) => bridge(exec, method, a, size) };
    badFinish = undefined;
    finishing = undefined;
    let result;
    try {
      result = await sandbox.run(code, host, { args: internals.jsonSafe(served.args), middleware: servedIsMiddleware, signal: ended.signal });
    } finally {
      codeCtx.run.signal.removeEventListener('abort', onCodeAbort);
      ended.abort('the agent code\'s execution ended');
    }
    if (killed !== undefined) result = { ok: false as const, error: { code: 'E_SANDBOX', message: killed }, logs: result.logs };
    // The seed's idiom is `ctx.manager.finish(value)` without await: the code may complete while
    // its finish() is still being checked. Wait for it; a value that broke `returns` is then this
    // call's error, not a silent success.
    if (finishing) await finishing;
    // (Set by the bridge while the code ran: read through a cast, TypeScript narrows closures' lets.)
    const refused = badFinish as ValidationError | undefined;
    if (result.ok && refused && !finished) result = { ok: false, error: { code: 'E_VALIDATION', message: refused.message }, logs: result.logs };
    const logs = result.logs.length ? `\nconsole:\n${result.logs.join('\n')}` : '';
    if (!result.ok) {
      const where = result.error.line !== undefined ? ` (line ${result.error.line})` : '';
      const err = new AgentAppsError(result.error.code, `${result.error.message}${where}${logs}`);
      // The errors a run can end on (SPEC §11): sandbox failures, refused calls, and a finish()
      // value that broke `returns` (reported as that ValidationError).
      lastToolError = ENDS_ON.has(result.error.code) ? err : result.error.code === 'E_VALIDATION' && refused ? refused : undefined;
      throw err;
    }
    lastToolError = undefined;
    if (finished) return `finished: ${preview(finished.value)}${logs}`;
    return `result: ${preview(result.value)}${logs}`;
  }

  /** `ctx.manager.finish(value)` from agent code: checked against `returns`, then the served skill's result. */
  async function finish(codeCtx: Context, raw: unknown): Promise<null> {
    const value = raw === undefined ? null : raw;
    if (args.returns) {
      const errors = await internals.check(args.returns, value);
      if (errors.length) throw (badFinish = new ValidationError(`finish() value does not match the returns schema`, errors, 'returns'));
    }
    finished = { value };
    codeCtx.manager.finish(value);
    return null;
  }

  const invokeCb = createCallbackRef(ctx, 'agent-invoke', async (cbCtx: Context, a: { code?: unknown }) => {
    if (typeof a?.code !== 'string') throw new AgentAppsError('E_VALIDATION', 'invoke needs { code: string }');
    if (steps >= maxSteps) {
      stepsExhausted = true;
      throw new AgentAppsError('E_AGENT_LIMIT', `maxSteps (${maxSteps}) exhausted: no more invoke calls`);
    }
    steps++;
    // `agent`: the discovery filter's options, for skill-list / skill-describe called by this code.
    return cbCtx.manager.invoke(anon, { code: a.code }, { context: { locals: { internals: { untrustedRef: true, agent: policy } } } });
  });

  // ── the lifecycle hook: trace, events, directives ───────────────────────────────────────
  const hookCb = createCallbackRef(ctx, 'agent-hook', async (_cbCtx: Context, e: HookEvent) => {
    const entry = { ...e, timestamp: Date.now() };
    trace.push(entry);
    progress?.({ ...e, skill: display });
    if (e.type === 'usage') {
      for (const k of ['inputTokens', 'outputTokens', 'totalTokens'] as const) usage[k] += Number((e as Record<string, unknown>)[k] ?? 0) || 0;
    } else {
      const name = e.type === 'tool-result' && e.error ? 'tool-error' : EVENT_NAMES[e.type];
      if (name) emit(name, e);
    }
    switch (e.type) {
      case 'tool-call':
        toolTurn = true;
        return undefined;
      case 'tool-result':
        toolTurn = true;
        if (finished) return { stop: true, result: finished.value };
        return undefined;
      case 'turn-end': {
        const usedTools = toolTurn;
        toolTurn = false;
        if (stepsExhausted) throw new AgentAppsError('E_AGENT_LIMIT', `maxSteps (${maxSteps}) exhausted before '${skillName}' finished`);
        if (finished) return { stop: true, result: finished.value };
        // The turn called tools: the model has their results to read (a provider written to the
        // seed's skeleton ends the run on an undefined directive).
        if (usedTools || persistent) return { continue: true, message: 'Continue.' };
        // No finish(): the model's final text is the result (SPEC §11) — if it matches returns.
        if (args.returns && typeof e.result === 'string' && e.result !== '' && (await internals.check(args.returns, e.result)).length === 0) {
          return { stop: true, result: e.result };
        }
        if (args.returns) {
          reminders++;
          return {
            continue: true,
            message: `You have not finished. Call ctx.manager.finish(value) from the invoke tool with a value matching this JSON Schema: ${JSON.stringify(args.returns)}`,
          };
        }
        return undefined;
      }
      case 'error':
        // `final`: the model cannot come back (a replay cassette that ran out); retrying would loop forever.
        if (persistent && e.final !== true) {
          const attempt = Number(e.attempt ?? 1);
          await sleep(Math.min(30_000, 1000 * 2 ** Math.max(0, attempt - 1)), stop.signal);
          return { continue: true };
        }
        return undefined;
      default:
        return undefined;
    }
  });

  emit('agent-start', { skill: skillName, ...(args.name ? { name: args.name } : {}), provider, mode: visible.mode, tools: visible.tools.map((t) => t.name) });
  try {
    const result = await ctx.manager.invoke(provider, {
      prompt: system,
      config: { ...config, maxTurns },
      invokeRef: invokeCb.ref,
      hookRef: hookCb.ref,
      userMessage: message,
      skillName,
      agentSignal: stop.signal,
    });
    const value = finished ? finished.value : result;
    ctx.manager.log({ type: 'agent-usage', tag: 'agent', level: 'info', tool: display, text: `${trace.filter((t) => t.type === 'turn-start').length} turns, ${steps} invoke calls, ${usage.totalTokens} tokens`, usage, steps });
    emit('agent-complete', { skill: skillName, result: value, usage, steps, durationMs: Date.now() - started });
    return value;
  } catch (err) {
    let error = err as Error & { code?: string; final?: unknown };
    // E_SANDBOX reaches the caller only when the run ends on it (SPEC §11): the limits ran out
    // right after it, or the model never came back (a replay cassette that ended there). An
    // allowed-tools or untrusted-ref violation that the run ends on is reported the same way.
    const endedOn = lastToolError && (error.code === 'E_AGENT_LIMIT' ? lastToolError.code === 'E_SANDBOX' : error.final === true);
    if (lastToolError && endedOn) {
      const then = ` — and then: ${error.message}`;
      if (lastToolError instanceof ValidationError) {
        const returns = new ValidationError('finish() value does not match the returns schema', lastToolError.errors, 'returns');
        returns.message += then;
        error = returns;
      } else error = new AgentAppsError(lastToolError.code, `${lastToolError.message.split('\n')[0]}${then}`);
    }
    emit('agent-error', { skill: skillName, error: { message: error.message, code: error.code }, usage, steps });
    throw error;
  } finally {
    ctx.run.signal.removeEventListener('abort', onAbort);
    sandbox?.dispose();
    invokeCb.release();
    hookCb.release();
    void reminders;
  }
}

/** Tool errors a run can end on: the caller sees them when nothing happened after them (SPEC §11). */
const ENDS_ON = new Set(['E_SANDBOX', 'E_ALLOWED_TOOLS', 'E_UNTRUSTED_REF']);

function positive(value: unknown, fallback: number, key: string): number {
  if (value === undefined || value === null) return fallback;
  if (value === Infinity || value === '.inf') return Infinity;
  if (typeof value !== 'number' || !(value > 0)) throw new ConfigurationError(`model.${key} must be a positive number, got ${JSON.stringify(value)}`);
  return value;
}

function preview(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value ?? null);
  return text.length > 20_000 ? text.slice(0, 20_000) + `… (${text.length} characters)` : text;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
