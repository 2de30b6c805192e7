// `--set KEY.PATH=VALUE` (SPEC §12): VALUE parsed as YAML, landing in the cascade's CLI level.
import { createRequire } from 'node:module';
import { AgentAppsError } from '../kernel/errors.ts';
import { isPlainObject, setPath } from '../kernel/path.ts';
import type { JsonObject } from '../kernel/types.ts';

// yaml is loaded when first needed, not at start-up.
const yaml = (): typeof import('yaml') => createRequire(import.meta.url)('yaml') as typeof import('yaml');

export function parseOverrides(items: string[]): JsonObject {
  const out: JsonObject = {};
  for (const item of items) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new AgentAppsError('E_USAGE', `--set expects KEY.PATH=VALUE, got '${item}'`);
    const key = item.slice(0, eq).trim();
    if (!/^[$A-Za-z0-9_-]+(\.[$A-Za-z0-9_-]+)*$/.test(key)) throw new AgentAppsError('E_USAGE', `--set: '${key}' is not a dotted key path`);
    let value: unknown;
    try {
      value = yaml().parse(item.slice(eq + 1));
    } catch (err) {
      throw new AgentAppsError('E_USAGE', `--set ${key}: value is not valid YAML (${(err as Error).message.split('\n')[0]!.replace(/:$/, '')})`);
    }
    setPath(out, key, value === undefined ? null : value);
  }
  return out;
}

export function mergeOverrides(a: JsonObject, b: JsonObject): JsonObject {
  const out: JsonObject = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = isPlainObject(out[k]) && isPlainObject(v) ? mergeOverrides(out[k] as JsonObject, v) : v;
  return out;
}
