// A Strands `Model` that plays back a cassette (docs/agents.md): the real agent loop runs, offline and
// deterministic. Each `stream()` call is one model response: the turn's text as text deltas,
// then, if the turn has `invoke`, one `invoke` tool use with input `{ code }`. A turn recorded
// with its request (docs/ci.md) is played only for that request: anything else is E_CASSETTE_DRIFT
// with the first difference as a unified diff, unless `model.replay: loose`.

import { relative, isAbsolute } from 'node:path';
import { Model } from './sdk.ts';
import type { BaseModelConfig, Message, ModelStreamEvent, StreamOptions } from '@strands-agents/sdk';
import { AgentAppsError } from 'agent-apps';
import { loadCassette, recordedRequestText } from './cassette.ts';
import type { Cassette, CassetteTurn } from './cassette.ts';
import { renderRequest, type RequestPaths } from './request.ts';

/**
 * The cassette has no more turns: the recorded model stopped there. `final`: retrying cannot
 * help (persistent mode does not back off and retry it), and the run ended on whatever happened
 * last — the agent reports a tool error it ended on (docs/agents.md: E_SANDBOX reaches
 * the caller only if the run ends on it).
 */
export class CassetteEndedError extends AgentAppsError {
  readonly final = true;
  constructor(message: string) {
    super('E_MODEL', message);
  }
}

/**
 * The request of a replayed turn is not the one its cassette recorded: the skill, its prompt, its
 * args, its tools or a tool's result changed. `final`: replaying again gives the same answer.
 * `detail`: the unified diff of the first difference (recorded → now).
 */
export class CassetteDriftError extends AgentAppsError {
  readonly final = true;
  readonly turn: number;
  constructor(message: string, turn: number, detail: string) {
    super('E_CASSETTE_DRIFT', message, { detail });
    this.turn = turn;
  }
}

/** How a replay treats recorded requests: `strict` (the default) checks them, `loose` does not. */
export type ReplayCheck = 'strict' | 'loose';

export interface ReplayModelConfig extends BaseModelConfig {
  /** Where the cassette came from (a path), for error messages. */
  cassette?: string;
}

export interface ReplayModelOptions {
  turns: CassetteTurn[];
  /** Names the cassette in errors (its path). */
  source?: string;
  modelId?: string;
  /** `loose`: play the turns whatever the model is sent (default `strict`). */
  check?: ReplayCheck;
  /** The paths a recorded request writes as `<skill-dir>` / `<cwd>`. */
  paths?: RequestPaths;
}

/** The most lines of diff an E_CASSETTE_DRIFT shows. */
const MAX_DIFF_LINES = 60;

export class ReplayModel extends Model<ReplayModelConfig> {
  #config: ReplayModelConfig;
  #turns: CassetteTurn[];
  #next = 0;
  readonly #check: ReplayCheck;
  readonly #paths: RequestPaths;

  constructor(options: ReplayModelOptions) {
    super();
    this.#turns = options.turns;
    this.#config = { modelId: options.modelId ?? 'replay', cassette: options.source ?? '(inline)' };
    this.#check = options.check ?? 'strict';
    this.#paths = options.paths ?? {};
  }

  static async fromFile(file: string, options: Omit<ReplayModelOptions, 'turns' | 'source'> = {}): Promise<ReplayModel> {
    const cassette: Cassette = await loadCassette(file);
    return new ReplayModel({ ...options, turns: cassette.turns, source: file });
  }

  /** How many turns have been played back so far. */
  get turnsPlayed(): number {
    return this.#next;
  }

  get turnCount(): number {
    return this.#turns.length;
  }

  /** A resumed run (docs/runs.md) played its first `n` turns from its journal: the cassette goes on from turn n + 1. */
  skipTurns(n: number): void {
    this.#next = Math.max(this.#next, n);
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
    if (turn.request && this.#check === 'strict') await this.#checkRequest(index, turn.request.sha256, messages, options);
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

  async #checkRequest(index: number, sha256: string, messages: Message[], options: StreamOptions | undefined): Promise<void> {
    const now = renderRequest(messages, options, this.#paths);
    if (now.sha256 === sha256) return;
    const n = index + 1;
    const file = this.#config.cassette ?? '(inline)';
    const shown = isAbsolute(file) && !relative(process.cwd(), file).startsWith('..') ? relative(process.cwd(), file) : file;
    const recorded = recordedRequestText(this.#turns, index);
    throw new CassetteDriftError(
      `replay cassette ${shown}: turn ${n} was recorded for another request — the skill's prompt, its args, its tools or a tool's result changed (first difference below); record the cassette again with model.record, or set model.replay: loose to replay it regardless`,
      n,
      recorded === undefined ? '(the cassette does not keep the text of this request: nothing to compare)' : await firstDifference(recorded, now.text, n),
    );
  }
}

/** The first hunk of the unified diff recorded → now (jsdiff), at most MAX_DIFF_LINES lines. */
async function firstDifference(recorded: string, now: string, turn: number): Promise<string> {
  // jsdiff loads only when there is a difference to show.
  const { createTwoFilesPatch } = await import('diff');
  const patch = createTwoFilesPatch('recorded', 'now', recorded, now, `cassette turn ${turn}`, 'this run', { context: 3 });
  const lines = patch.split('\n').filter((l) => !/^=+$/.test(l));
  const hunks = lines.map((l, i) => (l.startsWith('@@ ') ? i : -1)).filter((i) => i >= 0);
  if (hunks.length === 0) return '(the requests differ only in how they are structured, not in their text)';
  let shown = lines.slice(0, hunks[1] ?? lines.length);
  while (shown.length && shown.at(-1) === '') shown.pop();
  if (shown.length > MAX_DIFF_LINES) shown = [...shown.slice(0, MAX_DIFF_LINES), `… (${shown.length - MAX_DIFF_LINES} more lines of this difference)`];
  if (hunks.length > 1) shown.push(`… (${hunks.length - 1} more difference${hunks.length === 2 ? '' : 's'} after this one)`);
  return shown.join('\n');
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
