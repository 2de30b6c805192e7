// An MCP server over Streamable HTTP (SPEC §16: `{ url, headers }`, `.mcp.json` type "http"):
// agent-apps' own `mcp serve --http` on 127.0.0.1, bearer token required, as the server — both
// directions of §16 against each other. The header's token comes from `${env.X}`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { createRuntime } from '../src/index.ts';
import { REPO } from './helpers.ts';
import { NODE, hubOf, mcpWorkspace, outcome, until } from './mcp-client-helpers.ts';

const BIN = path.join(REPO, 'bin', 'agent-apps.js');
const SHOUT = `export const frontmatter = { name: 'shout', description: 'Upper-cases text.', metadata: { params: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, returns: { type: 'object', properties: { loud: { type: 'string' } }, required: ['loud'] } } };
export default (ctx, { text }) => ({ loud: text.toUpperCase() });
`;

test('an HTTP server with a bearer token from ${env.X}: its tools are tools; a wrong token or a server gone is E_MCP naming it', async (t) => {
  const served = mcpWorkspace(t, undefined, { 'skills/shout.skill.mjs': SHOUT });
  const env: NodeJS.ProcessEnv = { ...process.env, AGENT_APPS_HOME: path.join(served, '.home') };
  delete env.NODE_TEST_CONTEXT;
  const server = spawn(NODE, [BIN, 'mcp', 'serve', '--http', '127.0.0.1:0', '--token', 'peer-secret'], { cwd: served, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let note = '';
  server.stderr.on('data', (d) => (note += d));
  const gone = new Promise((resolve) => server.once('exit', resolve));
  t.after(async () => {
    server.kill('SIGTERM');
    await gone;
  });
  assert.ok(await until(() => /http:\/\/127\.0\.0\.1:\d+\/mcp/.test(note), 20_000), `the server did not start: ${note}`);
  const url = /http:\/\/127\.0\.0\.1:\d+\/mcp/.exec(note)![0];

  const ws = mcpWorkspace(t, {
    peer: { type: 'http', url, headers: { Authorization: 'Bearer ${env.MCP_PEER_TOKEN}' } },
    wrong: { type: 'http', url, headers: { Authorization: 'Bearer not-the-token' } },
  });
  process.env.MCP_PEER_TOKEN = 'peer-secret';
  const rt = await createRuntime({ cwd: ws });
  t.after(() => rt.close());

  assert.deepEqual(await rt.invoke('peer-shout', { text: 'over http' }), { loud: 'OVER HTTP' });
  const d = await rt.describe('peer-shout');
  assert.equal(d.origin.uri, 'mcp://peer/shout');
  assert.deepEqual((d.tool.params as { required: string[] }).required, ['text']);
  const conn = (await hubOf(rt)).connections().find((c) => c.server.name === 'peer');
  assert.equal(conn?.protocol, '2026-07-28', 'a v2 server over HTTP: the stateless era, negotiated');

  const wrong = await outcome(rt.invoke('wrong-shout', { text: 'x' }));
  assert.equal(wrong.code, 'E_MCP');
  assert.match(wrong.message, new RegExp(`^MCP server 'wrong' \\(${url.replace(/[.]/g, '\\.')}\\) could not connect: .*401.* — check that .* is reachable and its headers \\(mcpServers\\.wrong in .*\\.mcp\\.json\\)`));
  const listed = await rt.list();
  assert.ok(listed.some((s) => s.name === 'peer-shout' && s.kind === 'mcp' && !s.error));
  assert.ok(listed.some((s) => s.name === 'wrong' && s.kind === 'mcp' && s.error));

  // The server goes away: the next call is E_MCP naming it, and the run goes on.
  server.kill('SIGTERM');
  await gone;
  const after = await outcome(rt.invoke('peer-shout', { text: 'anyone?' }));
  assert.equal(after.code, 'E_MCP');
  assert.match(after.message, /MCP server 'peer'/);
  assert.ok(fs.existsSync(ws));
});
