/**
 * Where the event bus and the work queues live (docs/scale.md): `events: { backend, url, namespace,
 * ackWaitMs, bufferSize, auth, tls, signingKeyEnv }` in the `main` of a search root, or
 * `AGENT_APPS_EVENTS` in the environment (`nats://host:port`, several comma-separated, or
 * `memory`), which wins.
 *
 * Reading it never loads NATS: this file is plain data and checks, so the in-memory default
 * costs nothing more than one look at the root mains, the same look the `event` routes take.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AgentAppsError, ConfigurationError } from '../core/errors.ts';
import { isPlainObject } from '../core/path.ts';
import type { Context } from '../core/types.ts';
import { interpolate } from '../kernel/interpolate.ts';

/**
 * How the client proves who it is to the server (docs/scale.md, "Authentication and TLS"): one
 * of a token, a user and password, an nkey seed file or a credentials (JWT) file.
 */
export type NatsAuth =
  | { kind: 'token'; token: string }
  | { kind: 'user'; user: string; pass: string }
  | { kind: 'nkey'; seedFile: string }
  | { kind: 'creds'; credsFile: string };

/** TLS files (absolute paths): the CA that signed the server's certificate, and a client certificate. */
export interface NatsTls {
  ca?: string;
  cert?: string;
  key?: string;
}

export interface EventsConfig {
  backend: 'memory' | 'nats';
  /** `nats://…` — one server or several, comma-separated. */
  url?: string;
  /** The token after `agent-apps.` in every subject: separates projects on one server. */
  namespace: string;
  /** How long an event or request may stay un-acked before JetStream redelivers it. */
  ackWaitMs: number;
  /** Per-topic retention on the server (the replay buffer); default 1000. */
  bufferSize?: number;
  /** Credentials for the server (never printed): `events.auth`, or the user / token of the URL. */
  auth?: NatsAuth;
  /** `events.tls`: CA and client certificate files; a `tls://` URL needs TLS without files. */
  tls?: NatsTls;
  /**
   * `events.signingKeyEnv`: the environment variable holding the key that signs work requests
   * and results (signing.ts); `signingKey` is its value, read when the config is.
   */
  signingKeyEnv?: string;
  signingKey?: string;
  /** Where the setting came from, for error messages: a file and key, or the environment variable. */
  from: string;
}

export const DEFAULT_NAMESPACE = 'default';
export const DEFAULT_ACK_WAIT_MS = 30_000;
/** A subject token: what a namespace or a work queue's name may be. */
const TOKEN = /^[A-Za-z0-9_-]{1,64}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** The shortest signing key accepted: a guessable key would sign anyone's requests. */
const MIN_KEY_CHARS = 16;
export const ENV = 'AGENT_APPS_EVENTS';

/** The runtime's events config, read once (the root mains, then the environment). */
export function eventsConfig(ctx: Context): Promise<EventsConfig> {
  const internals = ctx.globals.internals;
  internals.eventsConfig ??= readConfig(ctx);
  return internals.eventsConfig;
}

async function readConfig(ctx: Context): Promise<EventsConfig> {
  const kernel = ctx.globals.internals.kernel;
  let config: EventsConfig = { backend: 'memory', namespace: DEFAULT_NAMESPACE, ackWaitMs: DEFAULT_ACK_WAIT_MS, from: 'default' };
  for (const dir of kernel.base.paths) {
    if (dir === kernel.registry.library) continue;
    const main = kernel.registry.root(dir).mains.get(dir);
    if (!main) continue;
    const tool = await kernel.registry.load(main);
    const raw = tool.metadata.events;
    if (raw === undefined) continue;
    // `${env.NATS_PASS}` and the like, as the cascade would interpolate them for this file.
    const baseDir = path.dirname(main.file);
    const value = interpolate(raw, { dir: baseDir, root: dir, workspace: ctx.locals.config.workspace, cwd: ctx.locals.config.cwd, name: tool.name }, { file: main.file, key: 'events' });
    config = parseEventsConfig(value, `${main.file} (events)`, baseDir);
    break;
  }
  const env = process.env[ENV]?.trim();
  if (env) {
    if (env === 'memory') config = { ...config, backend: 'memory', from: ENV };
    else if (/^(nats|tls|wss?):\/\//.test(env)) {
      // Credentials in the URL (nats://user:pass@host, nats://token@host) win over events.auth;
      // the URL kept and printed is the one without them.
      const { url, auth } = splitCredentials(env, ENV);
      config = { ...config, backend: 'nats', url, ...(auth ? { auth } : {}), from: ENV };
    } else throw new AgentAppsError('E_CONFIG', `${ENV}: expected nats://HOST:PORT or 'memory', got ${JSON.stringify(env)}`);
  }
  return config;
}

