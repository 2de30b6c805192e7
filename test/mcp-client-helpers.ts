// Helpers for the MCP client suites (SPEC §16 "Client"): the reference servers from the npm
// registry (dev dependencies, started with `node <their bin>` — no npx, no network), two
// fixture servers of ours, and throw-away workspaces whose `.mcp.json` points at them.
import fs from 'node:fs';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { type Runtime, kernelOf } from '../src/index.ts';
import type { McpHub } from '../src/mcp/hub.ts';
import { REPO, fixture, tempDir, writeFiles } from './helpers.ts';

export const NODE = process.execPath;

/** The bin of a reference server, from its package.json. */
export function referenceBin(pkg: 'server-everything' | 'server-filesystem' | 'server-memory'): string {
  const dir = path.join(REPO, 'node_modules', '@modelcontextprotocol', pkg);
  const json = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { bin: string | Record<string, string> };
  const bin = typeof json.bin === 'string' ? json.bin : Object.values(json.bin)[0]!;
  return path.join(dir, bin);
}

export const EVERYTHING = referenceBin('server-everything');
export const FILESYSTEM = referenceBin('server-filesystem');
export const MEMORY = referenceBin('server-memory');
/** Our v2-SDK fixture server: both eras; add, slow (progress), hang, fail, crash, pid, env. */
export const MODERN = fixture('mcp-client-ws', 'servers', 'modern.mjs');
/** A hand-written 2025-era server that exits on any request before `initialize`. */
export const STRICT = fixture('mcp-client-ws', 'servers', 'strict-legacy.mjs');

/** A stdio entry for `.mcp.json` / `mcp.servers`: `node SCRIPT ARGS…`. */
export function stdio(script: string, ...args: string[]): { command: string; args: string[] } {
  return { command: NODE, args: [script, ...args] };
}

/** A workspace (its own root: `skills/`) with `.mcp.json` = `{ mcpServers: servers }` and `files`. */
export function mcpWorkspace(t: TestContext, servers: Record<string, unknown> | undefined, files: Record<string, string> = {}): string {
  const ws = tempDir(t, 'agent-apps-mcp-');
  fs.mkdirSync(path.join(ws, 'skills'));
  if (servers) fs.writeFileSync(path.join(ws, '.mcp.json'), JSON.stringify({ mcpServers: servers }, null, 2));
  writeFiles(ws, files);
  return ws;
}

export async function hubOf(rt: Runtime): Promise<McpHub> {
  return (await kernelOf(rt.root).registry.source<McpHub>('mcp'))!;
}

/** Error code and message of a rejected promise (or 'ok'). */
export async function outcome(p: Promise<unknown>): Promise<{ code: string; message: string; value?: unknown }> {
  try {
    return { code: 'ok', message: '', value: await p };
  } catch (err) {
    const e = err as { code?: string; message?: string };
    return { code: e.code ?? 'no code', message: e.message ?? String(err) };
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function until(check: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return check();
}

/** Lines of a file, [] while it does not exist. */
export function lines(file: string): string[] {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}
