// The agent (docs/agents.md): policy, not the LLM loop. In order: its limits; the tools its code may
// call (discovery); the system prompt; then the provider skill, handed only serializable args
// (src/agent/provider.ts) — two callback refs, `invoke` for the model's code (run in the sandbox
// through the bridge, src/agent/code.ts) and `hook` for lifecycle events, which become the trace
// and bus events (src/agent/trace.ts) and directives: returns (src/agent/returns.ts), limits
// (src/agent/limits.ts), persistent mode.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  AgentAppsError,
  createCallbackRef,
  resolveVisibleTools,
  type AgentArgs,
  type AgentPolicy,
  type Context,
  type HookDirective,
  type JsonObject,
  kernelOf,
} from 'agent-apps';
import { AgentCode, AgentTrace, ApprovalState, LimitCounter, Returns, agentPolicy, findProvider, providerError, readLimits, realPath, runJournalOf, subAgentConfig, subAgentWithin, systemPrompt, userMessage } from 'agent-apps/agent';

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
        askTools: { type: 'string', description: 'ask-tools: tools the agent may call with a person’s approval (allowed-tools syntax).' },
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

/** The agent skill's args: a superset of what its provider is given (docs/agents.md). */
interface AgentSkillArgs {
  prompt: string;
  config?: JsonObject;
  allowedTools?: string;
  askTools?: string;
  returns?: JsonObject;
  events?: string;
  name?: string;
  memory?: Record<string, unknown>;
  skillName?: string;
  userMessage?: string;
}

