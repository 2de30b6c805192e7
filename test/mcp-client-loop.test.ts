// agent-apps as an MCP server of agent-apps (SPEC §16 both ways): a `.mcp.json` entry that runs
// `agent-apps mcp serve` for the same workspace — what docs/mcp.md has users write for Claude Code
// — is not a server for agent-apps itself; two workspaces that serve each other do not start
// servers without end (each server carries the chain of entries that started it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { createRuntime } from '../src/index.ts';
import { REPO } from './helpers.ts';
import { NODE, hubOf, mcpWorkspace } from './mcp-client-helpers.ts';

const BIN = path.join(REPO, 'bin', 'agent-apps.js');
const greet = (name: string) => `export const frontmatter = { name: '${name}', description: 'Greets from ${name}.' };\nexport default () => 'hello from ${name}';\n`;

test('agent-apps serving this workspace is skipped; two workspaces serving each other end the loop', async (t) => {
  const b = mcpWorkspace(t, undefined, { 'skills/greet-b.skill.mjs': greet('greet-b') });
  const a = mcpWorkspace(
    t,
    {
      self: { command: NODE, args: [BIN, 'mcp', 'serve'] },
      // B's own .mcp.json starts a server too: the agent-apps serving B must trust B (an MCP
      // server's environment is not ours, so the suites' AGENT_APPS_TRUST_WORKSPACE is given here).
      peer: { command: NODE, args: [BIN, 'mcp', 'serve', '--cwd', b], env: { AGENT_APPS_TRUST_WORKSPACE: '1' } },
    },
    { 'skills/greet-a.skill.mjs': greet('greet-a') },
  );
  // B serves A back: A → peer (B) → back (A) → peer again would be a loop.
  const fs = await import('node:fs');
  fs.writeFileSync(path.join(b, '.mcp.json'), JSON.stringify({ mcpServers: { back: { command: NODE, args: [BIN, 'mcp', 'serve', '--cwd', a] } } }));

  const rt = await createRuntime({ cwd: a });
  t.after(() => rt.close());
  const names = (await rt.list()).filter((s) => s.kind === 'mcp').map((s) => `${s.name}${s.error ? ' (error)' : ''}`);
  assert.ok(!names.some((n) => n.startsWith('self')), `the self-serving entry is not used: ${names}`);
  assert.ok(names.includes('peer-greet-b'), `B's skill through B's server: ${names}`);
  assert.ok(names.includes('peer-back-greet-a'), `A's skill through B's server of A: ${names}`);
  // The server of A that B started does not start B again: its MCP tools are not among B's.
  assert.ok(!names.some((n) => n.startsWith('peer-back-peer-')), `no loop: ${names}`);
  assert.equal(await rt.invoke('peer-back-greet-a', {}), 'hello from greet-a');
  assert.deepEqual(
    (await hubOf(rt)).connections().map((c) => c.server.name),
    ['peer'],
  );
});
