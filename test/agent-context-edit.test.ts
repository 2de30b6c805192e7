// contextEdit (seed 004, "limits"): when on, the provider edits its own conversation to keep long
// sessions inside a window; when off, the model sees the whole conversation every turn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Message, ModelStreamEvent, StreamOptions } from '@strands-agents/sdk';
import { ReplayModel, runAgentLoop } from './strands-modules.ts';

/** The real replay model, also noting how many messages each model call was sent. */
class CountingReplay extends ReplayModel {
  seen: number[] = [];
  override async *stream(messages: Message[], options?: StreamOptions): AsyncGenerator<ModelStreamEvent> {
    this.seen.push(messages.length);
    yield* super.stream(messages, options);
  }
}

function longSession(): CountingReplay {
  const turns = Array.from({ length: 10 }, (_, i) => ({ text: `step ${i + 1}`, invoke: `memory.n = ${i + 1};` }));
  return new CountingReplay({ turns: [...turns, { text: 'done' }] });
}

const run = (model: CountingReplay, contextEdit?: boolean | { windowSize?: number }) =>
  runAgentLoop({ model, systemPrompt: 'Work.', userMessage: 'Do ten steps.', maxTurns: 20, onCode: async () => 'ok', ...(contextEdit !== undefined ? { contextEdit } : {}) });

test('without contextEdit the model is sent the whole conversation, growing every turn', async () => {
  const model = longSession();
  const out = await run(model);
  assert.equal(out.text, 'done');
  assert.equal(model.seen.length, 11);
  // user, then (assistant tool use + tool result) per turn
  assert.deepEqual(model.seen, Array.from({ length: 11 }, (_, i) => 1 + 2 * i));
});

test('contextEdit with a window keeps what the model is sent within the window, and the run still finishes', async () => {
  const model = longSession();
  const out = await run(model, { windowSize: 6 });
  assert.equal(out.text, 'done');
  assert.equal(model.seen.length, 11);
  assert.ok(Math.max(...model.seen) <= 7, `sent ${JSON.stringify(model.seen)}`);
  assert.ok(model.seen[model.seen.length - 1]! < 1 + 2 * 10, 'the last call saw a trimmed conversation');
});

test('contextEdit keeps the first user message (the task) pinned while it trims', async () => {
  const firsts: string[] = [];
  class FirstMessage extends ReplayModel {
    override async *stream(messages: Message[], options?: StreamOptions): AsyncGenerator<ModelStreamEvent> {
      const first = messages[0]?.content?.[0] as { text?: string } | undefined;
      firsts.push(first?.text ?? '(not text)');
      yield* super.stream(messages, options);
    }
  }
  const turns = Array.from({ length: 8 }, (_, i) => ({ invoke: `memory.n = ${i};` }));
  const model = new FirstMessage({ turns: [...turns, { text: 'done' }] });
  await runAgentLoop({ model, systemPrompt: 'Work.', userMessage: 'THE TASK', maxTurns: 20, onCode: async () => 'ok', contextEdit: { windowSize: 4 } });
  assert.ok(firsts.every((t) => t === 'THE TASK'), JSON.stringify(firsts));
});
