// Tracing (docs/ci.md, "Tracing"): real runs of bin/agent-apps.js exporting OTLP/HTTP protobuf to a
// real receiver on 127.0.0.1 (test/otel-helpers.ts decodes with the official OTLP definitions).
// Span names and links, the GenAI attributes with the run's own token counts, content only when
// asked, errors, the switches off, an unreachable collector, and that a plain run loads nothing.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BIN, cli, cliEnv, folder, tempDir } from './cli-process.ts';
import { startReceiver, spanTree, type Receiver, type ReceivedSpan } from './otel-helpers.ts';
import { natsSkip, startNats } from './nats-helpers.ts';
import { startServe } from './serve-helpers.ts';
import { createRuntime } from '../src/index.ts';

/** Every OTEL_ variable of the developer's shell, unset: each test says what it turns on. */
const NO_OTEL = Object.fromEntries(Object.keys(process.env).filter((k) => k.startsWith('OTEL_')).map((k) => [k, undefined]));

const WORDCOUNT = `
export const frontmatter = { name: 'wordcount', description: 'Counts the words of a text.', metadata: { params: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } } };
export default async function wordcount(ctx, { text }) {
  const words = await ctx.manager.invoke('tokenize', { text });
  return words.length;
}
`;
const TOKENIZE = `
export const frontmatter = { name: 'tokenize', description: 'Splits a text into words.', metadata: { params: { type: 'object', properties: { text: { type: 'string' } } } } };
export default (_ctx, { text }) => text.split(/\\s+/).filter(Boolean);
`;
const SUMMARIZE = `---
name: summarize
description: Counts the words of a text, with an agent.
metadata:
  params:
    type: object
    properties:
      text: { type: string }
    required: [text]
  allowed-tools: wordcount
  model:
    provider: replay
    cassette: summarize.cassette.yaml
---
Count the words of the text with the wordcount tool.

The text: :arg{name=text}
`;
const CASSETTE = `turns:
  - text: Let me count.
    invoke: |
      return await ctx.manager.invoke('wordcount', { text: ctx.args.text });
  - text: There are 3 words.
`;
const BROKEN = `
export const frontmatter = { name: 'broken', description: 'Always fails.' };
export default () => { throw Object.assign(new Error('the broken skill broke'), { code: 'E_BROKEN' }); };
`;

function agentWorkspace(main?: string): string {
  return folder({
    'skills/summarize.md': SUMMARIZE,
    'skills/summarize.cassette.yaml': CASSETTE,
    'skills/wordcount.skill.ts': WORDCOUNT,
    'skills/tokenize.skill.ts': TOKENIZE,
    'skills/broken.skill.ts': BROKEN,
    ...(main ? { 'skills/main.md': main } : {}),
  });
}

const byName = (spans: ReceivedSpan[], name: string) => {
  const found = spans.filter((s) => s.name === name);
  assert.ok(found.length, `no span '${name}' in:\n${spanTree(spans)}`);
  return found;
};
const one = (spans: ReceivedSpan[], name: string) => {
  const found = byName(spans, name);
  assert.equal(found.length, 1, `one span '${name}', got ${found.length}:\n${spanTree(spans)}`);
  return found[0]!;
};
const childOf = (child: ReceivedSpan, parent: ReceivedSpan) => {
  assert.equal(child.traceId, parent.traceId, `${child.name} is in ${parent.name}'s trace`);
  assert.equal(child.parentSpanId, parent.spanId, `${child.name}'s parent is ${parent.name}`);
};

