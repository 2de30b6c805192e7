// What a model's response said, read off its stream events as they pass through a wrapper: its
// text, the code of each `invoke` tool use, whether it finished, its usage. The cassette recorder
// (recorder.ts) and the run journal (journal-model.ts, docs/runs.md) both keep a turn from it.
import type { ModelStreamEvent } from '@strands-agents/sdk';

export class ResponseTap {
  text = '';
  readonly codes: string[] = [];
  /** A response that reached its stop event: an aborted or broken one is not a turn. */
  finished = false;
  usage: { inputTokens: number; outputTokens: number; totalTokens: number } | undefined;
  #tool: { name: string; input: string } | undefined;

  observe(event: ModelStreamEvent): void {
    switch (event.type) {
      case 'modelContentBlockStartEvent':
        this.#tool = event.start?.type === 'toolUseStart' ? { name: event.start.name, input: '' } : undefined;
        break;
      case 'modelContentBlockDeltaEvent':
        if (event.delta.type === 'textDelta' && !this.#tool) this.text += event.delta.text;
        else if (event.delta.type === 'toolUseInputDelta' && this.#tool) this.#tool.input += event.delta.input;
        break;
      case 'modelContentBlockStopEvent':
        if (this.#tool?.name === 'invoke') this.codes.push(codeOf(this.#tool.input));
        this.#tool = undefined;
        break;
      case 'modelMessageStopEvent':
        this.finished = true;
        break;
      case 'modelMetadataEvent':
        if (event.usage) this.usage = { inputTokens: event.usage.inputTokens ?? 0, outputTokens: event.usage.outputTokens ?? 0, totalTokens: event.usage.totalTokens ?? 0 };
        break;
    }
  }
}

/** The `code` of an `invoke` tool use's input, or the input as it came when it is not that JSON. */
export function codeOf(input: string): string {
  try {
    const parsed: unknown = JSON.parse(input || '{}');
    const code = (parsed as { code?: unknown } | null)?.code;
    return typeof code === 'string' ? code : input;
  } catch {
    return input;
  }
}
