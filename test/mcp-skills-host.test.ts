// Skills from MCP servers (docs/mcp.md, "Skills from MCP servers"): agent-apps as the host of the
// Skills extension. The server is written with the official SDK's SkillsExtension
// (fixtures/mcp-client-ws/servers/skills.mjs), configured in a workspace's .mcp.json; the skill
// it offers runs through the real CLI like a local SKILL.md folder — its body the prompt, its
// replay cassette and references fetched from the server, checked against their digests, cached.
// Then what a hostile or changed server does: a file that does not match its digest, a skill
// without digests, a file outside the skill's folder, a new version after the trust, a local
// skill of the same name.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cli, tempDir } from './cli-process.ts';
import { fixture } from './helpers.ts';
import { NODE } from './mcp-client-helpers.ts';
import { spawnPty } from './pty-helpers.ts';

const SERVER = fixture('mcp-client-ws', 'servers', 'skills.mjs');

const SKILL_MD = `---
name: polite-reply
description: Answers politely, following the guide.
agent-apps:
  model: { provider: replay, cassette: replay.yaml }
---
Read references/GUIDE.md, then answer: $ARGUMENTS
`;
const REPLAY = `turns:
  - invoke: |
      const guide = await ctx.manager.invoke('file-read', { path: 'references/GUIDE.md' });
      ctx.manager.finish(guide.split('\\n')[2] + ' (' + ctx.args.arguments + ')');
`;
const FILES = {
  'polite-reply/SKILL.md': SKILL_MD,
  'polite-reply/references/GUIDE.md': '# Guide\n\nUse the polite form.\n',
  'polite-reply/replay.yaml': REPLAY,
};

interface Setup {
  ws: string;
  home: string;
  files: string;
  reads: string;
  /** Trust from nowhere: the person trusted nothing, and this is not CI. */
  env: Record<string, string | undefined>;
  /** What each file read the server served, in order. */
  served(): string[];
}

function setup(opts: { env?: Record<string, string>; protocol?: string; files?: Record<string, string> } = {}): Setup {
  const ws = tempDir('agent-apps-mcp-skills-host-');
  const home = `${ws}-home`;
  fs.mkdirSync(path.join(ws, 'skills'));
  fs.mkdirSync(home);
  const files = `${ws}-files.json`;
  fs.writeFileSync(files, JSON.stringify(opts.files ?? FILES));
  const reads = `${ws}-reads.log`;
  const server = { command: NODE, args: [SERVER, files], env: { SKILLS_READ_LOG: reads, ...opts.env }, ...(opts.protocol ? { protocol: opts.protocol } : {}) };
  fs.writeFileSync(path.join(ws, '.mcp.json'), JSON.stringify({ mcpServers: { docs: server } }));
  return {
    ws,
    home,
    files,
    reads,
    env: { AGENT_APPS_HOME: home, AGENT_APPS_TRUST_WORKSPACE: undefined, CI: undefined, NO_COLOR: '1' },
    served: () => (fs.existsSync(reads) ? fs.readFileSync(reads, 'utf8').trim().split('\n').filter(Boolean) : []),
  };
}

const trusted = (s: Setup) => ({ ...s.env, AGENT_APPS_TRUST_WORKSPACE: '1' });

/** Every file under `dir`, relative. */
function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => fs.statSync(path.join(dir, f)).isFile()).sort();
}

