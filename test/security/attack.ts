// The red-team harness (issue 7, SPEC §15): a throw-away workspace whose agent skills replay
// attack code from cassettes, through the real runtime, sandbox and pipeline — or through the
// public CLI. Every attempt catches its own error, so one run reports many: name → 'ok:<json>'
// or '<code>: <message>'.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { TestContext } from 'node:test';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../src/index.ts';
import { writeAgentSkills, type AgentSkillSpec } from '../agent-helpers.ts';
import { REPO, tempDir, writeFiles } from '../helpers.ts';

export const BIN = path.join(REPO, 'bin', 'agent-apps.js');

/** A code skill that counts words, for agents to call legitimately. */
export const WORDCOUNT = `export const frontmatter = { name: 'wordcount', description: 'Counts words.', metadata: { params: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, returns: { type: 'integer' } } };
export default (ctx, { text }) => text.split(/\\s+/).filter(Boolean).length;
`;

/**
 * An agent skill whose code calls `shell` with `echo gated` under `ask-tools`, so that the call
 * waits at an approval gate (the remote approval suites: test/remote-approval.test.ts, serve-*).
 */
export const GATED_ECHO: AgentSkillSpec = {
  'allowed-tools': 'wordcount',
  metadata: { 'ask-tools': 'shell(command=echo *)' },
  turns: [{ invoke: "const r = await ctx.manager.invoke('shell', { command: 'echo gated' });\nctx.manager.finish(r.stdout.trim());" }],
};

/** Agent code that runs each attempt and finishes with the map of outcomes. */
export function attempts(list: Record<string, string>, prelude = ''): string {
  const lines = Object.entries(list).map(
    ([name, code]) =>
      `try { out[${JSON.stringify(name)}] = 'ok:' + JSON.stringify(await (async () => { ${code} })()); } catch (e) { out[${JSON.stringify(name)}] = (e.code ?? 'no code') + ': ' + e.message; }`,
  );
  return [prelude, 'const out = {};', ...lines, 'ctx.manager.finish(out);'].join('\n');
}

/** A workspace (its own root: a `skills/` folder) holding `skills` as agent skills and `files`. */
export function attackWorkspace(t: TestContext, skills: Record<string, AgentSkillSpec>, files: Record<string, string> = {}): string {
  const ws = tempDir(t, 'agent-apps-attack-');
  fs.mkdirSync(path.join(ws, 'skills'));
  writeFiles(ws, { 'skills/wordcount.skill.mjs': WORDCOUNT, ...files });
  writeAgentSkills(path.join(ws, 'skills'), skills);
  return ws;
}

export async function runtimeIn(t: TestContext, ws: string, opts: RuntimeOptions = {}): Promise<Runtime> {
  const rt = await createRuntime({ cwd: ws, ...opts });
  t.after(() => rt.close());
  return rt;
}

/** Runs the attempts as the agent skill `attacker` (with `spec`) and returns the outcome map. */
export async function tryAll(t: TestContext, list: Record<string, string>, spec: Omit<AgentSkillSpec, 'turns'> = {}, opts: { files?: Record<string, string>; prelude?: string } = {}) {
  const ws = attackWorkspace(t, { attacker: { ...spec, turns: [{ invoke: attempts(list, opts.prelude) }] } }, opts.files);
  const rt = await runtimeIn(t, ws);
  const out = (await rt.invoke('attacker', {})) as Record<string, string>;
  return { out, ws, rt };
}

/** The error code of an outcome ('ok' for a success). */
export const code = (outcome: string | undefined) => String(outcome).split(':')[0];

/** Runs the public CLI in `cwd`; never inherits the developer's skills or colours. */
export function cli(args: string[], cwd: string, env: Record<string, string> = {}) {
  const home = fs.mkdtempSync(path.join(cwd, '.home-'));
  const e: NodeJS.ProcessEnv = { ...process.env, AGENT_APPS_HOME: home, ...env };
  for (const key of ['AGENT_APPS_PATH', 'NO_COLOR', 'FORCE_COLOR', 'NODE_OPTIONS', 'NODE_TEST_CONTEXT']) delete e[key];
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, env: e, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Module source that leaves `marker` behind when it is imported: proof that host code ran. */
export function markerModule(marker: string): string {
  return `import fs from 'node:fs'; fs.writeFileSync(${JSON.stringify(marker)}, 'pwned'); export default () => 'pwned';`;
}

export function inlineRef(source: string): string {
  return `inline://code,${encodeURIComponent(source)}`;
}

/** True while a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function until(check: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return check();
}
