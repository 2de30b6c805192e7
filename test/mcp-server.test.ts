// `agent-apps mcp serve` over stdio (SPEC §16, server): the official MCP client against a real
// server process over test/fixtures/mcp-ws (see its README). No mocks, no network.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BIN, WS, baseEnv, connectStdio, spawnServe, tempDir, text, until, type Connection, type WireMessage } from './mcp-server-helpers.ts';

// Tests that need no server of their own share one per suite: spawning is most of their cost.
const closers: (() => unknown)[] = [];
after(async () => {
  for (const close of closers) await close();
});
function shared(): () => Promise<Connection> {
  let connection: Promise<Connection> | undefined;
  return () => (connection ??= connectStdio({ after: (fn) => closers.push(fn) }));
}

/**
 * What `agent-apps list --json` shows of the fixture workspace's own skills: the names a server
 * must serve by default (the library's built-ins only when --allow names them, docs/security.md).
 */
function listedNames(): string[] {
  const out = execFileSync(process.execPath, [BIN, 'list', '--json'], { cwd: WS, env: baseEnv(), encoding: 'utf8' });
  return (JSON.parse(out) as { name: string; error?: string; origin: string | null }[]).filter((s) => !s.error && s.origin?.startsWith(`file://${WS}/`)).map((s) => s.name);
}

function progressOf(wire: WireMessage[]): { progress: number; message: string; progressToken: unknown }[] {
  return wire.filter((m) => m.method === 'notifications/progress').map((m) => m.params as never);
}

