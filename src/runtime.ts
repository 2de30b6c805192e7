// createRuntime (docs/architecture.md): search paths, registry, logger, kernel and the root context.
import path from 'node:path';
import { Kernel } from './kernel/orchestrator.ts';
import { Logger } from './kernel/log.ts';
import { Registry } from './loader/registry.ts';
import { LIBRARY_ROOT, PACKAGE_ROOT, defaultPaths, findWorkspace } from './loader/search-paths.ts';
import { installModuleHooks } from './loader/module-hooks.ts';
import { declare } from './loader/frontmatter.ts';
import { closeEvents, settle } from './events/runtime.ts';
import { invokeRemotely } from './nats/connect.ts';
import { AgentAppsError } from './core/errors.ts';
import { managerOf } from './kernel/manager.ts';
import { closeHandlers, onClose } from './kernel/on-close.ts';
import { askDesk, setAsker } from './kernel/asking.ts';
import { WorkspaceTrust, type ProcessConfig } from './policy/workspace-trust.ts';
import { gatherProcessConfig } from './policy/process-config.ts';
import { tracingConfig } from './otel/config.ts';
import type { HubOptions } from './mcp/hub.ts';
import { parseAllowedTools } from './kernel/allowed-tools.ts';
import type { Asker } from './core/ask.ts';
import type { Context, Globals, InvokeOptions, JsonObject, LoadedTool, Reporter, ToolDef, ToolDescription, ToolSummary } from './core/types.ts';

export interface RuntimeOptions {
  cwd?: string;
  paths?: string[];
  overrides?: JsonObject;
  interactive?: boolean;
  reporters?: Reporter[];
  /** Aborting it aborts the root context and everything below it. */
  signal?: AbortSignal;
  /**
   * The person to ask (docs/agents.md): `ctx.manager.ask()` and the approval gates of agent code go to
   * it. The terminal UI gives one when the run is interactive; without one, asking fails with
   * E_NOT_INTERACTIVE and a gate is refused (E_ALLOWED_TOOLS, "needs approval").
   */
  asker?: Asker;
  /**
   * `--approve`: approval gates these calls pass without asking — `all`, or allowed-tools patterns
   * (`shell(command=echo *) file-write`). It never admits a call that no gate would have let through.
   */
  approve?: string;
  /**
   * `--trust-workspace`: the workspace's own configuration that starts processes (stdio MCP servers
   * of `.mcp.json` / `mcp:`, SKILL.md `!` spans, shell hooks) runs without a recorded trust. Without
   * it, such a start needs `agent-apps trust`, an answer from the asker, AGENT_APPS_TRUST_WORKSPACE=1
   * or CI=true, else fails with E_UNTRUSTED_WORKSPACE (docs/security.md).
   */
  trustWorkspace?: boolean;
}

export interface Runtime {
  root: Context;
  invoke(ref: string | ToolDef, args?: JsonObject | unknown, options?: InvokeOptions): Promise<unknown>;
  register(tool: ToolDef): void;
  list(opts?: { all?: boolean }): Promise<ToolSummary[]>;
  describe(ref: string): Promise<ToolDescription>;
  close(): Promise<void>;
}

/** Set by the entry module (src/index.ts or dist/index.js) so skills' `agent-apps` imports resolve to it. */
let entryUrl = new URL(import.meta.url.endsWith('.ts') ? './index.ts' : './index.js', import.meta.url).href;
export function setEntryUrl(url: string): void {
  entryUrl = url;
}

/**
 * The MCP client (docs/mcp.md) as the registry's `mcp` tool source (src/loader/tool-source.ts):
 * src/mcp/hub.ts loads on first need — a name no skill holds, an `mcp://` ref, a listing. Added
 * here, the composition root, because loader/ does not import mcp/ (docs/architecture.md, The rules).
 */
function addMcpSource(registry: Registry, options: (cwd: string) => HubOptions): void {
  registry.addSource('mcp', async (cwd) => {
    const { McpHub } = await import('./mcp/hub.ts');
    return new McpHub(registry, options(cwd));
  });
}

let shared: Registry | undefined;

/**
 * findTool (docs/concepts.md) as a standalone function: resolve a ref on a list of search paths
 * without a runtime. Each call shares one registry (and its caches), with the MCP servers of the
 * workspace around the cwd of its first need.
 */
export function findTool(ref: string | ToolDef, paths: readonly string[] = [LIBRARY_ROOT], cwd: string = process.cwd()): Promise<LoadedTool> {
  if (!shared) {
    shared = new Registry(LIBRARY_ROOT, new Map());
    addMcpSource(shared, (dir) => ({ workspace: findWorkspace(dir), cwd: dir }));
  }
  // Search roots given relative are relative to the cwd, like --path: a tool's uri is always file:///….
  const roots = paths.every((p) => path.isAbsolute(p)) ? paths : paths.map((p) => path.resolve(cwd, p));
  return shared.find(ref, Object.isFrozen(roots) ? roots : Object.freeze([...roots]), cwd);
}

