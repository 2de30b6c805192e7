// MCP client configuration (docs/mcp.md): the `mcp` metadata key (`mcp: { servers: { NAME:
// {…} } }`, usually in a `main`) and the workspace's `.mcp.json` (`{ "mcpServers": { NAME: {…} } }`,
// the format other clients read). Parsed and checked where they enter: a malformed entry is an
// E_CONFIG naming the file and the key, and only that server is broken.
// No MCP SDK here: this module is loaded to resolve names, before anything connects.
import fs from 'node:fs';
import path from 'node:path';
import { ConfigurationError } from '../core/errors.ts';
import { interpolate, type InterpolationVars } from '../kernel/interpolate.ts';
import { isPlainObject } from '../core/path.ts';

export const PROTOCOLS = ['2026-07-28', '2025-11-25'] as const;
export type ProtocolPin = (typeof PROTOCOLS)[number];

/** Idle timeout of a call (reset by progress) and of the connect: the default of docs/mcp.md. */
export const DEFAULT_TIMEOUT_MS = 60_000;
/** One response or message from a server, at most (docs/mcp.md, `maxBytes`): 10 MiB. */
export const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
/** A call's total time, progress or not (docs/mcp.md, `maxCallMs`): 10 minutes. */
export const DEFAULT_MAX_CALL_MS = 600_000;

interface Common {
  /** The server's name as configured (`fs`); its tools' bare names start with `prefix`. */
  name: string;
  /** The normalised name: `my_fs` → `my-fs`. */
  prefix: string;
  timeoutMs: number;
  /** The largest response (HTTP body, SSE event, stdio line) read from it: bigger ones fail the call. */
  maxBytes: number;
  /** A call's total time, which progress does not extend (timeoutMs is the idle timeout). */
  maxCallMs: number;
  /** Skips the era probe. */
  protocol?: ProtocolPin;
  /** `trust: ask | deny | allow` (docs/agents.md): how calls of its tools from agent code are gated; its tools' own `trust` metadata. */
  trust?: 'allow' | 'ask' | 'deny';
  /** Where it was configured: file and key, for error messages. */
  source: { file?: string; key: string };
  /**
   * The folder whose `main` configured it, and that folder's search root: the cascade its tools
   * run with (docs/mcp.md). Undefined: the library's main only.
   */
  authority?: { root: string; dir: string };
}

export interface StdioServer extends Common {
  transport: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}

export interface HttpServer extends Common {
  transport: 'http';
  url: string;
  headers: Record<string, string>;
}

export type ServerConfig = StdioServer | HttpServer;

/** A server whose entry could not be read: listed as one broken entry. */
export interface BrokenServer {
  name: string;
  prefix: string;
  error: string;
  source: { file?: string; key: string };
}

/**
 * `SERVER-TOOL` (docs/mcp.md): lower-cased, each run of characters outside [a-z0-9] becomes one
 * `-`; a leading or trailing `-` is dropped (a name never starts or ends with one, docs/writing-skills.md).
 */