/**
 * The URL(s) without user, password or token, and those as `auth` (undefined when none is in the
 * URL). Several servers must carry the same credentials: the client has one set for all.
 */
export function splitCredentials(value: string, place: string): { url: string; auth?: NatsAuth } {
  const fail = (msg: string): never => {
    throw new ConfigurationError(`${place}: ${msg}`);
  };
  let auth: NatsAuth | undefined;
  let shown: string | undefined;
  const urls = value.split(',').map((s) => s.trim()).map((s) => {
    let u: URL;
    try {
      u = new URL(s);
    } catch {
      return fail(`not a URL: ${JSON.stringify(s.replace(/\/\/[^@/]*@/, '//…@'))}`);
    }
    if (!u.username && !u.password) return s;
    const user = decodeURIComponent(u.username);
    const pass = decodeURIComponent(u.password);
    const mine: NatsAuth = pass || s.slice(s.indexOf('//') + 2).split('@')[0]!.includes(':') ? { kind: 'user', user, pass } : { kind: 'token', token: user };
    const key = JSON.stringify(mine);
    if (shown !== undefined && shown !== key) fail('the servers carry different credentials; give them once (events.auth)');
    shown = key;
    auth = mine;
    u.username = '';
    u.password = '';
    return u.toString();
  });
  return { url: urls.join(','), ...(auth ? { auth } : {}) };
}

const KEYS = ['backend', 'url', 'namespace', 'ackWaitMs', 'bufferSize', 'auth', 'tls', 'signingKeyEnv'];

/**
 * Checks an `events:` value; `place` names the file and key in every error. Relative file paths
 * (auth.nkeySeedFile, auth.credsFile, tls.*) are resolved against `baseDir` (the main's folder).
 */
