// `--set KEY.PATH=VALUE` (docs/cli.md): VALUE parsed as YAML, landing in the cascade's CLI level.
import { AgentAppsError } from '../../core/errors.ts';
import { isPlainObject, setPath } from '../../core/path.ts';
import type { JsonObject } from '../../core/types.ts';
import { yaml } from '../../core/yaml.ts';
import { findUnsafeKey, UNSAFE_KEYS } from './unsafe-keys.ts';

export function parseOverrides(items: string[]): JsonObject {
  const out: JsonObject = {};
  for (const item of items) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new AgentAppsError('E_USAGE', `--set expects KEY.PATH=VALUE, got '${item}'`);
    const key = item.slice(0, eq).trim();
    if (!/^[$A-Za-z0-9_-]+(\.[$A-Za-z0-9_-]+)*$/.test(key)) throw new AgentAppsError('E_USAGE', `--set: '${key}' is not a dotted key path`);
    // A prototype path is a usage error of the command line (exit 2), not a failed run.
    const unsafe = key.split('.').find((part) => UNSAFE_KEYS.has(part));
    if (unsafe !== undefined) throw new AgentAppsError('E_USAGE', `--set: '${key}' is not a settable key path ('${unsafe}' would reach a prototype)`);
    let value: unknown;
    try {
      value = yaml().parse(item.slice(eq + 1));
    } catch (err) {
      throw new AgentAppsError('E_USAGE', `--set ${key}: value is not valid YAML (${(err as Error).message.split('\n')[0]!.replace(/:$/, '')})`);
    }
    const inValue = findUnsafeKey(value);
    if (inValue !== undefined) throw new AgentAppsError('E_USAGE', `--set ${key}: the value holds the key '${key}.${inValue}', which could set a prototype`);
    setPath(out, key, value === undefined ? null : value);
  }
  return out;
}

export function mergeOverrides(a: JsonObject, b: JsonObject): JsonObject {
  const out: JsonObject = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const merged = Object.hasOwn(out, k) && isPlainObject(out[k]) && isPlainObject(v) ? mergeOverrides(out[k] as JsonObject, v) : v;
    // Define, not assign: a key named __proto__ stays data.
    Object.defineProperty(out, k, { value: merged, writable: true, enumerable: true, configurable: true });
  }
  return out;
}
