// The MCP client from the public CLI (SPEC §16, issue 9): `run SERVER-TOOL`, `list`, `describe`,
// and no server process outliving the CLI — when it ends normally, on SIGINT, on SIGTERM, when a
// skill crashes it or calls process.exit, and when `list` is killed while a server starts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import type { TestContext } from 'node:test';
import { REPO } from './helpers.ts';
import { EVERYTHING, FILESYSTEM, MODERN, NODE, alive, lines, mcpWorkspace, stdio, until } from './mcp-client-helpers.ts';

const BIN = path.join(REPO, 'bin', 'agent-apps.js');

function env(ws: string): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, AGENT_APPS_HOME: path.join(ws, '.home'), NO_COLOR: '1' };
  for (const key of ['AGENT_APPS_PATH', 'FORCE_COLOR', 'NODE_OPTIONS', 'NODE_TEST_CONTEXT']) delete e[key];
  return e;
}

function cli(args: string[], ws: string) {
  const r = spawnSync(NODE, [BIN, ...args], { cwd: ws, env: env(ws), encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/** Processes whose command line mentions `text` (the test's unique workspace path). */
function mentioning(text: string): number[] {
  const out: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(text)) out.push(Number(name));
    } catch {}
  }
  return out;
}

/** Starts the CLI in the background; resolves with its exit when it ends. */
function start(args: string[], ws: string) {
  const child = spawn(NODE, [BIN, ...args], { cwd: ws, env: env(ws), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<{ status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) => child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr })));
  return { child, exited };
}

/** A workspace whose servers write their pids to `pids.log` (a wrapper shell around one of them). */
function pidWorkspace(t: TestContext, files: Record<string, string> = {}): { ws: string; pids: () => number[] } {
  const ws = mcpWorkspace(t, undefined, files);
  const log = path.join(ws, 'pids.log');
  const servers = {
    modern: { ...stdio(MODERN, ws), env: { PID_LOG: log } },
    // `sh -c 'node …; true'`: the server is a grandchild, as under npx.
    wrapped: { command: 'sh', args: ['-c', `"${NODE}" "${MODERN}" "${ws}"; true`], env: { PID_LOG: log } },
  };
  fs.writeFileSync(path.join(ws, '.mcp.json'), JSON.stringify({ mcpServers: servers }));
  return { ws, pids: () => lines(log).map(Number) };
}

test('run SERVER-TOOL --path …: the filesystem server reads a file; list and describe show MCP tools; nothing is left running', (t) => {
  const ws = mcpWorkspace(t, { fs: stdio(FILESYSTEM, '${workspace}/data'), everything: stdio(EVERYTHING, 'stdio'), missing: { command: 'no-such-mcp-server-xyz' } }, { 'data/notes.txt': 'first line\nsecond line\n' });
  const run = cli(['run', 'fs-read-text-file', '--path', path.join(ws, 'data', 'notes.txt'), '--head', '1', '--json'], ws);
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout, '{"content":"first line"}\n');

  const bad = cli(['run', 'fs-read-text-file'], ws);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /E_VALIDATION.*missing required property 'path'/);
  const missing = cli(['run', 'missing-tool'], ws);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /E_MCP.*MCP server 'missing' \(no-such-mcp-server-xyz\) could not start: its command 'no-such-mcp-server-xyz' was not found/);

  const list = cli(['list', '--json'], ws);
  assert.equal(list.status, 2, 'a broken server makes list exit 2, as a broken skill does');
  const entries = JSON.parse(list.stdout) as { name: string; kind: string; origin: string; error?: string }[];
  const mcp = entries.filter((e) => e.kind === 'mcp');
  assert.ok(mcp.some((e) => e.name === 'fs-read-text-file' && e.origin === 'mcp://fs/read_text_file' && !e.error));
  assert.ok(mcp.some((e) => e.name === 'everything-get-sum' && !e.error));
  assert.deepEqual(
    mcp.filter((e) => e.error).map((e) => e.name),
    ['missing'],
  );
  assert.match(list.stderr, /error: missing: MCP server 'missing'/);

  const describe = cli(['describe', 'everything-get-sum'], ws);
  assert.equal(describe.status, 0, describe.stderr);
  assert.match(describe.stdout, /^everything-get-sum\s+mcp:\/\/everything\/get-sum/m);
  assert.match(describe.stdout, /required:\s+- a\s+- b/);
  assert.deepEqual(mentioning(ws), [], 'no server process outlives the CLI');
});

