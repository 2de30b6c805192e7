// SPEC §10 logging, beyond the ctx.manager.log/tail/configure basics of kernel-context.test.ts:
// the 10,000-event ring buffer, the five levels, per-run versus global settings, the fields every
// event carries, redaction before any reporter, and the console and jsonl reporters.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { LogEvent, LogLevel, Reporter } from '../src/index.ts';
import { Logger } from '../src/kernel/log.ts';
import { redact } from '../src/core/redact.ts';
import { consoleReporter, jsonlReporter, KEEP_RUNS, RUNS_DIR } from '../src/surfaces/shared/reporters.ts';
import type { Painter } from '../src/surfaces/shared/output.ts';
import { bareRuntime, logs, skill, tempDir } from './helpers.ts';

const LEVELS: LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error'];

// ——— the ring buffer ———

test('the ring buffer keeps the last 10,000 events, oldest dropped first', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('flood', (ctx, args: { n: number }) => {
    for (let i = 0; i < args.n; i++) ctx.manager.log({ type: 'tick', level: 'info', i });
  }));
  await rt.invoke('flood', { n: 10_050 });
  const all = rt.root.manager.tail();
  assert.equal(all.length, 10_000);
  const ticks = logs(rt, { type: 'tick' });
  assert.equal(ticks.at(-1)!.i, 10_049);
  assert.equal(ticks[0]!.i, 10_050 - ticks.length, 'a contiguous run of the newest ticks');
  assert.ok(ticks.length > 9_990);
  assert.deepEqual(rt.root.manager.tail({ type: 'tick', last: 2 }).map((e) => e.i), [10_048, 10_049]);
});

test('Logger: capacity is configurable and tail walks the ring oldest first after wrapping', () => {
  const logger = new Logger(3);
  for (let i = 0; i < 5; i++) logger.emit({ type: 'n', tag: 't', level: 'info', timestamp: i, contextId: 'c', tool: 'x', rootContextId: 'r', i });
  assert.deepEqual(logger.tail('r').map((e) => e.i), [2, 3, 4]);
});

// ——— levels ———

test('levels order trace < debug < info < warn < error; the default minimum is info', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('every-level', (ctx, args: { min?: LogLevel }) => {
    if (args.min) ctx.manager.configure({ level: args.min });
    for (const level of LEVELS) ctx.manager.log({ type: 'lv', level, text: `${args.min ?? 'default'}:${level}` });
  }));
  await rt.invoke('every-level', {});
  for (const min of LEVELS) await rt.invoke('every-level', { min });
  const kept = logs(rt, { type: 'lv' }).map((e) => e.text);
  assert.deepEqual(kept, [
    'default:info', 'default:warn', 'default:error',
    'trace:trace', 'trace:debug', 'trace:info', 'trace:warn', 'trace:error',
    'debug:debug', 'debug:info', 'debug:warn', 'debug:error',
    'info:info', 'info:warn', 'info:error',
    'warn:warn', 'warn:error',
    'error:error',
  ]);
  assert.deepEqual(rt.root.manager.tail({ type: 'lv', level: 'warn' }).map((e) => e.level), ['warn', 'error', 'warn', 'error', 'warn', 'error', 'warn', 'error', 'warn', 'error', 'error']);
});

test('configure rejects an unknown level or reporter name', async (t) => {
  const rt = await bareRuntime(t);
  assert.throws(() => rt.root.manager.configure({ level: 'loud' as LogLevel }), /unknown log level 'loud'/);
  assert.throws(() => rt.root.manager.configure({ reporter: 'nowhere' }), /unknown reporter 'nowhere'/);
});

// ——— scope ———

test('scope keeps only the listed tags, and scope: null lets every tag through again', async (t) => {
  const rt = await bareRuntime(t);
  rt.register(skill('scoped', (ctx) => {
    ctx.manager.configure({ scope: ['a', 'b'] });
    for (const tag of ['a', 'b', 'c']) ctx.manager.log({ type: 'sc', tag, level: 'warn', text: `1${tag}` });
    ctx.manager.configure({ scope: null });
    for (const tag of ['a', 'c']) ctx.manager.log({ type: 'sc', tag, level: 'warn', text: `2${tag}` });
  }));
  await rt.invoke('scoped');
  assert.deepEqual(logs(rt, { type: 'sc' }).map((e) => e.text), ['1a', '1b', '2a', '2c']);
});

// ——— per-run versus global ———

test('configure() with no args returns this run’s settings once the run has its own', async (t) => {
  const rt = await bareRuntime(t);
  assert.equal(rt.root.manager.configure().level, 'info');
  rt.root.manager.configure({ level: 'debug', scope: ['x'] });
  assert.deepEqual(rt.root.manager.configure(), { level: 'debug', scope: ['x'], reporters: [] });
  assert.equal(rt.root.manager.configure({ global: true }).level, 'info', 'the global settings did not move');
});