export function normaliseName(raw: string): string {
  return raw
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

export function bareName(server: string, tool: string): string {
  return normaliseName(`${server}-${tool}`);
}

/** `mcp://SERVER/TOOL`: the server's name and its own tool name (URI-encoded where needed). */
export function toolUri(server: string, tool: string): string {
  return `mcp://${encodeURIComponent(server)}/${encodeURIComponent(tool)}`;
}

export function parseToolUri(uri: string): { server: string; tool: string } | undefined {
  const m = /^mcp:\/\/([^/]+)\/(.+)$/s.exec(uri);
  if (!m) return undefined;
  try {
    return { server: decodeURIComponent(m[1]!), tool: decodeURIComponent(m[2]!) };
  } catch {
    return undefined;
  }
}

export interface ParseContext {
  /** The file the entry is in (a `main`, `.mcp.json`), or undefined for `--set`. */
  file?: string;
  /** The key path of the entry: `mcp.servers.fs`, `mcpServers.fs`. */
  key: string;
  /** Interpolation variables of that level (docs/concepts.md); undefined when already interpolated. */
  vars?: InterpolationVars;
  /** Relative `cwd`s resolve against this folder (the file's). */
  baseDir: string;
  /** A server's cwd when it names none: the workspace. */
  defaultCwd?: string;
  /** `.mcp.json` is read leniently: keys other clients add are ignored, not errors. */
  lenient: boolean;
  authority?: { root: string; dir: string };
}

const STDIO_KEYS = new Set(['type', 'command', 'args', 'env', 'cwd', 'timeoutMs', 'maxBytes', 'maxCallMs', 'protocol', 'trust']);
const HTTP_KEYS = new Set(['type', 'url', 'headers', 'timeoutMs', 'maxBytes', 'maxCallMs', 'protocol', 'trust']);

/** One server entry, interpolated and checked. Throws E_CONFIG naming the file and key. */
export function parseServer(name: string, raw: unknown, pc: ParseContext): ServerConfig {
  const bad = (key: string, message: string) => new ConfigurationError(`MCP server '${name}': ${message}`, { place: { file: pc.file, key: key ? `${pc.key}.${key}` : pc.key } });
  const prefix = normaliseName(name);
  if (!prefix || !/^[a-z0-9]/.test(prefix)) throw bad('', `a server name needs a letter or digit (its tools are named '${name}-TOOL' on the command line)`);
  if (!isPlainObject(raw)) throw bad('', `expected { command, args, env, cwd } or { url, headers }, got ${raw === null ? 'null' : Array.isArray(raw) ? 'a list' : typeof raw}`);
  const value = (pc.vars ? interpolate(raw, pc.vars, { file: pc.file, key: pc.key }) : raw) as Record<string, unknown>;
  const type = value.type;
  if (type !== undefined && type !== 'stdio' && type !== 'http' && type !== 'streamable-http') {
    const hint = type === 'sse' ? ' (the SSE transport is deprecated: use the server’s Streamable HTTP endpoint, type "http")' : '';
    throw bad('type', `type must be "stdio" or "http", got ${JSON.stringify(type)}${hint}`);
  }
  const isHttp = type === 'http' || type === 'streamable-http' || (type === undefined && value.url !== undefined && value.command === undefined);
  const known = isHttp ? HTTP_KEYS : STDIO_KEYS;
  if (!pc.lenient) {
    for (const key of Object.keys(value)) {
      if (!known.has(key)) throw bad(key, `unknown key '${key}' — a ${isHttp ? 'HTTP server has url, headers' : 'stdio server has command, args, env, cwd'}, timeoutMs, maxBytes, maxCallMs, protocol, trust`);
    }
  }
  let timeoutMs = DEFAULT_TIMEOUT_MS;
  if (value.timeoutMs !== undefined) {
    if (typeof value.timeoutMs !== 'number' || !Number.isFinite(value.timeoutMs) || value.timeoutMs <= 0) throw bad('timeoutMs', `timeoutMs must be a positive number of milliseconds, got ${JSON.stringify(value.timeoutMs)}`);
    timeoutMs = value.timeoutMs;
  }
  let maxBytes = DEFAULT_MAX_BYTES;
  if (value.maxBytes !== undefined) {
    if (typeof value.maxBytes !== 'number' || !Number.isSafeInteger(value.maxBytes) || value.maxBytes <= 0) throw bad('maxBytes', `maxBytes must be a positive whole number of bytes, got ${JSON.stringify(value.maxBytes)}`);
    maxBytes = value.maxBytes;
  }
  let maxCallMs = DEFAULT_MAX_CALL_MS;
  if (value.maxCallMs !== undefined) {
    if (typeof value.maxCallMs !== 'number' || !Number.isFinite(value.maxCallMs) || value.maxCallMs <= 0) throw bad('maxCallMs', `maxCallMs must be a positive number of milliseconds, got ${JSON.stringify(value.maxCallMs)}`);
    maxCallMs = value.maxCallMs;
  }
  let protocol: ProtocolPin | undefined;
  if (value.protocol !== undefined) {
    if (!PROTOCOLS.includes(value.protocol as ProtocolPin)) throw bad('protocol', `protocol must be ${PROTOCOLS.map((p) => `'${p}'`).join(' or ')} (or left out: the client negotiates), got ${JSON.stringify(value.protocol)}`);
    protocol = value.protocol as ProtocolPin;
  }
  if (value.trust !== undefined && value.trust !== 'allow' && value.trust !== 'ask' && value.trust !== 'deny') throw bad('trust', `trust must be ask, deny or allow, got ${JSON.stringify(value.trust)}`);
  const trust = value.trust as 'allow' | 'ask' | 'deny' | undefined;
  const common = { name, prefix, timeoutMs, maxBytes, maxCallMs, protocol, ...(trust ? { trust } : {}), source: { file: pc.file, key: pc.key }, authority: pc.authority };
  if (isHttp) {
    if (typeof value.url !== 'string' || !value.url) throw bad('url', 'url must be the server’s Streamable HTTP endpoint (https://…/mcp)');
    let url: URL;
    try {
      url = new URL(value.url);
    } catch {
      throw bad('url', `url is not a URL: ${JSON.stringify(value.url)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw bad('url', `url must be http:// or https://, got ${url.protocol}`);
    return { ...common, transport: 'http', url: url.href, headers: stringMap(value.headers, 'headers', bad) };
  }
  if (typeof value.command !== 'string' || !value.command.trim()) throw bad('command', value.command === undefined ? 'needs a command (stdio) or a url (HTTP)' : `command must be a non-empty string, got ${JSON.stringify(value.command)}`);
  let args: string[] = [];
  if (value.args !== undefined) {
    if (!Array.isArray(value.args) || value.args.some((a) => typeof a !== 'string' && typeof a !== 'number')) throw bad('args', 'args must be a list of strings');
    args = value.args.map(String);
  }
  let cwd = pc.defaultCwd ?? pc.baseDir;
  if (value.cwd !== undefined) {
    if (typeof value.cwd !== 'string' || !value.cwd) throw bad('cwd', 'cwd must be a folder');
    cwd = path.resolve(pc.baseDir, value.cwd);
  }
  return { ...common, transport: 'stdio', command: value.command, args, env: stringMap(value.env, 'env', bad), cwd };
}

function stringMap(value: unknown, key: string, bad: (key: string, message: string) => ConfigurationError): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isPlainObject(value)) throw bad(key, `${key} must be a map of names to strings`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === '__proto__') throw bad(`${key}.${k}`, `'${k}' is not a valid name`);
    if (typeof v === 'string') out[k] = v;
    else if (typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
    else throw bad(`${key}.${k}`, `${key}.${k} must be a string, got ${v === null ? 'null' : typeof v}`);
  }
  return out;
}

export interface Parsed {
  servers: ServerConfig[];
  broken: BrokenServer[];
  /** Names switched off (`NAME: false` or `null`): a definition further down is not used. */
  off: string[];
  /** `.mcp.json`'s entries as written and how they were read: `--set mcp.servers.NAME.KEY` lays keys over one. */
  raw?: Record<string, unknown>;
  pc?: Omit<ParseContext, 'key'>;
}

/**
 * The `mcp` key's value: `{ servers: { NAME: {…} } }`. A malformed top level is thrown; a
 * malformed server entry makes that server broken and leaves the others.
 */
export function parseMcpKey(value: unknown, pc: Omit<ParseContext, 'key' | 'lenient'> & { key?: string }): Parsed {
  const key = pc.key ?? 'mcp';
  const out: Parsed = { servers: [], broken: [], off: [] };
  if (value === undefined || value === null || value === false) return out;
  if (!isPlainObject(value)) throw new ConfigurationError(`the mcp key is { servers: { NAME: { command, args, env, cwd } | { url, headers } } }, got ${Array.isArray(value) ? 'a list' : typeof value}`, { place: { file: pc.file, key } });
  for (const k of Object.keys(value)) {
    if (k !== 'servers') throw new ConfigurationError(`unknown key '${k}' under mcp — servers are configured as mcp.servers.NAME`, { place: { file: pc.file, key: `${key}.${k}` } });
  }
  const servers = value.servers;
  if (servers === undefined || servers === null) return out;
  if (!isPlainObject(servers)) throw new ConfigurationError('mcp.servers must be a map of server names to { command, args, env, cwd } or { url, headers }', { place: { file: pc.file, key: `${key}.servers` } });
  for (const [name, raw] of Object.entries(servers)) collect(out, name, raw, { ...pc, key: `${key}.servers.${name}`, lenient: false });
  return out;
}

/** The workspace's `.mcp.json`, or undefined when there is none. */
export function readMcpJson(file: string, vars: InterpolationVars): Parsed | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw new ConfigurationError(`cannot read it: ${(err as Error).message}`, { place: { file } });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ConfigurationError(`not valid JSON: ${(err as Error).message}`, { place: { file } });
  }
  if (!isPlainObject(json)) throw new ConfigurationError('expected { "mcpServers": { NAME: { "command": …, "args": […] } | { "type": "http", "url": … } } }', { place: { file } });
  const servers = json.mcpServers;
  const out: Parsed = { servers: [], broken: [], off: [] };
  if (servers === undefined) return out;
  if (!isPlainObject(servers)) throw new ConfigurationError('mcpServers must be an object of server names to { command, args, env } or { type: "http", url, headers }', { place: { file, key: 'mcpServers' } });
  const pc = { file, vars, baseDir: vars.workspace, lenient: true };
  for (const [name, raw] of Object.entries(servers)) collect(out, name, raw, { ...pc, key: `mcpServers.${name}` });
  return { ...out, raw: servers, pc };
}

