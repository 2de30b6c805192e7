// The agent-acp / agent-kiro providers (docs/agents.md, "ACP agents"): agent skills whose LLM loop is an ACP agent —
// here the fake agent test/acp-fake-agent.ts (the SDK's agent side, a real process over stdio,
// scripted per test), driven by real CLI processes on the fixture workspace test/fixtures/acp-ws.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { BIN, cli, cliEnv, tempDir } from './cli-process.ts';
import { alive, fakeAgent, until, workspace, type FakeAgent } from './acp-helpers.ts';

const COUNT_AND_FINISH = "const n = await ctx.manager.invoke('wordcount', { text: ctx.args.text });\nctx.manager.finish({ count: n });";

/** stream-json lines of a run. */
function lines(stdout: string): Record<string, any>[] {
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, any>);
}

async function gone(fake: FakeAgent): Promise<void> {
  const pid = fake.pid();
  assert.ok(pid, 'the fake agent started');
  await until(() => !alive(pid), `the fake agent (pid ${pid}) to be gone`);
}

describe('agent-acp: an agent skill on an ACP agent', () => {
  test('initialize (v1), session/new with our MCP server, the prompt as content blocks; the invoke code runs through the pipeline and finish() ends the run; nothing is left running', async () => {
    const ws = workspace();
    const fake = fakeAgent({ prompts: [[{ text: 'Let me count.' }, { invoke: COUNT_AND_FINISH }, { text: 'never said' }]] });
    const r = await cli(['run', 'count', '--text', 'a b c'], ws, { env: fake.env });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { count: 3 });
    const log = fake.log();
    const init = log.find((e) => e.event === 'initialize')!;
    assert.equal(init.params.protocolVersion, 1);
    assert.equal(init.params.clientInfo.name, 'agent-apps');
    const [server] = log.find((e) => e.event === 'session/new')!.params.mcpServers;
    assert.equal(server.type, 'http');
    assert.equal(server.name, 'agent-apps');
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    assert.match(server.headers[0].value, /^Bearer [A-Za-z0-9_-]{40,}$/);
    assert.equal(log.find((e) => e.event === 'session/new')!.params.cwd, ws);
    assert.deepEqual(log.find((e) => e.event === 'tools')!.tools, ['invoke']);
    const prompt = log.find((e) => e.event === 'prompt')!.text as string;
    const [system, user] = prompt.split('\n---\n');
    assert.match(system!, /^Count the words of the text with `wordcount`/, 'first block: the skill’s prompt');
    assert.match(system!, /wordcount/, 'with the tool documentation');
    assert.match(user!, /text: a b c/, 'second block: the user message (the args)');
    assert.deepEqual(
      log.find((e) => e.event === 'permission'),
      { event: 'permission', title: 'mcp__agent-apps__invoke', outcome: 'allow', t: log.find((e) => e.event === 'permission')!.t },
      'our own MCP tool is allowed',
    );
    assert.equal(log.find((e) => e.event === 'invoke-result')!.text, 'finished: {"count":3}');
    assert.ok(log.some((e) => e.event === 'cancel'), 'finish() ended the prompt: session/cancel');
    await gone(fake);
    // The invoke server went with the run.
    await assert.rejects(fetch(server.url, { method: 'POST', headers: { Authorization: server.headers[0].value } }));
  });

  test('stream-json shows the turn as seed 004 names it: turn-start, message deltas and the whole text, tool-call, the skills the code calls, tool-result', async () => {
    const ws = workspace();
    const fake = fakeAgent({ prompts: [[{ text: 'Let me count.' }, { plan: ['count the words'] }, { invoke: COUNT_AND_FINISH }]] });
    const r = await cli(['--output-format', 'stream-json', 'run', 'count', '--text', 'a b c'], ws, { env: fake.env });
    assert.equal(r.code, 0, r.stderr);
    const events = lines(r.stdout).map((l) => (l.type === 'message' ? `message${l.delta ? '+' : ''}:${l.text}` : l.type));
    assert.deepEqual(events, ['start', 'turn-start', 'message+:Let me ', 'message+:count.', 'message:Let me count.', 'tool-call', 'skill-call', 'skill-result', 'tool-result', 'result']);
    const call = lines(r.stdout).find((l) => l.type === 'tool-call')!;
    assert.deepEqual(call.args, { code: COUNT_AND_FINISH });
    assert.equal(lines(r.stdout).at(-1)!.ok, true);
  });

  test('a turn that used tools is followed by another prompt (the agent skill answers continue); a turn without tools ends the run with its text', async () => {
    const ws = workspace();
    const fake = fakeAgent({
      prompts: [
        [{ text: 'Counting.' }, { invoke: "return await ctx.manager.invoke('wordcount', { text: ctx.args.text });" }, { text: 'Got 3.' }],
        [{ text: 'There are 3 words.' }],
      ],
    });
    const r = await cli(['run', 'count', '--text', 'a b c'], ws, { env: fake.env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'There are 3 words.\n');
    const prompts = fake.log().filter((e) => e.event === 'prompt');
    assert.equal(prompts.length, 2);
    assert.equal(prompts[1]!.text, 'Continue.');
    assert.equal(fake.log().find((e) => e.event === 'invoke-result')!.text, 'result: 3');
  });

  test('model.record writes the standard cassette; the run replays offline with provider: replay, the agent never started', async () => {
    const ws = workspace();
    const fake = fakeAgent({
      prompts: [
        [{ text: 'Counting.' }, { tool: { title: 'Read README.md', kind: 'read' } }, { invoke: "return await ctx.manager.invoke('wordcount', { text: ctx.args.text });" }, { text: 'Got it.' }],
        [{ text: 'There are 3 words.' }],
      ],
    });
    const cassette = path.join(ws, 'count.cassette.yaml');
    const live = await cli(['run', 'count', '--text', 'a b c', '--record', cassette], ws, { env: fake.env });
    assert.equal(live.code, 0, live.stderr);
    assert.equal(live.stdout, 'There are 3 words.\n');
    const recorded = parseYaml(fs.readFileSync(cassette, 'utf8'));
    assert.deepEqual(recorded, {
      turns: [
        { text: 'Counting.', invoke: '// agent-apps: here the ACP agent used its own tool "Read README.md" (read); a replay does not run it' },
        { invoke: "return await ctx.manager.invoke('wordcount', { text: ctx.args.text });" },
        { text: 'There are 3 words.' },
      ],
    });

    // No agent to start: replay must not need one.
    const offline = { ...fake.env, ACP_NODE: path.join(ws, 'no-such-node'), FAKE_ACP_LOG: path.join(ws, 'replay.log') };
    const replay = await cli(['--output-format', 'stream-json', 'run', 'count', '--text', 'a b c', '--set', 'model.provider=replay', '--set', `model.cassette=${cassette}`], ws, { env: offline });
    assert.equal(replay.code, 0, replay.stderr);
    const out = lines(replay.stdout);
    assert.equal(out.at(-1)!.result, 'There are 3 words.');
    assert.deepEqual(
      out.filter((l) => l.type === 'skill-call').map((l) => l.tool),
      ['wordcount'],
      'the recorded code ran again',
    );
    assert.equal(fs.existsSync(path.join(ws, 'replay.log')), false, 'the ACP agent was not started');
  });

  test('a missing command is one line naming it and how to fix it, exit 2; for agent-kiro, how to install Kiro CLI', async () => {
    const ws = workspace();
    const fake = fakeAgent({ prompts: [] });
    const r = await cli(['run', 'count', '--text', 'a', '--set', 'model.acp.command=no-such-acp-agent-here'], ws, { env: fake.env });
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.equal(r.stderr, "error [E_CONFIG]: the ACP agent command 'no-such-acp-agent-here' (model.acp.command) was not found on PATH — install it, or set model.acp.command to its path\n");

    const kiro = await cli(['run', 'kiro', '--text', 'a'], ws, { env: { PATH: '/nonexistent-bin' } });
    assert.equal(kiro.code, 2);
    assert.equal(kiro.stderr.trim().split('\n').length, 1, kiro.stderr);
    assert.match(kiro.stderr, /the ACP agent command 'kiro-cli' \(model\.acp\.command\) was not found on PATH — install Kiro CLI \(curl -fsSL https:\/\/cli\.kiro\.dev\/install \| bash/);
  });

  test('a malformed model.acp is E_CONFIG naming the key (exit 2)', async () => {
    const ws = workspace();
    const fake = fakeAgent({ prompts: [] });
    const bad = await cli(['run', 'count', '--text', 'a', '--set', 'model.acp.args=oops'], ws, { env: fake.env });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /model\.acp\.args must be a list of strings/);
    const unknown = await cli(['run', 'count', '--text', 'a', '--set', 'model.acp.comand=x'], ws, { env: fake.env });
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /model\.acp\.comand is not a setting/);
    // An agent without HTTP MCP support is given a stdio server instead: test/acp-stdio-mcp.test.ts.
    assert.equal(fake.pid(), undefined, 'the agent was never started');
  });

  test('a long run (a dozen prompts, each with a tool call): one agent process and one session throughout, nothing on stderr', async () => {
    const ws = workspace();
    const prompts = [...Array.from({ length: 12 }, (_, i) => [{ text: `Step ${i + 1}.` }, { invoke: `return ${i + 1};` }]), [{ text: 'Done.' }]];
    const fake = fakeAgent({ prompts });
    const r = await cli(['run', 'count', '--text', 'a', '--set', 'model.maxTurns=20'], ws, { env: fake.env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'Done.\n');
    assert.equal(r.stderr, '');
    assert.equal(fake.log().filter((e) => e.event === 'prompt').length, 13);
    assert.equal(fake.log().filter((e) => e.event === 'start').length, 1);
    assert.equal(fake.log().filter((e) => e.event === 'session/new').length, 1);
  });

  test('maxTurns stays the agent skill\'s: a second prompt past model.maxTurns 1 is E_AGENT_LIMIT (exit 1), and the agent is ended', async () => {
    const ws = workspace();
    const fake = fakeAgent({ prompts: [[{ invoke: 'return 1' }, { text: 'More to do.' }], [{ text: 'never asked' }]] });
    const r = await cli(['run', 'count', '--text', 'a', '--set', 'model.maxTurns=1'], ws, { env: fake.env });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /E_AGENT_LIMIT.*1 model turn \(model\.maxTurns\)|1 model turn \(model\.maxTurns\).*E_AGENT_LIMIT/);
    assert.equal(fake.log().filter((e) => e.event === 'prompt').length, 1);
    await gone(fake);
  });

  test('an agent that needs a login first: E_CONFIG saying so (exit 2)', async () => {
    const ws = workspace();
    const fake = fakeAgent({ authRequired: true, prompts: [] });
    const r = await cli(['run', 'count', '--text', 'a'], ws, { env: fake.env });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^error \[E_CONFIG\]: the ACP agent '.*' needs you to log in first \(session\/new: .*\) — it offers: fake login; log in with the agent's own command \(for Kiro: kiro-cli login\)\n$/);
    await gone(fake);
  });

  test('an agent that never answers initialize fails after model.acp.startTimeoutMs (E_MODEL, exit 1), and is ended', async () => {
    const ws = workspace();
    const fake = fakeAgent({ hangOn: 'initialize', prompts: [] });
    const r = await cli(['run', 'count', '--text', 'a', '--set', 'model.acp.startTimeoutMs=300'], ws, { env: fake.env });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /did not answer initialize within 300 ms \(model\.acp\.startTimeoutMs\)/);
    await gone(fake);
  });

  test('an agent that dies mid-prompt fails the run with E_MODEL and its last stderr line (exit 1)', async () => {
    const ws = workspace();
    const fake = fakeAgent({ prompts: [[{ text: 'Hmm.' }, { exit: 3, stderr: 'fake agent: out of credits' }]] });
    const r = await cli(['run', 'count', '--text', 'a'], ws, { env: fake.env });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error \[E_MODEL\]: the ACP agent '.*acp-fake-agent\.ts' exited \(code 3\): fake agent: out of credits\n$/);
  });

  test('SIGINT cancels the session (session/cancel), exits 130, and the agent process is gone', async () => {
    const ws = workspace();
    const fake = fakeAgent({ prompts: [[{ text: 'Thinking hard…' }, { waitForCancel: true }]] });
    const child = spawn(process.execPath, [BIN, 'run', 'count', '--text', 'a b'], { cwd: ws, env: cliEnv(fake.env), stdio: 'pipe' });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await until(() => fake.log().some((e) => e.event === 'waiting'), 'the fake agent to wait');
    child.kill('SIGINT');
    assert.equal(await exited, 130, stderr);
    assert.ok(fake.log().some((e) => e.event === 'cancel'), 'the agent was sent session/cancel');
    await gone(fake);
  });

  test("the agent's own tools: refused without a person (a denial, and --fail-on-denial fails the run); run with model.acp.allowAgentTools: true", async () => {
    const ws = workspace();
    const script = { prompts: [[{ tool: { title: 'Write notes.txt', kind: 'edit', write: 'notes.txt' } }], [{ text: 'Done.' }]] };
    const refused = fakeAgent(script);
    const r = await cli(['--output-format', 'stream-json', 'run', 'count', '--text', 'a'], ws, { env: refused.env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(fs.existsSync(path.join(ws, 'notes.txt')), false, 'the tool did not run');
    assert.deepEqual(refused.log().find((e) => e.event === 'permission')!.outcome, 'reject');
    const denied = lines(r.stdout).find((l) => l.type === 'denied')!;
    assert.equal(denied.tool, 'Write notes.txt');
    assert.equal(denied.reason, "the ACP agent's own tool needs a person's approval: run in a terminal, or set model.acp.allowAgentTools: true");
    assert.match(r.stderr, /warn Write notes\.txt: refused: the ACP agent's own tool needs a person's approval/);

    const strict = await cli(['--fail-on-denial', 'run', 'count', '--text', 'a'], ws, { env: fakeAgent(script).env });
    assert.equal(strict.code, 1);
    assert.match(strict.stderr, /E_DENIED/);

    const allowed = fakeAgent(script);
    const ok = await cli(['run', 'count', '--text', 'a', '--set', 'model.acp.allowAgentTools=true'], ws, { env: allowed.env });
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(allowed.log().find((e) => e.event === 'permission')!.outcome, 'allow');
    assert.ok(fs.existsSync(path.join(ws, 'notes.txt')), 'the tool ran');
  });

  test("a tool of the agent's own named like ours is not ours: only the whole name, never an edit or a command", async () => {
    const ws = workspace();
    const fake = fakeAgent({
      prompts: [
        [
          { tool: { title: 'Edit agent-apps/invoke.ts', kind: 'edit', write: 'one.txt' } },
          { tool: { title: 'agent-apps/invoke', kind: 'execute', write: 'two.txt' } },
          { tool: { title: 'cat mcp__agent-apps__invoke', kind: 'other', write: 'three.txt' } },
          // Ours, spelled as Kiro and others spell MCP tools: allowed.
          { invoke: 'return 1', title: '@agent-apps/invoke' },
          { invoke: 'return 2', title: 'Running tool', name: 'agent-apps___invoke' },
        ],
        [{ text: 'Done.' }],
      ],
    });
    const r = await cli(['run', 'count', '--text', 'a'], ws, { env: fake.env });
    assert.equal(r.code, 0, r.stderr);
    const outcomes = fake.log().filter((e) => e.event === 'permission').map((e) => [e.name ?? e.title, e.outcome]);
    assert.deepEqual(outcomes, [
      ['Edit agent-apps/invoke.ts', 'reject'],
      ['agent-apps/invoke', 'reject'],
      ['cat mcp__agent-apps__invoke', 'reject'],
      ['@agent-apps/invoke', 'allow'],
      ['agent-apps___invoke', 'allow'],
    ]);
    for (const f of ['one.txt', 'two.txt', 'three.txt']) assert.equal(fs.existsSync(path.join(ws, f)), false, f);
  });

  test('attack: code the ACP agent sends through invoke cannot escape allowed-tools, load a ref, or reach the server without its token', async () => {
    const ws = workspace();
    const secretFile = pathToFileURL(path.join(ws, 'skills', 'secret.skill.ts')).href;
    const fake = fakeAgent({
      prompts: [
        [
          { invoke: "return await ctx.manager.invoke('secret', {});" },
          { invoke: `return await ctx.manager.invoke(${JSON.stringify(path.join(ws, 'skills', 'secret.skill.ts'))}, {});` },
          { invoke: `return await ctx.manager.invoke(${JSON.stringify(secretFile)}, {});` },
          { invoke: "return await ctx.manager.invoke('agent-acp', { prompt: 'x', invokeRef: 'y' });" },
          { invoke: "return await ctx.manager.invoke('wordcount', { text: 'a', $context: { middleware: { secret: {} } } });" },
          { probe: 'no-token' },
          { probe: 'other-tool' },
          { probe: 'bad-args' },
        ],
        [{ text: 'I tried.' }],
      ],
    });
    const r = await cli(['run', 'count', '--text', 'a'], ws, { env: fake.env });
    assert.equal(r.code, 0, r.stderr);
    const results = fake.log().filter((e) => e.event === 'invoke-result');
    assert.equal(results.length, 5);
    assert.ok(results.every((e) => e.isError), JSON.stringify(results));
    assert.match(results[0]!.text, /^E_ALLOWED_TOOLS: /);
    assert.match(results[1]!.text, /^E_UNTRUSTED_REF: /);
    assert.match(results[2]!.text, /^E_UNTRUSTED_REF: /);
    assert.match(results[3]!.text, /^E_ALLOWED_TOOLS: /);
    assert.match(results[4]!.text, /^E_(ALLOWED_TOOLS|UNTRUSTED_REF|VALIDATION): /);
    const probes = Object.fromEntries(fake.log().filter((e) => e.event === 'probe').map((e) => [e.kind, e]));
    assert.equal(probes['no-token']!.status, 401);
    assert.equal(probes['other-tool']!.isError, true);
    assert.match(probes['other-tool']!.text, /^E_TOOL_NOT_FOUND: this server has one tool, 'invoke'/);
    assert.equal(probes['bad-args']!.isError, true);
    assert.match(probes['bad-args']!.text, /^E_VALIDATION: invoke needs/);
    assert.equal(fs.existsSync(path.join(ws, 'SECRET-RAN')), false, 'secret never ran');
    await gone(fake);
  });

  test('the ACP SDK loads only when an ACP provider runs: not for a plain skill, not for a replayed agent', (t) => {
    const ws = workspace();
    const dir = tempDir('agent-apps-acp-hook-');
    const hook = path.join(dir, 'loaded-hook.mjs');
    fs.writeFileSync(
      hook,
      `import { registerHooks } from 'node:module';
import fs from 'node:fs';
const seen = new Set();
registerHooks({ load(url, context, next) { seen.add(url); return next(url, context); } });
process.on('exit', () => fs.writeFileSync(process.env.LOADED_LOG, [...seen].join('\\n')));
`,
    );
    const traced = (args: string[], env: Record<string, string> = {}) => {
      const log = path.join(dir, `loaded-${Math.random().toString(36).slice(2)}.log`);
      const r = spawnSync(process.execPath, ['--import', pathToFileURL(hook).href, BIN, ...args], { cwd: ws, env: cliEnv({ LOADED_LOG: log, ...env }), encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 0, r.stderr);
      return fs.readFileSync(log, 'utf8').split('\n');
    };
    const ACP = /@agentclientprotocol\/|\/(src|dist)\/acp\//;
    assert.deepEqual(traced(['run', 'shout', '--message', 'hi']).filter((u) => ACP.test(u)), []);
    assert.deepEqual(traced(['run', 'helper', '--message', 'a b']).filter((u) => ACP.test(u)), []);
    const fake = fakeAgent({ prompts: [[{ invoke: COUNT_AND_FINISH }]] });
    assert.ok(traced(['run', 'count', '--text', 'a b'], fake.env).some((u) => /@agentclientprotocol\//.test(u)), 'an agent-acp run loads it (the check can see it)');
    t.diagnostic('checked with a module load hook, as test/bundles.test.ts does');
  });
});