describe('mcp serve (stdio): tools', () => {
  const server = shared();
  test('tools/list is exactly the workspace skills `list` shows, in name order, with their schemas', async () => {
    const { client } = await server();
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    assert.deepEqual(names, listedNames().sort());
    assert.deepEqual(names, [...names].sort(), 'stable order: by name');
    assert.ok(!names.includes('helper'), 'a hidden skill is not served');
    assert.ok(!names.includes('file-read') && !names.includes('skill-describe'), 'no library built-in by default');
    const greet = tools.find((tool) => tool.name === 'greet')!;
    assert.equal(greet.description, 'Greet someone by name.');
    assert.deepEqual(greet.inputSchema, { type: 'object', properties: { name: { type: 'string', description: 'Who to greet.' } }, required: ['name'], additionalProperties: false });
    assert.equal(greet.outputSchema, undefined, 'returns: { type: string } is not an output schema');
    const stats = tools.find((tool) => tool.name === 'stats')!;
    assert.deepEqual(stats.outputSchema, { type: 'object', properties: { words: { type: 'integer' }, chars: { type: 'integer' } }, required: ['words', 'chars'] });
    assert.deepEqual(tools.find((tool) => tool.name === 'noop')!.inputSchema, { type: 'object' }, 'no params: an empty object schema');
  });

  test('a string result is text; an object result is structuredContent plus its JSON as text', async () => {
    const { client } = await server();
    const greet = await client.callTool({ name: 'greet', arguments: { name: 'Ada' } });
    assert.deepEqual(greet.content, [{ type: 'text', text: 'Hello, Ada!' }]);
    assert.equal(greet.isError, undefined);
    assert.equal(greet.structuredContent, undefined);
    const stats = await client.callTool({ name: 'stats', arguments: { text: 'one two three' } });
    assert.deepEqual(stats.structuredContent, { words: 3, chars: 13 });
    assert.deepEqual(JSON.parse(text(stats)), { words: 3, chars: 13 });
  });

  test('skill errors come back as isError results whose text is CODE: message', async () => {
    const { client } = await server();
    const invalid = await client.callTool({ name: 'greet', arguments: { nom: 'Ada' } });
    assert.equal(invalid.isError, true);
    assert.match(text(invalid), /^E_VALIDATION: .*missing required property 'name'.*unknown property 'nom'/);
    const failed = await client.callTool({ name: 'fail', arguments: {} });
    assert.equal(failed.isError, true);
    assert.equal(text(failed), 'E_DEMO: this skill always fails');
    const unknown = await client.callTool({ name: 'no-such-skill', arguments: {} });
    assert.equal(unknown.isError, true);
    assert.match(text(unknown), /^E_TOOL_NOT_FOUND: no tool 'no-such-skill'/);
    const hidden = await client.callTool({ name: 'helper', arguments: {} });
    assert.equal(hidden.isError, true, 'a hidden skill cannot be called either');
    assert.match(text(hidden), /^E_TOOL_NOT_FOUND: /);
    // The server is unharmed.
    assert.equal(text(await client.callTool({ name: 'noop', arguments: {} })), 'ok');
  });

  test('--allow serves only the skills its allowed-tools patterns name', async (t) => {
    const { client } = await connectStdio(t, { args: ['--allow', 'greet sta*'] });
    assert.deepEqual((await client.listTools()).tools.map((tool) => tool.name), ['greet', 'stats']);
    const refused = await client.callTool({ name: 'noop', arguments: {} });
    assert.equal(refused.isError, true);
    assert.match(text(refused), /^E_TOOL_NOT_FOUND: /);
    assert.equal(text(await client.callTool({ name: 'greet', arguments: { name: 'Bo' } })), 'Hello, Bo!');
  });

  test('--allow with an arg constraint: the skill is listed, calls outside the constraint are refused', async (t) => {
    const { client } = await connectStdio(t, { args: ['--allow', 'greet(name=A*)'] });
    assert.deepEqual((await client.listTools()).tools.map((tool) => tool.name), ['greet']);
    assert.equal(text(await client.callTool({ name: 'greet', arguments: { name: 'Ada' } })), 'Hello, Ada!');
    const refused = await client.callTool({ name: 'greet', arguments: { name: 'Bo' } });
    assert.equal(refused.isError, true);
    assert.match(text(refused), /^E_ALLOWED_TOOLS: an MCP client may not invoke 'greet': not allowed by the allow-list 'greet\(name=A\*\)'/);
  });

  test('a skill added while the server runs is served from the next tools/list on', async (t) => {
    const ws = tempDir(t);
    const skill = (name: string) => `export const frontmatter = { name: '${name}', description: 'The ${name} skill.' };\nexport default async () => '${name} here';\n`;
    fs.mkdirSync(path.join(ws, 'skills'));
    fs.writeFileSync(path.join(ws, 'skills', 'first.skill.ts'), skill('first'));
    const { client } = await connectStdio(t, { cwd: ws, args: ['--allow', 'first second'] });
    assert.deepEqual((await client.listTools()).tools.map((tool) => tool.name), ['first']);
    fs.writeFileSync(path.join(ws, 'skills', 'second.skill.ts'), skill('second'));
    await new Promise((r) => setTimeout(r, 1100)); // the search paths are re-read at most once a second
    assert.deepEqual((await client.listTools()).tools.map((tool) => tool.name), ['first', 'second']);
    assert.equal(text(await client.callTool({ name: 'second', arguments: {} })), 'second here');
  });

  test('stdout carries only protocol frames: what a skill prints goes to stderr', async () => {
    const conn = await server();
    const result = await conn.client.callTool({ name: 'noisy', arguments: {} });
    assert.equal(text(result), 'quiet result');
    await until(() => conn.stderr().includes('more noise'), 5000, 'the noise on stderr');
    assert.match(conn.stderr(), /noise from a skill/);
  });

  test('the 2026-07-28 revision: server/discover instead of initialize, same tools', async (t) => {
    const { client } = await connectStdio(t, { era: 'modern' });
    assert.equal(client.getProtocolEra(), 'modern');
    assert.ok((await client.listTools()).tools.some((tool) => tool.name === 'greet'));
    assert.equal(text(await client.callTool({ name: 'greet', arguments: { name: 'Cy' } })), 'Hello, Cy!');
    const invalid = await client.callTool({ name: 'greet', arguments: {} });
    assert.equal(invalid.isError, true);
  });
});

