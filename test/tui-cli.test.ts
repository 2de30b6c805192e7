// The terminal UI from the CLI's side (SPEC §17, issue 11): ink and React load only when something
// is shown (a module-resolution hook lists what a process loaded); without a terminal the same
// commands print plain lines, repl and tutor refuse; FORCE_COLOR colours without a TTY but never
// brings the UI; `completion` prints scripts whose candidates come from `__complete`; an agent's
// text streams to the view.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BIN, spawnPty, WORDCOUNT_SKILL } from './pty-helpers.ts';
import { agentRuntime, writeAgentSkills } from './agent-helpers.ts';
import { tempDir } from './helpers.ts';

/** The UI's modules: ink, React, @inkjs/ui, and our src/surfaces/tui apart from its loader. */
const UI = /\/node_modules\/(ink|react|react-reconciler|@inkjs\/ui|yoga-layout)\/|\/tui\/(?!load\.)[^/]+\.(js|ts)$/;

function workspace(t: Parameters<typeof tempDir>[0]): string {
  const ws = tempDir(t, 'agent-apps-tui-cli-');
  fs.mkdirSync(path.join(ws, 'skills'));
  fs.writeFileSync(path.join(ws, 'skills', 'wordcount.skill.mjs'), WORDCOUNT_SKILL);
  writeAgentSkills(path.join(ws, 'skills'), {
    story: { 'allowed-tools': 'wordcount', turns: [{ text: 'Counting.', invoke: `ctx.manager.finish(await ctx.manager.invoke('wordcount', { text: 'a b' }));` }] },
  });
  return ws;
}

function env(ws: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, AGENT_APPS_HOME: path.join(ws, '.home'), ...extra };
  for (const key of ['AGENT_APPS_PATH', 'NODE_OPTIONS', 'NODE_TEST_CONTEXT', 'CI', ...['NO_COLOR', 'FORCE_COLOR'].filter((k) => !(k in extra))]) delete e[key];
  return e;
}

/** A module hook that writes every URL the process resolved to $LOADED_LOG when it exits. */
function loadedHook(dir: string): string {
  const file = path.join(dir, 'loaded-hook.mjs');
  fs.writeFileSync(
    file,
    `import { registerHooks } from 'node:module';
import fs from 'node:fs';
const seen = new Set();
registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen.add(r.url); return r; } });
process.on('exit', () => fs.writeFileSync(process.env.LOADED_LOG, [...seen].join('\\n')));
`,
  );
  return pathToFileURL(file).href;
}

function uiModules(log: string): string[] {
  return fs.readFileSync(log, 'utf8').split('\n').filter((u) => UI.test(u));
}

