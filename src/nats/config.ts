/**
 * Where the event bus and the work queues live (SPEC §19): `events: { backend, url, namespace,
 * ackWaitMs, bufferSize }` in the `main` of a search root, or `AGENT_APPS_EVENTS` in the
 * environment (`nats://host:port`, several comma-separated, or `memory`), which wins.
 *
 * Reading it never loads NATS: this file is plain data and checks, so the in-memory default
 * costs nothing more than one look at the root mains, the same look the `event` routes take.
 */
import { AgentAppsError, ConfigurationError } from '../core/errors.ts';
import { isPlainObject } from '../core/path.ts';
import type { Context } from '../core/types.ts';

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
  /** Where the setting came from, for error messages: a file and key, or the environment variable. */
  from: string;
}

export const DEFAULT_NAMESPACE = 'default';
export const DEFAULT_ACK_WAIT_MS = 30_000;
/** A subject token: what a namespace or a work queue's name may be. */
const TOKEN = /^[A-Za-z0-9_-]{1,64}$/;
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
    const value = tool.metadata.events;
    if (value === undefined) continue;
    config = parseEventsConfig(value, `${main.file} (events)`);
    break;
  }
  const env = process.env[ENV]?.trim();
  if (env) {
    if (env === 'memory') config = { ...config, backend: 'memory', from: ENV };
    else if (/^(nats|tls|wss?):\/\//.test(env)) config = { ...config, backend: 'nats', url: env, from: ENV };
    else throw new AgentAppsError('E_CONFIG', `${ENV}: expected nats://HOST:PORT or 'memory', got ${JSON.stringify(env)}`);
  }
  return config;
}

/** Checks an `events:` value; `place` names the file and key in every error. */
export function parseEventsConfig(value: unknown, place: string): EventsConfig {
  const fail = (msg: string): never => {
    throw new ConfigurationError(`${place}: ${msg}`);
  };
  if (!isPlainObject(value)) fail(`must be an object like { backend: nats, url: nats://127.0.0.1:4222 }, got ${JSON.stringify(value)}`);
  const v = value as Record<string, unknown>;
  for (const key of Object.keys(v)) {
    if (!['backend', 'url', 'namespace', 'ackWaitMs', 'bufferSize'].includes(key)) fail(`unknown key '${key}' (backend, url, namespace, ackWaitMs, bufferSize)`);
  }
  const backend = v.backend ?? 'memory';
  if (backend !== 'memory' && backend !== 'nats') fail(`backend must be 'memory' or 'nats', got ${JSON.stringify(backend)}`);
  const config: EventsConfig = { backend: backend as 'memory' | 'nats', namespace: DEFAULT_NAMESPACE, ackWaitMs: DEFAULT_ACK_WAIT_MS, from: place };
  if (v.url !== undefined) {
    if (typeof v.url !== 'string' || !/^(nats|tls|wss?):\/\//.test(v.url)) fail(`url must be nats://HOST:PORT, got ${JSON.stringify(v.url)}`);
    config.url = v.url as string;
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

/** A work queue's name, checked where it enters (CLI, API): it is a subject token. */
export function checkQueueName(queue: unknown, where: string): string {
  if (typeof queue !== 'string' || !TOKEN.test(queue)) {
    throw new AgentAppsError('E_USAGE', `${where}: a queue name is letters, digits, _ or - (at most 64), got ${JSON.stringify(queue)}`);
  }
  return queue;
}

declare module '../core/types.ts' {
  interface RuntimeState {
    /** The events config (SPEC §19), read on first use of the bus, a worker or a remote invoke. */
    eventsConfig?: Promise<EventsConfig>;
  }
}
