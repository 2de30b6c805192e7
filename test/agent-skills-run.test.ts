// SPEC §3.1 when a SKILL.md skill runs through the real agent: progressive disclosure (the model
// is told the folder and its files, not their contents), file-read relative to the folder and
// inside it without extra permission — never out of it —, and `metadata` that stays data.
// The model is the agent-ws fixture's scripted provider (it logs what it was given).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fixture, logs, runtimeAt, tempDir, writeFiles } from './helpers.ts';

const AGENT_WS = fixture('agent-ws');

/** A SKILL.md whose model is the scripted provider running `code` once. */
function skillMd(name: string, extra: string, code: string, body = 'Follow references/guide.md.\n'): string {
  const script = JSON.stringify([{ code }]);
  return `---\nname: ${name}\ndescription: Test skill ${name}.\n${extra}agent-apps:\n  model: { agent: scripted-agent, script: ${script} }\n---\n${body}`;
}

test('the model is told the skill folder and its files by name, not their contents; file-read reads inside it, never out of it', async (t) => {
  // The skill lives outside the workspace (a --path root, as ~/.agents/skills would be).
  const root = tempDir(t, 'agent-apps-skill-root-');
  const outside = tempDir(t, 'agent-apps-outside-');
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'SECRET');
  const code = `
    const out = {};
    for (const p of ['references/guide.md', 'scripts/run.sh', 'references/leak', '../outside.txt', 'README.md']) {
      try { out[p] = await ctx.manager.invoke('file-read', { path: p }); } catch (e) { out[p] = e.code; }
    }
    ctx.manager.finish(out);`;
  writeFiles(root, {
    'reader/SKILL.md': skillMd('reader', '', code),
    'reader/references/guide.md': 'GUIDE CONTENTS',
    'reader/scripts/run.sh': 'echo run',
  });
  fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'reader', 'references', 'leak'));
  const rt = await runtimeAt(t, AGENT_WS, { paths: [root] });
  const result = (await rt.invoke('reader', {})) as Record<string, string>;
  assert.deepEqual(result, {
    'references/guide.md': 'GUIDE CONTENTS',
    'scripts/run.sh': 'echo run',
    // A link out of the folder is not followed: the path is the workspace's, where there is no such file.
    'references/leak': 'E_FILE',
    '../outside.txt': 'E_ALLOWED_TOOLS',
    // Not in the folder: the workspace's file, as for any skill.
    'README.md': fs.existsSync(path.join(AGENT_WS, 'README.md')) ? fs.readFileSync(path.join(AGENT_WS, 'README.md'), 'utf8') : 'E_FILE',
  });
  const [given] = logs(rt, { type: 'provider-args' }) as unknown as { prompt: string }[];
  const prompt = given!.prompt;
  assert.match(prompt, new RegExp(`## This skill's folder\\n\\nThese instructions come from the Agent Skills folder \`${path.join(root, 'reader').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\``));
  assert.match(prompt, /^- references\/guide\.md$/m);
  // A link out of the folder is not the folder's: its name is not listed (and reading it is E_FILE).
  assert.doesNotMatch(prompt, /references\/leak/);
  assert.match(prompt, /^- scripts\/run\.sh$/m);
  assert.doesNotMatch(prompt, /GUIDE CONTENTS|echo run/);
});

test('a Markdown skill of ours is told no folder', async (t) => {
  const root = tempDir(t, 'agent-apps-skill-root-');
  const script = JSON.stringify([{ code: 'ctx.manager.finish(1)' }]);
  writeFiles(root, { 'plain.md': `---\nname: plain\ndescription: Ours.\nmetadata:\n  model: { agent: scripted-agent, script: ${script} }\n---\nDo it.\n` });
  const rt = await runtimeAt(t, AGENT_WS, { paths: [root] });
  assert.equal(await rt.invoke('plain', {}), 1);
  const [given] = logs(rt, { type: 'provider-args' }) as unknown as { prompt: string }[];
  assert.doesNotMatch(given!.prompt, /This skill's folder/);
});

test('a spec-valid SKILL.md whose metadata names built-ins (model, debug, log) runs: its metadata is data', async (t) => {
  const root = tempDir(t, 'agent-apps-skill-root-');
  writeFiles(root, { 'portable/SKILL.md': skillMd('portable', 'metadata:\n  model: gpt-4o\n  debug: "true"\n  log: everything\n', "ctx.manager.finish(await ctx.manager.get('run.origin.frontmatter.metadata'))") });
  const rt = await runtimeAt(t, AGENT_WS, { paths: [root] });
  assert.deepEqual(await rt.invoke('portable', {}), { model: 'gpt-4o', debug: 'true', log: 'everything' });
});
