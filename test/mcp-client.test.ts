// The MCP client (SPEC §16 "Client", issue 9) through the runtime API, against real servers: the
// reference servers from the npm registry (everything, filesystem, memory) and two fixture
// servers (a v2-SDK one that speaks both eras, a hand-written strict 2025-era one). One shared
// workspace and runtime; every test checks what a user would see.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { createRuntime, type Context, type Runtime } from '../src/index.ts';
import { REPO, writeFiles } from './helpers.ts';
import { EVERYTHING, FILESYSTEM, MEMORY, MODERN, NODE, STRICT, alive, hubOf, lines, outcome, stdio, until } from './mcp-client-helpers.ts';

const TRACER = `export const frontmatter = { name: 'tracer', description: 'Records the tools it serves.', metadata: { role: 'middleware', visibility: 'hidden' } };
export default async function (ctx) {
  const target = ctx.envelope.target;
  (globalThis.__mcpTracer ??= []).push(target.run.tool.name + ' ' + target.run.origin.uri);
  return target.manager.next();
}
`;

const OWN = `export const frontmatter = {
  name: 'own', description: 'A skill with its own MCP server.',
  metadata: { mcp: { servers: { own: { command: ${JSON.stringify(NODE)}, args: [${JSON.stringify(MODERN)}] } } } },
};
export default (ctx) => ctx.manager.invoke('own-add', { a: 20, b: 22 });
`;

const CALLER = `export const frontmatter = { name: 'caller', description: 'Calls MCP tools by uri and by bare name.' };
export default async (ctx) => ({
  byUri: await ctx.manager.invoke('mcp://everything/get-sum', { a: 2, b: 3 }),
  byName: await ctx.manager.invoke('everything-echo', { message: 'from a skill' }),
});
`;

const SHADOW = `export const frontmatter = { name: 'everything-get-env', description: 'A skill that shadows the MCP tool of the same name.' };
export default () => 'the skill wins';
`;

let ws: string;
let rt: Runtime;
const data = () => path.join(ws, 'data');

before(async () => {
  ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-mcp-client-')));
  const servers = {
    fs: stdio(FILESYSTEM, '${workspace}/data'),
    everything: stdio(EVERYTHING, 'stdio'),
    memory: { ...stdio(MEMORY), env: { MEMORY_FILE_PATH: '${workspace}/memory.jsonl' } },
    strict: stdio(STRICT),
    broken: { command: 'no-such-mcp-server-command-xyz', args: ['--stdio'] },
  };
  const main = [
    '---',
    'name: main',
    'description: The workspace main.',
    'metadata:',
    '  mcp:',
    '    servers:',
    '      modern:',
    `        command: ${JSON.stringify(NODE)}`,
    `        args: [${JSON.stringify(MODERN)}]`,
    '        env:',
    '          CALL_LOG: "${workspace}/calls.log"',
    '          CANCEL_LOG: "${workspace}/cancel.log"',
    '          FIXTURE_TOKEN: "${env.MCP_CLIENT_TEST_TOKEN}"',
    '      quick:',
    `        command: ${JSON.stringify(NODE)}`,
    `        args: [${JSON.stringify(MODERN)}]`,
    '        timeoutMs: 400',
    '      pinned-new:',
    `        command: ${JSON.stringify(NODE)}`,
    `        args: [${JSON.stringify(MODERN)}]`,
    "        protocol: '2026-07-28'",
    '      pinned-old:',
    `        command: ${JSON.stringify(NODE)}`,
    `        args: [${JSON.stringify(MODERN)}]`,
    "        protocol: '2025-11-25'",
    '---',
    'The workspace.',
  ].join('\n');
  const team = [
    '---',
    'name: main',
    'description: The team folder authority.',
    'metadata:',
    '  tracer: true',
    '  mcp:',
    '    servers:',
    `      team: { command: ${JSON.stringify(NODE)}, args: [${JSON.stringify(MODERN)}] }`,
    '---',
    'Team.',
  ].join('\n');
  writeFiles(ws, {
    '.mcp.json': JSON.stringify({ mcpServers: servers }, null, 2),
    'data/hello.txt': 'hello from the filesystem server\n',
    'skills/main.md': main,
    'skills/team/main.md': team,
    'skills/tracer.skill.mjs': TRACER,
    'skills/own.skill.mjs': OWN,
    'skills/caller.skill.mjs': CALLER,
    'skills/everything-get-env.skill.mjs': SHADOW,
  });
  process.env.MCP_CLIENT_TEST_TOKEN = 'token-from-env';
  rt = await createRuntime({ cwd: ws });
});

