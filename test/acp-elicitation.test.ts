// ACP elicitation (docs/agents.md), both ways, on the ACP SDK's stable `elicitation/create`:
// - `agent-apps acp`: a skill's `ctx.manager.ask` is a one-field form to a client that declares form
//   elicitation (a typed answer, or a choice); approvals stay permission requests;
// - agent-acp: a form the ACP agent sends (the fake agent, test/acp-fake-agent.ts) is asked field by
//   field of the run's person — the terminal (a real PTY), or the editor through `agent-apps acp` —
//   and declined when nobody is there (a headless run).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as acp from '@agentclientprotocol/sdk';
import { cli, cliEnv } from './cli-process.ts';
import { fakeAgent, messageText, startAcp, workspace, type AcpServer } from './acp-helpers.ts';
import { KEYS, spawnPty } from './pty-helpers.ts';

const FORM: acp.ClientCapabilities = { elicitation: { form: {} } };

async function promptOnce(server: AcpServer, cwd: string, text: string): Promise<acp.PromptResponse> {
  const { sessionId } = await server.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  return server.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
}

/** The answer field's value a form request asks for. */
const accept = (answer: string): acp.CreateElicitationResponse => ({ action: 'accept', content: { answer } });

/** What the fake agent asks: three fields, then a form with a field agent-apps cannot ask for. */
const AGENT_FORM = {
  message: 'Where shall I write the notes?',
  requestedSchema: {
    type: 'object',
    properties: {
      file: { type: 'string', title: 'File' },
      lines: { type: 'integer', title: 'Lines', minimum: 1 },
      overwrite: { type: 'boolean', title: 'Overwrite it?' },
    },
    required: ['file', 'lines'],
  },
};
const ODD_FORM = { message: 'A map, please', requestedSchema: { type: 'object', properties: { where: { type: 'object' } } } };

