// Real processes of bin/agent-apps.js for the CLI suites: throw-away folders removed after the
// file's tests, an environment that never sees the developer's skills, colours, NODE_OPTIONS or
// model credentials, and a run's exit code, stdout and stderr kept apart.
import { after } from 'node:test';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BIN = path.join(REPO, 'bin', 'agent-apps.js');

const temps: string[] = [];
after(() => {
  for (const dir of temps) fs.rmSync(dir, { recursive: true, force: true });
});

/** An empty folder (real path), removed when the test file ends. */
export function tempDir(prefix = 'agent-apps-cli-'): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  temps.push(dir);
  return dir;
}

/** A folder built from `relative path → text`. */
export function folder(files: Record<string, string>, prefix?: string): string {
  const dir = tempDir(prefix);
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

const HOME = tempDir('agent-apps-cli-home-');

/** The process environment for a run: homes in a temp folder, `extra` set (undefined deletes). */
export function cliEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  // AGENT_APPS_TRUST_WORKSPACE: the throw-away workspaces are the tests' own (test/helpers.ts says why).
  const env: NodeJS.ProcessEnv = { ...process.env, AGENT_APPS_HOME: path.join(HOME, 'agent-apps'), AGENT_APPS_AGENTS_HOME: path.join(HOME, 'agents'), AGENT_APPS_TRUST_WORKSPACE: '1' };
  for (const key of Object.keys(env)) if (/^(AWS_|OPENAI_|ANTHROPIC_)/.test(key)) delete env[key];
  for (const key of ['AGENT_APPS_PATH', 'NO_COLOR', 'FORCE_COLOR', 'NODE_OPTIONS', 'NODE_TEST_CONTEXT']) delete env[key];
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in `cwd` with no stdin (or `input`) and waits for it to close. */
export function cli(args: string[], cwd: string, opts: { env?: Record<string, string | undefined>; input?: string } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: cliEnv(opts.env), stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

/** A CLI process left running (`agent-apps worker`, …): its stderr so far, and its exit. */
export interface Running {
  child: ChildProcess;
  stderr(): string;
  exited: Promise<number | null>;
}

/** Starts the CLI in `cwd` and leaves it running; it is in `live` until it exits (an after() kills what is left there). */
export function startCli(args: string[], cwd: string, live: Set<ChildProcess>): Running {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env: cliEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  live.add(child);
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => {
    live.delete(child);
    resolve(code);
  }));
  return { child, stderr: () => err, exited };
}
