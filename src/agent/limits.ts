// The agent's limits (docs/agents.md): read from the
// model config before the model is asked anything — a bad value, or a provider that is not there,
// is a configuration error (E_CONFIG, exit 2), not a failed run — and enforced by the `agent`
// skill for every provider: a provider whose hook keeps answering `continue` still stops after
// `maxTurns` turn-ends, and one that keeps calling `invoke` after `maxSteps` is refused.
// `model.budget: { tokens, usd }` (docs/ci.md) is counted from the provider's `usage` hook events:
// a run whose model calls went over it stops with E_AGENT_LIMIT naming the budget; the tokens are
// input + output, the dollars priced by src/agent/prices.ts. Sub-agents that agent code starts
// spend from their caller's budget.
import { AgentAppsError, ConfigurationError } from '../core/errors.ts';
import type { Kernel } from '../kernel/orchestrator.ts';
import type { JsonObject } from '../core/types.ts';
import { isPlainObject } from '../core/path.ts';
import { DEFAULT_HOST_MB } from './bridge.ts';
import { DEFAULT_AGENT_PROVIDER } from './provider.ts';
import { costUsd, priceFor, type Price } from './prices.ts';

export interface SandboxLimits {
  timeoutMs: number;
  memoryMb: number;
  hostMb: number;
  isolation?: 'process' | 'inline';
}

/** `model.budget`: the most one agent run (with the sub-agents its code starts) may use. */
export interface Budget {
  /** Input + output tokens. */
  tokens?: number;
  /** USD, at `model.prices` (or the default estimates). */
  usd?: number;
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
  /** `model.budget`, when set. */
  budget?: Budget;
  /** The model config's price (for `budget.usd`): a call whose model the provider does not name is priced at it. */
  price?: Price;
  /** `model.prices`, to price a call on another model (a fallback). */
  prices?: unknown;
  /** `model.modelId`. */
  modelId?: string;
}

/** `config` → the limits, or E_CONFIG naming the key. `skill`: the served skill, for the message. */
export function readLimits(config: JsonObject, skill: string, returns: unknown): AgentLimits {
  const provider = config.agent ?? DEFAULT_AGENT_PROVIDER;
  if (typeof provider !== 'string' || provider === '') throw new ConfigurationError(`model.agent must be the name of an agent provider skill (got ${JSON.stringify(provider)})`);
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
  const budget = readBudget(config.budget);
  const modelId = typeof config.modelId === 'string' && config.modelId ? config.modelId : undefined;
  const price = priceFor(modelId, config.prices);
  if (budget?.usd !== undefined) {
    // Every model the run may use needs a price, or the budget could not be kept.
    const fallbacks = Array.isArray(config.fallback) ? config.fallback : [];
    const ids: [string, unknown][] = [['model', config.modelId], ...fallbacks.map((f, i): [string, unknown] => [`model.fallback[${i}]`, isPlainObject(f) ? f.modelId : undefined])];
    for (const [where, id] of ids) {
      if (typeof id !== 'string' || !id) throw new ConfigurationError(`model.budget.usd needs the price of every model the run may use: set ${where}.modelId (and, unless it is a well-known model, model.prices.ID: { input, output } in USD per million tokens)`);
      if (!priceFor(id, config.prices)) throw new ConfigurationError(`model.budget.usd needs a price for model '${id}': set model.prices.${id}: { input, output } — USD per million input and output tokens`);
    }
  }
  return {
    provider,
    persistent,
    maxTurns,
    maxSteps,
    sandboxConfig,
    sandbox,
    ...(budget ? { budget } : {}),
    ...(price ? { price } : {}),
    ...(config.prices !== undefined ? { prices: config.prices } : {}),
    ...(modelId ? { modelId } : {}),
  };
}

function readBudget(value: unknown): Budget | undefined {
  if (value === undefined || value === null) return undefined;
  const shape = 'model.budget must be { tokens?, usd? }: the most input + output tokens, and USD, one agent run may use';
  if (!isPlainObject(value)) throw new ConfigurationError(`${shape} (got ${JSON.stringify(value)})`);
  const budget: Budget = {};
  for (const [key, v] of Object.entries(value)) {
    if (key !== 'tokens' && key !== 'usd') throw new ConfigurationError(`${shape} — unknown key '${key}'`);
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || (key === 'tokens' && !Number.isInteger(v))) {
      throw new ConfigurationError(`model.budget.${key} must be a ${key === 'tokens' ? 'whole number' : 'number'} > 0 (got ${JSON.stringify(v)})`);
    }
    budget[key] = v;
  }
  return budget.tokens === undefined && budget.usd === undefined ? undefined : budget;
}

/** The provider skill must exist before anything starts: a missing one is the config's error, not the run's. */
export async function findProvider(kernel: Kernel, provider: string, paths: readonly string[], cwd: string): Promise<void> {
  try {
    await kernel.resolve(provider, paths, cwd);
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'E_TOOL_NOT_FOUND') throw err;
    const suggestions = ((err as { suggestions?: string[] }).suggestions ?? []).map((s) => `'${s}'`);
    const hint = suggestions.length ? ` — did you mean ${suggestions.join(', ')}?` : ` (the default is ${DEFAULT_AGENT_PROVIDER})`;
    throw new ConfigurationError(`model.agent names the agent provider '${provider}', which is not a skill on the search paths${hint}`, { cause: err });
  }
}

function roundUsd(usd: number): string {
  return usd >= 1 ? usd.toFixed(2) : usd.toPrecision(3);
}