describe('mcp serve (stdio): progress and cancellation', () => {
  const server = shared();
  test('with a progress token, log events at info and up are progress notifications, before the result', async () => {
    const { client, wire: all } = await server();
    const from = all.length;
    const seen: unknown[] = [];
    const result = await client.callTool({ name: 'chatty', arguments: { steps: 3 } }, { onprogress: (p) => seen.push(p) });
    const wire = all.slice(from);
    assert.equal(text(result), '3 steps done');
    const progress = progressOf(wire);
    assert.deepEqual(progress.map((p) => [p.progress, p.message]), [
      [1, 'chatty: step 1 of 3'],
      [2, 'chatty: step 2 of 3'],
      [3, 'chatty: step 3 of 3'],
    ]);
    assert.ok(progress.every((p) => p.progressToken !== undefined));
    const lastProgress = wire.findLastIndex((m) => m.method === 'notifications/progress');
    assert.ok(lastProgress < wire.findIndex((m) => m.result?.content?.[0]?.text === '3 steps done'), 'every notification precedes the result');
    // What the client hands to onprogress is a subset: the SDK's client (2.4.0) drops progress it
    // reads in the same chunk as the result (typescript-sdk#2580), which a loaded machine makes
    // likely despite the server's pause before the result.
    for (const p of seen as { progress: number; message: string }[]) assert.equal(p.message, `chatty: step ${p.progress} of 3`);
  });

  test('without a progress token nothing is sent', async () => {
    const { client, wire } = await server();
    const from = wire.length;
    await client.callTool({ name: 'chatty', arguments: { steps: 2 } });
    assert.deepEqual(progressOf(wire.slice(from)), []);
  });

  test('--log-level sets what stderr shows, not what progress carries', async (t) => {
    const { client, wire, stderr } = await connectStdio(t, { args: ['--log-level', 'warn'] });
    await client.callTool({ name: 'chatty', arguments: { steps: 1 } }, { onprogress: () => {} });
    assert.deepEqual(progressOf(wire).map((p) => p.message), ['chatty: step 1 of 1']);
    assert.doesNotMatch(stderr(), /step 1 of 1/);
  });

  test("an agent skill's events (replayed from a cassette) are progress too", async () => {
    const { client, wire: all } = await server();
    const from = all.length;
    const result = await client.callTool({ name: 'report', arguments: { text: 'one two three' } }, { onprogress: () => {} });
    const wire = all.slice(from);
    assert.deepEqual(result.structuredContent, { words: 3 });
    const messages = progressOf(wire).map((p) => p.message);
    assert.ok(messages.includes('turn-start report: turn 1'), messages.join('\n'));
    assert.ok(messages.includes('agent-message report: I will count the words with stats.'), messages.join('\n'));
    assert.ok(messages.some((m) => m.startsWith("tool-call report: const s = await ctx.manager.invoke('stats'")), messages.join('\n'));
    assert.ok(messages.some((m) => m.startsWith('tool-result report: finished: {"words":3}')), messages.join('\n'));
    const numbers = progressOf(wire).map((p) => p.progress);
    assert.deepEqual(numbers, numbers.map((_, i) => i + 1), 'progress increases by one per notification');
  });

  test("a cancellation aborts the invocation: the skill's finally block runs", async (t) => {
    const { client } = await server();
    const marker = path.join(tempDir(t), 'finally.txt');
    const controller = new AbortController();
    const call = client.callTool({ name: 'linger', arguments: { marker } }, { signal: controller.signal, onprogress: () => controller.abort('enough') });
    await assert.rejects(call);
    await until(() => fs.existsSync(marker), 5000, 'the finally block');
    assert.equal(fs.readFileSync(marker, 'utf8'), 'finally ran\n');
    assert.equal(text(await client.callTool({ name: 'greet', arguments: { name: 'Di' } })), 'Hello, Di!', 'the server goes on');
  });
});