for (const protocol of ['2025-11-25', '2026-07-28']) {
  describe(`a server's skills as skills of the runtime (${protocol})`, () => {
    test('list shows them as kind mcp-skill with their server and digest, fetching nothing', async () => {
      const s = setup({ protocol });
      const list = await cli(['list', '--json'], s.ws, { env: trusted(s) });
      assert.equal(list.code, 0, list.stderr);
      const entry = (JSON.parse(list.stdout) as { name: string; kind: string; server?: string; digest?: string; origin: string; description?: string }[]).find((e) => e.name === 'polite-reply');
      assert.deepEqual(
        { kind: entry?.kind, server: entry?.server, origin: entry?.origin, description: entry?.description },
        { kind: 'mcp-skill', server: 'docs', origin: 'skill://polite-reply/SKILL.md', description: 'Answers politely, following the guide.' },
      );
      assert.match(entry?.digest ?? '', /^sha256:[0-9a-f]{64}$/);
      assert.deepEqual(s.served(), [], 'a listing reads no file of the skill');
      const table = await cli(['list'], s.ws, { env: trusted(s) });
      assert.match(table.stdout, /polite-reply\s+mcp-skill\s+Answers politely.*mcp:\/\/docs skill:\/\/polite-reply\/SKILL\.md/);
    });

    test('run: its files are fetched on first use, verified and cached; it runs like a local SKILL.md folder', async () => {
      const s = setup({ protocol });
      const run = await cli(['run', 'polite-reply', '--arguments', 'hello there'], s.ws, { env: trusted(s) });
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, 'Use the polite form. (hello there)\n');
      assert.deepEqual([...s.served()].sort(), ['skill://polite-reply/SKILL.md', 'skill://polite-reply/references/GUIDE.md', 'skill://polite-reply/replay.yaml']);
      const cached = filesUnder(path.join(s.home, 'mcp-skills'));
      assert.equal(cached.length, 3);
      assert.ok(cached.every((f) => f.includes(`${path.sep}polite-reply${path.sep}`)), cached.join(', '));
      // The second run reads nothing: the cache holds exactly the entry's bytes.
      const again = await cli(['run', 'polite-reply', '--arguments', 'again'], s.ws, { env: trusted(s) });
      assert.equal(again.stdout, 'Use the polite form. (again)\n', again.stderr);
      assert.equal(s.served().length, 3);
      // describe shows it as a skill of its own.
      const describe = await cli(['describe', 'polite-reply', '--json'], s.ws, { env: trusted(s) });
      assert.equal(describe.code, 0, describe.stderr);
      assert.match(describe.stdout, /Answers politely/);
    });
  });
}

describe('what a hostile or changed server gets', () => {
  test('a file whose bytes do not match its digest: E_MCP naming it, exit 1, nothing runs, nothing cached', async () => {
    const s = setup({ env: { SKILLS_TAMPER: 'polite-reply/references/GUIDE.md' } });
    const run = await cli(['run', 'polite-reply', '--arguments', 'x'], s.ws, { env: trusted(s) });
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /E_MCP.*skill "polite-reply": references\/GUIDE\.md failed verification \(its digest does not match the skill's entry\).*nothing of the skill is used/);
    assert.equal(run.stdout, '');
    assert.deepEqual(filesUnder(path.join(s.home, 'mcp-skills')), []);
  });

  test('a skill offered as "dynamic" (no digests) is listed with the reason and refused', async () => {
    const s = setup({ env: { SKILLS_DYNAMIC: 'polite-reply' } });
    const run = await cli(['run', 'polite-reply', '--arguments', 'x'], s.ws, { env: trusted(s) });
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /E_MCP.*offers its files as "dynamic", without digests/);
    const list = JSON.parse((await cli(['list', '--json'], s.ws, { env: trusted(s) })).stdout) as { name: string; error?: string }[];
    assert.match(list.find((e) => e.name === 'polite-reply')?.error ?? '', /cannot run: the server offers its files as "dynamic"/);
    assert.deepEqual(s.served(), []);
  });

  test('a file named outside the skill folder (a server answering by hand, past the SDK): the skill is refused, nothing read or written', async () => {
    // The SDK's client lets `skill://other/../polite-reply/SKILL.md` through (it refuses other
    // schemes): our check of every path refuses it before anything is read.
    const s = setup({ files: { ...FILES, 'other/SKILL.md': '---\nname: other\ndescription: Another.\n---\nBody.\n' }, env: { SKILLS_ESCAPE: 'other' } });
    const run = await cli(['run', 'other'], s.ws, { env: trusted(s) });
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /E_MCP.*skill "other", which cannot run: its file "skill:\/\/other\/\.\.\/polite-reply\/SKILL\.md" is not inside the skill's folder/);
    assert.deepEqual(filesUnder(path.join(s.home, 'mcp-skills')), []);
    assert.deepEqual(s.served(), []);
  });

  test('a local skill of the same name wins: it runs, the server is not read, list says which shadows which', async () => {
    const s = setup();
    fs.mkdirSync(path.join(s.ws, 'skills', 'polite-reply'));
    fs.writeFileSync(path.join(s.ws, 'skills', 'polite-reply', 'SKILL.md'), '---\nname: polite-reply\ndescription: The local one.\nagent-apps:\n  model: { provider: replay, cassette: replay.yaml }\n---\nLocal.\n');
    fs.writeFileSync(path.join(s.ws, 'skills', 'polite-reply', 'replay.yaml'), "turns:\n  - invoke: ctx.manager.finish('local')\n");
    const run = await cli(['run', 'polite-reply'], s.ws, { env: trusted(s) });
    assert.equal(run.stdout, 'local\n', run.stderr);
    assert.deepEqual(s.served(), []);
    const list = JSON.parse((await cli(['list', '--json'], s.ws, { env: trusted(s) })).stdout) as { name: string; kind: string; shadows?: string; shadowedBy?: string }[];
    const local = list.find((e) => e.name === 'polite-reply' && e.kind === 'skill-folder');
    const remote = list.find((e) => e.name === 'polite-reply' && e.kind === 'mcp-skill');
    assert.equal(local?.shadows, 'skill://polite-reply/SKILL.md');
    assert.match(remote?.shadowedBy ?? '', /skills\/polite-reply\/SKILL\.md$/);
  });
});

