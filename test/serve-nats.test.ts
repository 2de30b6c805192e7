// Several `agent-apps serve` processes on one NATS namespace (docs/serve.md, "Several serve
// processes"): two real serve processes, in two workspaces (so nothing is shared through a file),
// on a real `nats-server -js`. A schedule made with schedule-create in a third process lands in
// NATS KV, both serves arm it, and each fire runs once — in one of them; a GitHub-signed delivery
// sent to both (a sender's retry reaching the other process) runs once; the webhook's sender of a
// second id on the other serve runs there.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { BIN, baseEnv } from './mcp-server-helpers.ts';
import { startServe, tempDir, until } from './serve-helpers.ts';
import { natsSkip, startNats, type NatsServer } from './nats-helpers.ts';

const SECRET = 'nats-serve-hook-secret';

describe('serve on NATS: each fire and each delivery handled once', { skip: natsSkip }, () => {
  let nats: NatsServer;
  before(async () => {
    nats = await startNats();
  });
  after(async () => {
    await nats?.stop();
  });

  /** A workspace whose skills append `{ pid, via, … }` lines to `out` (shared by both). */
  function workspaceOn(t: Parameters<typeof tempDir>[0], namespace: string, out: string): string {
    const ws = tempDir(t, 'agent-apps-serve-nats-');
    fs.mkdirSync(path.join(ws, 'skills'));
    fs.writeFileSync(
      path.join(ws, 'skills', 'main.md'),
      `---\nname: main\ndescription: A served workspace on NATS.\nmetadata:\n  events: { backend: nats, url: '${nats.url}', namespace: ${namespace} }\n  gateways:\n    gh: { type: webhook, verify: github, secretEnv: HOOK_SECRET, skill: on-hook }\n---\nThe main.\n`,
    );
    const mark = (name: string, via: string) =>
      `import fs from 'node:fs';\nexport const frontmatter = { name: '${name}', description: 'Notes a call.' };\nexport default (ctx: { nonlocals: Record<string, unknown> }, args: Record<string, unknown>) => {\n  fs.appendFileSync(${JSON.stringify(out)}, JSON.stringify({ pid: process.pid, via: '${via}', schedule: ctx.nonlocals.schedule ?? null, delivery: args.delivery ?? null }) + '\\n');\n  return { ok: true, pid: process.pid };\n};\n`;
    fs.writeFileSync(path.join(ws, 'skills', 'tick.skill.ts'), mark('tick', 'schedule'));
    fs.writeFileSync(path.join(ws, 'skills', 'on-hook.skill.ts'), mark('on-hook', 'webhook'));
    return ws;
  }

  const lines = (out: string): { pid: number; via: string; schedule: string | null; delivery: string | null }[] =>
    fs.existsSync(out) ? fs.readFileSync(out, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];

  /** The run files' run-start records with trigger: schedule, from a workspace's .agent-apps/runs. */
  function scheduleRuns(ws: string): { dueAt: string; pid: number }[] {
    const dir = path.join(ws, '.agent-apps', 'runs');
    if (!fs.existsSync(dir)) return [];
    return fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.jsonl'))
      .flatMap((f) => fs.readFileSync(path.join(dir, f), 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)))
      .filter((e) => e.type === 'run-start' && e.trigger === 'schedule');
  }

  test('a schedule in NATS KV fires once per due time across two serves; a delivery retried on the other serve runs once', async (t) => {
    const namespace = `serve_${crypto.randomBytes(4).toString('hex')}`;
    const out = path.join(tempDir(t, 'agent-apps-serve-nats-out-'), 'calls.jsonl');
    const a = workspaceOn(t, namespace, out);
    const b = workspaceOn(t, namespace, out);
    const env = { HOOK_SECRET: SECRET };
    const [sa, sb] = await Promise.all([startServe(t, a, [], env), startServe(t, b, [], env)]);

    // Made from a third process, in workspace b: it goes to NATS KV, not to b's file.
    const made = spawnSync(process.execPath, [BIN, 'run', 'schedule-create', '--name', 'tick', '--every', '1s', '--ref', 'tick'], { cwd: b, env: baseEnv(), encoding: 'utf8' });
    assert.equal(made.status, 0, made.stderr);
    assert.equal(fs.existsSync(path.join(b, '.agent-apps', 'schedules.json')), false, 'the schedule is in NATS KV, not the workspace file');
    const listed = spawnSync(process.execPath, [BIN, 'run', 'schedule-list', '--json'], { cwd: a, env: baseEnv(), encoding: 'utf8' });
    assert.equal(listed.status, 0, listed.stderr);
    assert.deepEqual(JSON.parse(listed.stdout).map((s: { name: string }) => s.name), ['tick'], 'workspace a lists the schedule b made');

    // Both serves arm it (each says so), and over ~4 fires each due time runs once.
    await until(() => /schedule tick: every 1000ms → tick/.test(sa.stderr()) && /schedule tick: every 1000ms → tick/.test(sb.stderr()), 15_000, 'both serves to arm tick');
    await until(() => lines(out).filter((l) => l.via === 'schedule').length >= 4, 20_000, 'four fires');
    const deleted = spawnSync(process.execPath, [BIN, 'run', 'schedule-delete', '--name', 'tick'], { cwd: a, env: baseEnv(), encoding: 'utf8' });
    assert.equal(deleted.status, 0, deleted.stderr);
    await until(() => /schedule tick: deleted, disarmed/.test(sa.stderr()) && /schedule tick: deleted, disarmed/.test(sb.stderr()), 15_000, 'both serves to disarm tick');
    await new Promise((r) => setTimeout(r, 300)); // a fire under way at the delete ends
    const runs = [...scheduleRuns(a), ...scheduleRuns(b)];
    const dues = runs.map((r) => r.dueAt);
    assert.equal(new Set(dues).size, dues.length, `a due time ran twice: ${dues.sort().join(', ')}`);
    assert.equal(lines(out).filter((l) => l.via === 'schedule').length, runs.length, 'one call per run file');
    assert.ok(runs.length >= 4);

    // A GitHub delivery, then its retry to the other serve: acknowledged there, not run again.
    const body = JSON.stringify({ action: 'opened', number: 7 });
    const sig = `sha256=${crypto.createHmac('sha256', SECRET).update(body).digest('hex')}`;
    const post = (url: string, id: string) =>
      fetch(`${url}/hooks/gh`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-hub-signature-256': sig, 'x-github-event': 'pull_request', 'x-github-delivery': id } });
    const first = await post(sa.url, 'delivery-1');
    assert.equal(first.status, 200);
    assert.equal(((await first.json()) as { ok: boolean }).ok, true);
    const retry = await post(sb.url, 'delivery-1');
    assert.equal(retry.status, 200);
    assert.deepEqual(await retry.json(), { duplicate: true, delivery: 'delivery-1' });
    const other = await post(sb.url, 'delivery-2');
    assert.equal(other.status, 200);
    assert.equal(((await other.json()) as { pid: number }).pid, sb.child.pid);
    const hooks = lines(out).filter((l) => l.via === 'webhook');
    assert.deepEqual(hooks.map((h) => [h.delivery, h.pid]), [['delivery-1', sa.child.pid], ['delivery-2', sb.child.pid]]);
  });
});
