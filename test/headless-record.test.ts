// `run … --record PATH` and what a headless run says it cost (SPEC §18): a live run against the
// fake OpenAI-compatible server on 127.0.0.1, recorded, then replayed with the server gone; the
// result line's usage is what the server reported, and costUsd what model.prices makes of it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { cli } from './cli-process.ts';
import { fakeOpenAI, textReply, toolCallReply } from './fake-openai.ts';
import { headlessWorkspace, streamLines } from './headless-helpers.ts';

const CODE = "return await ctx.manager.invoke('wordcount', { text: ctx.args.text });";
const PRICES = ['--set', 'model.prices.fake-model.input=3', '--set', 'model.prices.fake-model.output=15'];

describe('--record and costUsd', { concurrency: true }, () => {
  test('--record PATH writes a cassette of a live run, relative to where the command runs, and it replays offline', { timeout: 30_000 }, async () => {
    const ws = headlessWorkspace();
    const srv = await fakeOpenAI([toolCallReply(CODE, 'Counting.'), textReply('There are ', '3 words.')]);
    let live;
    try {
      live = await cli(['--output-format', 'stream-json', ...PRICES, 'run', 'tally', '--text', 'a b c', '--set', `model.baseURL=${srv.baseURL}`, '--record', 'recorded.yaml'], ws);
    } finally {
      await srv.close();
    }
    assert.equal(live.code, 0, live.stderr);
    assert.equal(srv.requests.length, 2);
    const result = streamLines(live.stdout).at(-1)!;
    assert.equal(result.result, 'There are 3 words.');
    // The fake server's usage chunks: 120 + 30 tokens, then 160 + 8.
    assert.deepEqual(result.usage, { inputTokens: 280, outputTokens: 38 });
    // USD per million tokens: (280 × 3 + 38 × 15) / 1e6.
    assert.equal(result.costUsd, 0.00141);

    const file = path.join(ws, 'recorded.yaml');
    assert.ok(fs.existsSync(file), 'the cassette is where the command ran');
    assert.equal(fs.existsSync(path.join(ws, 'skills', 'recorded.yaml')), false, 'not beside the skill, where --set model.record=recorded.yaml would put it');
    const turns = (YAML.parse(fs.readFileSync(file, 'utf8')) as { turns: { invoke?: string; text?: string }[] }).turns;
    assert.deepEqual(
      turns.map((t) => [t.invoke, t.text]),
      [
        [CODE, 'Counting.'],
        [undefined, 'There are 3 words.'],
      ],
    );

    // The server is gone: the cassette plays the run back.
    const replayed = await cli(['run', 'tally', '--text', 'a b c', '--set', 'model.provider=replay', '--set', `model.cassette=${file}`], ws);
    assert.equal(replayed.code, 0, replayed.stderr);
    assert.equal(replayed.stdout, 'There are 3 words.\n');
  });

  test('without a price for the model, the result line has usage and no costUsd', async () => {
    const ws = headlessWorkspace();
    const r = await cli(['--output-format', 'stream-json', 'run', 'count', '--text', 'a b'], ws);
    assert.equal(r.code, 0, r.stderr);
    const result = streamLines(r.stdout).at(-1)!;
    assert.ok(result.usage.inputTokens > 0);
    assert.equal('costUsd' in result, false);
  });

  test('costUsd sums every agent of the run, nested ones included', async () => {
    const ws = headlessWorkspace();
    // The replay model estimates tokens; every agent here runs on modelId m (the sub-agent on its own cascade).
    const r = await cli(['--output-format', 'stream-json', '--set', 'model.modelId=m', '--set', 'model.prices.m.input=1000000', '--set', 'model.prices.m.output=0', 'run', 'outer', '--text', 'a b'], ws);
    assert.equal(r.code, 0, r.stderr);
    const result = streamLines(r.stdout).at(-1)!;
    // $1 per input token, output free: the cost is the input tokens of both agents.
    assert.equal(result.costUsd, result.usage.inputTokens);
  });

  test('a malformed price is a configuration error naming the key: exit 2', async () => {
    const ws = headlessWorkspace();
    const r = await cli(['--set', 'model.modelId=m', '--set', 'model.prices.m.input=cheap', 'run', 'count', '--text', 'a b'], ws);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^error \[E_CONFIG\]: model\.prices\.m must be \{ input, output \}/);
  });
});
