// The journal's side of the model (docs/runs.md): with `AgentArgs.journal`, every model response is
// reported whole (`onResponse`: the agent writes it to the run file as a `model-turn` line) before
// the loop runs any of its tools; and the responses a resumed run's journal holds are played back
// first, in order, without asking the model — which answers from the turn after them on, as it
// would have in the run that died. A replay cassette underneath is moved past the turns played
// (`skipTurns`), so it goes on where the journal ends.

import type { BaseModelConfig, Message, Model, ModelStreamEvent, StreamOptions } from '@strands-agents/sdk';
import type { JournalTurn } from 'agent-apps/agent';
import { WrappedModel } from './wrapped-model.ts';
import { ResponseTap } from './response-tap.ts';

/** A whole response: what the `response` hook event carries. */
export type ResponseRecord = JournalTurn & { replayed?: boolean };

export class JournalModel extends WrappedModel {
  readonly #turns: readonly JournalTurn[];
  readonly #onResponse: (r: ResponseRecord) => Promise<unknown>;
  #played = 0;
  #live = false;

  constructor(inner: Model<BaseModelConfig>, turns: readonly JournalTurn[], onResponse: (r: ResponseRecord) => Promise<unknown>) {
    super(inner);
    this.#turns = turns;
    this.#onResponse = onResponse;
  }

  async *stream(messages: Message[], options?: StreamOptions): AsyncGenerator<ModelStreamEvent> {
    const journaled = this.#live ? undefined : this.#turns[this.#played];
    if (journaled) {
      const n = ++this.#played;
      yield* play(journaled, n);
      await this.#onResponse({ ...journaled, replayed: true });
      return;
    }
    if (!this.#live) {
      this.#live = true;
      if (this.#played > 0) skipTurns(this.inner, this.#played);
    }
    const tap = new ResponseTap();
    for await (const event of this.inner.stream(messages, options)) {
      tap.observe(event);
      yield event;
    }
    const { text, codes, finished, usage } = tap;
    // An aborted or broken response is not a turn. The loop gets its last event only once the
    // response is journaled: none of its tools runs before that.
    if (!finished) return;
    await this.#onResponse({
      ...(text ? { text } : {}),
      ...(codes.length === 1 ? { invoke: codes[0]! } : codes.length > 1 ? { invoke: codes } : {}),
      ...(usage ? { usage } : {}),
    });
  }
}

/** A journaled response as the model's stream: its text, its `invoke` tool uses, the usage it had. */
async function* play(turn: JournalTurn, n: number): AsyncGenerator<ModelStreamEvent> {
  yield { type: 'modelMessageStartEvent', role: 'assistant' };
  if (turn.text) {
    yield { type: 'modelContentBlockStartEvent' };
    yield { type: 'modelContentBlockDeltaEvent', delta: { type: 'textDelta', text: turn.text } };
    yield { type: 'modelContentBlockStopEvent' };
  }
  const codes = turn.invoke === undefined ? [] : Array.isArray(turn.invoke) ? turn.invoke : [turn.invoke];
  for (const [i, code] of codes.entries()) {
    yield { type: 'modelContentBlockStartEvent', start: { type: 'toolUseStart', name: 'invoke', toolUseId: `tooluse_journal_${n}_${i + 1}` } };
    yield { type: 'modelContentBlockDeltaEvent', delta: { type: 'toolUseInputDelta', input: JSON.stringify({ code }) } };
    yield { type: 'modelContentBlockStopEvent' };
  }
  yield { type: 'modelMessageStopEvent', stopReason: codes.length ? 'toolUse' : 'endTurn' };
  const usage = turn.usage ?? { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  yield { type: 'modelMetadataEvent', usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, totalTokens: usage.totalTokens }, metrics: { latencyMs: 0 } };
}

/** Moves a replay cassette under `model` (wrappers, the fallback in use) past the `n` turns the journal played. */
function skipTurns(model: unknown, n: number): void {
  for (let m = model, i = 0; m && typeof m === 'object' && i < 8; m = (m as { inner?: unknown }).inner, i++) {
    const skip = (m as { skipTurns?: unknown }).skipTurns;
    if (typeof skip === 'function') {
      (skip as (n: number) => void).call(m, n);
      return;
    }
  }
}
