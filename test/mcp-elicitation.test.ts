// Asking over MCP, server side (docs/mcp.md, "Questions and approvals"): a skill that `agent-apps mcp
// serve` runs asks — ctx.manager.ask with choices and free text, an approval gate of agent code
// (trust: ask on the tool it calls, the replay model) — and the official SDK client answers: over
// stdio and Streamable HTTP, in a 2025-11-25 session (`elicitation/create` within the call) and in
// the 2026-07-28 era (input_required, the client's retry resumes the parked run). A client
// without the capability is refused as before; a tampered requestState is refused.
// Client side: an SDK McpServer that elicits, in a workspace's .mcp.json, pinned to each era: a
// run with an asker is asked and the server gets the answers; a headless run declines; and a
// server's question inside a call that `mcp serve` runs goes on to that server's MCP client.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { connectHttp, connectStdio, startHttp, text, until, type Connection, type ServeProcess } from './mcp-server-helpers.ts';
import { writeAgentSkills } from './agent-helpers.ts';
import { fixture, logs, writeFiles } from './helpers.ts';
import { createRuntime, type Answer as AskAnswer, type Asker, type Question } from '../src/index.ts';
import { mcpWorkspace, stdio } from './mcp-client-helpers.ts';

const PICK = `export const frontmatter = { name: 'pick', description: 'Asks for a colour, then a name.' };
export default async function (ctx) {
  const colour = await ctx.manager.ask('Which colour?', { choices: ['red', 'blue'] });
  const name = await ctx.manager.ask('Your name?');
  return name + ' picked ' + colour;
}
`;

const CAREFUL = `export const frontmatter = { name: 'careful', description: 'A tool with trust ask.', metadata: { trust: 'ask', params: { type: 'object', properties: { x: { type: 'string' } } } } };
export default (ctx, args) => 'careful:' + (args.x ?? '');
`;

const GATED = `---
name: gated
description: A prompt behind an approval.
metadata:
  trust: ask
---
The gated prompt.
`;

const WAITS = `import fs from 'node:fs';
export const frontmatter = { name: 'waits', description: 'Asks, and leaves a marker when the question ends otherwise.', metadata: { params: { type: 'object', properties: { marker: { type: 'string' } }, required: ['marker'] } } };
export default async function (ctx, { marker }) {
  try {
    return await ctx.manager.ask('Still there?');
  } catch (e) {
    fs.writeFileSync(marker, e.code + ': ' + e.message);
    throw e;
  }
}
`;

const CALL = `try { ctx.manager.finish(await ctx.manager.invoke('careful', { x: 'hi' })); } catch (e) { ctx.manager.finish(e.code + ': ' + e.message); }`;

let ws: string;
before(() => {
  ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-elicit-')));
  writeFiles(ws, { 'skills/pick.skill.mjs': PICK, 'skills/careful.skill.mjs': CAREFUL, 'skills/gated.md': GATED, 'skills/waits.skill.mjs': WAITS });
  writeAgentSkills(path.join(ws, 'skills'), { caller: { 'allowed-tools': 'careful', turns: [{ invoke: CALL }] } });
});
const closers: (() => unknown)[] = [];
after(async () => {
  for (const close of closers.reverse()) await close();
  fs.rmSync(ws, { recursive: true, force: true });
});
const owner = { after: (fn: () => unknown) => closers.push(fn) };

let http: Promise<ServeProcess & { url: string }> | undefined;
const httpServer = () => (http ??= startHttp(owner, [], { cwd: ws }));

type Answer = { action: 'accept'; content: Record<string, string> } | { action: 'decline' } | { action: 'cancel' };

/** A client that declares form elicitation and answers from a script, recording what it is asked. */
interface Asking extends Connection {
  asked: { message: string; requestedSchema: any }[];
  answers: Answer[];
}