describe("a server's skill needs the workspace's trust, per version", () => {
  test('untrusted: not asked (the server is not started), said so; agent-apps trust covers it; a new version asks again', async () => {
    const s = setup();
    const before = await cli(['run', 'polite-reply', '--arguments', 'x'], s.ws, { env: s.env });
    assert.equal(before.code, 2, before.stderr);
    assert.match(before.stderr, /unknown skill 'polite-reply' \(not asked: MCP server 'docs', which the untrusted workspace configures.*agent-apps trust/);
    assert.deepEqual(s.served(), []);

    const trust = await cli(['trust'], s.ws, { env: s.env });
    assert.equal(trust.code, 0, trust.stderr);
    assert.match(trust.stdout, /and run the skills its MCP servers offer:\n  skill polite-reply of MCP server 'docs' \(sha256:[0-9a-f]{12}…\)/);
    const run = await cli(['run', 'polite-reply', '--arguments', 'x'], s.ws, { env: s.env });
    assert.equal(run.stdout, 'Use the polite form. (x)\n', run.stderr);

    // The server now serves another version of the skill: a new skill, not trusted.
    fs.writeFileSync(s.files, JSON.stringify({ ...FILES, 'polite-reply/references/GUIDE.md': '# Guide\n\nUse the very polite form.\n' }));
    const changed = await cli(['run', 'polite-reply', '--arguments', 'x'], s.ws, { env: s.env });
    assert.equal(changed.code, 2, changed.stderr);
    assert.match(changed.stderr, /E_UNTRUSTED_WORKSPACE.*the skill 'polite-reply' of MCP server 'docs' \(sha256:[0-9a-f]{12}…\) — not run: .*it changed since it was trusted \(it was sha256:/);
    assert.equal(changed.stdout, '');
    const listed = JSON.parse((await cli(['trust', '--list', '--json'], s.ws, { env: s.env })).stdout) as { skills?: Record<string, { digest: string }> }[];
    assert.match(listed[0]?.skills?.['docs/polite-reply']?.digest ?? '', /^sha256:/);
  });

  test('in a terminal the new version is asked about; a yes runs it and records that version', async (t) => {
    const s = setup();
    assert.equal((await cli(['trust'], s.ws, { env: s.env })).code, 0);
    fs.writeFileSync(s.files, JSON.stringify({ ...FILES, 'polite-reply/references/GUIDE.md': '# Guide\n\nUse the very polite form.\n' }));
    const term = spawnPty(t, ['run', 'polite-reply', '--arguments', 'x'], { cwd: s.ws, env: s.env });
    await term.waitFor(/Trust the skill 'polite-reply' of MCP server 'docs'/);
    assert.match(term.text().replace(/\n/g, ' '), /It changed since you trusted it/);
    term.write('y');
    const { exitCode } = await term.exited;
    assert.equal(exitCode, 0, term.text());
    assert.match(term.text(), /Use the very polite form\. \(x\)/);
    const run = await cli(['run', 'polite-reply', '--arguments', 'y'], s.ws, { env: s.env });
    assert.equal(run.stdout, 'Use the very polite form. (y)\n', run.stderr);
  });
});
