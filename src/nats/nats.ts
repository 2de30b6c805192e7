/**
 * One NATS connection per runtime (docs/scale.md), shared by the JetStream event bus, the worker and
 * remote invocations; the subjects and streams they use, by name, in one place.
 *
 * Loaded only through `import()` when something is configured to use NATS, so a plain `run` never
 * pays for the client. The connection reconnects for ever (a restarted server is found again; the
 * client buffers what is published meanwhile); only the *first* connection failing is an error:
 * E_EVENTS naming the URL and where it was configured.
 *
 * Streams (all file storage, created on first use, left as they are when they exist):
 *   AGENT_APPS_<NS>_EVENTS   agent-apps.<ns>.events.>   limits, max_msgs_per_subject = bufferSize
 *   AGENT_APPS_<NS>_INVOKE   agent-apps.<ns>.invoke.>   work queue (one durable consumer per queue)
 *   AGENT_APPS_<NS>_RESULTS  agent-apps.<ns>.results.>  one result per request id (dedupe window)
 *   AGENT_APPS_<NS>_DEAD     agent-apps.<ns>.dead.>     requests delivered 3 times without a result, per queue
 *   AGENT_APPS_<NS>_WORKERS  agent-apps.<ns>.workers.>  each worker's last heartbeat
 *   AGENT_APPS_<NS>_G_<durable>  (sourced from _EVENTS, one topic)  a named queue's or a ref handler's
 *                            events until it acks them (work queue): a group that falls behind
 *                            the replay buffer loses nothing (events/nats-bus.ts)
 *
 * Results are also sent as core messages to `agent-apps.<ns>.reply.<random>` (a request's replyTo,
 * nothing else: docs/scale.md, "Reply subjects").
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { connect, credsAuthenticator, nkeyAuthenticator, tokenAuthenticator, usernamePasswordAuthenticator, type Authenticator, type NatsConnection, type NodeConnectionOptions } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, DiscardPolicy, RetentionPolicy, StorageType, type JetStreamClient, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import { AgentAppsError } from '../core/errors.ts';
import { ENV, type EventsConfig } from './config.ts';
import { Signer } from './signing.ts';

export interface Nats {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  config: EventsConfig;
  names: Names;
  /** Signs and checks work requests and results, when `events.signingKeyEnv` is set. */
  signer?: Signer;
  /** Makes the stream if it does not exist (once per connection and name). */
  stream(kind: StreamKind, bufferSize?: number): Promise<string>;
  close(): Promise<void>;
}

export type StreamKind = 'events' | 'invoke' | 'results' | 'dead' | 'workers';
/** The namespace's key-value buckets (kv.ts; journals: src/surfaces/worker/journal-store.ts). */
export type BucketKind = 'schedules' | 'claims' | 'journals';

export interface Names {
  prefix: string;
  stream(kind: StreamKind): string;
  /** A key-value bucket of the namespace (kv.ts): `AGENT_APPS_<NS>_<KIND>`. */
  bucket(kind: BucketKind): string;
  /** A durable group's own stream (a named queue or a ref handler): `AGENT_APPS_<NS>_G_<durable>`. */
  group(durable: string): string;
  /** The start of every group stream's name: what lists them. */
  groupPrefix: string;
  event(topic: string): string;
  invoke(queue: string): string;
  result(id: string): string;
  /** The dead letters of all queues (legacy: before per-queue subjects, letters went here). */
  dead: string;
  /** A queue's dead letters. */
  deadOf(queue: string): string;
  worker(id: string): string;
  /** A submitter's reply subject: `agent-apps.<ns>.reply.<token>`. */
  reply(token: string): string;
  /** True for a subject a worker may answer on: a reply subject of this namespace, nothing else. */
  isReply(subject: string): boolean;
}

/** The token of a reply subject: random letters, digits, _ and -, 16 to 128 of them. */
const REPLY_TOKEN = /^[A-Za-z0-9_-]{16,128}$/;

