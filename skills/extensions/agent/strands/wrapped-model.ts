// A Strands model that wraps another: configuration, statefulness and token counting go to the
// inner model; subclasses override `stream` (the recorder, the text-before-tool fix).

import { Model } from './sdk.ts';
import type { BaseModelConfig, CountTokensOptions, Message, ModelStreamEvent, StreamOptions } from '@strands-agents/sdk';

export abstract class WrappedModel extends Model<BaseModelConfig> {
  readonly inner: Model<BaseModelConfig>;

  constructor(inner: Model<BaseModelConfig>) {
    super();
    this.inner = inner;
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

  abstract stream(messages: Message[], options?: StreamOptions): AsyncGenerator<ModelStreamEvent>;
}
