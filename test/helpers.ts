// Shared helpers for the kernel, loader and built-in suites: runtimes over fixture trees,
// throw-away workspaces, and small probes. Nothing here mocks the kernel.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';
import { createRuntime, type Context, type LogEvent, type Runtime, type RuntimeOptions, type ToolDef } from '../src/index.ts';

// The suites must not see the developer's ~/.agent-apps/skills or AGENT_APPS_PATH.
const HOME = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-test-home-'));
process.env.AGENT_APPS_HOME = HOME;
// …nor their ~/.agents/skills (SPEC §4's cross-client user root).
process.env.AGENT_APPS_AGENTS_HOME = path.join(HOME, 'agents');
delete process.env.AGENT_APPS_PATH;
// The workspaces the suites make configure MCP servers of their own: trusted, as a person would
// after `agent-apps trust` (the trust suites take this away to test the refusal).
process.env.AGENT_APPS_TRUST_WORKSPACE ??= '1';
process.on('exit', () => fs.rmSync(HOME, { recursive: true, force: true }));

export const TEST_DIR = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.dirname(TEST_DIR);
export const LIBRARY = path.join(REPO, 'skills');

/** Absolute path of a fixture project (`test/fixtures/<name>`), or a file in it. */
export function fixture(name: string, ...rest: string[]): string {
  return path.join(TEST_DIR, 'fixtures', name, ...rest);
}

/** A runtime whose cwd is a fixture project; closed when the test ends. */
export async function runtimeFor(t: TestContext, name: string, opts: RuntimeOptions = {}): Promise<Runtime> {
  return runtimeAt(t, fixture(name), opts);
}

/** A runtime with its cwd at `dir`; closed when the test ends. */
export async function runtimeAt(t: TestContext, dir: string, opts: RuntimeOptions = {}): Promise<Runtime> {
  const rt = await createRuntime({ cwd: dir, ...opts });
  t.after(() => rt.close());
  return rt;
}

/** A runtime with no project at all (an empty temp cwd): only the library and programmatic tools. */
export async function bareRuntime(t: TestContext, opts: RuntimeOptions = {}): Promise<Runtime> {
  return runtimeAt(t, tempDir(t), opts);
}

/** An empty temp directory removed when the test ends. */
export function tempDir(t: TestContext, prefix = 'agent-apps-test-'): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A temp workspace built from `relative path → file text`; returns its root. */
export function workspace(t: TestContext, files: Record<string, string>): string {
  const dir = tempDir(t, 'agent-apps-ws-');
  writeFiles(dir, files);
  return dir;
}

export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    const file = path.join(dir, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  }
}

/** Log events of the runtime's run, optionally filtered (the ring buffer of SPEC §10). */
export function logs(rt: Runtime, filter: { type?: string | string[]; tag?: string; level?: LogEvent['level'] } = {}): LogEvent[] {
  return rt.root.manager.tail(filter);
}

/** A programmatic middleware: `fn(ctx, args, target)`; registered hidden with role middleware. */
export function middleware(name: string, fn: (ctx: Context, args: any, target: Context) => unknown, metadata: Record<string, unknown> = {}): ToolDef {
  return {
    name,
    frontmatter: { name, description: `test middleware ${name}`, metadata: { role: 'middleware', visibility: 'hidden', ...metadata } },
    fn: (ctx, args) => fn(ctx, args, ctx.envelope.target),
  };
}

/** A programmatic skill with cascade metadata. */
export function skill(name: string, fn: ToolDef['fn'], metadata: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): ToolDef {
  return { name, frontmatter: { name, description: `test skill ${name}`, ...extra, metadata }, fn };
}

/**
 * Extra middleware (SPEC §6.5) that ends the chain right after `directives` with the served
 * prompt's expansion, so Markdown skills can be checked without an agent.
 */
export const captureExpanded = {
  'capture-expanded': {
    after: ['directives'],
    before: ['execute', 'agent-execute'],
    fn: (served: Context) => served.locals.prompt?.expanded,
  },
};

/** Rejects (with the error) or resolves (with undefined): for asserting on a settled invoke. */
export async function settle(p: Promise<unknown>): Promise<{ value?: unknown; error?: any }> {
  try {
    return { value: await p };
  } catch (error) {
    return { error };
  }
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
