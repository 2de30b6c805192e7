// The HTTP helpers of the gateways that take signed posts (docs/serve.md: `webhook`, `slack`):
// a request's body read up to a limit as the raw bytes its sender signed, and JSON answers —
// `{ error: { code, message } }` for a refusal.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The largest body a signed post may send (GitHub caps its payloads at 25 MB, but a skill's args are not the place for that). */
export const MAX_BODY = 1024 * 1024;

/** A request header's first value. */
export function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/** `body` as JSON with `status` (null for undefined); a response already under way is only ended. */
export function send(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(body === undefined ? null : body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(text)), ...extra });
  res.end(text);
}

export function sendError(res: ServerResponse, status: number, code: string, message: string, extra: Record<string, string> = {}): void {
  send(res, status, { error: { code, message } }, extra);
}

/** Reads the body up to `max` bytes; undefined when it is larger (the rest is not read). */
export function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > max) {
        over = true;
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!over) resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
  });
}

/**
 * The raw body of a POST of at most MAX_BODY bytes, or undefined once the request was answered:
 * 413 for a larger one (by its content-length, before reading, or as it arrives).
 */
export async function readPosted(req: IncomingMessage, res: ServerResponse): Promise<Buffer | undefined> {
  const tooLarge = () => {
    sendError(res, 413, 'E_BAD_REQUEST', `the body is over ${MAX_BODY} bytes`, { connection: 'close' });
    req.resume();
    return undefined;
  };
  const declared = Number(header(req, 'content-length'));
  if (Number.isFinite(declared) && declared > MAX_BODY) return tooLarge();
  const raw = await readBody(req, MAX_BODY);
  return raw === undefined ? tooLarge() : raw;
}
