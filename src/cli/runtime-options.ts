// Global options (SPEC §12) → createRuntime options, shared by every subcommand.
import path from 'node:path';
import { AgentAppsError } from '../kernel/errors.ts';
import type { LogLevel } from '../kernel/types.ts';
import { mergeOverrides, parseOverrides } from './overrides.ts';
import type { RuntimeOptions } from '../kernel/runtime.ts';

export interface GlobalOptions {
  cwd?: string;
  path?: string[];
  set?: string[];
  debug?: boolean;
  profile?: boolean;
  logLevel?: string;
  json?: boolean;
  color?: boolean;
  shutdownGrace?: string;
}

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error'];

export function runtimeOptions(g: GlobalOptions): RuntimeOptions & { logLevel?: LogLevel } {
  const cwd = path.resolve(g.cwd ?? process.cwd());
  let overrides = parseOverrides(g.set ?? []);
  if (g.debug) overrides = mergeOverrides(overrides, { debug: true });
  if (g.profile) overrides = mergeOverrides(overrides, { profile: true });
  if (g.logLevel !== undefined && !LEVELS.includes(g.logLevel)) {
    throw new AgentAppsError('E_USAGE', `--log-level must be one of ${LEVELS.join(', ')} (got '${g.logLevel}')`);
  }
  return { cwd, paths: g.path ?? [], overrides, logLevel: g.logLevel as LogLevel | undefined };
}