export function names(namespace: string): Names {
  const prefix = `agent-apps.${namespace}`;
  const upper = namespace.toUpperCase().replace(/-/g, '_');
  return {
    prefix,
    stream: (kind) => `AGENT_APPS_${upper}_${kind.toUpperCase()}`,
    bucket: (kind) => `AGENT_APPS_${upper}_${kind.toUpperCase()}`,
    group: (durable) => `AGENT_APPS_${upper}_G_${durable}`,
    groupPrefix: `AGENT_APPS_${upper}_G_`,
    event: (topic) => `${prefix}.events.${topicSubject(topic)}`,
    invoke: (queue) => `${prefix}.invoke.${queue}`,
    result: (id) => `${prefix}.results.${id}`,
    dead: `${prefix}.dead`,
    deadOf: (queue) => `${prefix}.dead.${queue}`,
    worker: (id) => `${prefix}.workers.${id}`,
    reply: (token) => `${prefix}.reply.${token}`,
    isReply: (subject) => subject.startsWith(`${prefix}.reply.`) && REPLY_TOKEN.test(subject.slice(prefix.length + 7)),
  };
}

/**
 * A topic as subject tokens: dots separate tokens as in NATS (`deploy.prod` stays readable to
 * other programs); any other character a subject cannot carry — space, `*`, `>`, `%`, a dot that
 * would leave an empty token — is written `%XX` (its UTF-8 bytes), so distinct topics never
 * share a subject. `subjectTopic` reads it back.
 */
export function topicSubject(topic: string): string {
  const tokens = topic.split('.');
  // An empty token (a leading, trailing or doubled dot) cannot be a subject's: then every dot is data.
  if (tokens.some((t) => t === '')) return encodeToken(topic);
  return tokens.map(encodeToken).join('.');
}

