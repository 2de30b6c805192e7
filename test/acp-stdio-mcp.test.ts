// ACP agents without HTTP MCP (docs/agents.md, "ACP agents without HTTP MCP"): every ACP agent takes
// stdio MCP servers, so the agent-acp provider gives one that declares no mcpCapabilities.http
// `agent-apps __acp-mcp-relay` as its stdio server. The agent here is the scripted fake agent
// (test/acp-fake-agent.ts: the ACP SDK's agent side, a real process) declaring HTTP off; it starts
// the relay with the official MCP SDK's stdio client, as agents do, and calls `invoke` through it.
// Also the relay on its own: the invoke server's stdio entry started by the MCP SDK's client.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BIN, cli, cliEnv } from './cli-process.ts';
import { alive, fakeAgent, until, workspace } from './acp-helpers.ts';
import { startInvokeServer } from '../src/acp/invoke-server.ts';

const COUNT = "return await ctx.manager.invoke('wordcount', { text: ctx.args.text });";

describe('agent-acp with an agent that takes only stdio MCP servers', () => {
  test('session/new carries a stdio server (node, our bin, the hidden relay; the token only in env); the agent calls invoke through it and answers with the result; the relay is gone after the run', async () => {
    const ws = workspace();
    const fake = fakeAgent({ http: false, prompts: [[{ text: 'Counting.' }, { invoke: COUNT }], [{ say: 'The tool said "{result}".' }]] });
    const r = await cli(['run', 'count', '--text', 'a b c'], ws, { env: fake.env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'The tool said "result: 3".\n');
    const log = fake.log();
    const [server] = log.find((e) => e.event === 'session/new')!.params.mcpServers;
    assert.equal(server.type, undefined, 'a stdio entry has no type');
    assert.equal(server.name, 'agent-apps');
    assert.equal(server.command, process.execPath);
    assert.deepEqual(server.args, [BIN, '__acp-mcp-relay']);
    assert.deepEqual(
      server.env.map((e: { name: string }) => e.name),
      ['AGENT_APPS_RELAY_URL', 'AGENT_APPS_RELAY_TOKEN'],
    );
    const token = server.env.find((e: { name: string }) => e.name === 'AGENT_APPS_RELAY_TOKEN').value as string;
    assert.match(token, /^[A-Za-z0-9_-]{40,}$/);
    assert.ok(!JSON.stringify(server.args).includes(token), 'the token is not on the command line');
    assert.match(server.env[0].value, /^unix:\//);
    assert.deepEqual(log.find((e) => e.event === 'tools')!.tools, ['invoke']);
    assert.equal(log.find((e) => e.event === 'invoke-result')!.text, 'result: 3');
    assert.equal(log.find((e) => e.event === 'permission')!.outcome, 'allow', 'our invoke is allowed, as over HTTP');
    const relay = log.find((e) => e.event === 'stdio-server')!.pid as number;
    assert.ok(relay > 0);
    await until(() => !alive(relay), `the relay (pid ${relay}) to be gone`);
    const agent = fake.pid()!;
    await until(() => !alive(agent), 'the agent to be gone');
    // The channel's folder went with the run.
    assert.equal(fs.existsSync(path.dirname(server.env[0].value.slice('unix:'.length))), false);
  });

  test("what the skill's allowed-tools refuse comes back through the relay as the error; another token, another tool or bad args get nothing", async () => {
    const ws = workspace();
    const fake = fakeAgent({
      http: false,
      prompts: [
        [{ invoke: "return await ctx.manager.invoke('secret', {});" }, { probe: 'wrong-token' }, { probe: 'other-tool' }, { probe: 'bad-args' }, { invoke: "return await ctx.manager.invoke('wordcount', { text: 'still here' });" }],
        [{ say: 'I was refused: {result}' }],
      ],
    });
    const r = await cli(['--output-format', 'stream-json', 'run', 'count', '--text', 'a'], ws, { env: fake.env });
    assert.equal(r.code, 0, r.stderr);
    const [refused, after] = fake.log().filter((e) => e.event === 'invoke-result');
    assert.equal(refused!.isError, true);
    assert.match(refused!.text, /^E_ALLOWED_TOOLS: .*'secret'/);
    assert.equal(fs.existsSync(path.join(ws, 'SECRET-RAN')), false, 'secret never ran');
    assert.equal(after!.text, 'result: 2', 'the relay still serves after a refusal');
    const probes = Object.fromEntries(fake.log().filter((e) => e.event === 'probe').map((e) => [e.kind, e]));
    assert.equal(probes['wrong-token']!.answered, '', 'a connection with another token is closed unanswered');
    assert.match(probes['other-tool']!.text, /^E_TOOL_NOT_FOUND: this server has one tool, 'invoke'/);
    assert.match(probes['bad-args']!.text, /^E_VALIDATION: invoke needs/);
    // The refusal is the run's own, as over HTTP: a tool-result with the error in the stream.
    const results = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, any>)
      .filter((l) => l.type === 'tool-result' && l.tool === 'invoke');
    assert.equal(results[0]!.error.code, 'E_ALLOWED_TOOLS');
    await until(() => !alive(fake.log().find((e) => e.event === 'stdio-server')!.pid as number), 'the relay to be gone');
  });
});

describe('agent-apps __acp-mcp-relay', () => {
  test('the stdio entry, started by the MCP SDK stdio client, serves the run’s invoke; closing the run ends the relay', async () => {
    const calls: string[] = [];
    const server = await startInvokeServer(async (code) => {
      calls.push(code);
      return { text: `ran ${code.length} characters` };
    }, undefined, 'stdio');
    const entry = server.entry as { command: string; args: string[]; env: { name: string; value: string }[] };
    const transport = new StdioClientTransport({ command: entry.command, args: entry.args, env: { ...cliEnv(), ...Object.fromEntries(entry.env.map((e) => [e.name, e.value])) } as Record<string, string>, stderr: 'pipe' });
    const client = new Client({ name: 'relay-test', version: '1.0.0' });
    try {
      await client.connect(transport);
      const pid = transport.pid!;
      assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ['invoke']);
      const out = (await client.callTool({ name: 'invoke', arguments: { code: 'return 1' } })) as { content: { text: string }[] };
      assert.equal(out.content[0]!.text, 'ran 8 characters');
      assert.deepEqual(calls, ['return 1']);
      const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
      await server.close();
      await closed;
      await until(() => !alive(pid), 'the relay to exit once the run closed its channel');
    } finally {
      await client.close().catch(() => {});
      await server.close();
    }
  });

  test('closing its stdin ends it (exit 0); without the run’s env, or with the run gone, it says so and exits 2 / 1; it is not in --help', async () => {
    const server = await startInvokeServer(async () => ({ text: 'x' }), undefined, 'stdio');
    const env = Object.fromEntries((server.entry as { env: { name: string; value: string }[] }).env.map((e) => [e.name, e.value]));
    try {
      const idle = await cli(['__acp-mcp-relay'], process.cwd(), { env });
      assert.deepEqual([idle.code, idle.stdout, idle.stderr], [0, '', '']);
    } finally {
      await server.close();
    }
    const gone = await cli(['__acp-mcp-relay'], process.cwd(), { env });
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /cannot reach the agent-apps run that started this agent .*: it has ended/);
    const bare = await cli(['__acp-mcp-relay'], process.cwd());
    assert.equal(bare.code, 2);
    assert.match(bare.stderr, /not a command to run by hand/);
    const help = await cli(['--help'], process.cwd());
    assert.equal(help.code, 0);
    assert.doesNotMatch(help.stdout, /acp-mcp-relay/);
  });
});
