// Red-team tests for logging (SPEC §10, §15; issue 7 items 5 and 9): a log event's text is cut at
// 64 KiB with a note, the ring is bounded in bytes as well as in count, and the console reporter
// escapes control characters (newlines, ESC sequences) in what it prints, while the jsonl run
// file keeps the text exactly, JSON-encoded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { Writable } from 'node:stream';
import type { LogEvent } from '../../src/index.ts';
import { DEFAULT_RING_BYTES, Logger, MAX_LOG_TEXT } from '../../src/kernel/log.ts';
import { consoleReporter, jsonlReporter } from '../../src/surfaces/shared/reporters.ts';
import type { Painter } from '../../src/surfaces/shared/output.ts';
import { bareRuntime, logs, skill, tempDir } from '../helpers.ts';

const plain: Painter = new Proxy({} as Painter, { get: () => (s: string) => s });

function sink(): { stream: Writable; text: () => string } {
  let out = '';
  const stream = new Writable({
    write(chunk, _enc, done) {
      out += String(chunk);
      done();
    },
  });
  return { stream, text: () => out };
}

function event(fields: Partial<LogEvent>): LogEvent {
  return { type: 'message', tag: 'user', level: 'error', timestamp: 0, contextId: 'c', tool: 'agent', rootContextId: 'r', ...fields };
}

// ——— text cap ———

test('a log event text is cut at 64 KiB with a note of how much was cut, in the ring and for every reporter', async (t) => {
  const rt = await bareRuntime(t);
  const seen: LogEvent[] = [];
  rt.root.manager.configure({ reporter: { name: 'spy', report: (e) => void seen.push(e) }, global: true });
  rt.register(skill('shout', (ctx) => ctx.manager.log({ type: 'huge', level: 'info', text: 'a'.repeat(MAX_LOG_TEXT + 1_048_576) })));
  await rt.invoke('shout');
  const [kept] = logs(rt, { type: 'huge' });
  assert.equal(kept!.text, `${'a'.repeat(MAX_LOG_TEXT)}… [cut: 1048576 more characters]`);
  assert.equal(seen.find((e) => e.type === 'huge')!.text, kept!.text, 'reporters get the cut text too');
  // At the limit nothing is cut; a surrogate pair is never split.
  const logger = new Logger();
  logger.emit(event({ text: 'b'.repeat(MAX_LOG_TEXT) }));
  logger.emit(event({ text: `${'c'.repeat(MAX_LOG_TEXT - 1)}😀tail` }));
  const [exact, emoji] = logger.tail('r');
  assert.equal(exact!.text, 'b'.repeat(MAX_LOG_TEXT));
  assert.equal(emoji!.text, `${'c'.repeat(MAX_LOG_TEXT - 1)}… [cut: 6 more characters]`);
});

// ——— ring bounded in bytes ———

test('the log ring is bounded in bytes (64 MiB) as well as in count, oldest dropped, whatever field holds the payload', async (t) => {
  const rt = await bareRuntime(t);
  const payload = 'p'.repeat(15_000_000);
  rt.register(skill('flood', (ctx) => {
    for (let i = 0; i < 10; i++) ctx.manager.log({ type: 'blob', level: 'info', i, data: { payload } });
  }));
  await rt.invoke('flood');
  const kept = logs(rt, { type: 'blob' });
  assert.ok(kept.length >= 3 && kept.length <= 4, `kept ${kept.length} of 10`);
  assert.deepEqual(kept.map((e) => e.i), Array.from({ length: kept.length }, (_, k) => 10 - kept.length + k), 'the newest are kept');
  const logger = rt.root.globals.internals.log as Logger;
  assert.ok(logger.retained.bytes <= DEFAULT_RING_BYTES, `${logger.retained.bytes} bytes retained`);
});

test('Logger: a small byte bound drops the oldest events, and an event alone over it is not retained', () => {
  const logger = new Logger(100, 1000);
  for (let i = 0; i < 20; i++) logger.emit(event({ type: 'n', level: 'info', i, text: 'x'.repeat(200) }));
  const kept = logger.tail('r');
  assert.ok(kept.length >= 2 && kept.length <= 4, `kept ${kept.length}`);
  assert.equal(kept.at(-1)!.i, 19);
  assert.ok(logger.retained.bytes <= 1000);
  const before = logger.tail('r').map((e) => e.i);
  const reported: unknown[] = [];
  logger.addReporter({ name: 'spy', report: (e) => void reported.push(e.i) });
  logger.emit(event({ type: 'n', level: 'info', i: 20, text: 'y'.repeat(5000) }));
  assert.deepEqual(reported, [20], 'reported');
  assert.deepEqual(logger.tail('r').map((e) => e.i), before, 'but not retained, and it pushed nothing out');
  // Binary data, maps and sets count by what they hold.
  logger.emit(event({ type: 'n', level: 'info', i: 21, buf: Buffer.alloc(5000) }));
  logger.emit(event({ type: 'n', level: 'info', i: 22, map: new Map([['k', 'v'.repeat(5000)]]) }));
  logger.emit(event({ type: 'n', level: 'info', i: 23, set: new Set(['w'.repeat(5000)]) }));
  assert.deepEqual(logger.tail('r').map((e) => e.i), before);
  logger.emit(event({ type: 'n', level: 'info', i: 24 }));
  assert.equal(logger.tail('r').at(-1)!.i, 24, 'the ring keeps working');
});

// ——— control characters on the console ———

test('the console reporter escapes control characters in log text — newlines, CR, ESC sequences — onto one line', () => {
  const { stream, text } = sink();
  const reporter = consoleReporter(stream, plain);
  reporter.report(event({ text: 'a\nb\x1b[31mred' }));
  reporter.report(event({ level: 'warn', tag: 'work', type: 'w', code: 'E_\x1b]0;title\x07', text: 'over\rwrite\x08\x7f\u009b2J\u2028end\u202etxt' }));
  reporter.report(event({ level: 'error', tag: 'work', type: 'no\ntext', tool: 'tool\x1b[2J' }));
  const out = text();
  assert.doesNotMatch(out, /[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/, 'no raw control character reaches the terminal');
  assert.deepEqual(out.split('\n'), [
    'a\\nb\\x1b[31mred',
    'warn [E_\\x1b]0;title\\x07] agent: over\\rwrite\\x08\\x7f\\x9b2J\\u2028end\\u202etxt',
    'error tool\\x1b[2J: no\\ntext',
    '',
  ]);
});

test('the console reporter escapes control characters when stderr is a terminal too', () => {
  const { stream, text } = sink();
  (stream as Writable & { isTTY?: boolean }).isTTY = true;
  consoleReporter(stream, plain, { verbose: true }).report(event({ level: 'info', tag: 'work', text: 'x\x1b[1my\tz' }));
  assert.equal(text(), 'info agent: x\\x1b[1my\\tz\n');
});

test('the jsonl run file keeps log text exactly, JSON-encoded', async (t) => {
  const ws = tempDir(t);
  const reporter = jsonlReporter(ws, 'run-ctl');
  reporter.report(event({ text: 'a\nb\x1b[31mred' }));
  reporter.close?.();
  const raw = fs.readFileSync(reporter.file, 'utf8');
  assert.equal(raw.split('\n').length, 2, 'one line');
  assert.doesNotMatch(raw, /\x1b/);
  assert.equal((JSON.parse(raw) as LogEvent).text, 'a\nb\x1b[31mred');
});