export function parseEventsConfig(value: unknown, place: string, baseDir: string = process.cwd()): EventsConfig {
  const fail = (msg: string): never => {
    throw new ConfigurationError(`${place}: ${msg}`);
  };
  if (!isPlainObject(value)) fail(`must be an object like { backend: nats, url: nats://127.0.0.1:4222 }, got ${JSON.stringify(value)}`);
  const v = value as Record<string, unknown>;
  for (const key of Object.keys(v)) {
    if (!KEYS.includes(key)) fail(`unknown key '${key}' (${KEYS.join(', ')})`);
  }
  const backend = v.backend ?? 'memory';
  if (backend !== 'memory' && backend !== 'nats') fail(`backend must be 'memory' or 'nats', got ${JSON.stringify(backend)}`);
  const config: EventsConfig = { backend: backend as 'memory' | 'nats', namespace: DEFAULT_NAMESPACE, ackWaitMs: DEFAULT_ACK_WAIT_MS, from: place };
  if (v.url !== undefined) {
    if (typeof v.url !== 'string' || !/^(nats|tls|wss?):\/\//.test(v.url)) fail(`url must be nats://HOST:PORT, got ${JSON.stringify(typeof v.url === 'string' ? v.url.replace(/\/\/[^@/]*@/, '//…@') : v.url)}`);
    const { url, auth } = splitCredentials(v.url as string, `${place} url`);
    config.url = url;
    if (auth) config.auth = auth;
  }
  if (v.auth !== undefined) {
    if (config.auth) fail('give the credentials once: in the url or in auth, not both');
    config.auth = parseAuth(v.auth, `${place} auth`, baseDir);
  }
  if (v.tls !== undefined) config.tls = parseTls(v.tls, `${place} tls`, baseDir);
  if (v.signingKeyEnv !== undefined) {
    const name = v.signingKeyEnv;
    if (typeof name !== 'string' || !ENV_NAME.test(name)) fail(`signingKeyEnv must name an environment variable (letters, digits, _), got ${JSON.stringify(name)}`);
    const key = process.env[name as string];
    if (!key) fail(`signingKeyEnv names ${name}, which is not set: set it to the same secret (at least ${MIN_KEY_CHARS} characters) for workers and submitters`);
    if (key!.length < MIN_KEY_CHARS) fail(`signingKeyEnv: ${name} holds ${key!.length} characters; a signing key has at least ${MIN_KEY_CHARS}`);
    config.signingKeyEnv = name as string;
    config.signingKey = key!;
  }
  if (config.backend === 'nats' && config.url === undefined) fail('backend nats needs a url (nats://HOST:PORT)');
  if (v.namespace !== undefined) {
    if (typeof v.namespace !== 'string' || !TOKEN.test(v.namespace)) fail(`namespace must be letters, digits, _ or - (at most 64), got ${JSON.stringify(v.namespace)}`);
    config.namespace = v.namespace as string;
  }
  if (v.ackWaitMs !== undefined) {
    if (!Number.isInteger(v.ackWaitMs) || (v.ackWaitMs as number) < 100) fail(`ackWaitMs must be a whole number of milliseconds ≥ 100, got ${JSON.stringify(v.ackWaitMs)}`);
    config.ackWaitMs = v.ackWaitMs as number;
  }
  if (v.bufferSize !== undefined) {
    if (!Number.isInteger(v.bufferSize) || (v.bufferSize as number) < 1) fail(`bufferSize must be a whole number ≥ 1, got ${JSON.stringify(v.bufferSize)}`);
    config.bufferSize = v.bufferSize as number;
  }
  return config;
}

function parseAuth(value: unknown, place: string, baseDir: string): NatsAuth {
  const fail = (msg: string): never => {
    throw new ConfigurationError(`${place}: ${msg}`);
  };
  const forms = '{ token }, { tokenEnv }, { user, pass }, { user, passEnv }, { nkeySeedFile } or { credsFile }';
  if (!isPlainObject(value)) return fail(`must be one of ${forms}, got ${JSON.stringify(value)}`);
  const v = value as Record<string, unknown>;
  const keys = Object.keys(v).sort().join(',');
  const text = (key: string): string => {
    if (typeof v[key] !== 'string' || v[key] === '') fail(`${key} must be a non-empty string`);
    return v[key] as string;
  };
  const fromEnv = (key: string): string => {
    const name = text(key);
    if (!ENV_NAME.test(name)) fail(`${key} must name an environment variable, got ${JSON.stringify(name)}`);
    const found = process.env[name];
    if (!found) fail(`${key} names ${name}, which is not set`);
    return found!;
  };
  const file = (key: string): string => {
    const p = path.resolve(baseDir, text(key));
    if (!fs.existsSync(p)) fail(`${key}: no such file ${p}`);
    return p;
  };
  switch (keys) {
    case 'token':
      return { kind: 'token', token: text('token') };
    case 'tokenEnv':
      return { kind: 'token', token: fromEnv('tokenEnv') };
    case 'pass,user':
      return { kind: 'user', user: text('user'), pass: text('pass') };
    case 'passEnv,user':
      return { kind: 'user', user: text('user'), pass: fromEnv('passEnv') };
    case 'nkeySeedFile':
      return { kind: 'nkey', seedFile: file('nkeySeedFile') };
    case 'credsFile':
      return { kind: 'creds', credsFile: file('credsFile') };
    default:
      return fail(`must be one of ${forms}, got the keys ${keys || 'none'}`);
  }
}

function parseTls(value: unknown, place: string, baseDir: string): NatsTls {
  const fail = (msg: string): never => {
    throw new ConfigurationError(`${place}: ${msg}`);
  };
  if (!isPlainObject(value)) return fail(`must be an object { ca?, cert?, key? } of file paths, got ${JSON.stringify(value)}`);
  const v = value as Record<string, unknown>;
  const tls: NatsTls = {};
  for (const key of Object.keys(v)) {
    if (key !== 'ca' && key !== 'cert' && key !== 'key') fail(`unknown key '${key}' (ca, cert, key)`);
    if (typeof v[key] !== 'string' || v[key] === '') fail(`${key} must be a file path`);
    const p = path.resolve(baseDir, v[key] as string);
    if (!fs.existsSync(p)) fail(`${key}: no such file ${p}`);
    tls[key as keyof NatsTls] = p;
  }
  if ((tls.cert === undefined) !== (tls.key === undefined)) fail('a client certificate needs both cert and key');
  return tls;
}

/** A work queue's name, checked where it enters (CLI, API): it is a subject token. */
export function checkQueueName(queue: unknown, where: string): string {
  if (typeof queue !== 'string' || !TOKEN.test(queue)) {
    throw new AgentAppsError('E_USAGE', `${where}: a queue name is letters, digits, _ or - (at most 64), got ${JSON.stringify(queue)}`);
  }
  return queue;
}

declare module '../core/types.ts' {
  interface RuntimeState {
    /** The events config (docs/scale.md), read on first use of the bus, a worker or a remote invoke. */
    eventsConfig?: Promise<EventsConfig>;
  }
}
