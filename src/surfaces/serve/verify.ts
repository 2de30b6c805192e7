// Webhook signatures (docs/serve.md, "webhook"; docs/security.md, "The callers"): a webhook sender
// is a party on the network, so its request is checked against the shared secret before anything
// is parsed or run. Every function here takes the raw body as it arrived — re-serialised JSON
// would not be the bytes the sender signed — and compares with crypto.timingSafeEqual, so that
// the time a refusal takes says nothing about how much of a guessed signature was right.
import crypto from 'node:crypto';

/** HMAC-SHA256 of `data` under `secret`, as lowercase hex. */
export function hmacHex(secret: string, data: Buffer | string): string {
  return crypto.createHmac('sha256', secret).update(data).digest('hex');
}

/** Compares two strings in constant time (for equal lengths); a length difference is a plain mismatch. */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  if (x.length !== y.length) return false;
  return crypto.timingSafeEqual(x, y);
}

/**
 * GitHub (docs.github.com, "Validating webhook deliveries"): `X-Hub-Signature-256` is
 * `sha256=` + the hex HMAC-SHA256 of the raw body under the webhook's secret.
 */
export function verifyGithub(secret: string, rawBody: Buffer, header: string | undefined): boolean {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  return safeEqual(header.trim().toLowerCase(), `sha256=${hmacHex(secret, rawBody)}`);
}

/** How far a Slack request's timestamp may be from now: Slack's own advice, five minutes. */
export const SLACK_WINDOW_SECONDS = 5 * 60;

/**
 * Slack (api.slack.com, "Verifying requests from Slack"), version v0: `X-Slack-Signature` is
 * `v0=` + hex HMAC-SHA256(secret, `v0:${X-Slack-Request-Timestamp}:${rawBody}`), and a timestamp
 * more than five minutes from now is refused — a captured request cannot be replayed later.
 */
export function verifySlack(secret: string, rawBody: Buffer, timestamp: string | undefined, signature: string | undefined, now: number = Date.now()): boolean {
  if (typeof timestamp !== 'string' || typeof signature !== 'string' || !/^\d{1,12}$/.test(timestamp)) return false;
  if (Math.abs(Math.floor(now / 1000) - Number(timestamp)) > SLACK_WINDOW_SECONDS) return false;
  const base = Buffer.concat([Buffer.from(`v0:${timestamp}:`, 'utf8'), rawBody]);
  return safeEqual(signature.trim().toLowerCase(), `v0=${hmacHex(secret, base)}`);
}

/**
 * The generic scheme: the entry's `header` carries the hex HMAC-SHA256 of the raw body, bare or
 * with a `sha256=` prefix (the form most senders that copy GitHub use).
 */
export function verifyHmacSha256(secret: string, rawBody: Buffer, header: string | undefined): boolean {
  if (typeof header !== 'string') return false;
  const given = header.trim().toLowerCase().replace(/^sha256=/, '');
  return safeEqual(given, hmacHex(secret, rawBody));
}