function positive(value: unknown, fallback: number, key: string): number {
  if (value === undefined || value === null) return fallback;
  if (value === Infinity || value === '.inf') return Infinity;
  if (typeof value !== 'number' || !(value > 0)) throw new ConfigurationError(`model.${key} must be a positive number, got ${JSON.stringify(value)}`);
  return value;
}

/**
 * Turns and steps used by one agent run. The first limit that runs out is kept: once a run has
 * hit a limit it ends with that E_AGENT_LIMIT, whatever its provider does with the error.
 */
/** What an agent run has spent on model calls: shared with the sub-agents its code starts. */
export interface Spend {
  tokens: number;
  usd: number;
}

/** The spend of each agent run, by its policy object, for the sub-agents its code starts. */
const spends = new WeakMap<object, Spend>();

export class LimitCounter {
  /** Turns ended (turn-end events). */
  turns = 0;
  steps = 0;
  /** The E_AGENT_LIMIT this run hit, if any. */
  exceeded: AgentAppsError | undefined;
  /** Tokens and USD spent against model.budget (the caller's, for a sub-agent). */
  readonly spend: Spend;
  #started = 0;
  #stepsOut = false;
  readonly #limits: AgentLimits;
  readonly #skill: string;

  /** `caller`: the policy of the agent whose code started this one (its spend is shared). */
  constructor(limits: AgentLimits, skill: string, caller?: object) {
    this.#limits = limits;
    this.#skill = skill;
    this.spend = (caller && spends.get(caller)) ?? { tokens: 0, usd: 0 };
  }

  /** The sub-agents started by code under `policy` spend from this run's budget. */
  shareWith(policy: object): void {
    spends.set(policy, this.spend);
  }

  /**
   * A `usage` event: its tokens (input + output) and their price are spent; over model.budget,
   * the run stops here with E_AGENT_LIMIT naming the budget.
   */
  usage(e: { inputTokens?: unknown; outputTokens?: unknown; modelId?: unknown; [key: string]: unknown }): void {
    const input = Number(e.inputTokens ?? 0) || 0;
    const output = Number(e.outputTokens ?? 0) || 0;
    this.spend.tokens += input + output;
    const { prices, modelId } = this.#limits;
    let price = this.#limits.price;
    if (typeof e.modelId === 'string' && e.modelId !== modelId) {
      try {
        price = priceFor(e.modelId, prices) ?? price;
      } catch {
        // a malformed price was reported when the run started, for the model config's id
      }
    }
    if (price) this.spend.usd += costUsd({ inputTokens: input, outputTokens: output }, price);
    if (this.exceeded) return;
    const over = this.#overBudget();
    if (over) throw over;
  }

  /** The budget's E_AGENT_LIMIT when the spend (this run's and its sub-agents') is over it. */
  #overBudget(): AgentAppsError | undefined {
    const { budget } = this.#limits;
    if (budget?.tokens !== undefined && this.spend.tokens > budget.tokens) {
      return this.#hit(`model.budget.tokens (${budget.tokens}) exhausted: the run's model calls used ${this.spend.tokens} tokens (input + output)`);
    }
    if (budget?.usd !== undefined && this.spend.usd > budget.usd) {
      return this.#hit(`model.budget.usd ($${budget.usd}) exhausted: the run's model calls cost $${roundUsd(this.spend.usd)} at model.prices (or the default estimates)`);
    }
    return undefined;
  }

  /** An `invoke` call: counted, or refused once maxSteps are used (the model sees the refusal). */
  step(): void {
    if (this.steps >= this.#limits.maxSteps) {
      this.#stepsOut = true;
      throw new AgentAppsError('E_AGENT_LIMIT', `maxSteps (${this.#limits.maxSteps}) exhausted: no more invoke calls`);
    }
    this.steps++;
  }

  /** A turn-start: refused after the run hit a limit, or past maxTurns (a provider that went on regardless). */
  turnStart(): void {
    if (this.exceeded) throw this.exceeded;
    // A sub-agent may have spent the rest of the budget: no further model call.
    const over = this.#overBudget();
    if (over) throw over;
    if (++this.#started > this.#limits.maxTurns) throw this.#turnsOut();
  }

  /** A turn-end: after a refused `invoke`, the run ends here (the next turn-end throws; docs/agents.md). */
  turnEnd(): void {
    this.turns++;
    if (this.exceeded) throw this.exceeded;
    if (this.#stepsOut) throw this.#hit(`maxSteps (${this.#limits.maxSteps}) exhausted before '${this.#skill}' finished`);
  }

  /** The turn-end's answer is `continue`: refused when that would start turn maxTurns + 1. */
  continueAfterTurn(): void {
    if (this.turns >= this.#limits.maxTurns) throw this.#turnsOut();
  }

  /** After the provider returned: the limit the run hit, if any — a provider that swallowed the error does not make it a success. */
  get hit(): AgentAppsError | undefined {
    return this.exceeded ?? (this.#stepsOut ? this.#hit(`maxSteps (${this.#limits.maxSteps}) exhausted before '${this.#skill}' finished`) : this.#overBudget());
  }

  #turnsOut(): AgentAppsError {
    const max = this.#limits.maxTurns;
    return this.#hit(`the agent used its ${max} model turn${max === 1 ? '' : 's'} (model.maxTurns) without finishing`);
  }

  #hit(message: string): AgentAppsError {
    this.exceeded = new AgentAppsError('E_AGENT_LIMIT', message);
    return this.exceeded;
  }
}
