// What model calls cost (docs/ci.md): `model.prices: { MODEL_ID: { input, output } }`, USD per
// million input / output tokens, over a small table of default ESTIMATES for well-known model ids
// (list prices as published by their vendors when this table was written; no cache, batch or
// long-context tiers). Read by the agent trace, which prices each call's usage (the CLI's
// stream-json sums it as `costUsd`), and by `model.budget.usd` (src/agent/limits.ts). A run whose
// model has no price has no cost, not a cost of 0.
import { ConfigurationError } from '../core/errors.ts';
import { isPlainObject } from '../core/path.ts';

/** USD per million tokens. */
export interface Price {
  input: number;
  output: number;
}

/**
 * Default prices, USD per million input / output tokens — estimates, to be overridden with
 * `model.prices` where it matters. Keys are model *families*: a model id is looked up as it is,
 * then without its Bedrock region and vendor prefix, version suffix and date (`familyOf`), so
 * `us.anthropic.claude-sonnet-4-5-20250929-v1:0`, `claude-sonnet-4-5-20250929` and
 * `claude-sonnet-4-5` share a price.
 */
export const DEFAULT_PRICES: Readonly<Record<string, Price>> = Object.freeze({
  // Anthropic (also on Bedrock)
  'claude-opus-4-6': { input: 5, output: 25 },
  'claude-opus-4-5': { input: 5, output: 25 },
  'claude-opus-4-1': { input: 15, output: 75 },
  'claude-opus-4': { input: 15, output: 75 },
  'claude-sonnet-4-6': { input: 3, output: 15 },
  'claude-sonnet-4-5': { input: 3, output: 15 },
  'claude-sonnet-4': { input: 3, output: 15 },
  'claude-3-7-sonnet': { input: 3, output: 15 },
  'claude-3-5-sonnet': { input: 3, output: 15 },
  'claude-haiku-4-5': { input: 1, output: 5 },
  'claude-3-5-haiku': { input: 0.8, output: 4 },
  'claude-3-haiku': { input: 0.25, output: 1.25 },
  // OpenAI
  'gpt-5.4': { input: 2.5, output: 15 },
  'gpt-5.4-mini': { input: 0.75, output: 4.5 },
  'gpt-5.1': { input: 1.25, output: 10 },
  'gpt-5': { input: 1.25, output: 10 },
  'gpt-5-mini': { input: 0.25, output: 2 },
  'gpt-5-nano': { input: 0.05, output: 0.4 },
  'gpt-4.1': { input: 2, output: 8 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4 },
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  o3: { input: 2, output: 8 },
  'o3-mini': { input: 1.1, output: 4.4 },
  'o4-mini': { input: 1.1, output: 4.4 },
  // Amazon Nova (Bedrock)
  'nova-premier': { input: 2.5, output: 12.5 },
  'nova-pro': { input: 0.8, output: 3.2 },
  'nova-lite': { input: 0.06, output: 0.24 },
  'nova-micro': { input: 0.035, output: 0.14 },
});

/**
 * The family a model id belongs to for pricing: lower case, without a Bedrock inference-profile
 * region (`us.`, `eu.`, `global.` …) or vendor prefix (`anthropic.`, `amazon.` …), a Bedrock
 * version (`-v1:0`), a date (`-20250929`, `-2024-08-06`) or `-latest`; Anthropic's `-4-0` alias is `-4`.
 */
export function familyOf(modelId: string): string {
  return modelId
    .toLowerCase()
    .replace(/^(?:us|eu|apac|global|jp|au|ca|us-gov)\./, '')
    .replace(/^(?:anthropic|amazon|meta|mistral|cohere|openai|deepseek)[./]/, '')
    .replace(/-v\d+(?::\d+)?$/, '')
    .replace(/-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$/, '')
    .replace(/^(claude-(?:opus|sonnet)-4)-0$/, '$1');
}

/**
 * The price of `modelId`: from `prices` (the `model.prices` config value; by the id as written,
 * then by its family), else from DEFAULT_PRICES by its family, else undefined. An entry in
 * `prices` that is not `{ input, output }` with numbers ≥ 0 is E_CONFIG.
 */
export function priceFor(modelId: unknown, prices: unknown): Price | undefined {
  if (typeof modelId !== 'string' || modelId === '') return undefined;
  const family = familyOf(modelId);
  if (isPlainObject(prices)) {
    for (const key of [modelId, family]) {
      if (Object.hasOwn(prices, key)) return checked(key, prices[key]);
    }
  }
  return Object.hasOwn(DEFAULT_PRICES, family) ? DEFAULT_PRICES[family] : undefined;
}

/** Whether `modelId`'s price is a default estimate rather than one `prices` sets. */
export function isDefaultPrice(modelId: string, prices: unknown): boolean {
  const family = familyOf(modelId);
  return !(isPlainObject(prices) && (Object.hasOwn(prices, modelId) || Object.hasOwn(prices, family))) && Object.hasOwn(DEFAULT_PRICES, family);
}

/** What `usage` cost at `price`, in USD. */
export function costUsd(usage: { inputTokens?: number; outputTokens?: number }, price: Price): number {
  return ((usage.inputTokens ?? 0) * price.input + (usage.outputTokens ?? 0) * price.output) / 1_000_000;
}

function checked(modelId: string, entry: unknown): Price {
  const ok = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
  if (!isPlainObject(entry) || !ok(entry.input) || !ok(entry.output)) {
    throw new ConfigurationError(`model.prices.${modelId} must be { input, output }: USD per million input and output tokens, numbers ≥ 0 (got ${JSON.stringify(entry)})`);
  }
  return { input: entry.input as number, output: entry.output as number };
}