function collect(out: Parsed, name: string, raw: unknown, pc: ParseContext): void {
  if (raw === false || raw === null) {
    out.off.push(name);
    return;
  }
  try {
    out.servers.push(parseServer(name, raw, pc));
  } catch (err) {
    out.broken.push({ name, prefix: normaliseName(name) || name, error: (err as Error).message, source: { file: pc.file, key: pc.key } });
  }
}

/**
 * An entry that runs `agent-apps mcp serve` for this very workspace (what docs/mcp.md tells users
 * to put in `.mcp.json` for Claude Code): its tools are this workspace's own skills, so it is not
 * a server for agent-apps itself. Recognised by its argv: an `agent-apps` program or script, then
 * `mcp serve`, and a `--cwd` (if any) inside this workspace.
 */
export function servesThisWorkspace(s: ServerConfig, workspace: string): boolean {
  if (s.transport !== 'stdio') return false;
  const argv = [s.command, ...s.args];
  const at = argv.findIndex((a, i) => a === 'mcp' && argv[i + 1] === 'serve');
  if (at < 0 || !argv.slice(0, at).some((a) => /(^|[/\\])agent-apps(\.js|\.cmd)?$/.test(a) || a === 'agent-apps@latest')) return false;
  const flag = argv.findIndex((a, i) => i > at && a === '--cwd');
  const eq = argv.find((a, i) => i > at && a.startsWith('--cwd='));
  const target = flag > 0 ? argv[flag + 1] : eq ? eq.slice('--cwd='.length) : undefined;
  const dir = target === undefined ? s.cwd : path.resolve(s.cwd, target);
  const rel = path.relative(workspace, dir);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** What identifies a connection: a server whose entry changed is a different server. */
export function fingerprint(s: ServerConfig): string {
  return s.transport === 'stdio'
    ? JSON.stringify(['stdio', s.name, s.command, s.args, s.env, s.cwd, s.protocol ?? null])
    : JSON.stringify(['http', s.name, s.url, s.headers, s.protocol ?? null]);
}

/** How to name the server in a message: its command for stdio, its URL for HTTP. */
export function describeServer(s: ServerConfig): string {
  return s.transport === 'stdio' ? `'${s.name}' (${[s.command, ...s.args].join(' ')})` : `'${s.name}' (${s.url})`;
}

/** Where to fix it: `mcp.servers.fs in skills/main.md`. */
export function whereConfigured(s: { source: { file?: string; key: string } }): string {
  return s.source.file ? `${s.source.key} in ${s.source.file}` : `${s.source.key} (--set)`;
}