test('run settings shadow the global ones: a later global change does not reach a run that has its own', () => {
  const logger = new Logger();
  const got: string[] = [];
  logger.addReporter({ name: 'collect', report: (e) => void got.push(`${String(e.rootContextId)}:${e.level}`) });
  const log = (root: string, level: LogLevel) => logger.emit({ type: 'm', tag: 't', level, timestamp: 0, contextId: 'c', tool: 'x', rootContextId: root });
  logger.configure('run-a', { level: 'debug' });
  logger.configure('run-a', { global: true, level: 'error' });
  for (const root of ['run-a', 'run-b']) for (const level of ['debug', 'warn', 'error'] as const) log(root, level);
  assert.deepEqual(got, ['run-a:debug', 'run-a:warn', 'run-a:error', 'run-b:error'], 'run-a keeps debug; run-b follows the global error level');
  assert.equal(logger.configure('run-b').level, 'error');
  assert.equal(logger.configure('run-a').level, 'debug');
});

test('a reporter activated for one run receives only that run’s events; a global one receives every run’s', () => {
  const logger = new Logger();
  const perRun: string[] = [];
  const everywhere: string[] = [];
  logger.configure('run-a', { reporter: { name: 'a-only', report: (e) => void perRun.push(String(e.rootContextId)) } });
  logger.configure(undefined, { global: true, reporter: { name: 'all', report: (e) => void everywhere.push(String(e.rootContextId)) } });
  for (const root of ['run-a', 'run-b']) logger.emit({ type: 'm', tag: 't', level: 'warn', timestamp: 0, contextId: 'c', tool: 'x', rootContextId: root });
  assert.deepEqual(perRun, ['run-a']);
  assert.deepEqual(everywhere, ['run-a', 'run-b'], 'a global reporter sees every run, even one that got its own settings before it was activated');
  assert.deepEqual(logger.configure('run-a').reporters, ['all', 'a-only']);
  assert.deepEqual(logger.configure('run-b').reporters, ['all']);
});

// ——— every event carries its run, context, tool and time ———

test('every event carries rootContextId, contextId, tool and timestamp — kernel, hook, event and user events alike', async (t) => {
  const rt = await bareRuntime(t, { overrides: { debug: true } });
  rt.register(skill('child', (ctx) => {
    ctx.manager.log('user message');
    return ctx.envelope.id;
  }));
  rt.register(skill('parent', async (ctx) => {
    ctx.manager.log({ type: 'before', level: 'info' });
    const childId = await ctx.manager.invoke('child');
    await ctx.manager.invoke('event-subscribe', { topic: 'x', ref: 'missing-later' }).catch(() => undefined);
    return { parent: ctx.envelope.id, child: childId };
  }));
  const ids = (await rt.invoke('parent')) as { parent: string; child: string };
  const events = rt.root.manager.tail({ level: 'trace' });
  assert.ok(events.length > 10);
  for (const e of events) {
    assert.equal(e.rootContextId, rt.root.nonlocals.rootContextId, e.type);
    assert.equal(typeof e.contextId, 'string', e.type);
    assert.equal(typeof e.tool, 'string', e.type);
    assert.equal(typeof e.timestamp, 'number', e.type);
  }
  const [before] = logs(rt, { type: 'before' });
  assert.deepEqual([before?.tool, before?.contextId], ['parent', ids.parent]);
  const [message] = logs(rt, { tag: 'user', type: 'message' });
  assert.deepEqual([message?.tool, message?.contextId], ['child', ids.child]);
});

// ——— redaction ———

test('secrets (values under secret-looking keys, src/core/redact.ts) are redacted before any reporter and in the buffer', async (t) => {
  const seen: LogEvent[] = [];
  const rt = await bareRuntime(t, { reporters: [{ name: 'collect', report: (e) => void seen.push(e) }] });
  const payload = {
    apiKey: 'sk-live-123',
    login: { TOKEN: 'abc', refresh_token: 'def', user: 'ada' },
    auth: { user: 'ada', scheme: 'x' },
    servers: [{ host: 'db', password: 'hunter2' }],
    clientSecret: 'shh',
    region: 'eu',
    keepAlive: true,
  };
  rt.register(skill('leaky', (ctx) => ctx.manager.log({ type: 'config', level: 'warn', config: payload })));
  await rt.invoke('leaky');
  const expected = {
    apiKey: '[REDACTED]',
    login: { TOKEN: '[REDACTED]', refresh_token: '[REDACTED]', user: 'ada' },
    auth: '[REDACTED]',
    servers: [{ host: 'db', password: '[REDACTED]' }],
    clientSecret: '[REDACTED]',
    region: 'eu',
    keepAlive: true,
  };
  const reported = seen.find((e) => e.type === 'config');
  assert.deepEqual(reported?.config, expected, 'what the reporter saw');
  assert.deepEqual(logs(rt, { type: 'config' })[0]?.config, expected, 'what the ring buffer holds');
  assert.equal(payload.apiKey, 'sk-live-123', 'the caller’s object is not mutated');
  assert.equal(reported?.rootContextId, rt.root.nonlocals.rootContextId, 'rootContextId is not a secret');
  assert.ok(!JSON.stringify(seen).includes('hunter2'));
});

