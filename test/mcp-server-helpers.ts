// Helpers for the `agent-apps mcp serve` suites (SPEC §16): real server processes of
// bin/agent-apps.js over the fixture workspace test/fixtures/mcp-ws, driven by the official client
// (@modelcontextprotocol/client). Every process started here is stopped when its test ends.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport, type ClientCapabilities } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BIN = path.join(REPO, 'bin', 'agent-apps.js');
export const WS = path.join(REPO, 'test', 'fixtures', 'mcp-ws');

const HOME = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-mcp-home-'));
process.on('exit', () => fs.rmSync(HOME, { recursive: true, force: true }));

/** The environment of a server process: no developer skills, no test-runner or token variables. */
export function baseEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string | undefined> = { ...process.env, AGENT_APPS_HOME: HOME, NO_COLOR: '1', AGENT_APPS_TRUST_WORKSPACE: '1' };
  for (const key of ['AGENT_APPS_PATH', 'AGENT_APPS_MCP_TOKEN', 'FORCE_COLOR', 'NODE_OPTIONS', 'NODE_TEST_CONTEXT']) delete env[key];
  Object.assign(env, extra);
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

export function tempDir(t: Owner, prefix = 'agent-apps-mcp-'): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A JSON-RPC message as it went over the wire. */
export interface WireMessage {
  id?: number | string;
  method?: string;
  params?: Record<string, any>;
  result?: Record<string, any>;
  error?: { code: number; message: string };
}

export interface Connection {
  client: Client;
  /** Every message the server sent, in order (read below the client, before its own dispatch). */
  wire: WireMessage[];
  stderr(): string;
}

/** Who closes what a helper starts: a test (`t`), or a suite's own list (see `shared`). */
export interface Owner {
  after(fn: () => unknown): unknown;
}

/** What a client declares, and its request handlers (`elicitation/create` …), set before it connects. */
export interface ClientSetup {
  capabilities?: ClientCapabilities;
  setup?: (client: Client) => void;
}

function newClient(era: 'legacy' | 'modern' | undefined, o: ClientSetup): Client {
  const versionNegotiation = era === 'modern' ? { mode: { pin: '2026-07-28' } as const } : undefined;
  const options = { ...(versionNegotiation ? { versionNegotiation } : {}), ...(o.capabilities ? { capabilities: o.capabilities } : {}) };
  const client = new Client({ name: 'agent-apps-test', version: '1.0.0' }, Object.keys(options).length ? options : undefined);
  o.setup?.(client);
  return client;
}

/** The official client over stdio against `agent-apps mcp serve ARGS` in `cwd`. */
export async function connectStdio(t: Owner, opts: { args?: string[]; cwd?: string; era?: 'legacy' | 'modern' } & ClientSetup = {}): Promise<Connection> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', 'serve', ...(opts.args ?? [])], cwd: opts.cwd ?? WS, env: baseEnv(), stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const client = newClient(opts.era, opts);
  await client.connect(transport);
  t.after(() => client.close());
  return { client, wire: tap(transport), stderr: () => stderr };
}

/** The official client over Streamable HTTP. */
export async function connectHttp(t: Owner, url: string, opts: { era?: 'legacy' | 'modern'; token?: string } & ClientSetup = {}): Promise<Connection> {
  const transport = new StreamableHTTPClientTransport(new URL(url), opts.token ? { requestInit: { headers: { Authorization: `Bearer ${opts.token}` } } } : undefined);
  const client = newClient(opts.era, opts);
  await client.connect(transport);
  t.after(() => client.close());
  return { client, wire: tap(transport), stderr: () => '' };
}

/** Records what arrives on `transport` before handing it to the client. */
function tap(transport: { onmessage?: (message: any, extra?: any) => void }): WireMessage[] {
  const wire: WireMessage[] = [];
  const deliver = transport.onmessage!;
  transport.onmessage = (message, extra) => {
    wire.push(message as WireMessage);
    deliver(message, extra);
  };
  return wire;
}

export interface ServeProcess {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code and signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `agent-apps mcp serve ARGS` as a bare process (for signals, exit codes and raw frames). */
export function spawnServe(t: Owner, args: string[], opts: { cwd?: string; env?: Record<string, string | undefined> } = {}): ServeProcess {
  const child = spawn(process.execPath, [BIN, 'mcp', 'serve', ...args], { cwd: opts.cwd ?? WS, env: baseEnv(opts.env), stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  // Still running when its owner ends: SIGTERM, as a client would stop it; SIGKILL if that hangs.
  t.after(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  });
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Waits until `check()` is truthy (polling), or fails after `ms`. */
export async function until<T>(check: () => T, ms = 10_000, what = 'condition'): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  for (;;) {
    const v = check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** `mcp serve --http 127.0.0.1:0 ARGS`: resolves once it listens, with its URL. */
export async function startHttp(t: Owner, args: string[] = [], opts: { env?: Record<string, string | undefined>; cwd?: string } = {}): Promise<ServeProcess & { url: string }> {
  const proc = spawnServe(t, ['--http', '127.0.0.1:0', ...args], opts);
  const url = await Promise.race([
    until(() => /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(proc.stderr())?.[1], 20_000, 'the server to listen'),
    proc.exited.then((e) => Promise.reject(new Error(`mcp serve exited (${e.code}): ${proc.stderr()}`))),
  ]);
  return { ...proc, url };
}

/** The text of a tool result's first content block. */
export function text(result: { content?: unknown }): string {
  const first = (result.content as { type: string; text?: string }[] | undefined)?.[0];
  return first?.type === 'text' ? (first.text ?? '') : '';
}
