// `model.fallback: [ {…model…}, … ]` (docs/ci.md): the model config, then each fallback in order.
// The agent loop moves to the next one when a model call has failed and its retries are used up
// (loop.ts); from then on the run stays on it. Configuration, state and token counting go to the
// model in use.

import { Model } from './sdk.ts';
import type { BaseModelConfig, CountTokensOptions, Message, ModelStreamEvent, StreamOptions } from '@strands-agents/sdk';

export class FallbackModel extends Model<BaseModelConfig> {
  /** How the agent loop knows a chain when it sees one (it does not import this file). */
  readonly fallbackChain = true;
  readonly models: readonly Model<BaseModelConfig>[];
  #index = 0;

  constructor(models: readonly Model<BaseModelConfig>[]) {
    super();
    if (models.length === 0) throw new Error('FallbackModel needs at least one model');
    this.models = models;
  }

  /** The model in use. */
  get inner(): Model<BaseModelConfig> {
    return this.models[this.#index]!;
  }

  /** Which of `models` is in use: 0 is the model config, 1 the first fallback … */
  get index(): number {
    return this.#index;
  }

  /** Moves to the next model; false when there is none. */
  advance(): boolean {
    if (this.#index + 1 >= this.models.length) return false;
    this.#index++;
    return true;
  }

  updateConfig(modelConfig: BaseModelConfig): void {
    this.inner.updateConfig(modelConfig);
  }

  getConfig(): BaseModelConfig {
    return this.inner.getConfig();
  }

  override get stateful(): boolean {
    return this.inner.stateful;
  }

  override countTokens(messages: Message[], options?: CountTokensOptions): Promise<number> {
    return this.inner.countTokens(messages, options);
  }

  async *stream(messages: Message[], options?: StreamOptions): AsyncGenerator<ModelStreamEvent> {
    yield* this.inner.stream(messages, options);
  }
}
