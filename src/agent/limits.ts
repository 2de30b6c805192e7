// The agent's limits (seed 004, "The agent enforces configurable limits"; SPEC §11): read from the
// model config before the model is asked anything; maxSteps is counted by the `invoke` callback,
// maxTurns is passed to the provider.
import { AgentAppsError, ConfigurationError } from '../kernel/errors.ts';
import type { JsonObject } from '../kernel/types.ts';
import { DEFAULT_HOST_MB } from './bridge.ts';
import { DEFAULT_AGENT_PROVIDER } from './provider.ts';

export interface SandboxLimits {
  timeoutMs: number;
  memoryMb: number;
  hostMb: number;
  isolation?: 'process' | 'inline';
}

export interface AgentLimits {
  /** The provider skill: `model.agent`, else agent-strands. */
  provider: string;
  /** `model.persistent`: every turn-end continues, model errors are retried; maxTurns does not apply. */
  persistent: boolean;
  maxTurns: number;
  maxSteps: number;
  /** `model.sandbox` as set (the sandbox applies its own defaults). */
  sandboxConfig: Partial<SandboxLimits>;
  /** `model.sandbox` with the defaults filled in. */
  sandbox: SandboxLimits;
}

/** `config` → the limits, or E_CONFIG naming the key. `skill`: the served skill, for the message. */
export function readLimits(config: JsonObject, skill: string, returns: unknown): AgentLimits {
  const provider = typeof config.agent === 'string' ? config.agent : DEFAULT_AGENT_PROVIDER;
  const persistent = config.persistent === true;
  if (persistent && returns) throw new ConfigurationError(`'${skill}': model.persistent cannot be combined with returns (a persistent agent never finishes)`);
  const maxTurns = persistent ? Infinity : positive(config.maxTurns, 30, 'maxTurns');
  const maxSteps = positive(config.maxSteps, 30, 'maxSteps');
  const sandboxConfig = (config.sandbox ?? {}) as Partial<SandboxLimits>;
  // Checked now: the sandbox starts lazily, and a bad limit must not reach the model as a tool error.
  for (const [key, min] of [['timeoutMs', 1], ['memoryMb', 8], ['hostMb', 1]] as const) {
    const v: unknown = sandboxConfig[key];
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < min)) throw new ConfigurationError(`model.sandbox.${key} must be a number ≥ ${min} (got ${JSON.stringify(v)})`);
  }
  const isolation: unknown = sandboxConfig.isolation;
  if (isolation !== undefined && isolation !== 'process' && isolation !== 'inline') throw new ConfigurationError(`model.sandbox.isolation must be 'process' or 'inline' (got ${JSON.stringify(isolation)})`);
  const sandbox: SandboxLimits = {
    ...sandboxConfig,
    timeoutMs: sandboxConfig.timeoutMs ?? 30_000,
    memoryMb: sandboxConfig.memoryMb ?? 128,
    hostMb: sandboxConfig.hostMb ?? DEFAULT_HOST_MB,
  };
  return { provider, persistent, maxTurns, maxSteps, sandboxConfig, sandbox };
}

function positive(value: unknown, fallback: number, key: string): number {
  if (value === undefined || value === null) return fallback;
  if (value === Infinity || value === '.inf') return Infinity;
  if (typeof value !== 'number' || !(value > 0)) throw new ConfigurationError(`model.${key} must be a positive number, got ${JSON.stringify(value)}`);
  return value;
}

/** `invoke` calls used by one agent run (maxSteps). */
export class LimitCounter {
  steps = 0;
  #stepsOut = false;
  readonly #limits: AgentLimits;
  readonly #skill: string;

  constructor(limits: AgentLimits, skill: string) {
    this.#limits = limits;
    this.#skill = skill;
  }

  /** An `invoke` call: counted, or refused once maxSteps are used (the model sees the refusal). */
  step(): void {
    if (this.steps >= this.#limits.maxSteps) {
      this.#stepsOut = true;
      throw new AgentAppsError('E_AGENT_LIMIT', `maxSteps (${this.#limits.maxSteps}) exhausted: no more invoke calls`);
    }
    this.steps++;
  }

  /** A turn-end: after a refused `invoke`, the run ends here (seed 004: "the next turn-end throws"). */
  turnEnd(): void {
    if (this.#stepsOut) throw new AgentAppsError('E_AGENT_LIMIT', `maxSteps (${this.#limits.maxSteps}) exhausted before '${this.#skill}' finished`);
  }
}