after(async () => {
  await rt?.close();
  fs.rmSync(ws, { recursive: true, force: true });
});

describe('MCP servers as tools', () => {
  test('list shows every server’s tools with kind mcp, a server that cannot start as one broken entry, the rest working', async () => {
    const list = (await rt.list()) as (Awaited<ReturnType<Runtime['list']>>[number] & { shadowedBy?: string; shadows?: string })[];
    const byName = new Map(list.map((s) => [`${s.kind}:${s.name}`, s]));
    const fsRead = byName.get('mcp:fs-read-text-file');
    assert.ok(fsRead, 'fs-read-text-file is listed');
    assert.equal(fsRead.origin, 'mcp://fs/read_text_file');
    assert.match(fsRead.description ?? '', /Read the complete contents of a file/);
    for (const name of ['everything-echo', 'everything-get-structured-content', 'memory-read-graph', 'modern-add', 'team-add', 'strict-shout-text', 'pinned-new-add']) assert.ok(byName.get(`mcp:${name}`), `${name} is listed`);
    const broken = list.filter((s) => s.kind === 'mcp' && s.error);
    assert.deepEqual(
      broken.map((b) => b.name),
      ['broken'],
    );
    assert.match(broken[0]!.error!, /^MCP server 'broken' \(no-such-mcp-server-command-xyz --stdio\) could not start: its command 'no-such-mcp-server-command-xyz' was not found/);
    assert.match(broken[0]!.error!, /mcpServers\.broken in .*\.mcp\.json/);
    // A skill of the same bare name wins; the MCP tool is listed, marked.
    assert.equal(byName.get('mcp:everything-get-env')?.shadowedBy, 'file://' + path.join(ws, 'skills', 'everything-get-env.skill.mjs'));
    assert.equal(byName.get('code:everything-get-env')?.shadows, 'mcp://everything/get-env');
    assert.equal(await rt.invoke('everything-get-env', {}), 'the skill wins');
  });

  test('describe: params is the inputSchema, returns the outputSchema, origin mcp://SERVER/TOOL', async () => {
    const d = await rt.describe('fs-read-text-file');
    assert.equal(d.origin.uri, 'mcp://fs/read_text_file');
    assert.equal((d as { kind?: string }).kind ?? 'mcp', 'mcp');
    assert.deepEqual((d.tool.params as { required?: string[] }).required, ['path']);
    assert.equal((d.tool.params as { properties: Record<string, { type: string }> }).properties.path!.type, 'string');
    assert.equal(d.tool.params!.$schema, undefined, 'the draft marker of a server’s schema is not kept');
    assert.deepEqual(Object.keys((d.tool.returns as { properties: object }).properties), ['content']);
    assert.ok(d.chain.some((e) => e.name === 'validate-args'));
    // By its URI: the same tool.
    assert.equal((await rt.describe('mcp://fs/read_text_file')).tool.name, 'fs-read-text-file');
  });

  test('run.origin.uri of a call is mcp://SERVER/TOOL; a call runs the full pipeline', async () => {
    let origin: string | null = null;
    const probe = {
      'origin-probe': {
        after: ['validate-args'],
        before: ['execute'],
        fn: (served: Context) => {
          origin = served.run.origin.uri;
          return served.manager.next();
        },
      },
    };
    assert.equal(await rt.invoke('everything-echo', { message: 'hi' }, { context: { middleware: probe } }), 'Echo: hi');
    assert.equal(origin, 'mcp://everything/echo');
  });

  test('filesystem server: reads a file of its folder', async () => {
    const r = await rt.invoke('fs-read-text-file', { path: path.join(data(), 'hello.txt') });
    assert.deepEqual(r, { content: 'hello from the filesystem server\n' });
    const outside = await outcome(rt.invoke('fs-read-text-file', { path: '/etc/hostname' }));
    assert.equal(outside.code, 'E_MCP_TOOL');
    assert.match(outside.message, /^fs\/read_text_file: .*(denied|outside)/i);
  });

  test('results: structuredContent when present, else the joined text, else the content array', async () => {
    assert.deepEqual(await rt.invoke('everything-get-structured-content', { location: 'Chicago' }), { temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 });
    assert.deepEqual(await rt.invoke('modern-add', { a: 1, b: 2 }), { sum: 3 });
    assert.equal(await rt.invoke('everything-get-sum', { a: 2, b: 3 }), 'The sum of 2 and 3 is 5.');
    const image = (await rt.invoke('everything-get-tiny-image', {})) as unknown;
    // Text and an image: the text wins (joined); the content array only when there is no text.
    assert.equal(typeof image, 'string');
  });

  test('isError: true is E_MCP_TOOL with the server’s text', async () => {
    const r = await outcome(rt.invoke('everything-gzip-file-as-resource', { data: 'ftp://example.invalid/x' }));
    assert.equal(r.code, 'E_MCP_TOOL');
    assert.match(r.message, /^everything\/gzip-file-as-resource: .*Unsupported URL protocol/);
    const own = await outcome(rt.invoke('modern-fail', { why: 'on purpose' }));
    assert.deepEqual([own.code, own.message], ['E_MCP_TOOL', 'modern/fail: it failed: on purpose']);
  });

  test('args that break the tool’s schema are E_VALIDATION, and nothing is sent', async () => {
    await rt.invoke('modern-add', { a: 40, b: 2 });
    const before = lines(path.join(ws, 'calls.log')).length;
    const r = await outcome(rt.invoke('modern-add', { a: 'forty', b: 2 }));
    assert.equal(r.code, 'E_VALIDATION');
    assert.match(r.message, /\/a must be number/);
    const missing = await outcome(rt.invoke('fs-read-text-file', {}));
    assert.equal(missing.code, 'E_VALIDATION');
    assert.equal(lines(path.join(ws, 'calls.log')).length, before, 'the server received no call');
  });

  test('progress notifications are log events { type: progress, tag: mcp, server, tool, progress, total, message }', async () => {
    assert.equal(await rt.invoke('modern-slow', { steps: 3, ms: 30 }), 'counted to 3');
    const events = rt.root.manager.tail({ tag: 'mcp', type: 'progress' }).filter((e) => e.server === 'modern');
    assert.deepEqual(
      events.map((e) => [e.server, e.tool, e.progress, e.total, e.message]),
      [
        ['modern', 'slow', 1, 3, 'step 1'],
        ['modern', 'slow', 2, 3, 'step 2'],
        ['modern', 'slow', 3, 3, 'step 3'],
      ],
    );
    // The reference server's long-running operation: progress without messages.
    assert.match(String(await rt.invoke('everything-trigger-long-running-operation', { duration: 0.3, steps: 3 })), /completed/);
    // It answers right after its last notification: the SDK's client may drop a notification that
    // shares a read with the response (typescript-sdk#2580), so the last one is not asserted.
    const ref = rt.root.manager.tail({ tag: 'mcp', type: 'progress' }).filter((e) => e.server === 'everything');
    assert.deepEqual(
      ref.slice(0, 2).map((e) => [e.tool, e.progress, e.total]),
      [
        ['trigger-long-running-operation', 1, 3],
        ['trigger-long-running-operation', 2, 3],
      ],
    );
  });

  test('the idle timeout (timeoutMs) is reset by progress; a server that never answers is E_MCP naming it', async () => {
    // 4 × 250 ms with progress in between: longer than the 400 ms timeout, never idle that long.
    assert.equal(await rt.invoke('quick-slow', { steps: 4, ms: 250 }), 'counted to 4');
    // No clock: 'hang' never answers, so the E_MCP naming the 400 ms idle timeout is that timeout firing.
    const r = await outcome(rt.invoke('quick-hang', {}));
    assert.equal(r.code, 'E_MCP');
    assert.match(r.message, /^MCP server 'quick' did not answer tools\/call 'hang' within 400 ms .*raise mcp\.servers\.quick\.timeoutMs/);
    // The run goes on: the same server answers the next call.
    assert.deepEqual(await rt.invoke('quick-add', { a: 1, b: 1 }), { sum: 2 });
  });

  test('an aborted context cancels the request (the server sees notifications/cancelled)', async () => {
    const controller = new AbortController();
    const call = outcome(rt.invoke('modern-hang', {}, { context: { signal: controller.signal } }));
    setTimeout(() => controller.abort('enough'), 300);
    const r = await call;
    assert.equal(r.code, 'E_ABORTED');
    assert.ok(await until(() => lines(path.join(ws, 'cancel.log')).includes('cancelled hang')), 'the server was told');
  });

  test('a crashed server is E_MCP naming it, and starts again on next use', async () => {
    const pid = Number(await rt.invoke('team-pid', {}));
    const r = await outcome(rt.invoke('team-crash', {}));
    assert.equal(r.code, 'E_MCP');
    assert.match(r.message, /^MCP server 'team' went away during tools\/call 'crash' \(its process exited with code 3\)/);
    assert.ok(!alive(pid));
    const again = Number(await rt.invoke('team-pid', {}));
    assert.notEqual(again, pid);
    assert.ok(alive(again));
  });

  test('env and ${env.X} interpolation reach the server; its cwd is the workspace', async () => {
    assert.equal(await rt.invoke('modern-env', { name: 'FIXTURE_TOKEN' }), `token-from-env|${ws}`);
    // Nothing else of this process's environment is passed on (HOME, PATH … only).
    assert.equal(await rt.invoke('modern-env', { name: 'MCP_CLIENT_TEST_TOKEN' }), `|${ws}`);
  });

  test('the memory server keeps a knowledge graph in the file its env names', async () => {
    await rt.invoke('memory-create-entities', { entities: [{ name: 'agent-apps', entityType: 'project', observations: ['runs skills'] }] });
    const graph = (await rt.invoke('memory-read-graph', {})) as { entities: { name: string; observations: string[] }[] };
    assert.deepEqual(
      graph.entities.map((e) => [e.name, e.observations]),
      [['agent-apps', ['runs skills']]],
    );
    assert.ok(fs.existsSync(path.join(ws, 'memory.jsonl')));
  });

  test('protocol eras: negotiated, or pinned by mcp.servers.X.protocol; a strict 2025 server that exits on the probe still works', async () => {
    await rt.invoke('pinned-new-add', { a: 1, b: 1 });
    await rt.invoke('pinned-old-add', { a: 1, b: 1 });
    assert.equal(await rt.invoke('strict-shout-text', { text: 'quiet' }), 'QUIET');
    const hub = await hubOf(rt);
    const era = Object.fromEntries(hub.connections().map((c) => [c.server.name, c.protocol]));
    assert.equal(era['pinned-new'], '2026-07-28');
    assert.equal(era['pinned-old'], '2025-11-25');
    assert.equal(era.modern, '2026-07-28', 'a v2 server: the stateless era, negotiated');
    assert.equal(era.everything, '2025-11-25', 'a reference (v1 SDK) server: the handshake, negotiated');
    assert.equal(era.strict, '2025-11-25');
  });

  test('the cascade of the folder whose main configured the server runs on every call', async () => {
    (globalThis as { __mcpTracer?: string[] }).__mcpTracer = [];
    await rt.invoke('team-add', { a: 1, b: 2 });
    await rt.invoke('modern-add', { a: 1, b: 2 });
    assert.deepEqual((globalThis as { __mcpTracer?: string[] }).__mcpTracer, ['team-add mcp://team/add'], 'the team main’s tracer runs for its server’s tools only');
  });

  test('other skills call MCP tools by mcp:// uri and by bare name; a skill’s own mcp key configures a server for it', async () => {
    assert.deepEqual(await rt.invoke('caller', {}), { byUri: 'The sum of 2 and 3 is 5.', byName: 'Echo: from a skill' });
    assert.deepEqual(await rt.invoke('own', {}), { sum: 42 });
  });

  test('a server’s output is untrusted: no terminal escapes, no x-* annotations or $id from it, no __proto__ key in a result', async () => {
    const d = await rt.describe('modern-evil');
    assert.equal(d.tool.description, 'red alert');
    assert.deepEqual(d.tool.params, { type: 'object', properties: { target: { type: 'string' }, 'x-note': { type: 'string' } } });
    const result = (await rt.invoke('modern-evil', { target: 'anything/at/all' })) as Record<string, unknown>;
    assert.deepEqual(Object.keys(result), ['ok']);
    assert.equal(Object.assign({}, result).polluted, undefined);
    // Two tools with one $id: both validate.
    assert.equal(((await rt.invoke('modern-evil-twin', { target: 'x' })) as { ok: number }).ok, 1);
    assert.equal((await outcome(rt.invoke('modern-evil-twin', { target: 5 }))).code, 'E_VALIDATION');
  });

  test('unknown tools and servers: suggestions, and what is configured', async () => {
    const typo = await outcome(rt.invoke('everything-ecko', {}));
    assert.equal(typo.code, 'E_TOOL_NOT_FOUND');
    assert.match(typo.message, /did you mean 'everything-echo'/);
    const noTool = await outcome(rt.invoke('mcp://everything/nope', {}));
    assert.match(noTool.message, /MCP server 'everything' has no tool 'nope'/);
    const noServer = await outcome(rt.invoke('mcp://nowhere/x', {}));
    assert.match(noServer.message, /no MCP server 'nowhere' is configured — configured: modern, quick, pinned-new, pinned-old, team, fs, everything, memory, strict, broken/);
    const broken = await outcome(rt.invoke('broken-anything', {}));
    assert.equal(broken.code, 'E_MCP');
    assert.match(broken.message, /its command 'no-such-mcp-server-command-xyz' was not found\. — check mcpServers\.broken/);
  });
});

