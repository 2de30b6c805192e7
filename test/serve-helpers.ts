// Helpers for the `agent-apps serve` suites (docs/serve.md): real `bin/agent-apps.js serve`
// processes on 127.0.0.1, reached with fetch. Every process started here is stopped when its
// owner ends.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BIN, baseEnv, tempDir, until, type Owner } from './mcp-server-helpers.ts';

export { tempDir, until, type Owner };

export interface ServeProcess {
  child: ChildProcessWithoutNullStreams;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `agent-apps serve ARGS` in `cwd` as a bare process. */
export function spawnServe(t: Owner, cwd: string, args: string[], env: Record<string, string | undefined> = {}): ServeProcess {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], { cwd, env: baseEnv({ AGENT_APPS_SERVE_TOKEN: undefined, ...env }), stdio: 'pipe' });
  let stderr = '';
  child.stdout.resume();
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  t.after(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  });
  return { child, stderr: () => stderr, exited };
}

/** `serve --http 127.0.0.1:0 ARGS`: resolves once it listens, with its base URL. */
export async function startServe(t: Owner, cwd: string, args: string[] = [], env: Record<string, string | undefined> = {}): Promise<ServeProcess & { url: string }> {
  const proc = spawnServe(t, cwd, ['--http', '127.0.0.1:0', ...args], env);
  const url = await Promise.race([
    until(() => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(proc.stderr())?.[1], 20_000, 'the server to listen'),
    proc.exited.then((e) => Promise.reject(new Error(`serve exited (${e.code}): ${proc.stderr()}`))),
  ]);
  return { ...proc, url };
}

/** A workspace: `skills/main.md` with `main` as its metadata (YAML text), and code skills. */
export function workspace(t: Owner, main: string, skills: Record<string, { meta?: string; body: string }>): string {
  const ws = tempDir(t, 'agent-apps-serve-');
  fs.mkdirSync(path.join(ws, 'skills'));
  fs.writeFileSync(path.join(ws, 'skills', 'main.md'), `---\nname: main\ndescription: The workspace's main.\nmetadata:\n${main.replace(/^/gm, '  ')}\n---\nThe main.\n`);
  for (const [name, s] of Object.entries(skills)) {
    fs.writeFileSync(path.join(ws, 'skills', `${name}.skill.ts`), `export const frontmatter = { name: '${name}', description: 'The ${name} skill.', metadata: ${s.meta ?? '{}'} };\nexport default ${s.body};\n`);
  }
  return ws;
}
