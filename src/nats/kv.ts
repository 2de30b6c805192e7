/**
 * What several `agent-apps serve` processes on one NATS namespace share (docs/scale.md, "Several
 * serve processes"), and what workers share (docs/runs.md, "Workers"): JetStream key-value
 * buckets, made on first use.
 *
 *   AGENT_APPS_<NS>_SCHEDULES  one key, `schedules`: the list schedule-create writes and every
 *                              serve fires — changed by compare-and-set, watched for changes
 *   AGENT_APPS_<NS>_CLAIMS     who handles what: a key per schedule fire and per webhook delivery,
 *                              taken with `create` (which succeeds for one caller only); entries
 *                              expire after a day (the bucket's max age), as a sender's retries do
 *   AGENT_APPS_<NS>_JOURNALS   the journal of each request a worker runs, keys under the
 *                              request's id (src/surfaces/worker/journal-store.ts); deleted once
 *                              its result is published, else expired after a week
 *
 * Loaded only through `import()` from a process configured for NATS, like nats.ts.
 */
import { JetStreamApiError } from '@nats-io/jetstream';
import { Kvm, KvWatchInclude, type KV } from '@nats-io/kv';
import { AgentAppsError } from '../core/errors.ts';
import { errorText, retrying, type BucketKind, type Nats } from './nats.ts';

/** How long a claim is kept: past it, a key may be taken again. */
export const CLAIM_TTL_MS = 24 * 3_600_000;
/**
 * How long a worker's request journal is kept (src/surfaces/worker/journal-store.ts) when its worker could not delete
 * it: past it, a request redelivered still later runs from scratch.
 */
export const JOURNAL_TTL_MS = 7 * 24 * 3_600_000;

// JetStream's "wrong last sequence" answers: someone else wrote the key first.
const CONFLICT = new Set([10071, 10164]);
const isConflict = (err: unknown) => err instanceof JetStreamApiError && CONFLICT.has(err.code);

const buckets = new WeakMap<Nats, Map<string, Promise<KV>>>();

/** The bucket `AGENT_APPS_<NS>_<KIND>`, made if it does not exist (once per connection). */
export function bucket(nats: Nats, kind: BucketKind): Promise<KV> {
  let made = buckets.get(nats);
  if (!made) buckets.set(nats, (made = new Map()));
  let p = made.get(kind);
  if (!p) {
    const name = nats.names.bucket(kind);
    const kvm = new Kvm(nats.js);
    p = retrying(() => kvm.create(name, { history: 1, ...(kind === 'claims' ? { ttl: CLAIM_TTL_MS } : kind === 'journals' ? { ttl: JOURNAL_TTL_MS } : {}) })).catch((err: unknown) => {
      made.delete(kind);
      throw new AgentAppsError('E_EVENTS', `events: cannot open the NATS key-value bucket ${name} (${errorText(err)})`, { cause: err });
    });
    made.set(kind, p);
  }
  return p;
}

/** A JSON document under one key, read whole and written by compare-and-set. */
export class KvDocument<T> {
  readonly #kv: KV;
  readonly #key: string;
  readonly #empty: () => T;
  constructor(kv: KV, key: string, empty: () => T) {
    this.#kv = kv;
    this.#key = key;
    this.#empty = empty;
  }

  async #read(): Promise<{ value: T; revision: number; live: boolean }> {
    const e = await this.#kv.get(this.#key);
    if (!e || e.operation !== 'PUT') return { value: this.#empty(), revision: e?.revision ?? 0, live: false };
    return { value: e.json<T>(), revision: e.revision, live: true };
  }

  async read(): Promise<T> {
    return (await this.#read()).value;
  }

  /** Reads, changes, writes back; another writer in between makes it read and change again. */
  async update<R>(change: (value: T) => R): Promise<R> {
    for (let attempt = 0; ; attempt++) {
      const { value, revision, live } = await this.#read();
      const out = change(value);
      const text = JSON.stringify(value);
      try {
        if (live) await this.#kv.update(this.#key, text, revision);
        else await this.#kv.create(this.#key, text);
        return out;
      } catch (err) {
        if (!isConflict(err) || attempt >= 50) throw err;
      }
    }
  }

  /** Calls `onChange` after each write to the document (this process's included); returns a stop. */
  async watch(onChange: () => void): Promise<() => void> {
    const iter = await this.#kv.watch({ key: this.#key, include: KvWatchInclude.UpdatesOnly });
    void (async () => {
      for await (const _ of iter) onChange();
    })().catch(() => {});
    return () => iter.stop();
  }
}

/**
 * Claims shared by every process on the namespace: `take` stores `value` under `key` when no one
 * holds it (and answers undefined), else answers what the holder stored.
 */
export class KvClaims {
  readonly shared = true;
  readonly #kv: KV;
  constructor(kv: KV) {
    this.#kv = kv;
  }
  async take(key: string, value: string): Promise<string | undefined> {
    try {
      await this.#kv.create(key, value);
      return undefined;
    } catch (err) {
      if (!isConflict(err)) throw err;
      const e = await this.#kv.get(key);
      // Deleted between the two calls: try once more.
      if (!e || e.operation !== 'PUT') return this.#kv.create(key, value).then(() => undefined, () => 'running');
      return e.string();
    }
  }
  async set(key: string, value: string): Promise<void> {
    await this.#kv.put(key, value);
  }
  async drop(key: string): Promise<void> {
    await this.#kv.delete(key);
  }
}