describe('configuration errors', () => {
  test('a malformed .mcp.json is E_CONFIG naming the file; a malformed entry names its key, and only that server is broken', async (t) => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-mcp-bad-')));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    writeFiles(dir, { 'skills/.keep': '', '.mcp.json': '{ "mcpServers": { "a": { "command": "x" }, ' });
    const r1 = await createRuntime({ cwd: dir });
    t.after(() => r1.close());
    const bad = await outcome(r1.invoke('a-tool', {}));
    assert.equal(bad.code, 'E_TOOL_NOT_FOUND');
    const listed = (await r1.list()).filter((s) => s.kind === 'mcp');
    assert.equal(listed.length, 1);
    assert.match(listed[0]!.error!, new RegExp(`^${escape(path.join(dir, '.mcp.json'))}: not valid JSON`));

    writeFiles(dir, {
      '.mcp.json': JSON.stringify({ mcpServers: { good: stdio(MODERN), bad: { command: NODE, args: 'not a list' }, nothing: {}, web: { type: 'sse', url: 'http://127.0.0.1:9/sse' }, lost: { ...stdio(MODERN), cwd: 'no/such/dir' } } }),
    });
    const r2 = await createRuntime({ cwd: dir });
    t.after(() => r2.close());
    const errors = Object.fromEntries((await r2.list()).filter((s) => s.kind === 'mcp' && s.error).map((s) => [s.name, s.error]));
    assert.match(errors.bad!, new RegExp(`\\.mcp\\.json \\(mcpServers\\.bad\\.args\\): MCP server 'bad': args must be a list of strings`));
    assert.match(errors.nothing!, /\(mcpServers\.nothing\.command\): MCP server 'nothing': needs a command \(stdio\) or a url \(HTTP\)/);
    assert.match(errors.web!, /\(mcpServers\.web\.type\): .*SSE transport is deprecated/);
    assert.match(errors.lost!, new RegExp(`^MCP server 'lost' \\(.*\\) could not start: its working directory ${escape(path.join(dir, 'no/such/dir'))} does not exist\\. — check mcpServers\\.lost in .*\\.mcp\\.json \\(cwd\\)`));
    const call = await outcome(r2.invoke('bad-x', {}));
    assert.equal(call.code, 'E_CONFIG', 'a name under a malformed server is that server’s error');
    assert.match(call.message, /mcpServers\.bad\.args/);
    const byUri = await outcome(r2.invoke('mcp://bad/x', {}));
    assert.equal(byUri.code, 'E_CONFIG');
    assert.match(byUri.message, /mcpServers\.bad\.args/);
    assert.deepEqual(await r2.invoke('good-add', { a: 2, b: 2 }), { sum: 4 });
    // `mcp.servers.NAME: false` (here from --set) switches a server off: not listed, not started.
    const r3 = await createRuntime({ cwd: dir, overrides: { mcp: { servers: { good: false, bad: null } } } });
    t.after(() => r3.close());
    const names = (await r3.list()).filter((s) => s.kind === 'mcp').map((s) => s.name);
    assert.ok(!names.some((n) => n === 'bad' || n.startsWith('good-')), String(names));
    assert.equal((await outcome(r3.invoke('good-add', { a: 1, b: 1 }))).code, 'E_TOOL_NOT_FOUND');
  });

  test('an mcp: key with an unknown key is E_CONFIG naming the main and the key; at run time too', async (t) => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-mcp-bad-')));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    writeFiles(dir, {
      'skills/main.md': `---\nname: main\nmetadata:\n  mcp:\n    servers:\n      x: { comand: node }\n---\nmain\n`,
      'skills/hello.skill.mjs': `export const frontmatter = { name: 'hello' };\nexport default () => 'hello';\n`,
      'skills/selfish.skill.mjs': `export const frontmatter = { name: 'selfish', metadata: { mcp: { server: {} } } };\nexport default () => 'never';\n`,
    });
    const r = await createRuntime({ cwd: dir });
    t.after(() => r.close());
    const main = path.join(dir, 'skills', 'main.md');
    const broken = (await r.list()).find((s) => s.kind === 'mcp' && s.error);
    assert.match(broken!.error!, new RegExp(`^${escape(main)} \\(mcp\\.servers\\.x\\.comand\\): MCP server 'x': unknown key 'comand'`));
    // Every skill under that main runs the mcp middleware, which reports the entry.
    const hello = await outcome(r.invoke('hello', {}));
    assert.equal(hello.code, 'E_CONFIG');
    assert.match(hello.message, new RegExp(`^${escape(main)} \\(mcp\\.servers\\.x\\.comand\\)`));
    const selfish = await outcome(r.invoke('selfish', {}));
    assert.equal(selfish.code, 'E_CONFIG');
    assert.match(selfish.message, new RegExp(`${escape(path.join(dir, 'skills', 'selfish.skill.mjs'))} \\(mcp\\.server\\): unknown key 'server' under mcp`));
  });
});

