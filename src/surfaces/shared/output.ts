// What the CLI prints and how it exits (docs/cli.md): stdout carries only the result; errors are
// one line on stderr (stack only with --debug); exit codes 0 / 1 / 2 / 3 / 130 / 143.
import { AgentAppsError } from '../../core/errors.ts';
import { escapeControl } from './escape.ts';
import { safeJsonReplacer } from '../../core/json.ts';
import { redactString } from '../../core/redact.ts';

// The exit-code map lives beside the error codes (core/errors.ts); re-exported for the surfaces.
export { EXIT, exitCodeFor } from '../../core/errors.ts';

export function formatResult(value: unknown, json: boolean): string | undefined {
  if (value === undefined) return json ? 'null' : undefined;
  if (json) return JSON.stringify(value, safeJsonReplacer()) ?? 'null';
  if (typeof value === 'string') return value;
  return JSON.stringify(value, safeJsonReplacer(), 2) ?? String(value);
}


export interface Painter {
  red(s: string): string;
  yellow(s: string): string;
  dim(s: string): string;
  bold(s: string): string;
  cyan(s: string): string;
  green(s: string): string;
}

/** No colour: text for a file or a web page. */
export const plain: Painter = { red: (s) => s, yellow: (s) => s, dim: (s) => s, bold: (s) => s, cyan: (s) => s, green: (s) => s };

/**
 * chalk, honouring NO_COLOR (set and non-empty, per no-color.org: off everywhere), --no-color, and
 * FORCE_COLOR as chalk reads it (0 or false: off; 1, 2, 3, true or empty: on, even without a TTY);
 * otherwise colour only on a TTY. Loaded only when colour is on.
 */
export async function painter(stream: NodeJS.WriteStream, enabled: boolean, env: NodeJS.ProcessEnv = process.env): Promise<Painter> {
  const level = colorLevel(stream, enabled, env);
  if (!level) return plain;
  const { Chalk } = await import('chalk');
  const c = new Chalk({ level });
  return { red: c.red, yellow: c.yellow, dim: c.dim, bold: c.bold, cyan: c.cyan, green: c.green };
}

/** The chalk level for `stream` (0: no colour) by the rules of `painter`. */
export function colorLevel(stream: { isTTY?: boolean }, enabled: boolean, env: NodeJS.ProcessEnv = process.env): 0 | 1 | 2 | 3 {
  if (!enabled || env.NO_COLOR) return 0;
  const force = env.FORCE_COLOR;
  if (force !== undefined) {
    if (force === '0' || force === 'false') return 0;
    if (/^\d+$/.test(force)) return Math.min(Number(force), 3) as 0 | 1 | 2 | 3;
    return 1;
  }
  return stream.isTTY ? 1 : 0;
}

/**
 * An error as the CLI states it: its code (none for commander's own or an error without one) and
 * its message on one line, with no terminal control from text that may quote model or agent
 * output (docs/security.md), and no credential it quotes (a URL's password, a token: docs/security.md,
 * "Secrets"). The stderr line and stream-json's result say the same.
 */
export function describeError(err: unknown): { code: string | undefined; message: string } {
  const e = err as { code?: string; message?: string } | null | undefined;
  const code = typeof e?.code === 'string' && !e.code.startsWith('commander.') ? e.code : undefined;
  let text = withEnumValues(String(e?.message ?? err), err);
  // Node's system errors start with their code (`ENOENT: no such file …`): print it once.
  if (code && text.startsWith(`${code}: `)) text = text.slice(code.length + 2);
  return { code, message: escapeControl(redactString(text.replace(/\s*\n\s*/g, ' ').trim())) };
}

export function formatError(err: unknown, opts: { debug: boolean; paint: Painter }): string {
  const e = err as { code?: string; message?: string; stack?: string };
  const { code, message } = describeError(err);
  let line = `${opts.paint.red('error')}${code ? ` ${opts.paint.dim(`[${escapeControl(code)}]`)}` : ''}: ${message}`;
  // Nothing close enough to suggest: say where to look instead.
  if (code === 'E_TOOL_NOT_FOUND' && !(err as { suggestions?: string[] }).suggestions?.length && !/\(/.test(message)) line += opts.paint.dim(' — `agent-apps list` shows the skills on the search paths');
  // Lines that belong under the message (a drifted cassette's diff), escaped line by line.
  const detail = (err as { detail?: unknown } | null)?.detail;
  if (typeof detail === 'string' && detail) line += '\n' + detail.replace(/\n$/, '').split('\n').map((l) => escapeControl(redactString(l), { newlines: true })).join('\n');
  if (opts.debug && e?.stack) {
    // The stack starts with the message, which may span lines; the frames start at the first `at`.
    const lines = e.stack.split('\n');
    const first = lines.findIndex((l) => /^\s+at /.test(l));
    if (first >= 0) line += '\n' + opts.paint.dim(lines.slice(first).join('\n'));
  }
  // A plain Error (a skill's `throw new Error()`, E_SKILL since the kernel gave it that code):
  // where it was thrown is in the stack.
  if (!(err instanceof AgentAppsError) && (!code || code === 'E_SKILL') && !opts.debug && err instanceof Error) line += opts.paint.dim('  (run with --debug for the stack)');
  return line;
}

/**
 * ajv says "must be equal to one of the allowed values" without the values: name them, from the
 * error's own list (`/mode must be one of: fast, slow`), for args and configuration alike.
 */
function withEnumValues(message: string, err: unknown): string {
  const errors = (err as { errors?: unknown })?.errors;
  if (!Array.isArray(errors)) return message;
  for (const item of errors as { keyword?: unknown; instancePath?: unknown; message?: unknown; params?: { allowedValues?: unknown } }[]) {
    if (item?.keyword !== 'enum' || !Array.isArray(item.params?.allowedValues) || typeof item.message !== 'string') continue;
    const where = (typeof item.instancePath === 'string' && item.instancePath) || '(root)';
    const values = item.params.allowedValues.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ');
    message = message.replace(`${where} ${item.message}`, `${where} must be one of: ${values}`);
  }
  return message;
}