describe('mcp serve (stdio): prompts', () => {
  const server = shared();
  test('Markdown and SKILL.md skills are prompts, with arguments from their params', async () => {
    const { client } = await server();
    const { prompts } = await client.listPrompts();
    assert.deepEqual(prompts.map((p) => p.name), ['report', 'review', 'summarize']);
    const summarize = prompts.find((p) => p.name === 'summarize')!;
    assert.equal(summarize.description, 'Summarize a text in a given number of sentences.');
    assert.deepEqual(summarize.arguments, [
      { name: 'text', description: 'The text to summarize.', required: true },
      { name: 'sentences', description: 'How many sentences.' },
      { name: 'style', description: 'Prose or bullet points.' },
    ]);
  });

  test('a SKILL.md without params takes the format’s `arguments`, as a tool and as a prompt', async () => {
    const { client } = await server();
    const tool = (await client.listTools()).tools.find((x) => x.name === 'review')!;
    assert.deepEqual(Object.keys((tool.inputSchema as { properties?: object }).properties ?? {}), ['arguments']);
    const prompt = (await client.listPrompts()).prompts.find((p) => p.name === 'review')!;
    assert.deepEqual(prompt.arguments?.map((a) => a.name), ['arguments']);
  });

  test('prompts/get returns the prompt with its directives expanded for the args', async () => {
    const { client } = await server();
    const got = await client.getPrompt({ name: 'summarize', arguments: { text: 'Ada wrote the first program.', sentences: '3' } });
    assert.equal(got.messages.length, 1);
    assert.equal(got.messages[0]!.role, 'user');
    const body = (got.messages[0]!.content as { text: string }).text;
    assert.match(body, /^Summarize the text below in 3 sentences, as prose\./);
    assert.match(body, /\n\nAda wrote the first program\.\n$/);
    const review = await client.getPrompt({ name: 'review' });
    assert.match((review.messages[0]!.content as { text: string }).text, /^You review code changes\./);
    await assert.rejects(client.getPrompt({ name: 'greet' }), /no prompt 'greet'/, 'a code skill is not a prompt');
    await assert.rejects(client.getPrompt({ name: 'summarize', arguments: { sentences: '2' } }), /E_VALIDATION: .*missing required property 'text'/);
  });

  test('completion/complete offers the values a prompt argument enumerates', async () => {
    const { client } = await server();
    const done = await client.complete({ ref: { type: 'ref/prompt', name: 'summarize' }, argument: { name: 'style', value: 'b' } });
    assert.deepEqual(done.completion.values, ['bullets']);
  });
});

describe('mcp serve (stdio): the process', () => {
  test('SIGTERM ends the server with exit 143; a call in flight is aborted and its finally runs', async (t) => {
    const marker = path.join(tempDir(t), 'finally.txt');
    const proc = spawnServe(t, []);
    const send = (m: object) => proc.child.stdin.write(JSON.stringify(m) + '\n');
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    await until(() => proc.stdout().includes('"id":1'), 15_000, 'the initialize result');
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'linger', arguments: { marker }, _meta: { progressToken: 'p' } } });
    await until(() => proc.stdout().includes('waiting to be cancelled'), 10_000, 'the call to start');
    proc.child.kill('SIGTERM');
    const { code } = await proc.exited;
    assert.equal(code, 143);
    assert.equal(fs.readFileSync(marker, 'utf8'), 'finally ran\n');
    // Every line on stdout is a JSON-RPC message.
    for (const line of proc.stdout().split('\n').filter(Boolean)) assert.equal(JSON.parse(line).jsonrpc, '2.0');
  });

  test('SIGINT exits 130; stdin closing exits 0', async (t) => {
    const interrupted = spawnServe(t, []);
    await until(() => interrupted.stderr().includes('over stdio'), 15_000, 'the server to start');
    interrupted.child.kill('SIGINT');
    assert.equal((await interrupted.exited).code, 130);
    const closed = spawnServe(t, []);
    await until(() => closed.stderr().includes('over stdio'), 15_000, 'the server to start');
    closed.child.stdin.end();
    assert.equal((await closed.exited).code, 0);
    assert.equal(closed.stdout(), '');
  });

  test('only `mcp serve` loads the MCP SDK: `run` does not pay for it', async (t) => {
    const trace = path.join(WS, 'trace-mcp-imports.mjs');
    const run = spawnSync(process.execPath, ['--import', trace, BIN, 'run', 'greet', '--name', 'Ada'], { cwd: WS, env: baseEnv(), encoding: 'utf8' });
    assert.equal(run.stdout, 'Hello, Ada!\n');
    assert.doesNotMatch(run.stderr, /mcp-sdk-loaded/);
    const serve = spawnServe(t, [], { env: { NODE_OPTIONS: `--import=${trace}` } });
    serve.child.stdin.end();
    await serve.exited;
    assert.match(serve.stderr(), /mcp-sdk-loaded .*@modelcontextprotocol\/server/, 'the control: serve does load it');
  });
});