test('SIGINT while a tool call hangs: exit 130, the call is cancelled, the servers are gone', async (t) => {
  const { ws, pids } = pidWorkspace(t);
  const { child, exited } = start(['run', 'modern-hang'], ws);
  assert.ok(await until(() => pids().length >= 1, 20_000), 'the server started');
  await new Promise((r) => setTimeout(r, 300));
  child.kill('SIGINT');
  const r = await exited;
  assert.equal(r.status, 130, r.stderr);
  assert.ok(await until(() => !pids().some(alive), 3000), `still alive: ${pids().filter(alive)}`);
  assert.deepEqual(mentioning(ws), []);
});

test('SIGTERM to `list` while a server is starting (nobody else handles it): the servers are killed first', async (t) => {
  const slow = path.join(path.dirname(MODERN), 'slow-start.mjs');
  const { ws, pids } = pidWorkspace(t);
  // A server that never answers its handshake: `list` waits on it while the others are up.
  const config = JSON.parse(fs.readFileSync(path.join(ws, '.mcp.json'), 'utf8'));
  config.mcpServers.silent = { command: NODE, args: [slow, ws], env: { PID_LOG: path.join(ws, 'pids.log') } };
  fs.writeFileSync(path.join(ws, '.mcp.json'), JSON.stringify(config));
  const { child, exited } = start(['list'], ws);
  assert.ok(await until(() => pids().length >= 3, 20_000), `servers started: ${pids()}`);
  child.kill('SIGTERM');
  const r = await exited;
  assert.equal(r.signal, 'SIGTERM', `the CLI ends by the signal (status ${r.status}): ${r.stderr}`);
  assert.ok(await until(() => !pids().some(alive), 3000), `still alive: ${pids().filter(alive)}`);
  assert.deepEqual(mentioning(ws), []);
});

test('a skill that crashes the CLI (an uncaught error) or calls process.exit leaves no server behind', async (t) => {
  const crash = `export const frontmatter = { name: 'crasher' };
export default async (ctx) => {
  await ctx.manager.invoke('modern-pid', {});
  await ctx.manager.invoke('wrapped-pid', {});
  setTimeout(() => { throw new Error('boom from a skill'); }, 10);
  await new Promise(() => {});
};
`;
  const exit = `export const frontmatter = { name: 'exiter' };
export default async (ctx) => {
  await ctx.manager.invoke('modern-pid', {});
  await ctx.manager.invoke('wrapped-pid', {});
  process.exit(7);
};
`;
  const { ws, pids } = pidWorkspace(t, { 'skills/crasher.skill.mjs': crash, 'skills/exiter.skill.mjs': exit });
  const crashed = cli(['run', 'crasher'], ws);
  assert.notEqual(crashed.status, 0);
  assert.match(crashed.stderr, /boom from a skill/);
  assert.equal(pids().length, 2);
  assert.ok(await until(() => !pids().some(alive), 3000), `still alive after the crash: ${pids().filter(alive)}`);
  const exited = cli(['run', 'exiter'], ws);
  assert.equal(exited.status, 7);
  assert.equal(pids().length, 4);
  assert.ok(await until(() => !pids().some(alive), 3000), `still alive after process.exit: ${pids().filter(alive)}`);
  assert.deepEqual(mentioning(ws), []);
});

test('--set mcp.servers.NAME.KEY on a server defined in .mcp.json changes that key only (the command stays)', (t) => {
  const ws = mcpWorkspace(t, { everything: stdio(EVERYTHING, 'stdio') });
  const list = cli(['--set', 'mcp.servers.everything.timeoutMs=5000', 'list', '--json'], ws);
  assert.equal(list.status, 0, list.stderr);
  const entries = JSON.parse(list.stdout) as { name: string; kind: string; error?: string }[];
  assert.ok(!entries.some((e) => e.error), JSON.stringify(entries.filter((e) => e.error)));
  assert.ok(entries.some((e) => e.kind === 'mcp' && e.name.startsWith('everything-')), 'the server still starts, with its command from .mcp.json');
  const bad = cli(['--set', 'mcp.servers.everything.timeoutMs=-1', 'list', '--json'], ws);
  assert.match(bad.stdout + bad.stderr, /timeoutMs must be a positive number/);
});
