// `--token-file PATH` for the surfaces that take a bearer token (`mcp serve --http`, `serve`):
// tokens come from a file or the environment, not the command line (docs/security.md, "Secrets").
import fs from 'node:fs';
import { AgentAppsError } from '../../core/errors.ts';

/**
 * The file's text without surrounding whitespace (its trailing newline). Messages never put a word
 * right after `--token`: the CLI's output redaction would hide it.
 */
export function readTokenFile(file: string): string {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new AgentAppsError('E_USAGE', `--token-file: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const token = text.trim();
  if (!token) throw new AgentAppsError('E_USAGE', `--token-file: ${file} is empty`);
  return token;
}
