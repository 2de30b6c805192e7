// Reading a gateway's entry under `gateways:` (docs/serve.md, "Gateways"): a malformed key is an
// E_CONFIG naming `gateways.NAME.key` (and the main's file), so that the line serve prints says
// what to fix; a secret is named by the environment variable that holds it, never written there.
import { ConfigurationError } from '../../core/errors.ts';
import type { GatewayContext } from './gateway.ts';

export interface Entry {
  /** A non-empty string under `key`, else undefined. */
  str(key: string): string | undefined;
  /** The E_CONFIG for `gateways.NAME.key`. */
  fail(key: string, message: string): ConfigurationError;
  /** The value of the environment variable `key` names (`secretEnv: GH_SECRET`); E_CONFIG when either is missing. */
  secret(key: string, what: string): string;
}

export function entryOf(ctx: Pick<GatewayContext, 'config' | 'place'>): Entry {
  const at = (key: string) => ({ ...(ctx.place.file ? { file: ctx.place.file } : {}), key: `${ctx.place.key}.${key}` });
  const fail = (key: string, message: string) => new ConfigurationError(`${ctx.place.key}.${key}: ${message}`, { place: at(key) });
  const str = (key: string) => {
    const v = ctx.config[key];
    return typeof v === 'string' && v !== '' ? v : undefined;
  };
  return {
    str,
    fail,
    secret(key, what) {
      const env = str(key);
      if (!env) throw fail(key, `name the environment variable that holds ${what}`);
      const value = process.env[env];
      if (value === undefined || value === '') throw fail(key, `the environment variable ${env} is not set: it holds ${what}`);
      return value;
    },
  };
}
