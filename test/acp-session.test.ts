// `agent-apps acp` sessions again (docs/agents.md, "Loading and resuming a session"): every session is
// recorded as a run file (<workspace>/.agent-apps/runs/<session id>.jsonl); session/load replays
// it as session/updates before it answers, then the session goes on; session/resume goes on
// without the replay; an id with no record is a JSON-RPC error, never an exit. Driven by the ACP
// SDK's client side over the real process's stdio, on copies of test/fixtures/acp-ws.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as acp from '@agentclientprotocol/sdk';
import { cli } from './cli-process.ts';
import { messageText, startAcp, workspace, type AcpServer } from './acp-helpers.ts';

async function prompt(server: AcpServer, sessionId: string, text: string): Promise<acp.PromptResponse> {
  return server.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
}

/** A session of `main` with two prompts, in a process that is then closed: its id. */
async function pastSession(t: { after(fn: () => unknown): unknown }, ws: string): Promise<string> {
  const first = await startAcp(t, [], ws);
  const { sessionId } = await first.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
  assert.equal((await prompt(first, sessionId, 'three little words')).stopReason, 'end_turn');
  assert.equal((await prompt(first, sessionId, 'and two more')).stopReason, 'end_turn');
  assert.deepEqual(await first.close(), { code: 0, signal: null });
  return sessionId;
}

/** The updates of one session, as kinds and texts. */
function shape(updates: acp.SessionNotification[]): [string, string?][] {
  return updates.map((n) => {
    const u = n.update;
    const content = 'content' in u && u.content && !Array.isArray(u.content) ? (u.content as { type: string; text?: string }) : undefined;
    return content?.type === 'text' ? [u.sessionUpdate, content.text] : [u.sessionUpdate];
  });
}

