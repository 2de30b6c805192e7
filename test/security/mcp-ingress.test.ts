// Attacks on `agent-apps mcp serve` performed as an outsider would: a second local process with
// the official MCP client, over stdio and Streamable HTTP (docs/security.md, "The callers"). Every
// request of an MCP client passes the untrusted-caller policy before anything resolves: no `$`-keys
// or `__proto__` at any depth, refs by bare name of a served tool, paths inside the workspace, the
// library's built-ins only when --allow names them, trust: deny never offered, trust: ask refused
// "needs approval" headless. A payload that would run shows itself by writing a marker file.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { connectHttp, connectStdio, spawnServe, startHttp, tempDir, text, until, type Owner } from '../mcp-server-helpers.ts';

/** A workspace of the kinds of skill the policy treats apart, and a marker file a payload would write. */
function workspace(t: Owner): { ws: string; marker: string; inline: string } {
  const ws = tempDir(t, 'agent-apps-ingress-');
  const marker = path.join(ws, 'PWNED');
  const skills = path.join(ws, 'skills');
  fs.mkdirSync(skills);
  const code = (name: string, meta: string, body = `async () => '${name} ran'`) =>
    fs.writeFileSync(path.join(skills, `${name}.skill.ts`), `export const frontmatter = { name: '${name}', description: 'The ${name} skill.', metadata: ${meta} };\nexport default ${body};\n`);
  code('greet', `{ params: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } }`, 'async (_c, a) => `Hello, ${a.name}!`');
  code('secret', `{ visibility: 'hidden' }`);
  code('denied', `{ trust: 'deny' }`);
  code('gated', `{ trust: 'ask' }`);
  code('console', `{ interactive: true }`);
  // A workspace skill whose params declare a ref: it invokes the tool named.
  // What a skill sees of its args and of Object.prototype: a polluted prototype would show here.
  code('probe', `{}`, 'async (_c, a) => JSON.stringify({ own: Object.keys(a), inherited: a.polluted ?? null, global: ({}).polluted ?? null })');
  code('relay', `{ params: { type: 'object', properties: { target: { type: 'string', 'x-ref': true } }, required: ['target'] } }`, 'async (ctx, a) => ctx.manager.invoke(a.target, {})');
  const folder = (name: string, extra: string) => {
    fs.mkdirSync(path.join(skills, name));
    fs.writeFileSync(path.join(skills, name, 'SKILL.md'), `---\nname: ${name}\ndescription: The ${name} skill.\n${extra}---\nDo the ${name} thing.\n`);
  };
  folder('prompt-only', 'disable-model-invocation: true\n');
  folder('tool-only', 'user-invocable: false\n');
  fs.writeFileSync(path.join(ws, 'notes.txt'), 'inside the workspace\n');
  const source = `import fs from 'node:fs'; fs.writeFileSync(${JSON.stringify(marker)}, 'pwned'); export default async () => 'pwned';`;
  return { ws, marker, inline: `inline://code,${encodeURIComponent(source)}` };
}

type Call = (name: string, args: Record<string, unknown>) => Promise<{ isError: boolean; text: string }>;

function caller(client: { callTool(p: { name: string; arguments: Record<string, unknown> }): Promise<unknown> }): Call {
  return async (name, args) => {
    const r = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content?: unknown };
    return { isError: r.isError === true, text: text(r) };
  };
}

/** The attacks every transport must refuse; `call` is a connected client's tools/call. */
async function injections(call: Call, w: { marker: string; inline: string }): Promise<void> {
  const middleware = { [w.inline]: {} };
  for (const args of [
    { name: 'Ada', $context: { middleware } },
    { name: 'Ada', $context: { locals: { middleware } } },
    { name: 'Ada', nested: { deeper: [{ $context: { middleware } }] } },
    { name: 'Ada', $delegate: w.inline },
  ]) {
    const r = await call('greet', args);
    assert.equal(r.isError, true, `refused: ${JSON.stringify(args).slice(0, 80)}`);
    assert.match(r.text, /^E_UNTRUSTED_REF: an MCP client may not pass '(\$context|\$delegate)'/);
  }
  // A ref arg of a workspace skill: by bare name, of a tool the client may call itself.
  assert.match((await call('relay', { target: w.inline })).text, /^E_UNTRUSTED_REF: an MCP client may only name tools by name/);
  assert.match((await call('relay', { target: './skills/secret.skill.ts' })).text, /^E_UNTRUSTED_REF: /);
  assert.match((await call('relay', { target: 'shell' })).text, /^E_ALLOWED_TOOLS: .*'shell'/);
  assert.match((await call('relay', { target: 'secret' })).text, /^E_ALLOWED_TOOLS: .*hidden/);
  assert.match((await call('relay', { target: 'denied' })).text, /^E_ALLOWED_TOOLS: .*trust is deny/);
  assert.equal((await call('relay', { target: 'greet' })).isError, true, 'greet needs a name: its own validation still runs');
  assert.equal(fs.existsSync(w.marker), false, 'no payload ran');
  // …and the server keeps serving.
  assert.deepEqual(await call('greet', { name: 'Ada' }), { isError: false, text: 'Hello, Ada!' });
}

