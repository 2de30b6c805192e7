// Shared by test/headless-*.test.ts (SPEC §18): the headless workspace copied to a temp folder,
// and stream-json output read back as lines, each checked to be one JSON value.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO, tempDir } from './cli-process.ts';

const FIXTURE = path.join(REPO, 'test', 'fixtures', 'headless-ws');

/** A fresh copy of test/fixtures/headless-ws (runs write .agent-apps/ into their workspace). */
export function headlessWorkspace(): string {
  const dir = tempDir('agent-apps-headless-');
  fs.cpSync(FIXTURE, dir, { recursive: true });
  return dir;
}

export type Line = Record<string, any>;

/**
 * stream-json stdout as its lines: every line is one JSON value (it parses, and no line is
 * empty), the last line is the only result line, and it ends with a newline.
 */
export function streamLines(stdout: string): Line[] {
  assert.ok(stdout.endsWith('\n'), `stdout ends with a newline: ${JSON.stringify(stdout.slice(-80))}`);
  const lines = stdout.slice(0, -1).split('\n');
  const parsed = lines.map((l, i) => {
    try {
      return JSON.parse(l) as Line;
    } catch (err) {
      assert.fail(`line ${i + 1} is not JSON (${(err as Error).message}): ${l.slice(0, 200)}`);
    }
  });
  for (const [i, l] of parsed.entries()) assert.ok(l !== null && typeof l === 'object' && !Array.isArray(l) && typeof l.type === 'string', `line ${i + 1} is an object with a type`);
  assert.deepEqual(
    parsed.map((l, i) => (l.type === 'result' ? i : -1)).filter((i) => i >= 0),
    [parsed.length - 1],
    'exactly one result line, the last',
  );
  return parsed;
}

export const JQ = spawnSync('jq', ['--version'], { encoding: 'utf8' }).status === 0;

/** `… | jq -c .`: jq reads every line as JSON and writes the same values back, one a line. */
export function throughJq(stdout: string): Line[] {
  const r = spawnSync('jq', ['-c', '.'], { input: stdout, encoding: 'utf8' });
  assert.equal(r.status, 0, `jq failed: ${r.stderr}`);
  return r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Line);
}

/** The `keys` of a line that it has. */
export function pick(line: Line, keys: string[]): Line {
  return Object.fromEntries(keys.filter((k) => k in line).map((k) => [k, line[k]]));
}