describe('ACP elicitation', () => {
  test('agent-apps acp: ctx.manager.ask is a form to a client that declares form elicitation — a typed answer, then a choice', async (t) => {
    const ws = workspace();
    const server = await startAcp(t, ['--skill', 'survey'], ws, {}, FORM);
    const answers = ['Ada', 'green'];
    server.elicit = () => accept(answers.shift()!);
    assert.equal((await promptOnce(server, ws, 'go')).stopReason, 'end_turn');
    assert.deepEqual(JSON.parse(messageText(server.updates).at(-1)!), { name: 'Ada', colour: 'green' });
    assert.equal(server.permissions.length, 0, 'no permission request for a plain question');
    const [name, colour] = server.elicitations;
    assert.equal(name!.mode, 'form');
    assert.equal(name!.message, 'What is your name?');
    assert.equal((name as { sessionId?: string }).sessionId, server.updates[0]!.sessionId);
    assert.deepEqual((name as { requestedSchema: unknown }).requestedSchema, { type: 'object', properties: { answer: { type: 'string', title: 'Answer' } }, required: ['answer'] });
    assert.deepEqual((colour as { requestedSchema: unknown }).requestedSchema, {
      type: 'object',
      properties: {
        answer: {
          type: 'string',
          title: 'Answer',
          oneOf: [
            { const: 'red', title: 'red' },
            { const: 'green', title: 'green' },
          ],
        },
      },
      required: ['answer'],
    });
  });

  test('agent-apps acp: a declined form is E_DENIED for the skill; without the capability a typed question is E_NOT_INTERACTIVE, as before', async (t) => {
    const ws = workspace();
    const declining = await startAcp(t, ['--skill', 'survey'], ws, {}, FORM);
    declining.elicit = () => ({ action: 'decline' });
    await assert.rejects(promptOnce(declining, ws, 'go'), (err: acp.RequestError) => {
      assert.equal(err.code, -32603);
      assert.match(err.message, /^E_DENIED: the person at the ACP client declined to answer "What is your name\?"/);
      return true;
    });
    const plain = await startAcp(t, ['--skill', 'survey'], ws);
    await assert.rejects(promptOnce(plain, ws, 'go'), (err: acp.RequestError) => {
      assert.match(err.message, /^E_NOT_INTERACTIVE: /);
      return true;
    });
    assert.equal(plain.elicitations.length, 0);
  });

  test('agent-acp under agent-apps acp: the ACP agent’s form is asked field by field of the editor (an answer it cannot take is asked again); a field of a kind agent-apps cannot ask is declined without asking', async (t) => {
    const ws = workspace();
    const fake = fakeAgent({ prompts: [[{ elicit: AGENT_FORM }, { elicit: ODD_FORM }, { text: 'Noted.' }]] });
    const server = await startAcp(t, ['--skill', 'notes'], ws, fake.env, FORM);
    const answers = ['notes.txt', 'zero', '3', 'true'];
    server.elicit = () => accept(answers.shift()!);
    assert.equal((await promptOnce(server, ws, 'remember the milk')).stopReason, 'end_turn');
    assert.equal(messageText(server.updates).at(-1), 'Noted.');
    const asked = server.elicitations.map((e) => e.message);
    assert.equal(asked.length, 4);
    assert.match(asked[0]!, /^The ACP agent '.*acp-fake-agent\.ts' asks: Where shall I write the notes\?\nFile$/);
    assert.match(asked[1]!, /\nLines \(a whole number, at least 1\)$/);
    assert.match(asked[2]!, /\nLines \(a whole number, at least 1\)\n'zero' is not a whole number: try again$/);
    assert.match(asked[3]!, /\nOverwrite it\?$/);
    assert.deepEqual(
      (server.elicitations[3] as unknown as { requestedSchema: { properties: { answer: { oneOf: unknown } } } }).requestedSchema.properties.answer.oneOf,
      [
        { const: 'true', title: 'yes' },
        { const: 'false', title: 'no' },
      ],
    );
    const responses = fake.log().filter((e) => e.event === 'elicitation').map((e) => e.response);
    assert.deepEqual(responses, [{ action: 'accept', content: { file: 'notes.txt', lines: 3, overwrite: true } }, { action: 'decline' }]);
  });

  test('agent-acp in a terminal: the form is asked on screen, a typed answer then a choice, and the agent gets the values', async (t) => {
    const ws = workspace();
    const fake = fakeAgent({ prompts: [[{ elicit: AGENT_FORM }, { text: 'Noted.' }]] });
    const tm = spawnPty(t, ['run', 'notes', '--message', 'remember the milk'], { cwd: ws, env: cliEnv(fake.env), separateStdout: true });
    await tm.waitFor('Where shall I write the notes?');
    await tm.idle();
    assert.match(tm.text(), /asks: Where shall I write the notes\?[\s│]+File/);
    await tm.type('notes.txt');
    tm.write(KEYS.enter);
    await tm.waitFor('(a whole number, at least 1)');
    await tm.idle();
    await tm.type('3');
    tm.write(KEYS.enter);
    await tm.waitFor('Overwrite it?');
    await tm.idle();
    tm.write('y');
    assert.equal((await tm.exited).exitCode, 0, tm.text());
    assert.equal(tm.stdout().trim(), 'Noted.');
    assert.deepEqual(fake.log().find((e) => e.event === 'elicitation')!.response, { action: 'accept', content: { file: 'notes.txt', lines: 3, overwrite: true } });
  });

  test('agent-acp headless: the ACP agent’s form is declined (nobody to ask), and the run goes on', async () => {
    const ws = workspace();
    const fake = fakeAgent({ prompts: [[{ elicit: AGENT_FORM }, { text: 'Noted anyway.' }]] });
    const r = await cli(['run', 'notes', '--message', 'remember the milk'], ws, { env: fake.env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'Noted anyway.\n');
    assert.deepEqual(fake.log().find((e) => e.event === 'elicitation')!.response, { action: 'decline' });
    assert.deepEqual(fake.log().find((e) => e.event === 'initialize')!.params.clientCapabilities.elicitation, { form: {} }, 'the provider declares form elicitation');
  });
});