/** The run file of the workspace's latest run, as events. */
function runEvents(ws: string): Record<string, any>[] {
  const dir = path.join(ws, '.agent-apps', 'runs');
  const files = fs.readdirSync(dir).map((f) => path.join(dir, f)).sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
  return fs.readFileSync(files[0]!, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
}

describe('tracing (OTLP/HTTP)', () => {
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver();
  });
  after(() => receiver.close());
  /** The spans of one trace: the one whose root is named `root`, received after `from`. */
  const traceOf = async (from: number, root: string, done: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> => {
    await receiver.waitFor((all) => all.slice(from).some((s) => s.name === root && s.parentSpanId === '') && done(all.slice(from)));
    const mine = receiver.spans.slice(from);
    const traceId = mine.find((s) => s.name === root && s.parentSpanId === '')!.traceId;
    return mine.filter((s) => s.traceId === traceId);
  };

  test('an agent skill on the replay model: invoke → invoke_agent → chat and execute_tool → the called skill, with the GenAI attributes and the run’s token counts', async () => {
    const ws = agentWorkspace();
    const from = receiver.spans.length;
    const began = BigInt(Date.now()) * 1_000_000n;
    const r = await cli(['run', 'summarize', '--text', 'one two three'], ws, { env: { ...NO_OTEL, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'otel-test' } });
    const ended = BigInt(Date.now()) * 1_000_000n;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'There are 3 words.');
    assert.equal(r.stderr, '', 'no warning when the collector takes the spans');
    const spans = await traceOf(from, 'invoke summarize', (s) => s.some((x) => x.name === 'invoke tokenize'));
    assert.equal(
      spanTree(spans),
      ['invoke summarize', '  invoke_agent summarize', '    chat replay', '    execute_tool invoke', '      execute_tool wordcount', '        invoke tokenize', '    chat replay'].join('\n'),
    );
    const invoke = one(spans, 'invoke summarize');
    const agent = one(spans, 'invoke_agent summarize');
    const chats = byName(spans, 'chat replay');
    const call = one(spans, 'execute_tool invoke');
    const tool = one(spans, 'execute_tool wordcount');
    const tokenize = one(spans, 'invoke tokenize');
    childOf(agent, invoke);
    for (const c of chats) childOf(c, agent);
    childOf(call, agent);
    childOf(tool, call);
    childOf(tokenize, tool);
    // Times on the wall clock (a second's slack between the clocks), each span inside its parent's.
    for (const s of spans) {
      assert.ok(s.start >= began - 1_000_000_000n && s.end <= ended + 1_000_000_000n && s.start <= s.end, `${s.name}: ${s.start}–${s.end} within the run (${began}–${ended})`);
      const parent = spans.find((p) => p.spanId === s.parentSpanId);
      if (parent) assert.ok(parent.start <= s.start && s.end <= parent.end, `${s.name} within ${parent.name}`);
    }
    assert.equal(invoke.resource['service.name'], 'otel-test');
    assert.equal(invoke.attributes['agent_apps.skill'], 'summarize');
    assert.equal(agent.attributes['gen_ai.operation.name'], 'invoke_agent');
    assert.equal(agent.attributes['gen_ai.agent.name'], 'summarize');
    assert.equal(agent.attributes['gen_ai.provider.name'], 'replay');
    assert.equal(call.attributes['gen_ai.operation.name'], 'execute_tool');
    assert.equal(call.attributes['gen_ai.tool.name'], 'invoke');
    assert.equal(call.attributes['gen_ai.tool.call.id'], 'tooluse_replay_1');
    assert.equal(tool.attributes['gen_ai.operation.name'], 'execute_tool');
    assert.equal(tool.attributes['gen_ai.tool.name'], 'wordcount');
    // The token counts are the run's own: the usage its run file records for each model call.
    const run = runEvents(ws).find((e) => e.type === 'agent-run')!;
    const usage = run.trace.filter((e: any) => e.type === 'usage');
    assert.equal(usage.length, 2);
    chats.forEach((c, i) => {
      assert.equal(c.attributes['gen_ai.operation.name'], 'chat');
      assert.equal(c.attributes['gen_ai.response.model'], 'replay');
      assert.equal(c.attributes['gen_ai.usage.input_tokens'], usage[i].inputTokens);
      assert.equal(c.attributes['gen_ai.usage.output_tokens'], usage[i].outputTokens);
      assert.ok(usage[i].inputTokens > 0 && usage[i].outputTokens > 0);
    });
    assert.equal(agent.attributes['gen_ai.usage.input_tokens'], run.usage.inputTokens);
    assert.equal(agent.attributes['gen_ai.usage.output_tokens'], run.usage.outputTokens);
    // Content is off by default: no prompt, code, args or result on any span.
    for (const s of spans) {
      for (const key of Object.keys(s.attributes)) assert.ok(!/messages|instructions|arguments|result|args/.test(key), `${s.name} has ${key} with content off`);
    }
    assert.ok(spans.every((s) => s.status.code === 0), 'nothing failed');
  });

  test('otel: { content: true } in the main puts prompts, the code, args and results on the spans; its endpoint is enough to turn tracing on', async () => {
    const from = receiver.spans.length;
    const ws = agentWorkspace(`---\nname: main\nmetadata:\n  otel:\n    endpoint: ${receiver.url}\n    content: true\n---\n`);
    const r = await cli(['run', 'summarize', '--text', 'one two three'], ws, { env: NO_OTEL });
    assert.equal(r.code, 0, r.stderr);
    const spans = await traceOf(from, 'invoke summarize', (s) => s.some((x) => x.name === 'invoke tokenize'));
    const agent = one(spans, 'invoke_agent summarize');
    assert.match(String(agent.attributes['gen_ai.system_instructions']), /Count the words of the text with the wordcount tool/);
    assert.match(String(agent.attributes['gen_ai.input.messages']), /one two three/);
    assert.match(String(agent.attributes['gen_ai.output.messages']), /There are 3 words/);
    const chat = byName(spans, 'chat replay')[0]!;
    assert.deepEqual(JSON.parse(String(chat.attributes['gen_ai.output.messages'])), [{ role: 'assistant', parts: [{ type: 'text', content: 'Let me count.' }] }]);
    const call = one(spans, 'execute_tool invoke');
    assert.match(String(call.attributes['gen_ai.tool.call.arguments']), /ctx\.manager\.invoke\('wordcount'/);
    assert.equal(call.attributes['gen_ai.tool.call.result'], 'result: 3', 'what the model was given');
    const tool = one(spans, 'execute_tool wordcount');
    assert.deepEqual(JSON.parse(String(tool.attributes['gen_ai.tool.call.arguments'])), { text: 'one two three' });
    assert.equal(tool.attributes['gen_ai.tool.call.result'], '3');
    const tokenize = one(spans, 'invoke tokenize');
    assert.deepEqual(JSON.parse(String(tokenize.attributes['agent_apps.result'])), ['one', 'two', 'three']);
  });

  test('a failing skill: span status ERROR with the error code; the run fails as it would untraced', async () => {
    const from = receiver.spans.length;
    const ws = agentWorkspace();
    const r = await cli(['run', 'broken'], ws, { env: { ...NO_OTEL, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces` } });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /E_BROKEN/);
    const [span] = await traceOf(from, 'invoke broken', () => true);
    assert.equal(span!.status.code, 2, 'STATUS_CODE_ERROR');
    assert.equal(span!.status.message, 'the broken skill broke');
    assert.equal(span!.attributes['error.type'], 'E_BROKEN');
  });

  test('OTEL_TRACES_EXPORTER=none: nothing is sent, whatever the main and the endpoint say', async () => {
    const before = receiver.requests.length;
    const ws = agentWorkspace(`---\nname: main\nmetadata:\n  otel:\n    endpoint: ${receiver.url}\n---\n`);
    const r = await cli(['run', 'summarize', '--text', 'a b c'], ws, { env: { ...NO_OTEL, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_EXPORTER: 'none' } });
    assert.equal(r.code, 0, r.stderr);
    // The run has exited, and with it any exporter it could have had: nothing can arrive later.
    assert.equal(receiver.requests.length, before);
  });

  test('an unreachable collector never fails the run: the result as usual, one warning', async () => {
    const ws = agentWorkspace();
    // A port nothing listens on: the connection is refused.
    const dead = await startReceiver();
    const url = dead.url;
    await dead.close();
    const r = await cli(['run', 'summarize', '--text', 'a b c'], ws, { env: { ...NO_OTEL, OTEL_EXPORTER_OTLP_ENDPOINT: url } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'There are 3 words.');
    const warnings = r.stderr.split('\n').filter((l) => l.includes('tracing:'));
    assert.equal(warnings.length, 1, r.stderr);
    assert.match(warnings[0]!, new RegExp(`could not send spans to ${url}/v1/traces`));
    assert.equal(r.stderr.trim(), warnings[0]!.trim(), 'nothing else on stderr');
  });

  test('across an MCP call: our CLI calling our own mcp serve over stdio (.mcp.json) — the server’s span is the client span’s child, in its trace (_meta.traceparent)', async () => {
    const from = receiver.spans.length;
    const served = agentWorkspace();
    const ws = folder({
      '.mcp.json': JSON.stringify({
        mcpServers: {
          // An MCP server gets only the variables its entry names (docs/mcp.md): the endpoint is one of them.
          tok: { command: process.execPath, args: [BIN, 'mcp', 'serve', '--cwd', served], env: { AGENT_APPS_TRUST_WORKSPACE: '1', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'served' } },
        },
      }),
    });
    const r = await cli(['run', 'tok-tokenize', '--text', 'a b'], ws, { env: { ...NO_OTEL, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'caller' } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), '["a","b"]');
    const spans = await traceOf(from, 'invoke tok-tokenize', (s) => s.some((x) => x.name === 'invoke tokenize'));
    assert.equal(spanTree(spans), ['invoke tok-tokenize', '  tools/call tokenize', '    tools/call tokenize', '      invoke tokenize'].join('\n'));
    const calls = byName(spans, 'tools/call tokenize');
    const client = calls.find((s) => s.kind === 3);
    const server = calls.find((s) => s.kind === 2);
    childOf(client!, one(spans, 'invoke tok-tokenize'));
    childOf(server!, client!);
    childOf(one(spans, 'invoke tokenize'), server!);
    assert.equal(server!.kind, 2, 'SPAN_KIND_SERVER');
    assert.equal(client!.kind, 3, 'SPAN_KIND_CLIENT');
    assert.equal(client!.resource['service.name'], 'caller');
    assert.equal(server!.resource['service.name'], 'served');
    assert.equal(client!.attributes['mcp.method.name'], 'tools/call');
    assert.equal(client!.attributes['agent_apps.mcp.server'], 'tok');
    assert.equal(client!.attributes['gen_ai.tool.name'], 'tokenize');
    assert.equal(client!.attributes['network.transport'], 'pipe');
    assert.equal(server!.attributes['gen_ai.tool.name'], 'tokenize');
  });

  test('across a remote request on a real nats-server: the worker’s span is the submitter’s child (the request’s traceparent header)', { skip: natsSkip }, async (t) => {
    const nats = await startNats();
    t.after(() => nats.stop());
    const ws = agentWorkspace(`---\nname: main\nmetadata:\n  events:\n    backend: nats\n    url: ${nats.url}\n    namespace: otel\n---\n`);
    const worker = spawn(process.execPath, [BIN, 'worker'], {
      cwd: ws,
      // The worker sends its spans every 200 ms (OTEL_BSP_SCHEDULE_DELAY): it is still running when they are looked for.
      env: cliEnv({ ...NO_OTEL, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'worker', OTEL_BSP_SCHEDULE_DELAY: '200' }),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    t.after(async () => {
      worker.kill('SIGKILL');
      await exited;
    });
    let stderr = '';
    worker.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    await new Promise<void>((resolve, reject) => {
      const check = () => (/queue '.*' on nats/.test(stderr) ? resolve() : worker.exitCode !== null ? reject(new Error(stderr)) : setTimeout(check, 50));
      check();
    });
    const from = receiver.spans.length;
    const r = await cli(['run', 'tokenize', '--text', 'a b', '--remote', '--remote-timeout', '30000'], ws, { env: { ...NO_OTEL, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'submitter' } });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), ['a', 'b']);
    const spans = await traceOf(from, 'remote tokenize', (s) => s.some((x) => x.name === 'invoke tokenize'));
    assert.equal(spanTree(spans), ['remote tokenize', '  worker tokenize', '    invoke tokenize'].join('\n'));
    const submitter = one(spans, 'remote tokenize');
    const processed = one(spans, 'worker tokenize');
    childOf(processed, submitter);
    childOf(one(spans, 'invoke tokenize'), processed);
    assert.equal(submitter.resource['service.name'], 'submitter');
    assert.equal(processed.resource['service.name'], 'worker');
    assert.equal(submitter.kind, 4, 'SPAN_KIND_PRODUCER');
    assert.equal(processed.kind, 5, 'SPAN_KIND_CONSUMER');
    assert.equal(submitter.attributes['messaging.system'], 'nats');
    assert.equal(submitter.attributes['messaging.destination.name'], 'agent-apps.otel.invoke.default');
    assert.equal(processed.attributes['messaging.destination.name'], 'agent-apps.otel.invoke.default');
  });

  test('across a NATS event: the handler runs under the emitter’s span (the event’s traceparent header), the event itself unchanged', { skip: natsSkip }, async (t) => {
    const nats = await startNats();
    t.after(() => nats.stop());
    const mark = path.join(tempDir(), 'handled.json');
    const ws = folder({
      'skills/main.md': `---\nname: main\nmetadata:\n  events:\n    backend: nats\n    url: ${nats.url}\n    namespace: otelev\n---\n`,
      'skills/on-ping.skill.ts': `import fs from 'node:fs';\nexport const frontmatter = { name: 'on-ping', description: 'Handles pings.', metadata: { params: { type: 'object', properties: { event: { type: 'object' } } } } };\nexport default (_ctx, { event }) => { fs.writeFileSync(${JSON.stringify(mark)}, JSON.stringify(event)); return 'ok'; };\n`,
      'skills/pinger.skill.ts': `export const frontmatter = { name: 'pinger', description: 'Emits a ping.' };\nexport default (ctx) => ctx.manager.invoke('event-emit', { topic: 'pings', type: 'ping', data: { n: 1 } });\n`,
    });
    const saved = { ...process.env };
    for (const k of Object.keys(process.env)) if (k.startsWith('OTEL_')) delete process.env[k];
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    let subscriber, emitter;
    try {
      process.env.OTEL_SERVICE_NAME = 'subscriber';
      subscriber = await createRuntime({ cwd: ws });
      process.env.OTEL_SERVICE_NAME = 'emitter';
      emitter = await createRuntime({ cwd: ws });
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    }
    t.after(() => Promise.all([subscriber.close(), emitter.close()]));
    await subscriber.invoke('event-subscribe', { topic: 'pings', ref: 'on-ping' });
    const from = receiver.spans.length;
    await emitter.invoke('pinger');
    const deadline = Date.now() + 20_000;
    while (!fs.existsSync(mark) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const event = JSON.parse(fs.readFileSync(mark, 'utf8'));
    assert.deepEqual(Object.keys(event).sort(), ['data', 'id', 'rootContextId', 'source', 'timestamp', 'topic', 'type'], 'no tracing field in the event');
    // close() sends what each runtime holds.
    await Promise.all([subscriber.close(), emitter.close()]);
    const spans = await traceOf(from, 'invoke pinger', (s) => s.some((x) => x.name === 'invoke on-ping'));
    const emit = one(spans, 'invoke event-emit');
    const handler = one(spans, 'invoke on-ping');
    childOf(emit, one(spans, 'invoke pinger'));
    childOf(handler, emit);
    assert.equal(emit.resource['service.name'], 'emitter');
    assert.equal(handler.resource['service.name'], 'subscriber');
  });

  test('agent-apps serve: a gateway message’s span goes under the request’s traceparent header, and the skill under it', async (t) => {
    const ws = agentWorkspace(`---\nname: main\nmetadata:\n  gateways:\n    api:\n      type: web\n      routes:\n        - { method: POST, path: /words, skill: tokenize }\n---\n`);
    const from = receiver.spans.length;
    const proc = await startServe(t, ws, [], { ...NO_OTEL, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'gateway', OTEL_BSP_SCHEDULE_DELAY: '200' });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const caller = '00f067aa0ba902b7';
    const res = await fetch(`${proc.url}/words`, { method: 'POST', headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-${caller}-01` }, body: JSON.stringify({ text: 'a b' }) });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), ['a', 'b']);
    await receiver.waitFor((all) => all.slice(from).some((s) => s.name === 'invoke tokenize' && s.traceId === traceId));
    const spans = receiver.spans.slice(from).filter((s) => s.traceId === traceId);
    const message = one(spans, 'web api');
    assert.equal(message.parentSpanId, caller, 'the sender’s span is its parent');
    assert.equal(message.kind, 2, 'SPAN_KIND_SERVER');
    assert.equal(message.attributes['http.request.method'], 'POST');
    assert.equal(message.attributes['url.path'], '/words');
    assert.equal(message.resource['service.name'], 'gateway');
    childOf(one(spans, 'invoke tokenize'), message);
  });

  test('a plain run loads no OpenTelemetry module; a traced one does', () => {
    const ws = agentWorkspace();
    const log = path.join(tempDir(), 'loaded.json');
    const hook = path.join(tempDir(), 'hook.mjs');
    fs.writeFileSync(
      hook,
      `import { registerHooks } from 'node:module';
import fs from 'node:fs';
const seen = new Set();
registerHooks({ load(url, context, next) { if (url.includes('/node_modules/@opentelemetry/')) seen.add(url); return next(url, context); } });
process.on('exit', () => fs.writeFileSync(process.env.LOADED_LOG, JSON.stringify([...seen])));
`,
    );
    const loaded = (args: string[], env: Record<string, string | undefined>) => {
      const r = spawnSync(process.execPath, ['--import', pathToFileURL(hook).href, BIN, ...args], { cwd: ws, env: cliEnv({ ...NO_OTEL, LOADED_LOG: log, ...env }), encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 0, r.stderr);
      return JSON.parse(fs.readFileSync(log, 'utf8')) as string[];
    };
    assert.deepEqual(loaded(['run', 'tokenize', '--text', 'a b'], {}), [], 'a code skill');
    assert.deepEqual(loaded(['run', 'summarize', '--text', 'a b c'], {}), [], 'an agent skill');
    assert.deepEqual(loaded(['run', 'tokenize', '--text', 'a b'], { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_EXPORTER: 'none' }), [], 'tracing forced off');
    const traced = loaded(['run', 'tokenize', '--text', 'a b'], { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    assert.ok(traced.some((u) => u.includes('/sdk-trace-base/')) && traced.some((u) => u.includes('/exporter-trace-otlp-proto/')), 'the SDK loads when tracing is on');
  });
});
