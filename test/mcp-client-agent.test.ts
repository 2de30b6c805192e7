// Agent code and MCP tools (SPEC §16, §15; issue 9): an agent skill replaying a cassette calls an
// MCP server's tool by its bare name, through the bridge and the full pipeline; allowed-tools
// globs (`fs-*`) and arg constraints apply to it like to any skill; an `mcp://` ref from agent
// code is E_UNTRUSTED_REF; discovery (resolveVisibleTools, skill-list) shows MCP tools.
import { test } from 'node:test';
import path from 'node:path';
import assert from 'node:assert/strict';
import { resolveVisibleTools, kernelOf } from '../src/index.ts';
import { writeAgentSkills } from './agent-helpers.ts';
import { attackWorkspace, attempts, code, runtimeIn } from './security/attack.ts';
import { EVERYTHING, FILESYSTEM, stdio } from './mcp-client-helpers.ts';

test('agent code calls MCP tools by bare name under allowed-tools; mcp:// is E_UNTRUSTED_REF; discovery lists them', async (t) => {
  const files = {
    '.mcp.json': JSON.stringify({ mcpServers: { fs: stdio(FILESYSTEM, '${workspace}/data'), everything: stdio(EVERYTHING, 'stdio') } }),
    'data/notes.txt': 'notes for the agent\n',
    'secret.txt': 'not for the agent\n',
  };
  const ws = attackWorkspace(t, {}, files);
  // The filesystem server reads relative paths against its own folder: agent code passes absolute ones.
  const notes = JSON.stringify(path.join(ws, 'data', 'notes.txt'));
  const dataDir = JSON.stringify(path.join(ws, 'data'));
  const escape = JSON.stringify(path.join(ws, 'data') + '/../secret.txt');
  writeAgentSkills(path.join(ws, 'skills'), {
    reader: {
      'allowed-tools': 'fs-* skill-list',
      turns: [
        {
          invoke: attempts({
            read: `return await ctx.manager.invoke('fs-read-text-file', { path: ${notes} });`,
            listed: `return await ctx.manager.invoke('fs-list-directory', { path: ${dataDir} });`,
            uri: `return await ctx.manager.invoke('mcp://fs/read_text_file', { path: ${notes} });`,
            other: `return await ctx.manager.invoke('everything-echo', { message: 'not allowed' });`,
            invalid: `return await ctx.manager.invoke('fs-read-text-file', { path: 42 });`,
            discovered: `return (await ctx.manager.invoke('skill-list', { query: 'fs-read' })).map((s) => s.name + ':' + s.kind).sort();`,
          }),
        },
      ],
    },
    narrow: {
      'allowed-tools': 'fs-read-text-file(path=data/*)',
      turns: [
        {
          invoke: attempts({
            inside: `return await ctx.manager.invoke('fs-read-text-file', { path: ${notes} });`,
            escape: `return await ctx.manager.invoke('fs-read-text-file', { path: ${escape} });`,
            sibling: `return await ctx.manager.invoke('fs-list-directory', { path: ${dataDir} });`,
          }),
        },
      ],
    },
  });
  const rt = await runtimeIn(t, ws);

  const out = (await rt.invoke('reader', {})) as Record<string, string>;
  assert.equal(out.read, 'ok:' + JSON.stringify({ content: 'notes for the agent\n' }));
  assert.match(out.listed!, /^ok:.*\[FILE\] notes\.txt/);
  assert.equal(code(out.uri), 'E_UNTRUSTED_REF');
  assert.equal(code(out.other), 'E_ALLOWED_TOOLS');
  assert.match(out.other!, /allowed-tools 'fs-\* skill-list'/);
  assert.equal(code(out.invalid), 'E_VALIDATION');
  const discovered = JSON.parse(out.discovered!.slice(3)) as string[];
  assert.deepEqual(discovered, ['fs-read-file:mcp', 'fs-read-media-file:mcp', 'fs-read-multiple-files:mcp', 'fs-read-text-file:mcp']);

  const narrow = (await rt.invoke('narrow', {})) as Record<string, string>;
  assert.equal(narrow.inside, 'ok:' + JSON.stringify({ content: 'notes for the agent\n' }));
  assert.equal(code(narrow.escape), 'E_ALLOWED_TOOLS', 'an arg constraint on a path holds for an MCP tool’s args too');
  assert.equal(code(narrow.sibling), 'E_ALLOWED_TOOLS');

  // What a constrained agent is shown: the MCP tools its globs match, with their schemas.
  const cfg = rt.root.locals.config;
  const visible = await resolveVisibleTools(kernelOf(rt.root), cfg.paths, cfg.cwd, { allowedTools: 'fs-read-*', provider: 'agent-strands' });
  const doc = visible.tools.find((d) => d.name === 'fs-read-text-file');
  assert.ok(doc, 'fs-read-text-file is documented for the agent');
  assert.deepEqual((doc.params as { required?: string[] }).required, ['path']);
  assert.ok(!visible.tools.some((d) => d.name.startsWith('everything-')));
});
