// Conformance of events, logging and the agent with SPEC §8–§11 and seeds 003 / 004, probed the
// way an outside suite would: public skills and the programmatic API, Markdown agent skills with
// replay cassettes in temp workspaces, the real Strands loop and the real isolated-vm sandbox.
// Each test states the rule it checks; nothing of the runtime is mocked.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { logs, tempDir } from './helpers.ts';
import { agentRuntime, eventQueue, invokeWithTrace, types } from './agent-helpers.ts';

describe('SPEC §11 / seed 004: the trace and the agent events', () => {
  test('every model turn ends with a turn-end, also a turn that finished inside its tool call', async (t) => {
    // The cassette of SPEC §11: finish() in turn 1, so turn 2 is never played.
    const rt = await agentRuntime(t, {
      counter: {
        'allowed-tools': 'wordcount',
        model: { events: 'progress' },
        turns: [
          { text: 'Let me count.', invoke: "const n = await ctx.manager.invoke('wordcount', { text: 'a b c' });\nctx.manager.finish({ count: n });" },
          { text: 'Done.' },
        ],
      },
      stepper: {
        turns: [{ text: 'One.', invoke: 'return 1' }, { text: 'Two.', invoke: 'return 2' }, { text: 'All done.' }],
      },
    });
    const progress = await eventQueue(rt, 'progress');
    const run = await invokeWithTrace(rt, 'counter');
    assert.deepEqual(run.value, { count: 3 });
    const kinds = types(run.trace).filter((k) => k !== 'usage');
    assert.deepEqual(kinds, ['turn-start', 'message', 'tool-call', 'tool-result', 'turn-end']);
    assert.deepEqual(run.trace.at(-1)!.result, 'Let me count.');
    assert.equal(run.trace.at(-1)!.turnNumber, 1);
    const events = (await progress.drain()).map((e) => e.type);
    for (const kind of ['agent-start', 'turn-start', 'agent-message', 'tool-call', 'tool-result', 'turn-end', 'agent-complete']) {
      assert.ok(events.includes(kind), `${kind} is emitted (got ${events.join(', ')})`);
    }
    assert.ok(events.indexOf('turn-end') < events.indexOf('agent-complete'));

    // Turns that only used tools are turns too: one turn-end per turn-start, in order.
    const steps = await invokeWithTrace(rt, 'stepper');
    assert.equal(steps.value, 'All done.');
    const bounds = steps.trace.filter((e) => e.type === 'turn-start' || e.type === 'turn-end').map((e) => `${e.type}:${e.turnNumber}`);
    assert.deepEqual(bounds, ['turn-start:1', 'turn-end:1', 'turn-start:2', 'turn-end:2', 'turn-start:3', 'turn-end:3']);
    assert.deepEqual(steps.trace.filter((e) => e.type === 'turn-end').map((e) => e.result), ['One.', 'Two.', 'All done.']);
  });
});
