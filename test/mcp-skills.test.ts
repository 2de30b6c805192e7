// The MCP Skills extension served by `agent-apps mcp serve` (docs/mcp.md, "Skills over MCP"), as
// a host sees it: the official SDK client and its SkillsClient — which checks every entry and
// verifies every file it reads against the entry's digests — over stdio and HTTP, both eras.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { connectHttp, connectStdio, startHttp, tempDir, type Owner } from './mcp-server-helpers.ts';

const GUIDE = '# Guide\n\nUse the polite form.\n';

function workspace(t: Owner): string {
  const ws = tempDir(t, 'agent-apps-mcp-skills-');
  const folder = path.join(ws, 'skills', 'polite-reply');
  fs.mkdirSync(path.join(folder, 'references'), { recursive: true });
  fs.writeFileSync(path.join(folder, 'SKILL.md'), '---\nname: polite-reply\ndescription: Answers politely, following the guide.\nlicense: MIT\n---\nRead references/GUIDE.md, then answer: $ARGUMENTS\n');
  fs.writeFileSync(path.join(folder, 'references', 'GUIDE.md'), GUIDE);
  fs.writeFileSync(path.join(ws, 'skills', 'hello.skill.ts'), "export const frontmatter = { name: 'hello', description: 'A code skill: not a skill folder.' };\nexport default () => 'hello';\n");
  // A folder with a link in it: not published (its files could leave the folder).
  const linked = path.join(ws, 'skills', 'linked');
  fs.mkdirSync(linked);
  fs.writeFileSync(path.join(linked, 'SKILL.md'), '---\nname: linked\ndescription: Has a link to /etc.\n---\nBody.\n');
  fs.symlinkSync('/etc/hostname', path.join(linked, 'host.txt'));
  return ws;
}

const sha = (s: string) => `sha256:${crypto.createHash('sha256').update(s).digest('hex')}`;

for (const era of ['legacy', 'modern'] as const) {
  describe(`Skills over MCP (${era === 'legacy' ? '2025-11-25' : '2026-07-28'})`, () => {
    test('stdio: skills/list has the SKILL.md folder with every file and its digest; reads verify; a link keeps a skill out', async (t) => {
      const ws = workspace(t);
      const conn = await connectStdio(t, { cwd: ws, era });
      const skills = new SkillsClient(conn.client);
      assert.equal(skills.supported, true);
      const listing = await skills.list();
      assert.deepEqual(listing.skills.map((s) => s.uri), ['skill://polite-reply/SKILL.md']);
      const entry = listing.skills[0]!;
      assert.equal(entry.frontmatter.name, 'polite-reply');
      assert.equal(entry.frontmatter.license, 'MIT');
      const resources = entry.resources as { uri: string; digest: string; size: number }[];
      assert.deepEqual(resources.map((r) => r.uri).sort(), ['skill://polite-reply/SKILL.md', 'skill://polite-reply/references/GUIDE.md']);
      assert.equal(resources.find((r) => r.uri.endsWith('GUIDE.md'))!.digest, sha(GUIDE));
      // The SDK's reader checks size, digest and (for SKILL.md) the frontmatter against the entry.
      const main = await skills.read(entry);
      assert.equal(main.verified, true);
      assert.match(main.body ?? '', /Read references\/GUIDE\.md/);
      const guide = await skills.read(entry, 'references/GUIDE.md');
      assert.equal(guide.verified, true);
      assert.equal(Buffer.from(guide.bytes).toString('utf8'), GUIDE);
      // skills/get answers for a served skill, and -32602 for anything else.
      assert.deepEqual((await skills.get('skill://polite-reply/SKILL.md')).skill, entry);
      await assert.rejects(skills.get('skill://linked/SKILL.md'), (err: { code?: number }) => err.code === -32602);
      await assert.rejects(skills.get('skill://hello/SKILL.md'), (err: { code?: number }) => err.code === -32602);
      assert.match(conn.stderr(), /skill linked .* is not published over the Skills extension: host\.txt is a link/);
      // A path that would climb out of the folder is not a file of the skill.
      await assert.rejects(conn.client.readResource({ uri: 'skill://polite-reply/../linked/SKILL.md' }));
    });

    test('HTTP: a changed file changes its digest; the stale entry no longer verifies', async (t) => {
      const ws = workspace(t);
      const server = await startHttp(t, [], { cwd: ws });
      const conn = await connectHttp(t, server.url, { era });
      const skills = new SkillsClient(conn.client);
      const before = (await skills.list()).skills[0]!;
      fs.writeFileSync(path.join(ws, 'skills', 'polite-reply', 'references', 'GUIDE.md'), '# Guide\n\nBe curt.\n');
      await assert.rejects(skills.read(before, 'references/GUIDE.md'), (err: { reason?: string }) => err.reason === 'size' || err.reason === 'digest');
      const after = (await skills.get('skill://polite-reply/SKILL.md')).skill;
      const guide = (after.resources as { uri: string; digest: string }[]).find((r) => r.uri.endsWith('GUIDE.md'))!;
      assert.equal(guide.digest, sha('# Guide\n\nBe curt.\n'));
      assert.equal((await skills.read(after, 'references/GUIDE.md')).verified, true);
    });
  });
}
