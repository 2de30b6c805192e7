// What model calls cost (SPEC §18): `model.prices: { MODEL_ID: { input, output } }`, USD per
// million input / output tokens. Read by the agent trace, which prices each call's usage (the
// CLI's stream-json sums it as `costUsd`); a run whose model has no price has no cost, not a
// cost of 0.
import { ConfigurationError } from '../core/errors.ts';
import { isPlainObject } from '../core/path.ts';

/** USD per million tokens. */
export interface Price {
  input: number;
  output: number;
}

/**
 * The price of `modelId` in `prices` (the `model.prices` config value), or undefined when it has
 * none. An entry that is there but is not `{ input, output }` with numbers ≥ 0 is E_CONFIG.
 */
export function priceFor(modelId: unknown, prices: unknown): Price | undefined {
  if (typeof modelId !== 'string' || !isPlainObject(prices) || !Object.hasOwn(prices, modelId)) return undefined;
  const entry = prices[modelId];
  const ok = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
  if (!isPlainObject(entry) || !ok(entry.input) || !ok(entry.output)) {
    throw new ConfigurationError(`model.prices.${modelId} must be { input, output }: USD per million input and output tokens, numbers ≥ 0 (got ${JSON.stringify(entry)})`);
  }
  return { input: entry.input as number, output: entry.output as number };
}

/** What `usage` cost at `price`, in USD. */
export function costUsd(usage: { inputTokens?: number; outputTokens?: number }, price: Price): number {
  return ((usage.inputTokens ?? 0) * price.input + (usage.outputTokens ?? 0) * price.output) / 1_000_000;
}
