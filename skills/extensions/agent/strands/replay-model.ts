// A Strands `Model` that plays back a cassette (SPEC §11): the real agent loop runs, offline and
// deterministic. Each `stream()` call is one model response: the turn's text as text deltas,
// then, if the turn has `invoke`, one `invoke` tool use with input `{ code }`.

import { Model } from '@strands-agents/sdk';
import type { BaseModelConfig, Message, ModelStreamEvent, StreamOptions } from '@strands-agents/sdk';
import { AgentAppsError } from 'agent-apps';
import { loadCassette } from './cassette.ts';
import type { Cassette, CassetteTurn } from './cassette.ts';

/**
 * The cassette has no more turns: the recorded model stopped there. `final`: retrying cannot
 * help (persistent mode does not back off and retry it), and the run ended on whatever happened
 * last — the agent reports a tool error it ended on (SPEC §11: E_SANDBOX "to the caller only if
 * the run ends on it").
 */
export class CassetteEndedError extends AgentAppsError {
  readonly final = true;
  constructor(message: string) {
    super('E_MODEL', message);
  }
}

export interface ReplayModelConfig extends BaseModelConfig {
  /** Where the cassette came from (a path), for error messages. */
  cassette?: string;
}

export interface ReplayModelOptions {
  turns: CassetteTurn[];
  /** Names the cassette in errors (its path). */
  source?: string;
  modelId?: string;
}

export class ReplayModel extends Model<ReplayModelConfig> {
  #config: ReplayModelConfig;
  #turns: CassetteTurn[];
  #next = 0;

  constructor(options: ReplayModelOptions) {
    super();
    this.#turns = options.turns;
    this.#config = { modelId: options.modelId ?? 'replay', cassette: options.source ?? '(inline)' };
  }

  static async fromFile(file: string, options: { modelId?: string } = {}): Promise<ReplayModel> {
    const cassette: Cassette = await loadCassette(file);
    return new ReplayModel({ turns: cassette.turns, source: file, ...(options.modelId ? { modelId: options.modelId } : {}) });
  }

  /** How many turns have been played back so far. */
  get turnsPlayed(): number {
    return this.#next;
  }

  get turnCount(): number {
    return this.#turns.length;
  }

  updateConfig(modelConfig: ReplayModelConfig): void {
    this.#config = { ...this.#config, ...modelConfig };
  }

  getConfig(): ReplayModelConfig {
    return { ...this.#config };
  }

  async *stream(messages: Message[], options?: StreamOptions): AsyncGenerator<ModelStreamEvent> {
    const started = performance.now();
    const index = this.#next;
    const turn = this.#turns[index];
    if (!turn) {
      const n = this.#turns.length;
      throw new CassetteEndedError(`replay cassette ${this.#config.cassette} has ${n} turn${n === 1 ? '' : 's'}; the agent asked for turn ${index + 1}`);
    }
    this.#next++;

    yield { type: 'modelMessageStartEvent', role: 'assistant' };
    let outputChars = 0;
    if (turn.text) {
      outputChars += turn.text.length;
      yield { type: 'modelContentBlockStartEvent' };
      // Word-sized chunks, like a live model's stream.
      for (const chunk of turn.text.match(/\s*\S+\s*|\s+/g) ?? [turn.text]) {
        yield { type: 'modelContentBlockDeltaEvent', delta: { type: 'textDelta', text: chunk } };
      }
      yield { type: 'modelContentBlockStopEvent' };
    }
    if (turn.invoke !== undefined) {
      const input = JSON.stringify({ code: turn.invoke });
      outputChars += input.length;
      yield {
        type: 'modelContentBlockStartEvent',
        start: { type: 'toolUseStart', name: 'invoke', toolUseId: `tooluse_replay_${index + 1}` },
      };
      yield { type: 'modelContentBlockDeltaEvent', delta: { type: 'toolUseInputDelta', input } };
      yield { type: 'modelContentBlockStopEvent' };
    }
    yield { type: 'modelMessageStopEvent', stopReason: turn.invoke !== undefined ? 'toolUse' : 'endTurn' };

    // Estimated usage (≈ 4 characters a token), so budgets and usage hooks see plausible numbers.
    const inputTokens = Math.ceil((estimateChars(messages) + promptChars(options)) / 4);
    const outputTokens = Math.ceil(outputChars / 4);
    yield {
      type: 'modelMetadataEvent',
      usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
      metrics: { latencyMs: Math.round(performance.now() - started) },
    };
  }
}

function estimateChars(messages: Message[]): number {
  let n = 0;
  for (const m of messages) {
    for (const block of m.content) {
      if (block.type === 'textBlock') n += block.text.length;
      else if (block.type === 'toolUseBlock') n += JSON.stringify(block.input ?? null).length;
      else if (block.type === 'toolResultBlock') {
        for (const c of block.content) n += c.type === 'textBlock' ? c.text.length : c.type === 'jsonBlock' ? JSON.stringify(c.json).length : 0;
      }
    }
  }
  return n;
}

function promptChars(options: StreamOptions | undefined): number {
  const sp = options?.systemPrompt;
  let n = 0;
  if (typeof sp === 'string') n += sp.length;
  else if (Array.isArray(sp)) for (const b of sp) if (b.type === 'textBlock') n += b.text.length;
  for (const spec of options?.toolSpecs ?? []) n += JSON.stringify(spec).length;
  return n;
}