export async function createRuntime(opts: RuntimeOptions = {}): Promise<Runtime> {
  installModuleHooks(entryUrl);
  const cwd = path.resolve(opts.cwd ?? process.cwd());
  const workspace = findWorkspace(cwd);
  const paths = Object.freeze(defaultPaths({ cwd, workspace, paths: opts.paths })) as string[];
  const logger = new Logger();
  for (const r of opts.reporters ?? []) logger.addReporter(r);
  // kernel and root join the state just below, once they exist.
  const globals: Globals = { config: {}, tools: new Map<string, LoadedTool>(), cache: new Map(), internals: { log: logger } as Globals['internals'] };
  const registry = new Registry(LIBRARY_ROOT, globals.tools);
  const kernel = new Kernel({
    registry,
    logger,
    globals,
    base: { cwd, library: LIBRARY_ROOT, runtime: PACKAGE_ROOT, workspace, paths },
    overrides: opts.overrides ?? {},
  });
  globals.internals.kernel = kernel;
  // agent-acp and agent-kiro's provider (`agent-apps/agent`'s runAcpProvider): src/acp loads on
  // first use, from here, because agent/ may not import acp/ (docs/architecture.md, The rules).
  globals.internals.runAcpProvider = async (ctx, args, o) => (await import('./acp/provider.ts')).runAcpProvider(ctx, args, o);
  setAsker(globals, opts.asker);
  if (opts.approve !== undefined) {
    if (typeof opts.approve !== 'string' || !opts.approve.trim()) throw new AgentAppsError('E_USAGE', "approve: 'all' or allowed-tools patterns");
    if (opts.approve.trim() !== 'all') parseAllowedTools(opts.approve);
    globals.internals.approve = opts.approve.trim();
  }
  const { decl, metadata, frontmatter } = declare({ name: 'root', description: 'The runtime root context.' }, 'root');
  const rootTool: LoadedTool = { name: 'root', kind: 'builtin', uri: null, frontmatter, decl, metadata, version: 0 };
  const interactive = opts.interactive === true;
  // docs/concepts.md: run.interactive is true for the root context of an interactive (TTY) run.
  const root = kernel.createRoot(rootTool, {}, opts.signal, interactive);
  globals.internals.root = root;
  // MCP servers (docs/mcp.md): configured from the workspace and the CLI level, started on first
  // use, closed (their processes gone) by close().
  // Workspace trust: nothing the workspace configures starts a process until it is trusted.
  const overridePaths = Array.isArray(opts.overrides?.paths) ? (opts.overrides.paths as unknown[]).filter((p): p is string => typeof p === 'string').map((p) => path.resolve(cwd, p)) : [];
  const trust: WorkspaceTrust = new WorkspaceTrust({
    workspace,
    ownRoots: [LIBRARY_ROOT, ...(opts.paths ?? []).map((p) => path.resolve(cwd, p)), ...(process.env.AGENT_APPS_PATH ?? '').split(':').filter(Boolean).map((p) => path.resolve(cwd, p)), ...overridePaths],
    ...(opts.trustWorkspace ? { trusted: true } : {}),
    gather: (): Promise<ProcessConfig[]> => gatherProcessConfig(kernel, paths, (file) => trust.needsTrust(file)),
    ask: (question) => askDesk(globals)?.ask(question, root.run.signal),
  });
  globals.internals.workspaceTrust = trust;
  addMcpSource(registry, () => ({ workspace, cwd, overrides: opts.overrides, log: (event) => root.manager.log(event), trust }));
  onClose(kernel, () => registry.closeSources());
  // Tracing (docs/ci.md, "Tracing"): on when OTEL_ variables or the main's `otel:` say so — and
  // only then is the OpenTelemetry SDK loaded. Its spans are sent last on close().
  const tracing = await tracingConfig(kernel);
  if (tracing) {
    const tracer = (await import('./otel/tracer.ts')).startTracer(tracing, (text) => root.manager.log({ type: 'otel-export', tag: 'otel', level: 'warn', text }));
    globals.internals.tracer = tracer;
    onClose(kernel, () => tracer.shutdown());
  }
  let closed = false;

  return {
    root,
    invoke(ref, args, options) {
      // docs/scale.md: a worker runs it, through its own workspace's pipeline.
      if (options?.remote) return invokeRemotely(root, ref, args, options.remote, root.run.signal);
      const o = interactive && !options?.context?.run ? { ...options, context: { ...options?.context, run: { interactive: true } } } : options;
      return root.manager.invoke(ref, args as JsonObject, o);
    },
    register(tool) {
      registry.register(tool);
    },
    list(o) {
      return kernel.list(paths, o);
    },
    describe(ref) {
      return kernel.describe(ref, paths, cwd);
    },
    async close() {
      if (closed) return;
      closed = true;
      // docs/architecture.md: close() emits `shutdown` to whoever subscribed, and gives their handlers a
      // bounded time to settle before the root is aborted — unless it was announced already
      // (the CLI emits it on SIGINT / SIGTERM; event-emit sets the flag).
      const bus = globals.internals.eventBus;
      if (bus && globals.internals.shutdownEmitted !== true) {
        try {
          const { dispatched } = bus.emit({ topic: 'shutdown', type: 'close', data: { reason: 'runtime.close()' }, source: 'runtime', rootContextId: root.nonlocals.rootContextId });
          await settle(dispatched, 3000);
        } catch {}
      }
      for (const fn of closeHandlers(kernel)) {
        try {
          await fn();
        } catch {}
      }
      // The configured backend stops taking events (what this process held un-acked goes back)
      // and the NATS connection, if any, closes (docs/scale.md).
      await closeEvents(globals.internals);
      managerOf(root).abort('runtime closed', true);
      await logger.close();
      // docs/security.md: what the runtime retained goes with it — replay buffers, queued events and
      // handlers, the log ring — even while the caller still holds the runtime object.
      globals.internals.eventBus?.clear();
      logger.clear();
    },
  };
}

declare module './core/types.ts' {
  interface RuntimeState {
    /** This runtime's kernel: resolution, planning, invocation (set by createRuntime). */
    kernel: Kernel;
    /** The runtime's root context. */
    root: Context;
    /** The log ring and its reporters (docs/events.md). */
    log: Logger;
    /** `--approve` / createRuntime({ approve }): calls that pass an approval gate unasked (docs/agents.md). */
    approve?: string;
  }
}
