// `agent-apps acp` (SPEC §20): agent-apps as an ACP agent, driven by the SDK's client side over the
// real process's stdio — the way Zed, JetBrains or Kiro run it. Sessions on the fixture workspace
// test/fixtures/acp-ws (copied per test); agents replayed from cassettes, so nothing leaves the machine.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as acp from '@agentclientprotocol/sdk';
import { tempDir } from './cli-process.ts';
import { alive, fakeAgent, messageText, startAcp, until, workspace } from './acp-helpers.ts';

async function session(server: Awaited<ReturnType<typeof startAcp>>, cwd: string): Promise<string> {
  const { sessionId } = await server.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  return sessionId;
}

async function prompt(server: Awaited<ReturnType<typeof startAcp>>, sessionId: string, text: string): Promise<acp.PromptResponse> {
  return server.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
}

describe('agent-apps acp', () => {
  test('initialize answers protocol version 1 and names agent-apps; it takes no MCP servers from the client', async (t) => {
    const ws = workspace();
    const server = await startAcp(t, [], ws);
    const init = await server.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    assert.equal(init.protocolVersion, 1);
    assert.equal(init.agentInfo?.name, 'agent-apps');
    assert.equal(init.agentCapabilities?.mcpCapabilities?.http, false);
    assert.deepEqual(await server.close(), { code: 0, signal: null }, 'closing stdin ends it with exit 0');
  });

  test("a prompt runs the workspace's main with the prompt text as `message`; an object result is the last message, as JSON; stdout stays the protocol's", async (t) => {
    const ws = workspace();
    const server = await startAcp(t, [], ws);
    const id = await session(server, ws);
    const response = await prompt(server, id, 'three little words');
    assert.equal(response.stopReason, 'end_turn');
    const chunks = messageText(server.updates);
    assert.deepEqual(JSON.parse(chunks.at(-1)!), { heard: 'three little words', words: 3 });
    // The skill's console.log went to stderr: had it reached stdout, the client would have had a
    // line that is not JSON-RPC (and this prompt would not have been answered).
    assert.match(server.stderr(), /main: a line a skill printed/);
  });

  test('--skill NAME runs that skill; a string result is the last message as it is', async (t) => {
    const ws = workspace();
    const server = await startAcp(t, ['--skill', 'shout'], ws);
    const id = await session(server, ws);
    assert.equal((await prompt(server, id, 'hello there')).stopReason, 'end_turn');
    assert.deepEqual(messageText(server.updates), ['HELLO THERE']);
  });

  test('an agent run streams its text and its tool calls (the invoke code, each skill it calls) as session updates, then the result', async (t) => {
    const ws = workspace();
    const server = await startAcp(t, ['--skill', 'helper'], ws);
    const id = await session(server, ws);
    assert.equal((await prompt(server, id, 'one two three four')).stopReason, 'end_turn');
    const kinds = server.updates.map((n) => n.update.sessionUpdate);
    assert.ok(kinds.includes('agent_message_chunk'));
    const calls = server.updates.flatMap((n) => (n.update.sessionUpdate === 'tool_call' ? [n.update] : []));
    const invoke = calls.find((c) => c.title.startsWith('invoke:'));
    assert.ok(invoke, 'the invoke step is a tool call');
    assert.match(String((invoke.rawInput as { code?: string }).code), /ctx\.manager\.invoke\('wordcount'/);
    const wordcount = calls.find((c) => c.title === 'wordcount');
    assert.ok(wordcount, 'the skill the code called is a tool call');
    assert.deepEqual(wordcount.rawInput, { text: 'one two three four' });
    const done = server.updates.flatMap((n) => (n.update.sessionUpdate === 'tool_call_update' && n.update.status === 'completed' ? [n.update.toolCallId] : []));
    assert.ok(done.includes(invoke.toolCallId) && done.includes(wordcount.toolCallId), 'both calls completed');
    const text = messageText(server.updates);
    assert.equal(text.join('').includes('Counting the words.'), true, 'the agent text streamed');
    assert.deepEqual(JSON.parse(text.at(-1)!), { words: 4 }, 'the result is the last message');
    // Order: the result after every tool call update.
    const last = server.updates.at(-1)!.update;
    assert.equal(last.sessionUpdate, 'agent_message_chunk');
  });

  test('a failed skill answers a JSON-RPC error carrying its code and message', async (t) => {
    const ws = workspace();
    const server = await startAcp(t, ['--skill', 'boom'], ws);
    const id = await session(server, ws);
    await assert.rejects(prompt(server, id, 'anything'), (err: acp.RequestError) => {
      assert.equal(err.code, -32603);
      assert.equal(err.message, 'E_BOOM: it went boom');
      assert.deepEqual(err.data, { code: 'E_BOOM', exitCode: 1 });
      return true;
    });
    // The session goes on: the next prompt runs again.
    await assert.rejects(prompt(server, id, 'again'), /E_BOOM/);
  });

  test('a skill that takes no `message` is a usage error: -32602 with every violation named', async (t) => {
    const ws = workspace();
    const server = await startAcp(t, ['--skill', 'wordcount'], ws);
    const id = await session(server, ws);
    await assert.rejects(prompt(server, id, 'anything'), (err: acp.RequestError) => {
      assert.equal(err.code, -32602);
      assert.match(err.message, /^E_VALIDATION: /);
      assert.match(err.message, /text/);
      assert.equal((err.data as { exitCode: number }).exitCode, 2);
      return true;
    });
  });

  test('a workspace without main: session/new says how to make one', async (t) => {
    const empty = tempDir('agent-apps-acp-empty-');
    fs.mkdirSync(path.join(empty, 'skills'));
    const server = await startAcp(t, [], empty);
    await assert.rejects(server.agent.request(acp.methods.agent.session.new, { cwd: empty, mcpServers: [] }), (err: acp.RequestError) => {
      assert.equal(err.code, -32602);
      assert.match(err.message, /E_TOOL_NOT_FOUND: .*has no main skill — create skills\/main\.md, or start agent-apps acp --skill NAME/);
      return true;
    });
    await assert.rejects(server.agent.request(acp.methods.agent.session.new, { cwd: 'relative/dir', mcpServers: [] }), /cwd must be an absolute path/);
  });

  test('an approval gate is a permission request: allowed, the gated call runs', async (t) => {
    const ws = workspace();
    const server = await startAcp(t, ['--skill', 'gated'], ws);
    const id = await session(server, ws);
    server.answer = (r) => ({ outcome: { outcome: 'selected', optionId: r.options.find((o) => o.kind === 'allow_once')!.optionId } });
    assert.equal((await prompt(server, id, 'quiet please')).stopReason, 'end_turn');
    assert.equal(server.permissions.length, 1);
    const asked = server.permissions[0]!;
    assert.equal(asked.toolCall.title, 'Allow shout?');
    assert.deepEqual(asked.toolCall.rawInput, { tool: 'shout', args: { message: 'quiet please' } });
    assert.deepEqual(
      asked.options.map((o) => [o.optionId, o.kind]),
      [
        ['allow', 'allow_once'],
        ['allow-run', 'allow_always'],
        ['deny', 'reject_once'],
      ],
    );
    assert.deepEqual(JSON.parse(messageText(server.updates).at(-1)!), { shouted: 'QUIET PLEASE' });
  });

  test('an approval gate is a permission request: rejected, the gated call is denied (E_DENIED reaches the code)', async (t) => {
    const ws = workspace();
    const server = await startAcp(t, ['--skill', 'gated'], ws);
    const id = await session(server, ws);
    server.answer = () => ({ outcome: { outcome: 'selected', optionId: 'deny' } });
    assert.equal((await prompt(server, id, 'quiet please')).stopReason, 'end_turn');
    assert.equal(server.permissions.length, 1);
    assert.deepEqual(JSON.parse(messageText(server.updates).at(-1)!), { shouted: null });
    assert.match(server.stderr(), /denied/);
  });

  test('session/cancel aborts the run (its finally code sees the abort) and the prompt answers stopReason cancelled', async (t) => {
    const ws = workspace();
    const server = await startAcp(t, ['--skill', 'wait'], ws);
    const id = await session(server, ws);
    const pending = prompt(server, id, 'wait for it');
    await until(() => fs.existsSync(path.join(ws, 'WAITING')), 'the skill to start');
    await server.agent.notify(acp.methods.agent.session.cancel, { sessionId: id });
    assert.equal((await pending).stopReason, 'cancelled');
    assert.match(fs.readFileSync(path.join(ws, 'ABORTED'), 'utf8'), /cancelled the prompt \(session\/cancel\)/);
    // The session is usable again after a cancel.
    fs.rmSync(path.join(ws, 'WAITING'));
    const again = prompt(server, id, 'and again');
    await until(() => fs.existsSync(path.join(ws, 'WAITING')), 'the skill to start again');
    await server.agent.notify(acp.methods.agent.session.cancel, { sessionId: id });
    assert.equal((await again).stopReason, 'cancelled');
  });

  test('closing stdin mid-run aborts the run and exits 0; SIGTERM exits 143', async (t) => {
    const ws = workspace();
    const server = await startAcp(t, ['--skill', 'wait'], ws);
    const id = await session(server, ws);
    void prompt(server, id, 'wait').catch(() => {});
    await until(() => fs.existsSync(path.join(ws, 'WAITING')), 'the skill to start');
    assert.deepEqual(await server.close(), { code: 0, signal: null });
    assert.ok(fs.existsSync(path.join(ws, 'ABORTED')), 'the run was aborted, its code ran to the end');

    const other = await startAcp(t, [], ws);
    other.child.kill('SIGTERM');
    assert.equal((await other.exited).code, 143);
  });

  test("an ACP agent's own tool under agent-apps acp: its permission request reaches the client, whose answer decides", async (t) => {
    const ws = workspace();
    // A turn that used a tool is followed by another prompt (the agent skill answers `continue`).
    const fake = fakeAgent({ prompts: [[{ tool: { title: 'Write notes.txt', kind: 'edit', write: 'notes.txt', content: 'noted\n' } }, { text: 'Writing it down.' }], [{ text: 'Noted.' }]] });
    const server = await startAcp(t, ['--skill', 'notes'], ws, fake.env);
    const id = await session(server, ws);
    assert.equal((await prompt(server, id, 'remember the milk')).stopReason, 'end_turn');
    assert.equal(server.permissions.length, 1, 'the nested agent asked once, through agent-apps, to the client');
    assert.match(String(server.permissions[0]!.toolCall.title), /asks to use its own tool: Write notes\.txt \(edit\)/);
    assert.equal(fs.readFileSync(path.join(ws, 'notes.txt'), 'utf8'), 'noted\n', 'allowed by the client: the tool ran');
    assert.equal(messageText(server.updates).at(-1), 'Noted.');
    await until(() => !alive(fake.pid()!), 'the fake agent to be gone');
  });
});
