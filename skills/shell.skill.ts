import { spawn } from 'node:child_process';
import path from 'node:path';
import { AgentAppsError, type Context } from 'agent-apps';

export const frontmatter = {
  name: 'shell',
  description: 'Runs a shell command in the working directory and returns { code, stdout, stderr }. Hidden: name it in allowed-tools to use it.',
  metadata: {
    visibility: 'hidden',
    tags: ['process'],
    params: {
      type: 'object',
      properties: {
        command: { type: 'string' },
        cwd: { type: 'string', description: 'Relative to the working directory.' },
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
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', args.command], { cwd, stdio: ['pipe', 'pipe', 'pipe'], signal: ctx.run.signal, timeout: args.timeoutMs, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => { if (stdout.length < LIMIT) stdout += d; });
    child.stderr.setEncoding('utf8').on('data', (d: string) => { if (stderr.length < LIMIT) stderr += d; });
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (err.name === 'AbortError') reject(new AgentAppsError('E_ABORTED', `shell: '${args.command}' was aborted`));
      else reject(new AgentAppsError('E_SHELL', `shell: cannot run '${args.command}' (${err.code ?? err.message})`));
    });
    child.on('close', (code, signal) => {
      if (signal === 'SIGKILL' && code === null) stderr += `\n[killed after ${args.timeoutMs} ms]`;
      resolve({ code, stdout, stderr });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(args.input ?? '');
  });
}
