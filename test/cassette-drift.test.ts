// Cassettes keyed on what the model is sent (SPEC §18): a run recorded against the fake
// OpenAI-compatible server on 127.0.0.1 stores each turn's request (sha256 + text); replaying it
// after the skill's prompt, its args or a tool's result changed fails with E_CASSETTE_DRIFT (exit
// 1), the turn number and the unified diff of the first difference — unless model.replay: loose.
// An unchanged skill replays, in another checkout too; a cassette without requests replays as
// before; the starter cassettes of `init` and `new` still replay. Real CLI processes throughout.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { cli, tempDir } from './cli-process.ts';
import { fakeOpenAI, textReply, toolCallReply } from './fake-openai.ts';
import { headlessWorkspace, streamLines } from './headless-helpers.ts';

const CODE = "return await ctx.manager.invoke('wordcount', { text: ctx.args.text });";
const REPLAY = ['--set', 'model.provider=replay', '--set', 'model.cassette=tally.cassette.yaml'];

/** A workspace with skills/tally.cassette.yaml recorded from a live run of `tally --text 'a b c'`. */
let recorded: string;
let cassetteText: string;

/** A fresh copy of the recorded workspace, with `edit` applied to the files it names. */
function copy(edit: Record<string, (text: string) => string> = {}): string {
  const dir = tempDir('agent-apps-drift-');
  fs.cpSync(recorded, dir, { recursive: true });
  for (const [rel, change] of Object.entries(edit)) {
    const file = path.join(dir, rel);
    fs.writeFileSync(file, change(fs.readFileSync(file, 'utf8')));
  }
  return dir;
}

