// JSON Schemas from outside (docs/security.md): an MCP server — written with the official SDK, run
// over stdio — whose inputSchema patterns would take a backtracking engine hours on a short input.
// They run in linear time (RE2), so the call is answered at once and the host stays responsive; a
// pattern RE2 cannot run (a lookahead) is refused naming the server, tool and key, never run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { BIN, cliEnv, tempDir } from '../cli-process.ts';
import { NODE } from '../mcp-client-helpers.ts';
import { REPO } from '../helpers.ts';

const SERVER = path.join(REPO, 'test', 'fixtures', 'mcp-client-ws', 'servers', 'redos.mjs');

function workspace(): string {
  const ws = tempDir('agent-apps-redos-');
  fs.mkdirSync(path.join(ws, 'skills'));
  fs.writeFileSync(path.join(ws, '.mcp.json'), JSON.stringify({ mcpServers: { redos: { command: NODE, args: [SERVER] } } }));
  return ws;
}

// A hang would be the old behaviour: the child is killed at the bound and `status` is null.
const run = (args: string[], ws: string) => spawnSync(NODE, [BIN, ...args], { cwd: ws, env: cliEnv({ NO_COLOR: '1' }), encoding: 'utf8', timeout: 90_000 });

test("an MCP tool's catastrophic pattern runs in linear time: 60 a's and a '!' are refused at once, the process answers", () => {
  const ws = workspace();
  const r = run(['run', 'redos-evil', '--q', 'a'.repeat(60) + '!'], ws);
  assert.notEqual(r.status, null, 'the run ended by itself (it did not hang in a backtracking regex)');
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /E_VALIDATION.*must match pattern/);
  const ok = run(['run', 'redos-evil', '--q', 'aaaa'], ws);
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /got \{"q":"aaaa"\}/);
  const keys = run(['run', 'redos-keys', '--args-json', JSON.stringify({ ['a'.repeat(60) + '!']: 'v' })], ws);
  assert.notEqual(keys.status, null);
});

test('a pattern RE2 cannot run is refused with E_MCP naming the server, the tool and the key — never run with backtracking', () => {
  const ws = workspace();
  const r = run(['run', 'redos-lookahead', '--q', 'x'], ws);
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /E_MCP.*MCP server 'redos', tool 'lookahead', inputSchema: properties\.q\.pattern is refused: .*linear time \(RE2\)/);
});

test("a downloaded SKILL.md's params run their patterns in linear time too; a lookahead is refused naming the file", () => {
  const ws = tempDir('agent-apps-redos-skill-');
  const dir = path.join(ws, 'skills', 'picky');
  fs.mkdirSync(dir, { recursive: true });
  const skill = (pattern: string) =>
    fs.writeFileSync(path.join(dir, 'SKILL.md'), `---\nname: picky\ndescription: Takes a picky arg.\nagent-apps:\n  params: { type: object, properties: { q: { type: string, pattern: ${JSON.stringify(pattern)} } } }\n---\nBody.\n`);
  skill('^(a|aa)+$');
  const slow = run(['run', 'picky', '--q', 'a'.repeat(60) + '!'], ws);
  assert.notEqual(slow.status, null, 'it did not hang');
  assert.equal(slow.status, 2, slow.stderr);
  assert.match(slow.stderr, /E_VALIDATION.*must match pattern/);
  skill('^(?=x).*$');
  const refused = run(['run', 'picky', '--q', 'x'], ws);
  assert.equal(refused.status, 2, refused.stderr);
  assert.match(refused.stderr, /E_CONFIG.*picky\/SKILL\.md \(params\): properties\.q\.pattern is refused/);
});