describe('agent-apps acp: session/load and session/resume', () => {
  test('initialize declares loadSession and sessionCapabilities.resume', async (t) => {
    const server = await startAcp(t, [], workspace());
    assert.equal(server.init.agentCapabilities?.loadSession, true);
    assert.deepEqual(server.init.agentCapabilities?.sessionCapabilities?.resume, {});
  });

  test('session/load in a new process replays the history (each prompt, then what was sent for it) before it answers; the session then goes on, and its run file keeps both', async (t) => {
    const ws = workspace();
    const id = await pastSession(t, ws);
    const file = path.join(ws, '.agent-apps', 'runs', `${id}.jsonl`);
    assert.ok(fs.existsSync(file), 'the session is recorded as a run file named by its id');

    const server = await startAcp(t, [], ws);
    const answer = await server.agent.request(acp.methods.agent.session.load, { sessionId: id, cwd: ws, mcpServers: [] });
    assert.deepEqual(answer, {});
    assert.deepEqual(
      shape(server.updates),
      [
        ['user_message_chunk', 'three little words'],
        ['agent_message_chunk', JSON.stringify({ heard: 'three little words', words: 3 }, null, 2)],
        ['user_message_chunk', 'and two more'],
        ['agent_message_chunk', JSON.stringify({ heard: 'and two more', words: 3 }, null, 2)],
      ],
      'replayed before the answer',
    );
    assert.ok(server.updates.every((n) => n.sessionId === id));
    server.updates.length = 0;
    assert.equal((await prompt(server, id, 'one more')).stopReason, 'end_turn');
    assert.deepEqual(JSON.parse(messageText(server.updates).at(-1)!), { heard: 'one more', words: 2 });
    assert.deepEqual(await server.close(), { code: 0, signal: null });

    // The next load has all three prompts.
    const again = await startAcp(t, [], ws);
    await again.agent.request(acp.methods.agent.session.load, { sessionId: id, cwd: ws, mcpServers: [] });
    assert.deepEqual(
      shape(again.updates).filter(([kind]) => kind === 'user_message_chunk').map(([, text]) => text),
      ['three little words', 'and two more', 'one more'],
    );

    // `agent-apps runs` lists the session as one run, started by acp.
    const runs = await cli(['runs', '--json'], ws);
    assert.equal(runs.code, 0, runs.stderr);
    const listed = (JSON.parse(runs.stdout) as { id: string; skill: string; trigger?: string; status: string }[]).find((r) => r.id === id);
    assert.ok(listed, runs.stdout);
    assert.equal(listed.skill, 'main');
    assert.equal(listed.trigger, 'acp');
  });

  test('session/resume goes on without a replay', async (t) => {
    const ws = workspace();
    const id = await pastSession(t, ws);
    const server = await startAcp(t, [], ws);
    assert.deepEqual(await server.agent.request(acp.methods.agent.session.resume, { sessionId: id, cwd: ws }), {});
    assert.deepEqual(server.updates, [], 'no history is sent');
    assert.equal((await prompt(server, id, 'resumed here')).stopReason, 'end_turn');
    assert.deepEqual(JSON.parse(messageText(server.updates).at(-1)!), { heard: 'resumed here', words: 2 });
  });

  test('a session loaded in the process that has it open replays what it has so far', async (t) => {
    const ws = workspace();
    const server = await startAcp(t, [], ws);
    const { sessionId } = await server.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    await prompt(server, sessionId, 'hello there');
    server.updates.length = 0;
    await server.agent.request(acp.methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] });
    assert.deepEqual(shape(server.updates)[0], ['user_message_chunk', 'hello there']);
    assert.equal((await prompt(server, sessionId, 'still here')).stopReason, 'end_turn');
  });

  test('an unknown id, a malformed one, another cwd or another skill are JSON-RPC errors; the process goes on', async (t) => {
    const ws = workspace();
    const id = await pastSession(t, ws);
    const server = await startAcp(t, [], ws);
    for (const method of [acp.methods.agent.session.load, acp.methods.agent.session.resume] as const) {
      for (const bad of ['5d0c5a54-0000-4000-8000-000000000000', '../../etc/passwd', 'x']) {
        await assert.rejects(server.agent.request(method, { sessionId: bad, cwd: ws, mcpServers: [] }), (err: acp.RequestError) => {
          assert.equal(err.code, -32002, `${method} ${bad}: ${err.message}`);
          return true;
        });
      }
    }
    const other = path.join(ws, 'skills');
    await assert.rejects(server.agent.request(acp.methods.agent.session.load, { sessionId: id, cwd: other, mcpServers: [] }), (err: acp.RequestError) => {
      assert.equal(err.code, -32602);
      assert.match(err.message, /worked in .*, not .*skills/);
      return true;
    });
    await assert.rejects(server.agent.request(acp.methods.agent.session.load, { sessionId: id, cwd: 'relative', mcpServers: [] }), /cwd must be an absolute path/);
    const shout = await startAcp(t, ['--skill', 'shout'], ws);
    await assert.rejects(shout.agent.request(acp.methods.agent.session.resume, { sessionId: id, cwd: ws }), (err: acp.RequestError) => {
      assert.equal(err.code, -32602);
      assert.match(err.message, /ran 'main'; this agent-apps acp runs 'shout' \(start it with --skill main\)/);
      return true;
    });
    // Still serving: the session loads.
    await server.agent.request(acp.methods.agent.session.load, { sessionId: id, cwd: ws, mcpServers: [] });
    assert.ok(server.updates.length > 0);
    assert.equal(server.child.exitCode, null);
  });

  test('a session open in another agent-apps acp process is refused there', async (t) => {
    const ws = workspace();
    const a = await startAcp(t, [], ws);
    const { sessionId } = await a.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    const b = await startAcp(t, [], ws);
    await assert.rejects(b.agent.request(acp.methods.agent.session.resume, { sessionId, cwd: ws }), (err: acp.RequestError) => {
      assert.equal(err.code, -32600);
      assert.match(err.message, new RegExp(`is open in another agent-apps process \\(pid ${a.child.pid}\\)`));
      return true;
    });
    await a.close();
    await b.agent.request(acp.methods.agent.session.resume, { sessionId, cwd: ws });
  });
});
