// The first hour with the CLI (issue "The first hour"), the parts that need no terminal: real
// processes of bin/agent-apps.js in a workspace `agent-apps init` made.
// What the help shows is what that workspace has; a SIGTERM's notice names a SIGTERM.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BIN } from './pty-helpers.ts';

let ws: string;
const HOME = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-firsthour-home-'));
process.on('exit', () => fs.rmSync(HOME, { recursive: true, force: true }));

function env(): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, AGENT_APPS_HOME: HOME, AGENT_APPS_AGENTS_HOME: path.join(HOME, 'agents'), AWS_EC2_METADATA_DISABLED: 'true' };
  for (const key of Object.keys(e)) if (/^(AWS_ACCESS|AWS_SECRET|AWS_SESSION|AWS_PROFILE|OPENAI_|ANTHROPIC_)/.test(key)) delete e[key];
  for (const key of ['AGENT_APPS_PATH', 'NO_COLOR', 'FORCE_COLOR', 'NODE_OPTIONS', 'NODE_TEST_CONTEXT', 'CI']) delete e[key];
  return e;
}

function cli(args: string[], cwd = ws, input = ''): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, env: env(), encoding: 'utf8', input, timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

before(() => {
  const parent = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-firsthour-')));
  process.on('exit', () => fs.rmSync(parent, { recursive: true, force: true }));
  const r = cli(['init', 'app'], parent);
  assert.equal(r.status, 0, r.stderr);
  ws = path.join(parent, 'app');
});

/** The `$ …` lines of a help text's Examples section, without their notes. */
function examples(help: string): string[] {
  const at = help.search(/^Examples\b.*:$/m);
  assert.ok(at >= 0, `an Examples section in:\n${help}`);
  const out: string[] = [];
  for (const line of help.slice(at).split('\n').slice(1)) {
    if (!line.trim()) break;
    const m = /^\s*\$ (.*?)(?:\s{2,}.*|\s+#.*)?$/.exec(line);
    if (m) out.push(m[1]!);
  }
  return out;
}

/** Splits a command line on spaces, keeping quoted words whole (enough for the help's examples). */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

/** The skill an example's agent-apps command names (run / debug / describe), or undefined. */
function skillOf(example: string): { command: string; skill: string; args: string[] } | undefined {
  const segment = example.split(/\s\|\s|&&/).find((s) => s.trim().startsWith('agent-apps '));
  if (!segment) return undefined;
  const tokens = words(segment).slice(1);
  // Global options before the command, with their values (--set KEY=VALUE).
  while (tokens[0]?.startsWith('-')) tokens.splice(0, tokens[0] === '--set' || tokens[0] === '--cwd' || tokens[0] === '--path' ? 2 : 1);
  const command = tokens.shift();
  if (!command || !['run', 'debug', 'describe'].includes(command)) return undefined;
  const skill = tokens[0] && !tokens[0].startsWith('-') ? tokens.shift()! : 'main';
  return { command, skill, args: tokens };
}

test('the help examples of agent-apps, run and debug name skills a workspace from agent-apps init has (its own or the library’s), and the ones that need no terminal, network or worker run there', () => {
  const listed = cli(['list', '--all', '--json']);
  assert.equal(listed.status, 0, listed.stderr);
  const names = new Set((JSON.parse(listed.stdout) as { name: string }[]).map((s) => s.name));
  const seen: string[] = [];
  for (const help of [['--help'], ['run', '--help'], ['debug', '--help']]) {
    const r = cli(help);
    assert.equal(r.status, 0, r.stderr);
    for (const example of examples(r.stdout)) {
      const named = skillOf(example);
      if (!named) continue;
      seen.push(example);
      if (named.skill.includes('/')) assert.ok(fs.existsSync(path.join(ws, named.skill)), `${help.join(' ')}: ${example} — no file ${named.skill} in an init workspace`);
      else assert.ok(names.has(named.skill), `${help.join(' ')}: ${example} — an init workspace has no skill '${named.skill}'`);
      // Run it, unless it asks a person, needs a worker, a model server or a run that died (--resume), or is a pipeline.
      if (/--remote|--resume|\bask\b|baseURL|\|/.test(example) || named.command === 'describe') continue;
      const out = cli(words(example.replace(/^agent-apps /, '')).map((w) => w));
      assert.equal(out.status, 0, `${example}: ${out.stderr}`);
    }
  }
  assert.ok(seen.length >= 8, `examples checked: ${seen.join('; ')}`);
});

test('SIGTERM: the notice says terminated (SIGTERM) and does not speak of Ctrl-C again; exit 143', async () => {
  fs.writeFileSync(path.join(ws, 'skills', 'wait.skill.mjs'), `export const frontmatter = { name: 'wait', description: 'Waits until cancelled.' };
export default async function wait(ctx) {
  ctx.manager.log({ level: 'warn', text: 'waiting' });
  await new Promise((resolve) => ctx.run.signal.addEventListener('abort', resolve, { once: true }));
}
`);
  const child = spawn(process.execPath, [BIN, 'run', 'wait'], { cwd: ws, env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    const before = stderr;
    stderr += d;
    if (!before.includes('waiting') && stderr.includes('waiting')) child.kill('SIGTERM');
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(code, 143, stderr);
  assert.match(stderr, /^terminated \(SIGTERM\) — shutting down \(a SIGINT exits at once\)$/m);
  assert.doesNotMatch(stderr, /Ctrl-C/);
  assert.equal(stdout, '');
});