function encodeToken(token: string): string {
  let out = '';
  for (const ch of token) {
    if (/[A-Za-z0-9_\-]/.test(ch)) out += ch;
    else for (const b of Buffer.from(ch)) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** The topic of an event subject's tail (inverse of `topicSubject`). */
export function subjectTopic(tail: string): string {
  try {
    return decodeURIComponent(tail);
  } catch {
    return tail;
  }
}

/** A durable consumer name for a topic and a queue or handler: readable prefix, hash for uniqueness. */
export function durableName(kind: 'q' | 'h', topic: string, key: string): string {
  const hash = createHash('sha256').update(`${kind}\0${topic}\0${key}`).digest('hex').slice(0, 12);
  const clean = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 24);
  return `${kind}_${clean(topic)}_${clean(key)}_${hash}`;
}

const MiB = 1024 * 1024;

function streamConfig(kind: StreamKind, n: Names, bufferSize: number): Partial<StreamConfig> & { name: string } {
  const base = { name: n.stream(kind), storage: StorageType.File, num_replicas: 1 };
  switch (kind) {
    case 'events':
      // The replay buffer is the stream: each topic (subject) keeps its last bufferSize events.
      return { ...base, subjects: [`${n.prefix}.events.>`], retention: RetentionPolicy.Limits, max_msgs_per_subject: bufferSize, discard: DiscardPolicy.Old, max_msg_size: 2 * MiB };
    case 'invoke':
      // The dedupe window (Nats-Msg-Id = request id) covers a signed request's lifetime (five
      // minutes and the clock skew): a replayed copy is dropped even while the first still runs.
      return { ...base, subjects: [`${n.prefix}.invoke.>`], retention: RetentionPolicy.Workqueue, max_msg_size: 2 * MiB, duplicate_window: 360e9 };
    case 'results':
      // A result is stored with Nats-Msg-Id = id and a hash of its body, so a retried publish is
      // stored once while a forged result for the same id never pushes the real one out.
      return { ...base, subjects: [`${n.prefix}.results.>`], retention: RetentionPolicy.Limits, max_age: 3600e9, duplicate_window: 600e9, max_msg_size: 8 * MiB };
    case 'dead':
      return { ...base, subjects: [n.dead, `${n.dead}.>`], retention: RetentionPolicy.Limits, max_msgs: 100_000 };
    case 'workers':
      return { ...base, subjects: [`${n.prefix}.workers.>`], retention: RetentionPolicy.Limits, max_msgs_per_subject: 1, max_age: 600e9 };
  }
}

/** The client's options for the configured credentials and TLS (docs/scale.md, "Authentication and TLS"). */
export function securityOptions(config: EventsConfig): Pick<NodeConnectionOptions, 'authenticator' | 'tls'> {
  const out: Pick<NodeConnectionOptions, 'authenticator' | 'tls'> = {};
  const auth = config.auth;
  let authenticator: Authenticator | undefined;
  if (auth?.kind === 'token') authenticator = tokenAuthenticator(auth.token);
  else if (auth?.kind === 'user') authenticator = usernamePasswordAuthenticator(auth.user, auth.pass);
  // Read when connecting (and again on each reconnect), so a rotated file is picked up.
  else if (auth?.kind === 'nkey') authenticator = nkeyAuthenticator(() => new TextEncoder().encode(fs.readFileSync(auth.seedFile, 'utf8').trim()));
  else if (auth?.kind === 'creds') authenticator = credsAuthenticator(() => fs.readFileSync(auth.credsFile));
  if (authenticator) out.authenticator = authenticator;
  if (config.tls) out.tls = { ...(config.tls.ca ? { caFile: config.tls.ca } : {}), ...(config.tls.cert ? { certFile: config.tls.cert } : {}), ...(config.tls.key ? { keyFile: config.tls.key } : {}) };
  return out;
}

/** Connects (or throws E_EVENTS naming the URL) and checks that the server has JetStream. */
export async function connectNats(config: EventsConfig): Promise<Nats> {
  // config.url never carries credentials (config.ts keeps them apart), so it may be printed.
  const url = config.url ?? 'nats://127.0.0.1:4222';
  let nc: NatsConnection;
  try {
    // noAsyncTraces: the client would build two Error objects (for their stacks) per request —
    // a third of an emit's time, measured (bench/dist.js, events.throughput.nats).
    nc = await connect({ servers: url.split(',').map((s) => s.trim()), name: 'agent-apps', maxReconnectAttempts: -1, reconnectTimeWait: 250, timeout: 5000, noAsyncTraces: true, ...securityOptions(config) });
  } catch (err) {
    if (isAuthError(err)) {
      const how = config.auth ? `the ${describeAuth(config)} configured in ${config.from} ${config.auth.kind === 'creds' ? 'were' : 'was'} refused` : `the server requires credentials and none are configured (events.auth in the workspace's main, or nats://user:pass@host in ${ENV})`;
      throw new AgentAppsError('E_EVENTS', `events: authentication failed at NATS ${url}: ${how} (${errorText(err)})`, { cause: err });
    }
    if (/certificate|self[- ]signed|altnames|tls|ssl|handshake/i.test(errorText(err))) {
      throw new AgentAppsError('E_EVENTS', `events: TLS with NATS at ${url} failed (${errorText(err)}) — events.tls.ca names the CA that signed the server's certificate (configured in ${config.from})`, { cause: err });
    }
    throw new AgentAppsError('E_EVENTS', `events: cannot reach NATS at ${url} (${errorText(err)}) — is \`nats-server -js\` running there? (configured in ${config.from})`, { cause: err });
  }
  let jsm: JetStreamManager;
  try {
    jsm = await jetstreamManager(nc, { timeout: 10_000 });
  } catch (err) {
    await nc.close().catch(() => {});
    throw new AgentAppsError('E_EVENTS', `events: the NATS server at ${url} has no JetStream (${errorText(err)}) — start it with \`nats-server -js\``, { cause: err });
  }
  const js = jetstream(nc, { timeout: 10_000 });
  const n = names(config.namespace);
  const made = new Map<StreamKind, Promise<string>>();
  return {
    nc,
    js,
    jsm,
    config,
    names: n,
    ...(config.signingKey ? { signer: new Signer(config.signingKey, config.signingKeyEnv ?? 'the signing key') } : {}),
    stream(kind, bufferSize) {
      let p = made.get(kind);
      if (!p) {
        p = retrying(() => ensureStream(jsm, streamConfig(kind, n, bufferSize ?? config.bufferSize ?? 1000)));
        p.catch(() => made.delete(kind));
        made.set(kind, p);
      }
      return p;
    },
    async close() {
      if (nc.isClosed()) return;
      await nc.drain().catch(() => nc.close());
    },
  };
}

function describeAuth(config: EventsConfig): string {
  switch (config.auth?.kind) {
    case 'token':
      return 'token';
    case 'user':
      return `password of user '${config.auth.user}'`;
    case 'nkey':
      return `nkey seed (${config.auth.seedFile})`;
    case 'creds':
      return `credentials (${config.auth.credsFile})`;
    default:
      return 'credentials';
  }
}

export function isAuthError(err: unknown): boolean {
  return /authoriz|authenticat|auth(entication)? (violation|expired|timeout)|user credentials|nkey|jwt/i.test(errorText(err)) || (err as { name?: string })?.name === 'AuthorizationError';
}

async function ensureStream(jsm: JetStreamManager, cfg: Partial<StreamConfig> & { name: string }): Promise<string> {
  const name = cfg.name;
  try {
    const info = await jsm.streams.info(name);
    // A dead-letter stream from before per-queue subjects takes `dead.>` too (the old subject stays).
    const missing = (cfg.subjects ?? []).filter((s) => !info.config.subjects?.includes(s));
    if (missing.length && name.endsWith('_DEAD')) await jsm.streams.update(name, { ...info.config, subjects: [...(info.config.subjects ?? []), ...missing] });
    // …and a work-queue stream made with the old two-minute dedupe window gets the longer one.
    else if (name.endsWith('_INVOKE') && cfg.duplicate_window && (info.config.duplicate_window ?? 0) < cfg.duplicate_window) await jsm.streams.update(name, { ...info.config, duplicate_window: cfg.duplicate_window });
    return name;
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  try {
    await jsm.streams.add(cfg);
  } catch (err) {
    // Another process made it meanwhile: fine.
    if (!/already in use|exists/i.test(errorText(err))) throw err;
  }
  return name;
}

/** Changes the events stream's per-topic retention (the `event` middleware's bufferSize). */
export async function setRetention(nats: Nats, bufferSize: number): Promise<void> {
  const name = await nats.stream('events', bufferSize);
  const info = await retrying(() => nats.jsm.streams.info(name));
  if (info.config.max_msgs_per_subject === bufferSize) return;
  await retrying(() => nats.jsm.streams.update(name, { ...info.config, max_msgs_per_subject: bufferSize }));
}

export function isNotFound(err: unknown): boolean {
  const e = err as { code?: unknown; api_error?: { err_code?: number }; message?: string } | undefined;
  return e?.api_error?.err_code === 10059 || e?.api_error?.err_code === 10014 || /not found/i.test(e?.message ?? '');
}

/** An error of the connection, not of the request: worth retrying once the client reconnects. */
export function isTransient(err: unknown): boolean {
  const text = errorText(err);
  return /timeout|timed out|disconnect|reconnect|no responders|connection (closed|draining)|503|CONNECTION_|closed/i.test(text) && !/permission/i.test(text);
}

/**
 * Runs a JetStream API call, retrying it while the connection is away (a server restart): the
 * client reconnects by itself, the call is made again after a short pause. Gives up after
 * `forMs` (default 60 s) with the last error.
 */
export async function retrying<T>(fn: () => Promise<T>, forMs = 60_000, signal?: AbortSignal): Promise<T> {
  const until = Date.now() + forMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!isTransient(err) || Date.now() > until || signal?.aborted) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message + (err.cause instanceof Error ? `: ${err.cause.message}` : '');
  return String(err);
}