export default async function agent(ctx: Context, args: AgentSkillArgs) {
  const kernel = kernelOf(ctx);
  const parent = ctx.envelope.parent;
  // The skill being served: agent-execute's target, or this invocation when called directly.
  const served = parent && parent.envelope.hasOtherTarget ? parent.envelope.target : ctx;
  const skillName = args.skillName ?? served.run.tool.name;
  // The `name` arg (docs/agents.md): how this agent invocation is shown in logs and by the reporter.
  const display = args.name ?? skillName;

  // ── limits ─────────────────────────────────────────────────────────────────────────────────
  // Started by agent code (`invoke('agent', …)`): its config is untrusted, its caller's limits are ceilings (docs/security.md).
  const caller = agentPolicy(ctx);
  const config: JsonObject = caller ? subAgentConfig(caller.model, args.config) : { ...(args.config ?? {}) };
  // What needs a person's approval is the skill author's choice, never the model's (docs/agents.md).
  if (caller && args.askTools !== undefined) throw new AgentAppsError('E_ALLOWED_TOOLS', "agent code may not give a sub-agent ask-tools: a sub-agent's calls pass its caller's gates");
  // Relative `cassette` / `record` paths: the `model` middleware resolves them against the skill's
  // folder; for an agent invoked directly, against its served skill's folder, else the cwd.
  if (typeof config.baseDir !== 'string') {
    const uri = served === ctx ? null : served.run.origin.uri;
    config.baseDir = uri?.startsWith('file://') ? path.dirname(fileURLToPath(uri)) : served.locals.config.cwd;
  }
  const limits = readLimits(config, served.run.tool.name, args.returns);
  const { provider, persistent, maxTurns, maxSteps } = limits;
  const paths = served.locals.config.paths;
  const cwd = served.locals.config.cwd;
  await findProvider(kernel, provider, paths, cwd);
  // model.budget: a sub-agent started by agent code spends from its caller's.
  const used = new LimitCounter(limits, skillName, caller);

  // The persistent agent scope (docs/agents.md): events topic and the agent tree's ids. It is set on
  // this context too, so that the provider, the agent code and any agent it invokes (a nested
  // agent's ancestorContextId, its inherited events topic) descend from it.
  const topic = args.events ?? (served.nonlocals.agent?.events as string | undefined) ?? (typeof config.events === 'string' ? config.events : undefined);
  const scope = { ...(served.nonlocals.agent ?? {}), events: topic, contextId: served.envelope.id, ancestorContextId: ctx.nonlocals.agent?.contextId };
  served.nonlocals.agent = scope;
  ctx.nonlocals.agent = scope;
  const trace = new AgentTrace({ ctx, served, topic, skillName, display, model: config });
  // The run's journal (docs/runs.md): this agent's model responses and its code's host calls,
  // played back from the journal of the run it resumes.
  const journal = runJournalOf(ctx)?.agent(ctx, display);

  // ── discovery: what this agent's code may do (src/agent/bridge.ts) ─────────────────────────
  // A sub-agent's effective model config is this one without `record` (the caller's recording is
  // the caller's) and not persistent.
  const { record: _record, persistent: _persistent, ...effective } = config;
  const origin = served.run.origin.uri;
  const skillDir = origin?.startsWith('file://') && origin.endsWith('/SKILL.md') ? path.dirname(fileURLToPath(origin)) : undefined;
  const policy: AgentPolicy = {
    allowedTools: args.allowedTools,
    ...(args.askTools ? { askTools: args.askTools } : {}),
    self: skillName,
    provider,
    // A sub-agent may use only what its caller may, unless the caller's allowed-tools granted it tools (agent(allowedTools=…)).
    within: caller ? subAgentWithin(caller, args, cwd, ctx.run.tool.params) : undefined,
    roots: [served.locals.config.workspace, ...(skillDir ? [skillDir] : [])].map(realPath),
    model: { ...effective, maxTurns, maxSteps, sandbox: limits.sandbox },
    // Sub-agents share their caller's budget: together they pin no more than it may.
    budget: caller?.budget ?? { used: 0, limit: limits.sandbox.hostMb * 2 ** 20 },
    // Approvals ("allow for this run") and denials: a sub-agent's are its caller's too.
    approvals: new ApprovalState({ parent: caller?.approvals, denials: trace.denials, trace: (e) => trace.record(e) }),
  };
  used.shareWith(policy);
  const visible = await resolveVisibleTools(kernel, paths, cwd, policy);

  // ── prompt ─────────────────────────────────────────────────────────────────────────────────
  const middleware = served.envelope.hasOtherTarget;
  const system = systemPrompt(args.prompt, visible, { returns: args.returns, middlewareMode: middleware, maxSteps, skillDir });
  const message = args.userMessage ?? userMessage(served.args, served.run.tool.params);

  // ── provider: the invoke and hook callback refs ────────────────────────────────────────────
  const stop = new AbortController();
  const onAbort = () => stop.abort(ctx.run.signal.reason);
  ctx.run.signal.addEventListener('abort', onAbort, { once: true });
  const returns = new Returns(args.returns);
  const code = new AgentCode({
    kernel,
    served,
    policy,
    skillName,
    display,
    middleware,
    allowedTools: args.allowedTools,
    askTools: args.askTools,
    memory: args.memory,
    sandbox: limits.sandboxConfig,
    returns,
    ...(journal ? { journal } : {}),
    abort: (reason) => {
      // Refusal: the served skill is aborted and the agent stops.
      served.manager.abort(reason);
      stop.abort(reason);
    },
  });

  const invokeCb = createCallbackRef(ctx, 'agent-invoke', async (cbCtx: Context, a: { code?: unknown }) => {
    if (typeof a?.code !== 'string') throw new AgentAppsError('E_VALIDATION', 'invoke needs { code: string }');
    used.step();
    // Untrusted code (docs/agents.md): it may invoke tools by name only.
    // `agent`: the discovery filter's options, for skill-list / skill-describe called by this code.
    return cbCtx.manager.invoke(code.def, { code: a.code }, { context: { locals: { internals: { untrustedRef: true, agent: policy } } } });
  });

  /** The current turn called tools (a tool-call or tool-result since the last turn-end). */
  let toolTurn = false;
  const hookCb = createCallbackRef(ctx, 'agent-hook', async (_cbCtx: Context, e: { type: string; [key: string]: unknown }): Promise<HookDirective> => {
    // A whole model response, for the journal only (the trace has its message and tool calls).
    if (e.type === 'response') {
      journal?.response(e);
      return undefined;
    }
    trace.record(e);
    switch (e.type) {
      case 'turn-start':
        used.turnStart();
        if (typeof e.turnNumber === 'number') journal?.turnStart(e.turnNumber);
        return undefined;
      case 'usage':
        // model.budget, whatever the provider: over it, this throws E_AGENT_LIMIT into the provider.
        used.usage(e);
        return undefined;
      case 'tool-call':
        toolTurn = true;
        return undefined;
      case 'tool-result':
        toolTurn = true;
        return returns.finished ? { stop: true, result: returns.finished.value } : undefined;
      case 'turn-end': {
        const usedTools = toolTurn;
        toolTurn = false;
        used.turnEnd();
        if (returns.finished) return { stop: true, result: returns.finished.value };
        // The turn called tools: the model has their results to read (a provider written to the
        // seed's skeleton ends the run on an undefined directive).
        const directive = usedTools || persistent ? { continue: true as const, message: 'Continue.' } : await returns.afterText(e.result);
        // maxTurns, whatever the provider (docs/agents.md): no turn after the last one.
        if (directive && 'continue' in directive) used.continueAfterTurn();
        return directive;
      }
      case 'error':
        // `final`: the model cannot come back (a replay cassette that ran out); retrying would loop forever.
        // `retrying`: the provider retries this one itself (model.retries), after its own backoff.
        if (persistent && e.final !== true && e.retrying !== true) {
          const attempt = Number(e.attempt ?? 1);
          await sleep(Math.min(30_000, 1000 * 2 ** Math.max(0, attempt - 1)), stop.signal);
          return { continue: true };
        }
        return undefined;
      default:
        return undefined;
    }
  });

  // ── run, and trace the outcome ─────────────────────────────────────────────────────────────
  // A resume that cannot go on (E_RESUME, docs/runs.md) stops this agent, wherever it was.
  const offFatal = journal?.run.onFatal((err) => stop.abort(err));
  trace.emit('agent-start', { skill: skillName, ...(args.name ? { name: args.name } : {}), provider, mode: visible.mode, tools: visible.tools.map((t) => t.name) });
  try {
    const providerArgs: AgentArgs = {
      prompt: system,
      config: { ...config, maxTurns },
      invokeRef: invokeCb.ref,
      hookRef: hookCb.ref,
      userMessage: message,
      skillName,
      agentSignal: stop.signal,
      ...(journal ? { journal: { turns: journal.replayTurns } } : {}),
    };
    const result = await ctx.manager.invoke(provider, providerArgs as unknown as JsonObject);
    if (journal?.run.fatal) throw journal.run.fatal;
    // A provider that swallowed a limit error does not turn the run into a success.
    if (!returns.finished && used.hit) throw used.hit;
    const value = returns.finished ? returns.finished.value : result;
    trace.complete(value, used.steps);
    return value;
  } catch (err) {
    // A provider's own failure is E_MODEL; a runtime error (a limit, an abort …) keeps its code.
    const error = journal?.run.fatal ?? code.endedOn(providerError(err, provider));
    trace.fail(error, used.steps);
    throw error;
  } finally {
    ctx.run.signal.removeEventListener('abort', onAbort);
    offFatal?.();
    code.dispose();
    invokeCb.release();
    hookCb.release();
  }
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
