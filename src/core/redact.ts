// One redaction for every output (docs/security.md, "Secrets"): the log (so the run files), what
// agent code reads with get(), stream-json, `describe`, `runs show` and the CLI's error lines all
// pass what they print through here, so a secret hidden in one is hidden in all of them.
//
// Two rules. By key: a value under a secret-looking key becomes `[REDACTED]`, whatever it holds.
// By content: in any string, under any key, the credential inside is replaced and the rest kept —
// `Bearer …`, a URL's password, a secret query parameter or `password=…` pair, a JSON pair quoted
// in text, an Authorization or X-…-Token header line, a `--password VALUE` flag, a private key
// block, a JWT.

export const REDACTED = '[REDACTED]';

/** Parts of a key that say "secret" wherever they appear, even inside a word (`PGPASSWORD`, `accesstoken`). */
const STRONG = /token|secret|passw|credential|authorization|cookie|passphrase|apikey|accesskey|privatekey/;
/** Words that say "secret" only as the key's last word: `apiKey`, `DB_PASS`, `x-auth`, `session` — not `keyId`, `passGate`, `authMethods`, `sessionId`. */
const LAST = new Set(['key', 'keys', 'pass', 'auth', 'session', 'bearer']);
/**
 * A last word that says the value names or locates something rather than being it: an id (an ACP or
 * MCP `sessionId` names a session and grants nothing by itself), a URL or file, the name of an
 * environment variable (`apiKeyEnv: OPENAI_API_KEY`), a type (`tokenType: bearer`).
 */
const NAMES = new Set(['id', 'ids', 'url', 'urls', 'uri', 'endpoint', 'file', 'files', 'path', 'paths', 'dir', 'env', 'var', 'ref', 'type', 'kind', 'scheme', 'name', 'names']);
/** A last word that makes a number a count or a limit (`maxTokens`, `usage.inputTokens`, `tokenLimit`), not a PIN. */
const COUNTS = new Set(['tokens', 'count', 'counts', 'length', 'size', 'limit', 'budget', 'max', 'min', 'ms', 'seconds', 'timeout', 'ttl', 'bytes', 'total']);
/** Query parameters that carry a credential though their name does not say so. */
const QUERY_EXTRA = /^(?:sig|signature|x-amz-signature|j?session[-_]?id|sid)$/i;
/** Schemes whose userinfo is a login name, not a credential (`ssh://git@host`). */
const LOGIN_SCHEMES = /^(?:ssh|git|git\+ssh|ssh\+git|sftp|scp|rsync):\/\/$/i;
/** A key with none of these in it is no secret: most keys are answered without being split into words. */
const MAY_BE_SECRET = /token|secret|pass|credential|auth|cookie|key|session|bearer/i;
/** How deep redact() goes; what is deeper is replaced, never passed on unread. */
const MAX_DEPTH = 64;

const wordCache = new Map<string, string[]>();

/** `X-Auth-Token` → x, auth, token; `apiKey` → api, key; `DB_PASS` → db, pass; `APIKey` → api, key. */
function words(key: string): string[] {
  let w = wordCache.get(key);
  if (w) return w;
  w = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  if (wordCache.size > 4096) wordCache.clear();
  wordCache.set(key, w);
  return w;
}

/**
 * Whether a value under `key` is hidden. By the name alone: a word with token, secret, password,
 * passwd, credential, authorization, cookie or passphrase in it, or a last word key, keys, pass,
 * auth, session or bearer — unless the last word says the value names something (id, url, file,
 * path, env, type, name …). Given the value too, what says nothing stays: booleans, null, empty
 * strings, arrays and objects, and numbers that count (`maxTokens: 100`, `inputTokens`).
 */
export function isSecretKey(key: string, ...value: [] | [unknown]): boolean {
  if (!MAY_BE_SECRET.test(key)) return false;
  const w = words(key);
  const last = w.at(-1);
  if (last === undefined || NAMES.has(last)) return false;
  if (!LAST.has(last) && !w.some((x) => STRONG.test(x))) return false;
  if (value.length === 0) return true;
  const v = value[0];
  if (v === null || v === undefined || v === '' || typeof v === 'boolean') return false;
  if ((typeof v === 'number' || typeof v === 'bigint') && COUNTS.has(last)) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object' && Object.keys(v).length === 0) return false;
  return true;
}

// ── strings ───────────────────────────────────────────────────────────────────────────────────

