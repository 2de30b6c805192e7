// The provider skills `agent-acp` and `agent-kiro` (skills/extensions/agent/acp/) in one function:
// read `model.acp`, hand the agent skill's callback refs to the ACP client (client.ts), and return
// what the run ended with. `model.provider: replay` plays a cassette instead, on agent-strands'
// replay model, so an agent skill on any ACP agent is tested offline like any other (docs/agents.md);
// `model.record` writes that cassette from a live run.
import path from 'node:path';
import { AbortError, ConfigurationError } from '../core/errors.ts';
import type { Context, JsonObject } from '../core/types.ts';
import { askDesk, notInteractive, runDesk } from '../kernel/asking.ts';
import { onClose } from '../kernel/on-close.ts';
import type { Kernel } from '../kernel/orchestrator.ts';
import type { AcpConfig, AcpRunOptions } from './client.ts';
// The provider's public types live in agent/ (`agent-apps/agent` offers them without loading acp/).
import type { AcpProviderArgs, AcpProviderOptions, CassetteEntry } from '../agent/acp-provider.ts';

export type { AcpProviderArgs, AcpProviderOptions, CassetteEntry } from '../agent/acp-provider.ts';

/** The provider that plays a cassette (`model.provider: replay`). */
const REPLAY_PROVIDER = 'agent-strands';

export async function runAcpProvider(ctx: Context, args: AcpProviderArgs, o: AcpProviderOptions): Promise<unknown> {
  const config = args.config ?? {};
  if (config.provider === 'replay') return ctx.manager.invoke(REPLAY_PROVIDER, args as JsonObject);
  const acp = readAcpConfig(config.acp, o.defaults);
  const baseDir = typeof config.baseDir === 'string' ? config.baseDir : ctx.locals.config.cwd;
  const record = typeof config.record === 'string' && config.record ? path.resolve(baseDir, config.record) : undefined;
  if (config.record !== undefined && typeof config.record !== 'string') throw new ConfigurationError(`model.record must be a path (got ${JSON.stringify(config.record)})`);
  const signal = isAbortSignal(args.agentSignal) ? args.agentSignal : ctx.run.signal;
  if (signal.aborted) throw new AbortError(signal.reason);
  const { hookRef, invokeRef } = args;
  const viewWantsDeltas = ctx.globals?.internals.progress?.deltas === true;
  const maxTurns = typeof config.maxTurns === 'number' && Number.isFinite(config.maxTurns) ? config.maxTurns : undefined;

  const options: AcpRunOptions = {
    acp,
    prompt: args.prompt,
    userMessage: args.userMessage ?? 'Execute the task.',
    cwd: ctx.locals.config.cwd,
    signal,
    deltas: config.deltas === true || (config.deltas === undefined && viewWantsDeltas),
    ...(maxTurns !== undefined ? { maxTurns } : {}),
    onCode: (code) => ctx.manager.invoke(invokeRef, { code }),
    ...(hookRef ? { onHook: (event) => ctx.manager.invoke(hookRef, event as JsonObject) } : {}),
    onLog: (level, text, fields) => ctx.manager.log({ type: 'acp', tag: 'agent', level, text, ...(fields ?? {}) }),
    // The agent's own tools and its questions (elicitation) go to the person running agent-apps, if
    // there is one: the run's own asker (an editor under `agent-apps acp`), else the runtime's
    // (the terminal) — "Asking a person" in docs/agents.md.
    ask: async (question, choices, askSignal) => {
      const desk = runDesk(ctx.nonlocals) ?? askDesk(ctx.globals);
      if (!desk) throw notInteractive(`the ACP agent of '${args.skillName ?? o.provider}' asks a person`);
      return (await desk.ask({ kind: 'question', text: question, ...(choices.length ? { choices } : {}), tool: o.provider }, askSignal)).value;
    },
    ...(record && o.writeCassette ? { onRecord: (entries: CassetteEntry[]) => o.writeCassette!(record, entries) } : {}),
    onShutdown: (end) => {
      const runs = runsOf(ctx.globals.internals.kernel);
      runs.add(end);
      return () => runs.delete(end);
    },
  };
  const { runAcpAgent } = await import('./client.ts');
  const out = await runAcpAgent(options);
  return out.stopped ? out.stopped.result : out.text;
}

/** The ACP runs under way in each runtime: `runtime.close()` ends them (one shutdown handler per runtime). */
const running = new WeakMap<Kernel, Set<() => Promise<void>>>();

function runsOf(kernel: Kernel): Set<() => Promise<void>> {
  let runs = running.get(kernel);
  if (!runs) {
    const set = new Set<() => Promise<void>>();
    runs = set;
    running.set(kernel, set);
    onClose(kernel, async () => {
      await Promise.allSettled([...set].map((end) => end()));
    });
  }
  return runs;
}

const DEFAULT_START_TIMEOUT_MS = 60_000;

/** `model.acp` checked: every mistake is E_CONFIG naming the key. */
export function readAcpConfig(value: unknown, defaults: AcpProviderOptions['defaults'] = {}): AcpConfig {
  if (value !== undefined && (value === null || typeof value !== 'object' || Array.isArray(value))) {
    throw new ConfigurationError(`model.acp must be a mapping: { command, args, env, allowAgentTools } (got ${JSON.stringify(value)})`);
  }
  const v = (value ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(v)) {
    if (!['command', 'args', 'env', 'allowAgentTools', 'startTimeoutMs'].includes(key)) {
      throw new ConfigurationError(`model.acp.${key} is not a setting (command, args, env, allowAgentTools, startTimeoutMs)`);
    }
  }
  const command = v.command ?? defaults.command;
  if (typeof command !== 'string' || !command.trim()) {
    throw new ConfigurationError(command === undefined ? 'model.acp.command is not set: the ACP agent to start, e.g. model: { agent: agent-acp, acp: { command: gemini, args: [--experimental-acp] } }' : `model.acp.command must be a program name or path (got ${JSON.stringify(command)})`);
  }
  const args = v.args ?? (v.command === undefined ? defaults.args : undefined) ?? [];
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) throw new ConfigurationError(`model.acp.args must be a list of strings (got ${JSON.stringify(args)})`);
  const env = v.env ?? {};
  if (env === null || typeof env !== 'object' || Array.isArray(env) || !Object.values(env).every((x) => typeof x === 'string')) {
    throw new ConfigurationError(`model.acp.env must map names to strings (got ${JSON.stringify(env)})`);
  }
  if (v.allowAgentTools !== undefined && typeof v.allowAgentTools !== 'boolean') throw new ConfigurationError(`model.acp.allowAgentTools must be true or false (got ${JSON.stringify(v.allowAgentTools)})`);
  const start = v.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  if (typeof start !== 'number' || !(start > 0)) throw new ConfigurationError(`model.acp.startTimeoutMs must be a positive number (got ${JSON.stringify(start)})`);
  // The install hint belongs to the default command: a command the config names is its own.
  const install = v.command === undefined ? defaults.install : undefined;
  return {
    command,
    args: args as string[],
    env: env as Record<string, string>,
    allowAgentTools: v.allowAgentTools === true,
    startTimeoutMs: start,
    ...(install ? { install } : {}),
  };
}

function isAbortSignal(v: unknown): v is AbortSignal {
  return typeof v === 'object' && v !== null && typeof (v as AbortSignal).aborted === 'boolean' && typeof (v as AbortSignal).addEventListener === 'function';
}