describe('cassettes that notice drift', { concurrency: true }, () => {
  before(async () => {
    recorded = headlessWorkspace();
    const srv = await fakeOpenAI([toolCallReply(CODE, 'Counting.'), textReply('There are ', '3 words.')]);
    try {
      const live = await cli(['run', 'tally', '--text', 'a b c', '--set', `model.baseURL=${srv.baseURL}`, '--set', 'model.record=tally.cassette.yaml'], recorded);
      assert.equal(live.code, 0, live.stderr);
      assert.equal(live.stdout, 'There are 3 words.\n');
    } finally {
      await srv.close();
    }
    cassetteText = fs.readFileSync(path.join(recorded, 'skills', 'tally.cassette.yaml'), 'utf8');
  });

  test('a recorded turn keeps the hash and the text of its request, readable', () => {
    const { turns } = YAML.parse(cassetteText) as { turns: { text?: string; invoke?: string; request: { sha256: string; text?: string; more?: string } }[] };
    assert.deepEqual(turns.map((t) => [t.text, t.invoke]), [['Counting.', CODE], ['There are 3 words.', undefined]]);
    for (const t of turns) assert.match(t.request.sha256, /^[0-9a-f]{64}$/);
    assert.notEqual(turns[0]!.request.sha256, turns[1]!.request.sha256);
    // Turn 1: the whole request — system prompt with the tool docs, the invoke tool, the args.
    const first = turns[0]!.request.text!;
    assert.match(first, /^=== system ===\nCount the words of the text with `wordcount`, then say how many there are\./);
    assert.match(first, /### wordcount\nCount the words of a text\./);
    assert.match(first, /=== tool invoke ===\n/);
    assert.match(first, /=== user ===\nCarry out the task described in your instructions with these args:\n\ntext: a b c\n$/);
    // Turn 2: only what it adds — the model's turn 1 and the tool result.
    assert.equal(turns[1]!.request.text, undefined);
    assert.equal(turns[1]!.request.more, `=== assistant ===\nCounting.\n[invoke]\n${CODE}\n=== user ===\n[tool result: success]\nresult: 3\n`);
    // Block literals and a header that says what `request` is, not one long quoted line.
    assert.match(cassetteText, /^# Recorded by agent-apps \(model\.record\)/);
    assert.match(cassetteText, /\n {6}text: \|\n {8}=== system ===\n/);
  });

  test('the unchanged skill replays, in another checkout too (paths are not part of the request)', async () => {
    const r = await cli(['run', 'tally', '--text', 'a b c', ...REPLAY], copy());
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'There are 3 words.\n');
    assert.equal(r.stderr, '');
  });

  test("an edited prompt: E_CASSETTE_DRIFT at turn 1, exit 1, with the prompt line's unified diff", async () => {
    const ws = copy({ 'skills/tally.md': (t) => t.replace('then say how many there are', 'then say how many words there are') });
    const r = await cli(['run', 'tally', '--text', 'a b c', ...REPLAY], ws);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    const lines = r.stderr.replace(/\n$/, '').split('\n');
    assert.equal(
      lines[0],
      "error [E_CASSETTE_DRIFT]: replay cassette skills/tally.cassette.yaml: turn 1 was recorded for another request — the skill's prompt, its args, its tools or a tool's result changed (first difference below); record the cassette again with model.record, or set model.replay: loose to replay it regardless",
    );
    assert.deepEqual(lines.slice(1), [
      '--- recorded\tcassette turn 1',
      '+++ now\tthis run',
      '@@ -1,5 +1,5 @@',
      ' === system ===',
      '-Count the words of the text with `wordcount`, then say how many there are.',
      '+Count the words of the text with `wordcount`, then say how many words there are.',
      ' ',
      ' ## How you act',
      ' ',
    ]);
  });

  test('other args are another request: the diff shows the args', async () => {
    const r = await cli(['run', 'tally', '--text', 'a b c d', ...REPLAY], copy());
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error \[E_CASSETTE_DRIFT\]: replay cassette skills\/tally\.cassette\.yaml: turn 1 /);
    assert.match(r.stderr, /\n-text: a b c\n\+text: a b c d\n/);
  });

  test("a tool whose result changed: drift at turn 2, the diff shows the tool result", async () => {
    const ws = copy({ 'skills/wordcount.skill.ts': (t) => t.replace('.filter(Boolean).length', '.filter(Boolean).length + 1') });
    const r = await cli(['run', 'tally', '--text', 'a b c', ...REPLAY], ws);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error \[E_CASSETTE_DRIFT\]: replay cassette skills\/tally\.cassette\.yaml: turn 2 was recorded for another request/);
    assert.match(r.stderr, /\n--- recorded\tcassette turn 2\n/);
    assert.match(r.stderr, /\n \[tool result: success\]\n-result: 3\n\+result: 4\n/);
  });

  test('model.replay: loose replays the drifted cassette as before', async () => {
    const ws = copy({ 'skills/tally.md': (t) => t.replace('then say how many there are', 'then say how many words there are') });
    const r = await cli(['run', 'tally', '--text', 'a b c', ...REPLAY, '--set', 'model.replay=loose'], ws);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'There are 3 words.\n');
  });

  test('stream-json: the result line carries E_CASSETTE_DRIFT and exit code 1', async () => {
    const ws = copy({ 'skills/tally.md': (t) => t.replace('then say how many', 'then tell how many') });
    const r = await cli(['--output-format', 'stream-json', 'run', 'tally', '--text', 'a b c', ...REPLAY], ws);
    assert.equal(r.code, 1);
    const result = streamLines(r.stdout).at(-1)!;
    assert.equal(result.ok, false);
    assert.equal(result.exitCode, 1);
    assert.equal(result.error.code, 'E_CASSETTE_DRIFT');
    assert.match(result.error.message, /turn 1 was recorded for another request/);
  });

  test('an old cassette without requests replays as before, whatever the skill sends', async () => {
    const ws = copy({
      'skills/tally.md': (t) => t.replace('then say how many there are', 'then say how many words there are'),
      'skills/tally.cassette.yaml': (t) => {
        const { turns } = YAML.parse(t) as { turns: Record<string, unknown>[] };
        return YAML.stringify({ turns: turns.map(({ request: _r, ...rest }) => rest) });
      },
    });
    assert.doesNotMatch(fs.readFileSync(path.join(ws, 'skills', 'tally.cassette.yaml'), 'utf8'), /sha256/);
    const r = await cli(['run', 'tally', '--text', 'a b c d', ...REPLAY], ws);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'There are 3 words.\n');
  });

  test('a malformed request in a cassette is E_CONFIG naming the turn (exit 2)', async () => {
    const ws = copy({ 'skills/tally.cassette.yaml': (t) => t.replace(/sha256: [0-9a-f]{64}/, 'sha256: nothex') });
    const r = await cli(['run', 'tally', '--text', 'a b c', ...REPLAY], ws);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /tally\.cassette\.yaml \(turns\[0\]\): cassette turn 1 request\.sha256 must be 64 hex digits/);
  });

  test("the starter cassettes still replay: init's hello and new's skill", async () => {
    const dir = tempDir('agent-apps-drift-init-');
    const init = await cli(['init'], dir);
    assert.equal(init.code, 0, init.stderr);
    const hello = await cli(['run', 'hello'], dir);
    assert.equal(hello.code, 0, hello.stderr);
    assert.ok(hello.stdout.length > 0);
    const made = await cli(['new', 'summarize'], dir);
    assert.equal(made.code, 0, made.stderr);
    const run = await cli(['run', 'summarize', '--input', 'a text'], dir);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'summarize worked on a text\n');
  });
});
