import { spawn } from 'node:child_process';
import path from 'node:path';
import { AbortError, AgentAppsError, type Context } from 'agent-apps';

export const frontmatter = {
  name: 'shell',
  description: 'Runs a shell command in the working directory and returns { code, stdout, stderr }. Hidden: name it in allowed-tools to use it.',
  metadata: {
    visibility: 'hidden',
    tags: ['process'],
    params: {
      type: 'object',
      properties: {
        command: { type: 'string', 'x-command': true },
        cwd: { type: 'string', 'x-path': true, description: 'Relative to the working directory.' },
        timeoutMs: { type: 'integer', minimum: 1, default: 60000 },
        input: { type: 'string', description: 'Written to the command’s stdin.' },
      },
      required: ['command'],
      additionalProperties: false,
    },
    returns: { type: 'object', properties: { code: { type: ['integer', 'null'] }, stdout: { type: 'string' }, stderr: { type: 'string' } }, required: ['code', 'stdout', 'stderr'] },
  },
};

const LIMIT = 10 * 1024 * 1024;

export default function shell(ctx: Context, args: { command: string; cwd?: string; timeoutMs: number; input?: string }) {
  const cwd = path.resolve(ctx.locals.config.cwd, args.cwd ?? '.');
  const signal = ctx.run.signal;
  if (signal.aborted) return Promise.reject(new AbortError(signal.reason));
  return new Promise((resolve, reject) => {
    // Its own process group, so that a timeout or an abort kills the command's children too
    // (`sh -c 'sleep 5'` leaves `sleep` holding the pipes if only `sh` is killed).
    const child = spawn('/bin/sh', ['-c', args.command], { cwd, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {}
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, args.timeoutMs);
    signal.addEventListener('abort', killGroup, { once: true });
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', killGroup);
    };
    child.stdout.setEncoding('utf8').on('data', (d: string) => { if (stdout.length < LIMIT) stdout += d; });
    child.stderr.setEncoding('utf8').on('data', (d: string) => { if (stderr.length < LIMIT) stderr += d; });
    child.on('error', (err: NodeJS.ErrnoException) => {
      done();
      reject(new AgentAppsError('E_SHELL', `shell: cannot run '${args.command}' (${err.code ?? err.message})`));
    });
    child.on('close', (code) => {
      done();
      if (signal.aborted) return reject(new AbortError(signal.reason));
      if (timedOut) stderr += `\n[killed after ${args.timeoutMs} ms]`;
      resolve({ code: timedOut ? null : code, stdout, stderr });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(args.input ?? '');
  });
}
