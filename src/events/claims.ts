// Claims (docs/serve.md, "Several serve processes"): who handles a schedule's fire or a webhook's
// delivery. On the in-memory backend they are this process's own (a small LRU); on NATS
// (`events: { backend: nats }`) a key-value bucket every process of the namespace shares
// (src/nats/kv.ts), so that of two `serve` processes one runs the fire and one the delivery.
import { createHash } from 'node:crypto';
import type { Context } from '../core/types.ts';
import { eventsConfig } from '../nats/config.ts';
import { natsFor } from '../nats/connect.ts';

export interface Claims {
  /** Whether other processes see these claims (NATS) or only this one does. */
  readonly shared: boolean;
  /** Stores `value` under `key` when no one holds it and answers undefined; else what the holder stored. */
  take(key: string, value: string): Promise<string | undefined>;
  /** Replaces what `key` holds (the holder marking its work done). */
  set(key: string, value: string): Promise<void>;
  /** Lets go of `key`: the next `take` gets it (a failed run, so that a retry runs again). */
  drop(key: string): Promise<void>;
}

/**
 * A claim's key: `kind.part.part…`, each part kept when it is a plain token, else its hash — a
 * key-value key carries letters, digits, `_`, `-` and dots between tokens only.
 */
export function claimKey(kind: string, ...parts: (string | number)[]): string {
  return [kind, ...parts.map(String).map((p) => (/^[A-Za-z0-9_-]{1,64}$/.test(p) ? p : createHash('sha256').update(p).digest('hex').slice(0, 40)))].join('.');
}

/** How many keys this process remembers. */
export const MEMORY_LIMIT = 10_000;

/** The last N keys seen, oldest first (a Map keeps insertion order): a small LRU. */
export class DeliveryMemory {
  #ids = new Map<string, string>();
  readonly limit: number;
  constructor(limit = MEMORY_LIMIT) {
    this.limit = limit;
  }
  get(id: string): string | undefined {
    const state = this.#ids.get(id);
    if (state !== undefined) {
      this.#ids.delete(id);
      this.#ids.set(id, state);
    }
    return state;
  }
  set(id: string, state: string): void {
    this.#ids.delete(id);
    this.#ids.set(id, state);
    while (this.#ids.size > this.limit) this.#ids.delete(this.#ids.keys().next().value!);
  }
  forget(id: string): void {
    this.#ids.delete(id);
  }
  get size(): number {
    return this.#ids.size;
  }
}

/** This process's claims. */
export class MemoryClaims implements Claims {
  readonly shared = false;
  readonly memory: DeliveryMemory;
  constructor(limit = MEMORY_LIMIT) {
    this.memory = new DeliveryMemory(limit);
  }
  async take(key: string, value: string): Promise<string | undefined> {
    const held = this.memory.get(key);
    if (held === undefined) this.memory.set(key, value);
    return held;
  }
  async set(key: string, value: string): Promise<void> {
    this.memory.set(key, value);
  }
  async drop(key: string): Promise<void> {
    this.memory.forget(key);
  }
}

/** The runtime's claims: NATS-backed when the events backend is NATS, else this process's. */
export function claimsFor(ctx: Context): Promise<Claims> {
  const internals = ctx.globals.internals;
  if (!internals.claims) {
    const made = (async (): Promise<Claims> => {
      if ((await eventsConfig(ctx)).backend !== 'nats') return new MemoryClaims();
      const nats = await natsFor(ctx, 'claims');
      const { bucket, KvClaims } = await import('../nats/kv.ts');
      return new KvClaims(await bucket(nats, 'claims'));
    })();
    internals.claims = made;
    // A failed first connection is reported where it was asked for; the next use tries again.
    made.catch(() => {
      if (internals.claims === made) internals.claims = undefined;
    });
  }
  return internals.claims;
}

declare module '../core/types.ts' {
  interface RuntimeState {
    /** claimsFor's answer, made once per runtime. */
    claims?: Promise<Claims>;
  }
}