describe('processes and loading', () => {
  test('runtime.close() ends every server process; nothing is left', async (t) => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-mcp-close-')));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    writeFiles(dir, { 'skills/.keep': '', '.mcp.json': JSON.stringify({ mcpServers: { a: stdio(MODERN), b: stdio(EVERYTHING, 'stdio') } }) });
    const r = await createRuntime({ cwd: dir });
    const pid = Number(await r.invoke('a-pid', {}));
    await r.invoke('b-echo', { message: 'x' });
    const pids = (await hubOf(r)).connections().map((c) => c.pid!);
    assert.equal(pids.length, 2);
    assert.ok(pids.includes(pid));
    assert.ok(pids.every(alive));
    await r.close();
    assert.ok(await until(() => !pids.some(alive), 3000), `still alive: ${pids.filter(alive)}`);
  });

  test('a plain run never loads the MCP SDK, even with servers configured', () => {
    const script = `
      import { registerHooks } from 'node:module';
      const seen = [];
      registerHooks({ load(url, context, next) { if (url.includes('@modelcontextprotocol')) seen.push(url); return next(url, context); } });
      const { createRuntime } = await import(${JSON.stringify(path.join(REPO, 'src', 'index.ts'))});
      const rt = await createRuntime({ cwd: ${JSON.stringify(ws)} });
      await rt.invoke('file-read', { path: 'data/hello.txt' });
      const before = seen.length;
      await rt.invoke('modern-add', { a: 1, b: 1 });
      await rt.close();
      console.log(JSON.stringify({ before, after: seen.length }));
    `;
    const r = spawnSync(NODE, ['--input-type=module', '-e', script], { cwd: ws, encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 0, r.stderr);
    const counts = JSON.parse(r.stdout.trim().split('\n').pop()!) as { before: number; after: number };
    assert.equal(counts.before, 0, 'no @modelcontextprotocol module before an MCP tool is used');
    assert.ok(counts.after > 0, 'the SDK loads when one is');
  });
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
