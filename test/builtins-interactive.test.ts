// repl and tutor (SPEC §7) refuse without a terminal; findTool works without a runtime (SPEC §4);
// runtime.close() emits `shutdown` (SPEC §13).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { AgentAppsError, ToolNotFoundError, findTool, isPathRef } from '../src/index.ts';
import { REPO, LIBRARY, bareRuntime } from './helpers.ts';

for (const name of ['repl', 'tutor']) {
  test(`${name} refuses with E_NOT_INTERACTIVE when run.interactive is false`, async (t) => {
    const rt = await bareRuntime(t);
    await assert.rejects(rt.invoke(name, {}), (err: AgentAppsError) => {
      assert.equal(err.code, 'E_NOT_INTERACTIVE');
      assert.match(err.message, /needs an interactive terminal/);
      return true;
    });
  });

  test(`agent-apps run ${name} without a TTY exits 2 with one clear line`, async () => {
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, [path.join(REPO, 'bin', 'agent-apps.js'), 'run', name], { cwd: path.join(REPO, 'examples', 'hello') }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
      child.stdin?.end();
    });
    assert.equal(code, 2);
    assert.equal(stdout, '');
    assert.equal(stderr.trim().split('\n').length, 1);
    assert.match(stderr, /E_NOT_INTERACTIVE/);
  });
}

test('findTool resolves a bare name on the given search paths without a runtime', async () => {
  const tool = await findTool('file-read', [LIBRARY]);
  assert.equal(tool.name, 'file-read');
  assert.equal(tool.kind, 'code');
  assert.match(tool.uri ?? '', /^file:\/\/.*file-read\.skill\.ts$/);
});

test('findTool throws ToolNotFoundError with near names', async () => {
  await assert.rejects(findTool('file-reed', [LIBRARY]), (err: ToolNotFoundError) => {
    assert.ok(err instanceof ToolNotFoundError);
    assert.equal(err.code, 'E_TOOL_NOT_FOUND');
    assert.ok(err.suggestions.includes('file-read'));
    return true;
  });
});

test('findTool accepts a path ref, and isPathRef tells it from a bare name', async () => {
  const file = path.join(REPO, 'examples', 'hello', 'skills', 'greet.skill.ts');
  assert.equal(isPathRef(file), true);
  assert.equal(isPathRef('greet'), false);
  const tool = await findTool(file, [LIBRARY]);
  assert.equal(tool.name, 'greet');
});

test('runtime.close() emits shutdown to subscribers and lets their handlers finish', async (t) => {
  const rt = await bareRuntime(t);
  let seen: unknown;
  rt.register({
    name: 'on-shutdown',
    fn: async (_ctx, args: { event: { topic: string; type: string } }) => {
      await new Promise((r) => setTimeout(r, 20));
      seen = args.event;
    },
  });
  await rt.invoke('event-subscribe', { topic: 'shutdown', ref: 'on-shutdown' });
  await rt.close();
  assert.deepEqual({ topic: (seen as { topic: string }).topic, type: (seen as { type: string }).type }, { topic: 'shutdown', type: 'close' });
});
