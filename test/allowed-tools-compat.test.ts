// Anthropic Agent Skills write allowed-tools as Claude Code tool names, comma-separated
// (`Read, Bash(git log:*)`). SKILL.md folders run unchanged (SPEC §3): those names map onto
// the built-ins that do the same job, and their patterns become arg constraints.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAllowedTools, resolveVisibleTools, kernelOf } from '../src/index.ts';
import { runtimeFor } from './helpers.ts';

test('commas outside parentheses separate allowed-tools tokens, inside they separate constraints', () => {
  const spec = parseAllowedTools('file-read, wordcount schedule-create(ref=my-*, when=now)');
  assert.equal(spec.allows('file-read'), true);
  assert.equal(spec.allows('wordcount'), true);
  assert.equal(spec.allows('schedule-create', { ref: 'my-job', when: 'now' }), true);
  assert.equal(spec.allows('schedule-create', { ref: 'my-job', when: 'later' }), false);
});

test('Read, Write/Edit and Bash map to file-read, file-write and shell; Bash(prefix:*) constrains the command', () => {
  const spec = parseAllowedTools('Read, Edit, Bash(git log:*)');
  assert.equal(spec.allows('file-read', { path: 'CHANGELOG.md' }), true);
  assert.equal(spec.allows('file-write', { path: 'notes.md', content: '' }), true);
  assert.equal(spec.allows('shell', { command: 'git log --oneline ./src' }), true);
  assert.equal(spec.allows('shell', { command: 'rm -rf /' }), false);
  assert.deepEqual(spec.named.sort(), ['file-read', 'file-write', 'shell']);
});

test('Read(pattern) constrains the path, with ./ and ** as a user would expect', () => {
  const spec = parseAllowedTools('Read(./docs/**)');
  assert.equal(spec.allows('file-read', { path: './docs/guide/intro.md' }), true);
  assert.equal(spec.allows('file-read', { path: 'docs/a.md' }), true);
  assert.equal(spec.allows('file-read', { path: '/etc/passwd' }), false);
});

test('Claude Code tools with no counterpart here (Grep, WebFetch) allow nothing, and do not break the spec', () => {
  const spec = parseAllowedTools('Grep WebFetch(domain:example.com)');
  assert.equal(spec.rules.length, 0);
  assert.equal(spec.allows('grep'), false);
});

test('a SKILL.md folder with Claude Code allowed-tools loads, and its agent may use the mapped built-ins only', async (t) => {
  const rt = await runtimeFor(t, 'agent-skills');
  const d = await rt.describe('release-notes');
  assert.equal(d.tool.allowedTools, 'Read, Bash(git log:*), Grep');
  const kernel = kernelOf(rt.root);
  const visible = await resolveVisibleTools(kernel, rt.root.locals.config.paths, rt.root.locals.config.cwd, { allowedTools: d.tool.allowedTools, self: 'release-notes' });
  assert.equal(visible.mode, 'constrained');
  assert.deepEqual(visible.tools.map((x) => x.name).sort(), ['file-read', 'shell']);
});