test('ink and React load only when the UI is shown: not for a run without a terminal, not for a terminal run that shows nothing; yes for an agent in a terminal', async (t) => {
  const ws = workspace(t);
  const hook = loadedHook(ws);
  const piped = path.join(ws, 'piped.log');
  const r = spawnSync(process.execPath, ['--import', hook, BIN, 'run', 'story'], { cwd: ws, env: env(ws, { LOADED_LOG: piped }), encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, '2\n');
  assert.equal(r.stderr, '', 'nothing on stderr without a terminal');
  assert.ok(fs.readFileSync(piped, 'utf8').includes('/cli/run.'), 'the hook saw the CLI load');
  assert.deepEqual(uiModules(piped), [], 'no UI module for a run without a terminal');

  const quiet = path.join(ws, 'quiet.log');
  const plain = spawnPty(t, ['run', 'wordcount', '--text', 'a b c'], { cwd: ws, env: { ...env(ws), LOADED_LOG: quiet, NODE_OPTIONS: `--import ${hook}` } });
  assert.equal((await plain.exited).exitCode, 0);
  assert.deepEqual(uiModules(quiet), [], 'a terminal run with no agent draws nothing, so loads nothing');

  const shown = path.join(ws, 'shown.log');
  const agent = spawnPty(t, ['run', 'story'], { cwd: ws, env: { ...env(ws), LOADED_LOG: shown, NODE_OPTIONS: `--import ${hook}` } });
  assert.equal((await agent.exited).exitCode, 0, agent.text());
  assert.ok(uiModules(shown).length > 0, 'an agent in a terminal loads the UI (the hook would have seen it)');
});

test('without a terminal: agent-apps repl and tutor refuse with E_NOT_INTERACTIVE (exit 2, one line, nothing on stdout)', (t) => {
  const ws = workspace(t);
  for (const cmd of ['repl', 'tutor']) {
    const r = spawnSync(process.execPath, [BIN, cmd], { cwd: ws, env: env(ws), encoding: 'utf8', input: '', timeout: 60_000 });
    assert.equal(r.status, 2, `${cmd}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr.trim().split('\n').length, 1);
    assert.match(r.stderr, /^error \[E_NOT_INTERACTIVE\]: \w+ needs an interactive terminal/);
    assert.doesNotMatch(r.stderr, /\x1b\[/, 'no ANSI codes without a terminal');
  }
});

test('FORCE_COLOR colours output without a TTY (chalk’s rules) but never brings the UI; NO_COLOR wins', (t) => {
  const ws = workspace(t);
  const forced = spawnSync(process.execPath, [BIN, 'list'], { cwd: ws, env: env(ws, { FORCE_COLOR: '1' }), encoding: 'utf8', timeout: 60_000 });
  assert.match(forced.stdout, /\x1b\[1m/, 'list is coloured');
  const none = spawnSync(process.execPath, [BIN, 'list'], { cwd: ws, env: env(ws, { FORCE_COLOR: '1', NO_COLOR: '1' }), encoding: 'utf8', timeout: 60_000 });
  assert.doesNotMatch(none.stdout, /\x1b\[/);
  const agent = spawnSync(process.execPath, [BIN, 'run', 'story'], { cwd: ws, env: env(ws, { FORCE_COLOR: '1' }), encoding: 'utf8', timeout: 60_000 });
  assert.equal(agent.status, 0, agent.stderr);
  assert.equal(agent.stdout, '2\n');
  assert.equal(agent.stderr, '', 'no live view without a terminal, FORCE_COLOR or not');
});

test('completion bash|zsh|fish: scripts that ask __complete; the candidates are commands, options, the workspace’s skills and their params', (t) => {
  const ws = workspace(t);
  const run = (...args: string[]) => execFileSync(process.execPath, [BIN, ...args], { cwd: ws, env: env(ws), encoding: 'utf8' });
  for (const shell of ['bash', 'zsh', 'fish']) assert.match(run('completion', shell), /agent-apps __complete -- /, shell);
  assert.match(run('completion', 'bash'), /complete -o default -F _agent_apps_complete agent-apps/);
  const r = spawnSync(process.execPath, [BIN, 'completion', 'tcsh'], { cwd: ws, env: env(ws), encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown shell 'tcsh' — one of bash, zsh, fish/);
  const complete = (...words: string[]) => run('__complete', '--', ...words).split('\n').filter(Boolean);
  assert.deepEqual(complete('re'), ['repl']);
  assert.ok(complete('').includes('completion') && !complete('').includes('__complete'), 'commands, the hidden one not');
  assert.deepEqual(complete('run', 'wo'), ['wordcount']);
  assert.deepEqual(complete('describe', 'st'), ['story']);
  assert.deepEqual(complete('run', 'wordcount', '--t'), ['--text']);
  assert.deepEqual(complete('--log-level', 'w'), ['warn']);
  assert.deepEqual(complete('completion', ''), ['bash', 'fish', 'zsh']);
  assert.ok(complete('--c').includes('--cwd'));
  assert.deepEqual(complete('--cwd', ws, 'run', 'st'), ['story'], 'the workspace of --cwd');
  assert.deepEqual(complete('run', 'wordcount', '--text', ''), [], 'a value: the shell completes files');
  // bash itself, with the script sourced: COMPREPLY as a person pressing Tab would get it.
  const bash = spawnSync('bash', ['-c', `agent-apps() { "${process.execPath}" "${BIN}" "$@"; }; eval "$(agent-apps completion bash)"; COMP_WORDS=(agent-apps run wo); COMP_CWORD=2; _agent_apps_complete; echo "\${COMPREPLY[@]}"`], { cwd: ws, env: env(ws), encoding: 'utf8' });
  if (!bash.error) assert.equal(bash.stdout.trim(), 'wordcount');
  // zsh and fish, where installed, with agent-apps on PATH as a person has it.
  const bin = tempDir(t, 'agent-apps-bin-');
  fs.writeFileSync(path.join(bin, 'agent-apps'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`, { mode: 0o755 });
  const shellEnv = { ...env(ws), PATH: `${bin}:${process.env.PATH}` };
  const fish = spawnSync('fish', ['-c', 'agent-apps completion fish | source; complete -C "agent-apps run wo"; complete -C "agent-apps run wordcount --t"'], { cwd: ws, env: shellEnv, encoding: 'utf8' });
  if (!fish.error) assert.deepEqual(fish.stdout.trim().split('\n'), ['wordcount', '--text'], fish.stderr);
  const zsh = spawnSync('zsh', ['-c', 'autoload -U compinit; compinit -u 2>/dev/null; source <(agent-apps completion zsh); compadd() { print -l -- "$@" | grep -v "^--$"; }; _files() { print FILES; }; words=(agent-apps describe st); CURRENT=3; _agent_apps; words=(agent-apps --cwd ""); CURRENT=3; _agent_apps'], { cwd: ws, env: shellEnv, encoding: 'utf8' });
  if (!zsh.error) assert.deepEqual(zsh.stdout.trim().split('\n'), ['story', 'FILES'], zsh.stderr);
});

test('the live view asks for the model’s text as it streams: an agent run reports message deltas to a progress view that wants them', async (t) => {
  const seen: { type: string; delta?: unknown; text?: unknown }[] = [];
  const rt = await agentRuntime(t, { talker: { turns: [{ text: 'one two three four', invoke: 'ctx.manager.finish(1)' }] } });
  const view = Object.assign((e: { type: string }) => void seen.push(e), { deltas: true });
  rt.root.globals.internals.progress = view;
  assert.equal(await rt.invoke('talker', {}), 1);
  const deltas = seen.filter((e) => e.type === 'message' && e.delta === true).map((e) => e.text);
  assert.ok(deltas.length > 1, `streamed in chunks: ${JSON.stringify(deltas)}`);
  assert.equal(deltas.join(''), 'one two three four');
  // model.deltas: false still wins.
  const quiet: { type: string; delta?: unknown }[] = [];
  const rt2 = await agentRuntime(t, { talker2: { model: { deltas: false }, turns: [{ text: 'one two', invoke: 'ctx.manager.finish(1)' }] } });
  rt2.root.globals.internals.progress = Object.assign((e: { type: string }) => void quiet.push(e), { deltas: true });
  await rt2.invoke('talker2', {});
  assert.equal(quiet.filter((e) => e.delta === true).length, 0);
});
