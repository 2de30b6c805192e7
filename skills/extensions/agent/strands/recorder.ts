// `model.record: PATH` (docs/agents.md, docs/ci.md): wraps any Strands model and writes a cassette of what it
// produced — per model response, its text, the `code` of its `invoke` tool uses and the request
// it answered (its sha256 and text, request.ts) — after every turn, so a run that crashes still
// leaves a partial cassette.

import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { BaseModelConfig, Message, Model, ModelStreamEvent, StreamOptions } from '@strands-agents/sdk';
import { WrappedModel } from './wrapped-model.ts';
import { ResponseTap } from './response-tap.ts';
import { stringifyCassette } from './cassette.ts';
import type { CassetteTurn } from './cassette.ts';
import { recordRequest, renderRequest, type RequestPaths } from './request.ts';

export class RecordingModel extends WrappedModel {
  readonly file: string;
  readonly turns: CassetteTurn[] = [];
  readonly #paths: RequestPaths;
  /** The text of the last recorded request: the next one is stored as what it adds. */
  #lastRequest: string | undefined;

  constructor(inner: Model<BaseModelConfig>, file: string, paths: RequestPaths = {}) {
    super(inner);
    this.file = file;
    this.#paths = paths;
  }

  async *stream(messages: Message[], options?: StreamOptions): AsyncGenerator<ModelStreamEvent> {
    // Taken before the call: the agent appends to `messages` once the response is in.
    const request = renderRequest(messages, options, this.#paths);
    const tap = new ResponseTap();
    for await (const event of this.inner.stream(messages, options)) {
      tap.observe(event);
      yield event;
    }
    const { text, codes, finished } = tap;
    if (!finished) return; // an aborted or broken response is not a turn
    const turn: CassetteTurn = {};
    if (text) turn.text = text;
    // The format holds one `invoke` per turn; several tool uses in one response are joined.
    if (codes.length > 0) turn.invoke = codes.join('\n');
    turn.request = recordRequest(request, this.#lastRequest);
    this.#lastRequest = request.text;
    this.turns.push(turn);
    this.#write();
  }

  #write(): void {
    mkdirSync(dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, stringifyCassette({ turns: this.turns }));
    renameSync(tmp, this.file);
  }
}