describe('mcp serve: an MCP client is an untrusted caller', () => {
  test('stdio: $context and $-keys at any depth are refused before anything loads; ref args are bare names of served tools', async (t) => {
    const w = workspace(t);
    const { client } = await connectStdio(t, { cwd: w.ws });
    await injections(caller(client), w);
  });

  test('HTTP (both eras, with a token): the same requests are refused the same way', async (t) => {
    const w = workspace(t);
    const server = await startHttp(t, [], { cwd: w.ws, env: { AGENT_APPS_MCP_TOKEN: 'tok-123' } });
    for (const era of ['legacy', 'modern'] as const) {
      const { client } = await connectHttp(t, server.url, { era, token: 'tok-123' });
      await injections(caller(client), w);
    }
    assert.match(server.stderr(), /warn .*refused a request from an MCP client/);
  });

  test('by default the workspace’s own skills are served: no file-read, skill-describe, event-subscribe, shell', async (t) => {
    const w = workspace(t);
    const { client } = await connectStdio(t, { cwd: w.ws });
    const names = (await client.listTools()).tools.map((x) => x.name);
    assert.deepEqual(names, ['gated', 'greet', 'probe', 'relay', 'tool-only']);
    const call = caller(client);
    for (const [name, args] of [
      ['file-read', { path: '/etc/passwd' }],
      ['skill-describe', { name: w.inline }],
      ['event-subscribe', { topic: 't', ref: w.inline }],
      ['shell', { command: 'id' }],
      ['secret', {}],
      ['denied', {}],
      ['console', {}],
      ['prompt-only', {}],
    ] as const) {
      const r = await call(name, args);
      assert.equal(r.isError, true, name);
      assert.match(r.text, /^E_TOOL_NOT_FOUND: no tool /, name);
    }
    assert.equal(fs.existsSync(w.marker), false);
  });

  test('--allow naming built-ins: their ref args are bare names, their paths stay in the workspace', async (t) => {
    const w = workspace(t);
    const { client } = await connectStdio(t, { cwd: w.ws, args: ['--allow', 'greet file-read skill-describe event-subscribe'] });
    const call = caller(client);
    assert.deepEqual((await client.listTools()).tools.map((x) => x.name), ['event-subscribe', 'file-read', 'greet', 'skill-describe']);
    assert.equal((await call('file-read', { path: 'notes.txt' })).text, 'inside the workspace\n');
    for (const p of ['/etc/passwd', '../../../../etc/passwd', path.join(w.ws, '..', 'x')]) {
      const r = await call('file-read', { path: p });
      assert.match(r.text, /^E_ALLOWED_TOOLS: .*outside the workspace/, p);
    }
    // A symlink inside the workspace that points out of it is followed before the check.
    fs.symlinkSync('/etc', path.join(w.ws, 'etc-link'));
    assert.match((await call('file-read', { path: 'etc-link/passwd' })).text, /^E_ALLOWED_TOOLS: .*outside the workspace/);
    assert.match((await call('skill-describe', { name: w.inline })).text, /^E_UNTRUSTED_REF: /);
    assert.match((await call('skill-describe', { name: 'secret' })).text, /^E_ALLOWED_TOOLS: /);
    assert.match((await call('skill-describe', { name: 'relay' })).text, /^E_ALLOWED_TOOLS: .*not allowed by the allow-list/);
    assert.match((await call('event-subscribe', { topic: 't', ref: w.inline })).text, /^E_UNTRUSTED_REF: /);
    assert.match((await call('event-subscribe', { topic: 't', ref: 'greet', args: { $context: { middleware: { [w.inline]: {} } } } })).text, /^E_UNTRUSTED_REF: /);
    assert.match((await call('event-subscribe', { topic: 't', ref: 'shell' })).text, /^E_ALLOWED_TOOLS: /);
    assert.equal(fs.existsSync(w.marker), false);
    // What is allowed still works.
    assert.equal((await call('skill-describe', { name: 'greet' })).isError, false);
  });

  test('--allow with a bare * is the workspace’s skills, not the library’s', async (t) => {
    const w = workspace(t);
    const { client } = await connectStdio(t, { cwd: w.ws, args: ['--allow', '*'] });
    const names = (await client.listTools()).tools.map((x) => x.name);
    assert.ok(!names.includes('file-read') && !names.includes('event-emit'), names.join(' '));
    assert.match((await caller(client)('file-read', { path: 'notes.txt' })).text, /^E_TOOL_NOT_FOUND: /);
  });

  test('tools and prompts follow the Agent Skills mapping; trust: ask is refused “needs approval” headless', async (t) => {
    const w = workspace(t);
    const { client } = await connectStdio(t, { cwd: w.ws });
    const tools = (await client.listTools()).tools.map((x) => x.name);
    const prompts = (await client.listPrompts()).prompts.map((x) => x.name);
    assert.ok(tools.includes('tool-only') && !prompts.includes('tool-only'), 'user-invocable: false → tool, not prompt');
    assert.ok(prompts.includes('prompt-only') && !tools.includes('prompt-only'), 'disable-model-invocation → prompt, not tool');
    for (const name of ['denied', 'console', 'secret']) assert.ok(!tools.includes(name) && !prompts.includes(name), name);
    const gated = await caller(client)('gated', {});
    assert.equal(gated.isError, true);
    assert.match(gated.text, /^E_ALLOWED_TOOLS: .*needs approval/);
    const got = await client.getPrompt({ name: 'prompt-only', arguments: {} });
    assert.match(JSON.stringify(got.messages), /Do the prompt-only thing/);
    await assert.rejects(client.getPrompt({ name: 'tool-only', arguments: {} }), /no prompt 'tool-only'/);
  });

  test('prompts/get: an argument named $context is refused, nothing loads', async (t) => {
    const w = workspace(t);
    const { client } = await connectStdio(t, { cwd: w.ws });
    const middleware = JSON.stringify({ [w.inline]: {} });
    await assert.rejects(client.getPrompt({ name: 'prompt-only', arguments: { $context: `{"middleware":${middleware}}` } }), /E_UNTRUSTED_REF/);
    assert.equal(fs.existsSync(w.marker), false);
  });

  test('a raw frame whose arguments carry __proto__ pollutes nothing (refused, or the key never reaches a prototype)', async (t) => {
    const w = workspace(t);
    const server = spawnServe(t, [], { cwd: w.ws });
    const send = (frame: string) => server.child.stdin.write(frame + '\n');
    send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }));
    await until(() => server.stdout().includes('"id":1'), 20_000, 'initialize');
    send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    // Written by hand: a JSON serializer would never emit an own __proto__ key.
    send('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"probe","arguments":{"a":1,"__proto__":{"polluted":"yes"}}}}');
    send('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"probe","arguments":{"b":2}}}');
    const line = (id: number) => server.stdout().split('\n').find((l) => l.includes(`"id":${id}`) && l.includes('result'));
    const second = JSON.parse(await until(() => line(3), 20_000, 'the second call')) as { result: { content: { text: string }[] } };
    assert.deepEqual(JSON.parse(second.result.content[0]!.text), { own: ['b'], inherited: null, global: null }, 'nothing polluted for the next caller');
    const first = JSON.parse(line(2)!) as { result: { isError?: boolean; content: { text: string }[] } };
    if (first.result.isError) assert.match(first.result.content[0]!.text, /^E_UNTRUSTED_REF: .*__proto__/);
    else assert.deepEqual(JSON.parse(first.result.content[0]!.text).inherited, null);
  });

  test('deeply nested args do not take the server down', async (t) => {
    const w = workspace(t);
    const { client } = await connectStdio(t, { cwd: w.ws });
    let deep: unknown = 'x';
    for (let i = 0; i < 5000; i++) deep = { d: deep };
    const r = await caller(client)('greet', { name: 'Ada', deep }).catch((e: Error) => ({ isError: true, text: e.message }));
    assert.ok(r.text.length > 0);
    assert.deepEqual(await caller(client)('greet', { name: 'Bo' }), { isError: false, text: 'Hello, Bo!' });
  });
});