async function connect(transport: 'stdio' | 'http', era: 'legacy' | 'modern', capable: boolean): Promise<Asking> {
  const asked: Asking['asked'] = [];
  const answers: Answer[] = [];
  const setup = (client: Client) => {
    if (!capable) return;
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params as Asking['asked'][number]);
      return answers.shift() ?? { action: 'cancel' };
    });
  };
  const opts = { era, setup, ...(capable ? { capabilities: { elicitation: { form: {} } } } : {}) };
  const conn = transport === 'stdio' ? await connectStdio(owner, { ...opts, cwd: ws }) : await connectHttp(owner, (await httpServer()).url, opts);
  return Object.assign(conn, { asked, answers });
}

const accept = (content: Record<string, string>): Answer => ({ action: 'accept', content });

for (const transport of ['stdio', 'http'] as const) {
  for (const era of ['legacy', 'modern'] as const) {
    const label = `${transport}, ${era === 'legacy' ? '2025-11-25' : '2026-07-28'}`;
    describe(`mcp serve asks the client (${label})`, () => {
      let capable: Promise<Asking> | undefined;
      const client = () => (capable ??= connect(transport, era, true));

      test('ctx.manager.ask: a choice, then free text — each a form; the run goes on with the answers', async () => {
        const c = await client();
        c.asked.length = 0;
        c.answers.push(accept({ answer: 'blue' }), accept({ answer: 'Ada' }));
        const result = await c.client.callTool({ name: 'pick', arguments: {} });
        assert.equal(text(result), 'Ada picked blue');
        assert.equal(result.isError, undefined);
        assert.deepEqual(
          c.asked.map((a) => [a.message, a.requestedSchema]),
          [
            ['pick asks: Which colour?', { type: 'object', properties: { answer: { type: 'string', title: 'Answer', enum: ['red', 'blue'] } }, required: ['answer'] }],
            ['pick asks: Your name?', { type: 'object', properties: { answer: { type: 'string', title: 'Answer' } }, required: ['answer'] }],
          ],
        );
      });

      test('a declined question is E_NOT_INTERACTIVE, as with nobody to ask', async () => {
        const c = await client();
        c.answers.push({ action: 'decline' });
        const result = await c.client.callTool({ name: 'pick', arguments: {} });
        assert.equal(result.isError, true);
        assert.match(text(result), /^E_NOT_INTERACTIVE: 'pick' asked "Which colour\?", and the MCP client agent-apps-test declined it$/);
      });

      test("an approval gate: the form names the tool, its args and the agent; allow runs it, a decline denies it", async () => {
        const c = await client();
        c.asked.length = 0;
        c.answers.push(accept({ decision: 'allow' }));
        assert.equal(text(await c.client.callTool({ name: 'caller', arguments: {} })), 'careful:hi');
        const form = c.asked[0]!;
        assert.match(form.message, /^Allow careful\?\ntool: careful\nargs: \{"x":"hi"\}\nagent: caller\nwhy: trust: ask, set in .*careful\.skill\.mjs\ncode:\n {2}try \{ ctx\.manager\.finish\(await ctx\.manager\.invoke\('careful'/);
        assert.deepEqual(form.requestedSchema.properties.decision.oneOf, [
          { const: 'allow', title: 'allow once' },
          { const: 'allow-run', title: 'allow for this run' },
          { const: 'deny', title: 'deny' },
        ]);
        assert.deepEqual(form.requestedSchema.required, ['decision']);
        c.answers.push({ action: 'decline' });
        assert.equal(text(await c.client.callTool({ name: 'caller', arguments: {} })), "E_DENIED: mcp client agent-apps-test denied the call of 'careful' through elicitation: declined by the MCP client");
        c.answers.push(accept({ decision: 'deny', reason: 'not today' }));
        assert.equal(text(await c.client.callTool({ name: 'caller', arguments: {} })), "E_DENIED: mcp client agent-apps-test denied the call of 'careful' through elicitation: not today");
        // The server's log says who answered, through what.
        if (transport === 'stdio') assert.match(c.stderr(), /careful: denied by mcp client agent-apps-test through elicitation: not today/);
      });

      test('prompts/get of a prompt behind trust: ask waits on the gate', async () => {
        const c = await client();
        c.answers.push(accept({ decision: 'allow' }));
        const prompt = await c.client.getPrompt({ name: 'gated' });
        assert.match((prompt.messages[0]!.content as { text: string }).text, /^The gated prompt\./);
        c.answers.push({ action: 'cancel' });
        await assert.rejects(c.client.getPrompt({ name: 'gated' }), /E_DENIED: mcp client agent-apps-test denied the call of 'gated' through elicitation: declined by the MCP client/);
      });

      test('a client without the elicitation capability is refused as before', async () => {
        const c = await connect(transport, era, false);
        const pick = await c.client.callTool({ name: 'pick', arguments: {} });
        assert.equal(pick.isError, true);
        assert.match(text(pick), /^E_NOT_INTERACTIVE: 'pick' asked "Which colour\?", but there is no person to ask/);
        assert.match(text(await c.client.callTool({ name: 'caller', arguments: {} })), /^E_ALLOWED_TOOLS: 'caller' may not invoke 'careful' without a person's approval .*needs approval/);
      });

      if (era === 'modern') {
        test('input_required by hand: a tampered requestState, or one for other args, is refused (-32602); the run still waits for the real answer', async () => {
          const c = await client();
          const first = (await c.client.callTool({ name: 'pick', arguments: {} }, { allowInputRequired: true })) as unknown as { resultType: string; inputRequests: Record<string, { method: string; params: { message: string } }>; requestState: string };
          assert.equal(first.resultType, 'input_required');
          const [key, request] = Object.entries(first.inputRequests)[0]!;
          assert.equal(request.method, 'elicitation/create');
          assert.equal(request.params.message, 'pick asks: Which colour?');
          const retry = (args: Record<string, unknown>, requestState: string, answer: Answer) =>
            c.client.callTool({ name: 'pick', arguments: args, inputResponses: { [key]: answer }, requestState } as never, { allowInputRequired: true }) as unknown as Promise<Record<string, any>>;
          await assert.rejects(retry({}, `${first.requestState}x`, accept({ answer: 'red' })), (err: { code?: number; message?: string }) => err.code === -32602 && /Invalid or expired requestState/.test(err.message ?? ''));
          await assert.rejects(retry({ other: 1 }, first.requestState, accept({ answer: 'red' })), (err: { code?: number }) => err.code === -32602);
          const second = await retry({}, first.requestState, accept({ answer: 'red' }));
          assert.equal(second.resultType, 'input_required');
          const next = Object.keys(second.inputRequests)[0]!;
          // The answered round's state again: that question is no longer waiting.
          const stale = await retry({}, first.requestState, accept({ answer: 'red' }));
          assert.equal(stale.isError, true);
          assert.match(stale.content[0].text, /^E_ABORTED: the run this answer is for is not waiting any more/);
          const done = (await c.client.callTool({ name: 'pick', arguments: {}, inputResponses: { [next]: accept({ answer: 'Bo' }) }, requestState: second.requestState } as never, { allowInputRequired: true })) as { content: { text: string }[] };
          assert.equal(done.content[0]!.text, 'Bo picked red');
        });
      }

      if (era === 'modern' && transport === 'stdio') {
        test('a parked run is aborted when the server closes', async (t) => {
          const c = await connect(transport, era, true);
          const marker = path.join(ws, `closed-${Date.now()}.txt`);
          const first = (await c.client.callTool({ name: 'waits', arguments: { marker } }, { allowInputRequired: true })) as unknown as { resultType: string };
          assert.equal(first.resultType, 'input_required');
          assert.equal(fs.existsSync(marker), false, 'parked, not ended');
          await c.client.close();
          await until(() => fs.existsSync(marker), 10_000, 'the parked run to end');
          assert.equal(fs.readFileSync(marker, 'utf8'), 'E_ABORTED: aborted: the MCP server is closing');
        });
      }
    });
  }
}

// ── the client side ─────────────────────────────────────────────────────────────────────────

const ELICIT = fixture('mcp-client-ws', 'servers', 'elicit.mjs');
const ERAS = { old: '2025-11-25', new: '2026-07-28' } as const;

/** An asker that answers from a script and records the questions. */
function scripted(answers: string[]): Asker & { questions: Question[] } {
  const questions: Question[] = [];
  return {
    questions,
    async ask(question): Promise<AskAnswer> {
      questions.push(question);
      return { value: answers.shift() ?? '' };
    },
  };
}

describe('a server that asks: the run’s asker answers it', () => {
  const servers = Object.fromEntries(Object.entries(ERAS).map(([name, protocol]) => [name, { ...stdio(ELICIT), protocol }]));

  test('with an asker: a question per field (choices plus decline; free text), and the server gets the content', async (t) => {
    const ws = mcpWorkspace(t, servers);
    for (const name of Object.keys(ERAS)) {
      const asker = scripted(['green', '3']);
      const rt = await createRuntime({ cwd: ws, asker });
      t.after(() => rt.close());
      assert.deepEqual(JSON.parse(String(await rt.invoke(`${name}-ask`, {}))), { action: 'accept', content: { colour: 'green', count: 3 } }, name);
      assert.deepEqual(
        asker.questions.map((q) => [q.tool, q.text, q.choices?.map((c) => c.value)]),
        [
          [`${name}-ask`, 'Pick a colour — Colour', ['red', 'green', '(decline)']],
          [`${name}-ask`, 'Pick a colour — How many (at least one) (an empty answer skips it)', undefined],
        ],
        name,
      );
      const declining = scripted(['(decline)']);
      const rt2 = await createRuntime({ cwd: ws, asker: declining });
      t.after(() => rt2.close());
      assert.deepEqual(JSON.parse(String(await rt2.invoke(`${name}-ask`, {}))), { action: 'decline', content: null }, name);
    }
  });

  test('headless (nobody to ask): declined, with a warning in the log', async (t) => {
    const ws = mcpWorkspace(t, servers);
    const rt = await createRuntime({ cwd: ws });
    t.after(() => rt.close());
    for (const name of Object.keys(ERAS)) {
      assert.deepEqual(JSON.parse(String(await rt.invoke(`${name}-ask`, {}))), { action: 'decline', content: null }, name);
    }
    const warned = logs(rt).filter((e) => e.type === 'elicitation');
    assert.deepEqual(warned.map((e) => [e.server, e.level, e.text]), Object.keys(ERAS).map((name) => [name, 'warn', `MCP server '${name}' asked for input: declined — nobody to ask (not a terminal; no asker)`]));
  });

  test('inside a call that mcp serve runs, the server’s question goes on to the MCP client of mcp serve', async (t) => {
    const ws = mcpWorkspace(t, servers, { 'skills/relay.skill.mjs': `export const frontmatter = { name: 'relay', description: 'Calls a tool that asks.' };\nexport default (ctx) => ctx.manager.invoke('new-ask', {});\n` });
    for (const era of ['legacy', 'modern'] as const) {
      const asked: string[] = [];
      const answers = [{ action: 'accept', content: { answer: 'red' } }, { action: 'accept', content: { answer: '' } }];
      const { client } = await connectStdio(t, {
        cwd: ws,
        era,
        capabilities: { elicitation: { form: {} } },
        setup: (c) => c.setRequestHandler('elicitation/create', async (request) => (asked.push((request.params as { message: string }).message), (answers.shift() ?? { action: 'cancel' }) as never)),
      });
      const result = await client.callTool({ name: 'relay', arguments: {} });
      assert.deepEqual(JSON.parse(text(result)), { action: 'accept', content: { colour: 'red' } }, era);
      assert.deepEqual(asked, ['new-ask asks: Pick a colour — Colour', 'new-ask asks: Pick a colour — How many (at least one) (an empty answer skips it)'], era);
    }
  });
});
