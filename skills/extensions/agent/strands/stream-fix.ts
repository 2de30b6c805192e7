// Strands 1.19's OpenAI chat adapter opens a text block for `delta.content` and closes it only at
// `finish_reason`; a tool call streamed after some text starts its block while the text block is
// still open, and the SDK's aggregation then drops the text (the model's own words vanish from the
// conversation, the trace and the events). Local servers (Ollama, llama.cpp, vLLM) often send text
// before a tool call. This wrapper closes the open text block before a tool-use block starts and
// swallows the adapter's late close of it.

import type { Message, ModelStreamEvent, StreamOptions } from '@strands-agents/sdk';
import { WrappedModel } from './wrapped-model.ts';

export class TextBeforeToolFix extends WrappedModel {
  async *stream(messages: Message[], options?: StreamOptions): AsyncGenerator<ModelStreamEvent> {
    let textOpen = false;
    let swallow = 0;
    for await (const event of this.inner.stream(messages, options)) {
      if (event.type === 'modelContentBlockStartEvent') {
        if (event.start?.type === 'toolUseStart') {
          if (textOpen) {
            yield { type: 'modelContentBlockStopEvent' };
            textOpen = false;
            swallow++;
          }
        } else if (!event.start) {
          textOpen = true;
        }
      } else if (event.type === 'modelContentBlockStopEvent') {
        if (textOpen) textOpen = false;
        else if (swallow > 0) {
          // The adapter closes the text block (first) at finish_reason: we already did.
          swallow--;
          continue;
        }
      } else if (event.type === 'modelMessageStartEvent') {
        textOpen = false;
        swallow = 0;
      }
      yield event;
    }
  }
}
