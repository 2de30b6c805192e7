// `agent-apps mcp serve` under the MCP Inspector's CLI mode (@modelcontextprotocol/inspector),
// over stdio: software nobody here wrote starts the server, lists and calls its tools.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { BIN, REPO, WS, baseEnv } from './mcp-server-helpers.ts';

const INSPECTOR = path.join(REPO, 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');

function inspector(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [INSPECTOR, '--cli', process.execPath, BIN, 'mcp', 'serve', ...args], { cwd: WS, env: baseEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('the Inspector CLI lists the tools over stdio', async () => {
  const r = await inspector(['--method', 'tools/list']);
  assert.equal(r.code, 0, r.stderr);
  const { tools } = JSON.parse(r.stdout) as { tools: { name: string; inputSchema: object; outputSchema?: object }[] };
  assert.ok(tools.some((tool) => tool.name === 'greet'));
  assert.ok(tools.find((tool) => tool.name === 'stats')?.outputSchema);
  assert.ok(!tools.some((tool) => tool.name === 'helper'));
});

test('the Inspector CLI calls a tool, and sees a skill error as an isError result', async () => {
  const ok = await inspector(['--method', 'tools/call', '--tool-name', 'stats', '--tool-args-json', '{"text":"to be or not"}']);
  assert.equal(ok.code, 0, ok.stderr);
  assert.deepEqual(JSON.parse(ok.stdout).structuredContent, { words: 4, chars: 12 });
  const invalid = await inspector(['--method', 'tools/call', '--tool-name', 'greet', '--tool-args-json', '{"nom":"Ada"}']);
  assert.notEqual(invalid.code, 0, 'the Inspector exits non-zero on an isError result');
  assert.match(invalid.stdout, /E_VALIDATION: invalid args for 'greet'/);
  assert.match(invalid.stdout, /"isError": true/);
});