const PEM = /-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY)-----[\s\S]*?-----END \1-----/g;
// scheme://userinfo@ — the userinfo runs to the last @ before the host (a password may hold one).
const USERINFO = /\b([a-z][a-z0-9+.-]{0,30}:\/\/)([^\s/?#"'<>\\]*)@/gi;
const HEADER = /(^|[\s"'`{,;(\[])((?:proxy-)?authorization|(?:set-)?cookie|x-[a-z0-9-]{1,60})([ \t]*:[ \t]*)([^\r\n"'`]*)/gim;
const SCHEME = /\b(bearer|basic|digest|token)(\s+)([A-Za-z0-9\-._~+/]+=*)/gi;
const JSON_PAIR = /"([^"\\\n]{1,100})"(\s*:\s*)("(?:[^"\\\n]|\\.)*"|-?\d[\d.eE+-]*)/g;
const PAIR = /(^|[\s?&;,"'(\[{-])([A-Za-z_][A-Za-z0-9_.-]{0,100})([ \t]?=[ \t]?)("[^"\n]*"|'[^'\n]*'|[^\s&;,#"'<>)\]}]*)/g;
const FLAG = /(^|\s)(--[A-Za-z][A-Za-z0-9_-]{0,60})([ \t]+)([^\s\-/(<\[|"'][^\s"']*|"[^"\n]*"|'[^'\n]*')/g;
const JWT = /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g;
/** Whether a string may hold anything the rules look for: most do not, and are returned at once. */
const MAY_HOLD = /[=@":]|--|bearer|basic|digest|token|eyJ/i;
/** Authorization schemes kept in front of the redacted credential. */
const AUTH_SCHEMES = /^(bearer|basic|digest|token|negotiate|ntlm|hoba|mutual|aws4-hmac-sha256)\s+(\S)/i;

/** Already redacted (a value cut at `]` still starts so): redacting twice changes nothing. */
function isRedacted(v: string): boolean {
  return /^["']?\[REDACTED/.test(v);
}

/** A placeholder written where a value goes (`--token TOKEN`, `KEY=VALUE`, `<token>`, `…`): not a secret. */
function isPlaceholder(v: string): boolean {
  return /^(?:[A-Z][A-Z_]*|<[^>\s]*>|…|\.\.\.)$/.test(v);
}

/** A value written in text, as isSecretKey judges it: digits are a number (`max_tokens=100` is a count). */
function textValue(v: string): string | number {
  return /^\d{1,15}$/.test(v) ? Number(v) : v;
}

/**
 * A credential word after a scheme name: one where a header value would be (after `:`, `=` or a
 * quote, or the whole string, as a header value is), or one that looks like a token (long, with a
 * digit or a symbol) — not the next word of a sentence (`basic usage`, `the token is`).
 */
function looksLikeCredential(s: string, offset: number, match: string, cred: string): boolean {
  if (offset === 0 && s.trimEnd().length === match.length) return true;
  if (/[:="'`]\s*$/.test(s.slice(Math.max(0, offset - 8), offset))) return true;
  return cred.length >= 8 && /[\d\-._~+/=]/.test(cred);
}

/**
 * `s` with the credentials in it replaced by `[REDACTED]`, whatever key it is under: `Bearer …`,
 * `Basic …` and `token …` credentials (`Bearer [REDACTED]`), a URL's password
 * (`postgres://me:[REDACTED]@db/x`) or token userinfo (`nats://[REDACTED]@host`), secret query
 * parameters and `name=value` pairs (`?access_token=`, `api_key=`, `sig=`, a DSN's `password=`),
 * JSON pairs quoted in text, Authorization / Cookie / X-…-Token header lines, `--password VALUE`
 * flags, private key blocks and JWTs. The rest of the text is kept, and redacting twice changes nothing.
 */
export function redactString(s: string): string {
  if (s.length < 5 || !MAY_HOLD.test(s)) return s;
  let out = s;
  if (out.includes('PRIVATE KEY-----')) out = out.replace(PEM, (_m, kind: string) => `-----BEGIN ${kind}----- ${REDACTED} -----END ${kind}-----`);
  if (out.includes('://') && out.includes('@')) {
    out = out.replace(USERINFO, (m, scheme: string, info: string) => {
      if (!info || isRedacted(info)) return m;
      const colon = info.indexOf(':');
      if (colon >= 0) {
        const pass = info.slice(colon + 1);
        return !pass || isRedacted(pass) ? m : `${scheme}${info.slice(0, colon)}:${REDACTED}@`;
      }
      // No password: the userinfo is a token (nats://TOKEN@host), unless the scheme logs in by name.
      return LOGIN_SCHEMES.test(scheme) ? m : `${scheme}${REDACTED}@`;
    });
  }
  if (out.includes(':') && /authorization|cookie|x-/i.test(out)) {
    out = out.replace(HEADER, (m, pre: string, name: string, sep: string, value: string) => {
      const lower = name.toLowerCase();
      if (lower.startsWith('x-') && !isSecretKey(name)) return m;
      const v = value.trim();
      if (!v || isPlaceholder(v.split(/\s/)[0]!) || isRedacted(v)) return m;
      // Authorization keeps its scheme (`Authorization: Bearer [REDACTED]`); a placeholder (`<token>`) stays.
      const scheme = AUTH_SCHEMES.exec(v);
      if (scheme && /authorization$/.test(lower)) return isPlaceholder(v.slice(scheme[1]!.length).trim().split(/\s/)[0]!) || scheme[2] === '[' ? m : `${pre}${name}${sep}${scheme[1]} ${REDACTED}`;
      return `${pre}${name}${sep}${REDACTED}`;
    });
  }
  if (/bearer|basic|digest|token/i.test(out)) {
    out = out.replace(SCHEME, (m, scheme: string, space: string, cred: string, offset: number, whole: string) =>
      looksLikeCredential(whole, offset, m, cred) ? `${scheme}${space}${REDACTED}` : m,
    );
  }
  if (out.includes('":')) {
    out = out.replace(JSON_PAIR, (m, name: string, sep: string, value: string) => {
      const v: unknown = value.startsWith('"') ? value.slice(1, -1) : Number(value);
      return v !== REDACTED && isSecretKey(name, v) ? `"${name}"${sep}"${REDACTED}"` : m;
    });
  }
  if (out.includes('=')) {
    out = out.replace(PAIR, (m, pre: string, name: string, eq: string, value: string) => {
      if (!value || isRedacted(value) || isPlaceholder(value)) return m;
      const query = pre === '?' || pre === '&' || pre === ';';
      // Outside a query a bare `key=` is mostly a placeholder (`key=glob`, `KEY=VALUE`).
      if (!query && name.toLowerCase() === 'key') return m;
      const quote = value[0] === '"' || value[0] === "'" ? value[0] : '';
      const bare = quote ? value.slice(1, -1) : value;
      if (!isSecretKey(name, textValue(bare)) && !(query && QUERY_EXTRA.test(name))) return m;
      return `${pre}${name}${eq}${quote}${REDACTED}${quote}`;
    });
  }
  // A command line's `--password hunter2` (a shell command agent code ran, an argv in a message).
  if (out.includes('--')) {
    out = out.replace(FLAG, (m, pre: string, flag: string, space: string, value: string) => {
      const quote = value[0] === '"' || value[0] === "'" ? value[0] : '';
      // Unquoted, the next word must look like a value, not prose (`--token or --token-file`).
      if (!quote && (isPlaceholder(value) || (!/[^a-z]/.test(value) && value.length < 12))) return m;
      if (isRedacted(value) || !isSecretKey(flag.slice(2), textValue(quote ? value.slice(1, -1) : value))) return m;
      return `${pre}${flag}${space}${quote}${REDACTED}${quote}`;
    });
  }
  if (out.includes('eyJ')) out = out.replace(JWT, REDACTED);
  return out;
}

// ── values ────────────────────────────────────────────────────────────────────────────────────

/** Keys whose children are JSON Schemas named after the properties they describe (`password: { type: string }`): the names are not secrets. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions']);

/**
 * `value` with both rules applied at every depth: a copy where something was redacted, the same
 * objects where nothing was (copy-on-write). Cycles become `[Circular]`, what is nested deeper
 * than 64 levels `[REDACTED: nested too deep]`; binary data is kept as it is. In a `{ name, value }`
 * pair (an HTTP header or an environment entry) a secret-looking name hides the value. The
 * children of a JSON Schema's `properties` are schemas, not values, and are not hidden by name.
 */
export function redact(value: unknown): unknown {
  return walk(value, 0, [], false);
}

function walk(v: unknown, depth: number, ancestors: object[], schemaMap: boolean): unknown {
  if (typeof v === 'string') return redactString(v);
  if (v === null || typeof v !== 'object') return v;
  if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer || v instanceof Date) return v;
  if (depth >= MAX_DEPTH) return `${REDACTED.slice(0, -1)}: nested too deep]`;
  if (ancestors.includes(v)) return '[Circular]';
  ancestors.push(v);
  try {
    if (Array.isArray(v)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < v.length; i++) {
        const item: unknown = v[i];
        const r = walk(item, depth + 1, ancestors, false);
        if (r !== item) (out ??= [...v])[i] = r;
      }
      return out ?? v;
    }
    const obj = v as Record<string, unknown>;
    let out: Record<string, unknown> | undefined;
    const pairName = typeof obj.name === 'string' && 'value' in obj ? obj.name : undefined;
    for (const k of Object.keys(obj)) {
      const item = obj[k];
      let r: unknown;
      const schema = schemaMap && item !== null && typeof item === 'object' && !Array.isArray(item);
      if (!schema && isSecretKey(k, item)) r = REDACTED;
      else if (k === 'value' && pairName !== undefined && isSecretKey(pairName, item)) r = REDACTED;
      else r = walk(item, depth + 1, ancestors, SCHEMA_MAPS.has(k));
      if (r !== item) (out ??= { ...obj })[k] = r;
    }
    return out ?? v;
  } finally {
    ancestors.pop();
  }
}