test('redact leaves values without secrets untouched (same object) and stops at depth 8', () => {
  const clean = { a: { b: [1, { c: 'x' }] } };
  assert.equal(redact(clean), clean);
  let deep: Record<string, unknown> = { password: 'bottom' };
  for (let i = 0; i < 12; i++) deep = { next: deep };
  assert.doesNotThrow(() => JSON.stringify(redact(deep)));
});

// ——— reporters ———

function sink(): { stream: NodeJS.WritableStream; text: () => string } {
  let out = '';
  const stream = new Writable({ write(chunk, _enc, cb) { out += String(chunk); cb(); } });
  return { stream, text: () => out };
}
const plain: Painter = { red: (s) => s, yellow: (s) => s, dim: (s) => s, bold: (s) => s, cyan: (s) => s, green: (s) => s };
const ev = (e: Partial<LogEvent>): LogEvent => ({ type: 'message', tag: 'user', level: 'error', timestamp: 0, contextId: 'c', tool: 'greet', ...e });

test('console reporter: user messages as plain lines, warn/error with level, code and tool, the rest only when verbose', () => {
  const quiet = sink();
  const r = consoleReporter(quiet.stream, plain);
  r.report(ev({ text: 'hello there' }));
  r.report(ev({ type: 'cycle-skip', tag: 'pipeline', level: 'warn', code: 'E_X', text: 'skipped x' }));
  r.report(ev({ type: 'handler-error', tag: 'events', level: 'error', text: 'handler failed' }));
  r.report(ev({ type: 'pipeline-enter', tag: 'debug', level: 'info' }));
  assert.equal(quiet.text(), 'hello there\nwarn [E_X] greet: skipped x\nerror greet: handler failed\n');
  const verbose = sink();
  consoleReporter(verbose.stream, plain, { verbose: true }).report(ev({ type: 'pipeline-enter', tag: 'debug', level: 'info' }));
  assert.equal(verbose.text(), 'info greet: pipeline-enter\n');
});

test('jsonl reporter: one JSON line per event, a .live marker while open, and unserializable values survive', async (t) => {
  const ws = tempDir(t);
  const r = jsonlReporter(ws, 'run-1');
  const dir = path.join(ws, RUNS_DIR);
  assert.equal(r.file, path.join(dir, 'run-1.jsonl'));
  assert.equal(fs.readFileSync(path.join(dir, 'run-1.live'), 'utf8'), String(process.pid));
  const circular: Record<string, unknown> = { name: 'loop' };
  circular.self = circular;
  r.report(ev({ text: 'one' }));
  r.report(ev({ text: 'two', data: circular, big: 10n, fn: () => 1 }));
  await r.close?.();
  r.report(ev({ text: 'after close' }));
  assert.equal(fs.existsSync(path.join(dir, 'run-1.live')), false);
  const lines = fs.readFileSync(r.file, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as LogEvent);
  assert.deepEqual(lines.map((e) => e.text), ['one', 'two']);
  assert.deepEqual(lines[1]!.data, { name: 'loop', self: '[Circular]' });
  assert.equal(lines[1]!.big, '10');
});

test('jsonl reporter: the same object twice in one event is not mistaken for a cycle', async (t) => {
  const ws = tempDir(t);
  const r = jsonlReporter(ws, 'run-shared');
  const shared = { n: 1 };
  r.report(ev({ text: 'shared', a: shared, b: shared }));
  await r.close?.();
  const [line] = fs.readFileSync(r.file, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as LogEvent);
  assert.deepEqual([line!.a, line!.b], [{ n: 1 }, { n: 1 }]);
});

test(`jsonl reporter prunes the runs directory to the newest ${KEEP_RUNS} runs`, async (t) => {
  const ws = tempDir(t);
  const dir = path.join(ws, RUNS_DIR);
  fs.mkdirSync(dir, { recursive: true });
  const now = Date.now() / 1000;
  for (let i = 0; i < 60; i++) {
    const file = path.join(dir, `old-${String(i).padStart(2, '0')}.jsonl`);
    fs.writeFileSync(file, '');
    fs.utimesSync(file, now - 1000 + i, now - 1000 + i);
  }
  fs.writeFileSync(path.join(dir, 'old-00.live'), String(process.pid)); // a run killed without cleaning up
  const r = jsonlReporter(ws, 'newest');
  await r.close?.();
  assert.equal(fs.existsSync(path.join(dir, 'old-00.live')), false, 'a pruned run’s stale marker goes too');
  const left = fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort();
  assert.equal(left.length, KEEP_RUNS);
  assert.ok(left.includes('newest.jsonl'));
  assert.ok(left.includes('old-59.jsonl') && !left.includes('old-10.jsonl') && left.includes('old-11.jsonl'), 'the oldest went first');
});

test('a reporter that throws never breaks logging for the others', () => {
  const logger = new Logger();
  const got: string[] = [];
  const bad: Reporter = { name: 'bad', report: () => { throw new Error('down'); } };
  logger.addReporter(bad);
  logger.addReporter({ name: 'good', report: (e) => void got.push(String(e.text)) });
  logger.emit(ev({ text: 'still here' }));
  assert.deepEqual(got, ['still here']);
});
