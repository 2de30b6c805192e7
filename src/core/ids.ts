// Ids and content hashes without loading node:crypto on a plain `run` (~5 ms of start-up,
// docs/cli.md "Start-up"): context ids — a run's id among them — are names that must not repeat,
// never secrets (tokens, signatures and approval links take node:crypto's randomness where they
// are made), so they are UUID-shaped strings from V8's generator, seeded per process by the OS.
// Anything that needs a cryptographic digest or randomness asks `hashHex` / node:crypto itself.
import type { BinaryLike } from 'node:crypto';

let cryptoModule: typeof import('node:crypto') | undefined;
const crypto = () => (cryptoModule ??= process.getBuiltinModule('node:crypto'));

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');

/** A UUID-shaped (v4 layout) unique id: 122 random bits from Math.random. Not for secrets. */
export function uniqueId(): string {
  const r = () => (Math.random() * 0x100000000) >>> 0;
  const a = r();
  const b = r();
  const c = r();
  const d = r();
  return `${hex(a, 8)}-${hex(b >>> 16, 4)}-${hex(((b & 0x0fff) | 0x4000) >>> 0, 4)}-${hex(((c >>> 16) & 0x3fff) | 0x8000, 4)}-${hex(c & 0xffff, 4)}${hex(d, 8)}`;
}

/** A random UUID (v4) from node:crypto, for ids that others must not guess. */
export function randomId(): string {
  return crypto().randomUUID();
}

/**
 * A fast non-cryptographic hash of a text (two 53-bit cyrb53 lanes, hex): for telling whether a
 * cached copy of our own files is current, never against someone trying to collide it.
 */
export function quickHash(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return `${text.length.toString(16)}-${hex(h2 >>> 0, 8)}${hex(h1 >>> 0, 8)}`;
}

/** The hex digest of `data` (sha256 unless named). */
export function hashHex(data: BinaryLike, algorithm = 'sha256'): string {
  return crypto().createHash(algorithm).update(data).digest('hex');
}
