// The MCP client side of a runtime (docs/mcp.md): which servers are configured, their tools
// as tools of the runtime (`mcp://SERVER/TOOL`, bare name `SERVER-TOOL`), one connection per
// server, started on first use and closed with the runtime.
//
// Resolution of a bare name happens before any chain runs, so the servers are collected
// statically: the `mcp` key of the `main` skills on the search paths (their own metadata,
// interpolated as the cascade would), the workspace's `.mcp.json`, and `--set mcp.servers.…`.
// The `mcp` middleware adds servers set anywhere else in a cascade (a skill's own metadata) when
// it runs. A bare name `fs-read-text-file` looks only at servers whose normalised name prefixes
// it, and connects to those alone; a plain `run` of a skill never gets here.
//
// A tool source of the registry (src/loader/tool-source.ts), added by createRuntime and loaded on
// first need (a name it does not know, a listing); the SDK itself loads only when a server is
// connected (client.ts).
import fs from 'node:fs';
import path from 'node:path';
import { AgentAppsError, ToolNotFoundError } from '../core/errors.ts';
import { isPlainObject } from '../core/path.ts';
import type { InterpolationVars } from '../kernel/interpolate.ts';
import type { JsonObject, LoadedTool, LogInput, ToolSummary } from '../core/types.ts';
import { declare } from '../loader/frontmatter.ts';
import { markUntrusted } from '../kernel/schema.ts';
import { nameProblem, suggest } from '../loader/names.ts';
import type { IndexEntry, RootIndex } from '../loader/scan.ts';
import type { SourceProcess, ToolSource } from '../loader/tool-source.ts';
import { bareName, fingerprint, normaliseName, parseMcpKey, parseServer, parseToolUri, readMcpJson, servesThisWorkspace, toolUri, whereConfigured, type BrokenServer, type ParseContext, type ServerConfig } from './config.ts';
import type { CallHooks, Connection } from './client.ts';
import { checkAgentSkill, diagnosticText } from '../loader/agent-skills.ts';
import { cacheDir, checkEntry, materialise, type CheckedEntry } from './skills.ts';
import type { WorkspaceTrust } from '../policy/workspace-trust.ts';
import { commandLine } from '../core/command-line.ts';
import { askDesk, runDesk } from '../kernel/asking.ts';

/** What the hub needs of the registry (an interface: the hub is the registry's plug-in, not its part). */
export interface HubHost {
  readonly library: string;
  /** Bumps when what tools exist or contain changed: the collected configuration is stale. */
  readonly structure: number;
  root(dir: string): RootIndex;
  load(entry: IndexEntry): Promise<LoadedTool>;
}

export interface HubOptions {
  workspace: string;
  cwd: string;
  /** The CLI level of the cascade (`--set mcp.servers.fs.timeoutMs=5000`). */
  overrides?: JsonObject;
  /** Log events of the connections themselves (stderr lines, start, exit). */
  log?: (event: LogInput) => void;
  /** The workspace's trust: a stdio server its own files configure starts only once it is trusted. */
  trust?: WorkspaceTrust;
}

/** An MCP server's tool as a loaded tool. */
export type McpTool = LoadedTool & {
  kind: 'mcp';
  mcp: { server: string; tool: string; authorityDir?: string };
};

/** A skill an MCP server offers over the Skills extension, fetched and verified into its cache folder (src/mcp/skills.ts). */
export type McpSkillTool = LoadedTool & {
  kind: 'mcp-skill';
  mcp: { server: string; tool: string; authorityDir?: string };
  mcpSkill: { server: string; uri: string; digest: string };
};

/** A listing entry for an MCP tool or skill: `shadowedBy` when a skill of the same name wins. */
export type McpSummary = ToolSummary & { shadowedBy?: string; server?: string; digest?: string };

export interface McpListOptions {
  all?: boolean;
  only?: (name: string) => boolean;
  /**
   * Which servers the listing needs, by normalised name (`fs`): the others are not connected.
   * Without it every configured server is (a name filter alone cannot tell which tool names a
   * server has before it is asked).
   */
  servers?: (prefix: string) => boolean;
  /** The origin of the skill that holds this name, if one does (it wins over the MCP tool). */
  taken?: (name: string) => string | null | undefined;
}

interface Collected {
  servers: ServerConfig[];
  broken: BrokenServer[];
}

interface ServerState {
  config: ServerConfig;
  /** The connection under way or made; replaced when it died. */
  connecting?: Promise<Connection>;
  conn?: Connection;
  /** A start that failed: not retried within this runtime (a missing command stays missing). */
  failure?: Error;
  byBare: Map<string, McpTool>;
  byName: Map<string, McpTool>;
  /** Its `skills/list`, checked (src/mcp/skills.ts), for the connection it came from; again after its ttlMs. */
  skills?: { conn: Connection; until: number; value: Promise<CheckedEntry[]> };
  /** Skills fetched and verified, by name and digest. */
  skillTools: Map<string, Promise<McpSkillTool>>;
}

const DESCRIPTION_MAX = 4096;
let versions = 0;

export class McpHub implements ToolSource {
  readonly #host: HubHost;
  readonly #opts: HubOptions;
  #collected = new WeakMap<readonly string[], { structure: number; stamp: string; value: Promise<Collected> }>();
  /** Servers the `mcp` middleware met in a cascade and that no static source names. */
  #dynamic = new Map<string, ServerConfig>();
  #dynamicBroken = new Map<string, BrokenServer>();
  #seen = new WeakSet<object>();
  #states = new Map<string, ServerState>();
  #closed = false;

  constructor(host: HubHost, opts: HubOptions) {
    this.#host = host;
    this.#opts = opts;
  }

  get workspace(): string {
    return this.#opts.workspace;
  }

  // ── configuration ─────────────────────────────────────────────────────────────────────────

  /** Every server configured for these search paths (first definition of a name wins), and the broken entries. */
  async servers(paths: readonly string[]): Promise<Collected> {
    const file = path.join(this.#opts.workspace, '.mcp.json');
    let stamp = '';
    try {
      const st = fs.statSync(file);
      stamp = `${st.mtimeMs}:${st.size}`;
    } catch {}
    const structure = this.#host.structure;
    let hit = this.#collected.get(paths);
    if (!hit || hit.structure !== structure || hit.stamp !== stamp) {
      hit = { structure, stamp, value: this.#collect(paths, file) };
      this.#collected.set(paths, hit);
    }
    const collected = await hit.value;
    if (!this.#dynamic.size && !this.#dynamicBroken.size) return collected;
    const known = new Set([...collected.servers.map((s) => s.name), ...collected.broken.map((b) => b.name)]);
    return {
      servers: [...collected.servers, ...[...this.#dynamic.values()].filter((s) => !known.has(s.name))],
      broken: [...collected.broken, ...[...this.#dynamicBroken.values()].filter((b) => !known.has(b.name))],
    };
  }

  async #collect(paths: readonly string[], mcpJson: string): Promise<Collected> {
    const { workspace, cwd } = this.#opts;
    const servers = new Map<string, ServerConfig>();
    const broken = new Map<string, BrokenServer>();
    const raws = new Map<string, { raw: unknown; pc: ParseContext }>();
    const off = new Set<string>();
    const add = (parsed: { servers: ServerConfig[]; broken: BrokenServer[]; off: string[] }, raw?: Record<string, unknown>, pc?: Omit<ParseContext, 'key'>) => {
      for (const s of parsed.servers) {
        if (servers.has(s.name) || broken.has(s.name) || off.has(s.name)) continue;
        // `agent-apps mcp serve` of this workspace, there for other clients: its tools are ours.
        if (servesThisWorkspace(s, workspace)) {
          this.#opts.log?.({ type: 'skip', tag: 'mcp', level: 'debug', server: s.name, text: `MCP server '${s.name}' is agent-apps serving this workspace (${whereConfigured(s)}): not used by agent-apps itself` });
          off.add(s.name);
          continue;
        }
        servers.set(s.name, s);
        if (raw && pc) raws.set(s.name, { raw: raw[s.name], pc: { ...pc, key: s.source.key } });
      }
      for (const b of parsed.broken) if (!servers.has(b.name) && !broken.has(b.name) && !off.has(b.name)) broken.set(b.name, b);
      for (const name of parsed.off) if (!servers.has(name) && !broken.has(name)) off.add(name);
    };
    // 1. The `main` skills of the search roots, in search-path order; in a root, outer folders first.
    for (const dir of paths) {
      if (dir === this.#host.library) continue;
      const mains = [...this.#host.root(dir).mains.values()].sort((a, b) => a.dir.length - b.dir.length);
      for (const entry of mains) {
        let tool: LoadedTool;
        try {
          tool = await this.#host.load(entry);
        } catch {
          continue; // a broken main is listed (with its error) by the registry itself
        }
        const value = tool.metadata.mcp;
        if (value === undefined) continue;
        const vars: InterpolationVars = { dir: path.dirname(entry.file), root: dir, workspace, cwd, name: tool.name };
        const pc = { file: entry.file, vars, baseDir: path.dirname(entry.file), defaultCwd: workspace, authority: { root: dir, dir: entry.dir }, lenient: false };
        try {
          add(parseMcpKey(value, pc), isPlainObject(value) && isPlainObject(value.servers) ? value.servers : undefined, pc);
        } catch (err) {
          const name = `mcp (${path.relative(workspace, entry.file) || entry.file})`;
          if (!broken.has(name)) broken.set(name, { name, prefix: '', error: (err as Error).message, source: { file: entry.file, key: 'mcp' } });
        }
      }
    }
    // 2. The workspace's .mcp.json: its tools run with the cascade of the workspace's own main.
    const vars: InterpolationVars = { dir: workspace, root: workspace, workspace, cwd, name: '' };
    try {
      const parsed = readMcpJson(mcpJson, vars);
      if (parsed) {
        const authority = this.#workspaceAuthority(paths);
        for (const s of parsed.servers) s.authority = authority;
        add(parsed, parsed.raw, parsed.pc && { ...parsed.pc, ...(authority ? { authority } : {}) });
      }
    } catch (err) {
      broken.set('.mcp.json', { name: '.mcp.json', prefix: '', error: (err as Error).message, source: { file: mcpJson, key: 'mcpServers' } });
    }
    // 3. `--set mcp.servers.NAME.KEY=…`: a whole entry, or keys laid over the one configured.
    const cli = this.#opts.overrides?.mcp;
    if (isPlainObject(cli) && isPlainObject(cli.servers)) {
      for (const [name, patch] of Object.entries(cli.servers)) {
        const key = `mcp.servers.${name}`;
        if (patch === false || patch === null) {
          servers.delete(name);
          broken.delete(name);
          continue;
        }
        const cliVars: InterpolationVars = { dir: cwd, root: workspace, workspace, cwd, name: '' };
        const base = raws.get(name);
        const whole = isPlainObject(patch) && (patch.command !== undefined || patch.url !== undefined);
        try {
          const config =
            base && !whole && isPlainObject(patch) && isPlainObject(base.raw)
              ? parseServer(name, { ...base.raw, ...patch, ...(isPlainObject(patch.env) ? { env: { ...(base.raw.env as object), ...patch.env } } : {}), ...(isPlainObject(patch.headers) ? { headers: { ...(base.raw.headers as object), ...patch.headers } } : {}) }, base.pc)
              : parseServer(name, patch, { key, vars: cliVars, baseDir: cwd, defaultCwd: workspace, lenient: false, authority: this.#workspaceAuthority(paths) });
          servers.set(name, config);
          broken.delete(name);
        } catch (err) {
          servers.delete(name);
          broken.set(name, { name, prefix: normaliseName(name), error: (err as Error).message, source: { key } });
        }
      }
    } else if (cli !== undefined && cli !== null && !isPlainObject(cli)) {
      broken.set('mcp (--set)', { name: 'mcp (--set)', prefix: '', error: '--set mcp=… must be { servers: { NAME: … } }', source: { key: 'mcp' } });
    }
    return { servers: [...servers.values()], broken: [...broken.values()] };
  }

  /** The search root of the workspace's own skills (its root-level main is the authority), if any. */
  #workspaceAuthority(paths: readonly string[]): ServerConfig['authority'] {
    const inside = paths.filter((p) => p !== this.#host.library && (p + path.sep).startsWith(this.#opts.workspace + path.sep));
    const root = inside.find((p) => this.#host.root(p).mains.has(p)) ?? inside[0];
    return root ? { root, dir: root } : undefined;
  }

  /**
   * The `mcp` middleware's value, from wherever the cascade took it: servers that no static
   * source names become known (a skill's own `mcp:` key). Throws E_CONFIG for a malformed value.
   */
  define(value: unknown, place: { file?: string; authority?: { root: string; dir: string } }): void {
    // A cascade's value is frozen and shared by every invocation of its tool: read once.
    const cacheable = value !== null && typeof value === 'object';
    if (cacheable && this.#seen.has(value)) return;
    const parsed = parseMcpKey(value, { file: place.file, baseDir: place.file ? path.dirname(place.file) : this.#opts.cwd, defaultCwd: this.#opts.workspace, authority: place.authority });
    for (const s of parsed.servers) if (!this.#dynamic.has(s.name)) this.#dynamic.set(s.name, s);
    for (const b of parsed.broken) {
      if (!this.#dynamicBroken.has(b.name)) this.#dynamicBroken.set(b.name, b);
    }
    const first = parsed.broken[0];
    if (first) throw new AgentAppsError('E_CONFIG', first.error);
    if (cacheable) this.#seen.add(value);
  }

  /** Has `define` read this value already? (The middleware then skips finding its file.) */
  defined(value: unknown): boolean {
    return value !== null && typeof value === 'object' && this.#seen.has(value);
  }

  // ── connections ───────────────────────────────────────────────────────────────────────────

  #state(config: ServerConfig): ServerState {
    const key = fingerprint(config);
    let state = this.#states.get(key);
    if (!state) {
      state = { config, byBare: new Map(), byName: new Map(), skillTools: new Map() };
      this.#states.set(key, state);
    }
    return state;
  }

  /** The live connection to a server: started on first use, started again after it died. */
  async connection(config: ServerConfig): Promise<Connection> {
    const state = this.#state(config);
    if (state.failure) throw state.failure;
    if (state.conn?.alive) return state.conn;
    if (state.conn && !state.conn.alive && !state.connecting) state.conn = undefined;
    if (!state.connecting) {
      if (this.#closed) throw new AgentAppsError('E_MCP', `MCP server '${config.name}': the runtime is closed`);
      state.connecting = this.#open(state).finally(() => {
        state.connecting = undefined;
      });
    }
    return state.connecting;
  }

  async #open(state: ServerState): Promise<Connection> {
    const log = (e: LogInput) => this.#opts.log?.(e);
    const config = state.config;
    // A stdio server boots while the SDK loads (client-stdio.ts has no SDK at run time).
    let spawned;
    if (config.transport === 'stdio') {
      // A cloned workspace starts nothing by itself (docs/security.md): asked, or refused, first.
      await this.#opts.trust?.require({ kind: 'mcp', name: config.name, command: commandLine(config.command, config.args), ...(config.source.file ? { file: config.source.file } : {}) });
      const stdio = await import('./client-stdio.ts');
      const cycle = stdio.startCycle(config);
      if (cycle) {
        state.failure = new AgentAppsError('E_MCP', `MCP server ${JSON.stringify(config.name)} is not started: ${cycle} — check ${whereConfigured(config)}`);
        throw state.failure;
      }
      spawned = stdio.spawnServer(config, log);
    }
    const { Connection } = await import('./client.ts');
    let conn: Connection;
    try {
      conn = await Connection.open(config, { log }, spawned);
    } catch (err) {
      state.failure = err as Error;
      throw err;
    }
    if (this.#closed) {
      await conn.close();
      throw new AgentAppsError('E_MCP', `MCP server '${state.config.name}': the runtime closed while it started`);
    }
    state.conn = conn;
    this.#index(state, conn);
    return conn;
  }

  /** The server's tools as loaded tools, by bare name and by their own name. */
  #index(state: ServerState, conn: Connection): void {
    const { config } = state;
    const byBare = new Map<string, McpTool>();
    const byName = new Map<string, McpTool>();
    for (const t of conn.tools) {
      const name = bareName(config.name, t.name);
      if (byName.has(t.name)) continue;
      const tool = this.#tool(config, t, name);
      byName.set(t.name, tool);
      if (!name.startsWith(config.prefix + '-') || nameProblem(name) || byBare.has(name)) {
        this.#opts.log?.({ type: 'warn', tag: 'mcp', level: 'warn', server: config.name, text: `MCP tool ${JSON.stringify(t.name)} of server '${config.name}' has no bare name of its own ('${name}'): call it as ${toolUri(config.name, t.name)}` });
        continue;
      }
      byBare.set(name, tool);
    }
    state.byBare = byBare;
    state.byName = byName;
  }

  #tool(config: ServerConfig, t: Connection['tools'][number], bare: string): McpTool {
    const server = config.name;
    const uri = toolUri(server, t.name);
    const params = cleanSchema(t.inputSchema);
    const returns = t.outputSchema ? cleanSchema(t.outputSchema) : undefined;
    // A server's schemas are not ours: their patterns run in linear time, or not at all (schema.ts).
    if (params) markUntrusted(params, 'E_MCP', `MCP server '${server}', tool '${t.name}', inputSchema`);
    if (returns) markUntrusted(returns, 'E_MCP', `MCP server '${server}', tool '${t.name}', outputSchema`);
    let description = typeof t.description === 'string' ? printable(t.description) : typeof t.title === 'string' ? printable(t.title) : undefined;
    if (description && description.length > DESCRIPTION_MAX) description = description.slice(0, DESCRIPTION_MAX) + '…';
    const metadata: JsonObject = {};
    if (params !== undefined) metadata.params = params;
    if (returns !== undefined) metadata.returns = returns;
    // The server entry's trust (docs/agents.md) is its tools' own: the bridge gates or refuses their calls from agent code.
    if (config.trust !== undefined) metadata.trust = config.trust;
    // A name that is not a valid skill name still gets a tool (reachable by its mcp:// uri).
    const valid = !nameProblem(bare) ? bare : 'anonymous';
    const fm = { name: valid, ...(description !== undefined ? { description } : {}), metadata, mcp: { server, tool: t.name, ...(t.title ? { title: t.title } : {}), ...(t.annotations ? { annotations: t.annotations } : {}) } };
    const { name, decl, frontmatter } = declare(fm, valid);
    const hub = this;
    const tool: McpTool = {
      name,
      kind: 'mcp',
      uri,
      ...(config.authority ? { root: config.authority.root } : {}),
      frontmatter,
      decl,
      metadata,
      version: ++versions,
      mcp: { server, tool: t.name, authorityDir: config.authority?.dir },
      async fn(ctx, args) {
        const conn = await hub.connection(config);
        // The server's questions go to whoever this run asks (docs/mcp.md, "When a server asks").
        const asker = runDesk(ctx.nonlocals) ?? askDesk(ctx.globals);
        const hooks: CallHooks = {
          signal: ctx.run.signal,
          name,
          ...(asker ? { asker } : {}),
          onProgress: (p) => ctx.manager.log({ type: 'progress', tag: 'mcp', level: 'info', server, tool: t.name, ...p, text: `${server} ${p.progress}${p.total !== undefined ? `/${p.total}` : ''}${p.message ? ` ${printable(p.message)}` : ''}` }),
        };
        const tracer = ctx.globals.internals.tracer;
        if (tracer === undefined) return conn.call(t.name, args, hooks);
        // Tracing (docs/ci.md, "Tracing"): a client span per tools/call, its traceparent in the request's _meta.
        const span = tracer.span(`tools/call ${t.name}`, {
          parent: ctx,
          kind: 'client',
          attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': t.name, 'agent_apps.mcp.server': server, 'mcp.protocol.version': conn.protocol, 'network.transport': config.transport === 'stdio' ? 'pipe' : 'tcp' },
        });
        try {
          const result = await conn.call(t.name, args, { ...hooks, meta: { traceparent: span.traceparent } });
          span.end();
          return result;
        } catch (err) {
          span.end(err);
          throw err;
        }
      },
    };
    return tool;
  }

  /** The server's tools, connecting if needed (E_MCP if it cannot start). */
  async #tools(config: ServerConfig): Promise<ServerState> {
    const state = this.#state(config);
    if (!state.conn?.alive) await this.connection(config);
    return state;
  }

  // ── resolution ────────────────────────────────────────────────────────────────────────────

  /**
   * A bare name no skill holds: the tool of a configured server whose normalised name prefixes
   * it (longest prefix first), connecting to those servers alone. Undefined if none has it;
   * E_MCP if the one that could have it cannot start.
   */
  async findBare(name: string, paths: readonly string[]): Promise<McpTool | McpSkillTool | undefined> {
    const { servers, broken } = await this.servers(paths);
    const candidates = servers.filter((s) => name.startsWith(s.prefix + '-')).sort((a, b) => b.prefix.length - a.prefix.length);
    let failure: unknown;
    for (const config of candidates) {
      try {
        const state = await this.#tools(config);
        const hit = state.byBare.get(name);
        if (hit) return hit;
      } catch (err) {
        failure ??= err;
      }
    }
    // A skill a server offers over the Skills extension goes by its own name.
    const skill = await this.findSkill(name, paths);
    if (skill) return skill;
    if (failure) throw failure;
    // The server that would hold it has a malformed entry: that is the error, not an unknown name.
    const bad = broken.filter((b) => b.prefix && name.startsWith(b.prefix + '-')).sort((a, b) => b.prefix.length - a.prefix.length)[0];
    if (bad) throw new AgentAppsError('E_CONFIG', bad.error);
    return undefined;
  }

  /** Near names among the tools of the servers a bare name points at (connected ones only). */
  async suggestions(name: string, paths: readonly string[]): Promise<string[]> {
    const { servers } = await this.servers(paths);
    const names: string[] = [];
    for (const s of servers) {
      const state = this.#states.get(fingerprint(s));
      if (state) names.push(...state.byBare.keys());
    }
    return suggest(name, names);
  }

  /** The servers a look-up did not start because the workspace is not trusted: they may offer the name (as a skill). */
  async unasked(paths: readonly string[]): Promise<string | undefined> {
    const trust = this.#opts.trust;
    if (!trust) return undefined;
    const { servers } = await this.servers(paths);
    const skipped = servers.filter((s) => s.transport === 'stdio' && trust.needsTrust(s.source.file));
    if (!skipped.length || (await trust.isTrusted())) return undefined;
    return `not asked: MCP server${skipped.length > 1 ? 's' : ''} ${skipped.map((s) => `'${s.name}'`).join(', ')}, which the untrusted workspace configures and which may offer it — 'agent-apps trust' shows what ${skipped.length > 1 ? 'they' : 'it'} would run and trusts it`;
  }

  /** `mcp://SERVER/TOOL`: the server by its configured name, the tool by its own name. */
  async findUri(uri: string, paths: readonly string[]): Promise<McpTool> {
    const parsed = parseToolUri(uri);
    if (!parsed) throw new ToolNotFoundError(uri, [], 'an MCP ref is mcp://SERVER/TOOL');
    const { servers, broken } = await this.servers(paths);
    const config = servers.find((s) => s.name === parsed.server);
    if (!config) {
      const bad = broken.find((b) => b.name === parsed.server);
      if (bad) throw new AgentAppsError('E_CONFIG', bad.error);
      const known = servers.map((s) => s.name);
      throw new ToolNotFoundError(uri, [], known.length ? `no MCP server '${parsed.server}' is configured — configured: ${known.join(', ')}` : `no MCP server '${parsed.server}' is configured (mcp.servers in a main, or .mcp.json at the workspace root)`);
    }
    const state = await this.#tools(config);
    const hit = state.byName.get(parsed.tool);
    if (!hit) throw new ToolNotFoundError(uri, suggest(parsed.tool, state.byName.keys()).map((t) => toolUri(config.name, t)), `MCP server '${config.name}' has no tool '${parsed.tool}'`);
    return hit;
  }

  // ── listing ───────────────────────────────────────────────────────────────────────────────

  /**
   * The MCP tools for `list` and agent discovery: every configured server is connected (in
   * parallel); one that cannot start is one broken entry. With `only`, names it refuses are left
   * out, and so are tools shadowed by a skill; without, a shadowed tool is listed, marked.
   */
  async list(paths: readonly string[], opts: McpListOptions = {}): Promise<McpSummary[]> {
    const collected = await this.servers(paths);
    const wanted = opts.servers ?? (() => true);
    const servers = collected.servers.filter((s) => wanted(s.prefix));
    const broken = collected.broken.filter((b) => !b.prefix || wanted(b.prefix));
    if (!servers.length && !broken.length) return [];
    const only = opts.only;
    const out: McpSummary[] = [];
    for (const b of broken) {
      if (only && !only(b.prefix || b.name)) continue;
      out.push({ name: b.name, kind: 'mcp', origin: b.source.file ? `file://${b.source.file}` : null, visibility: 'public', error: b.error });
    }
    // An untrusted workspace's stdio servers are listed as what they are, never started for a listing.
    const trust = this.#opts.trust;
    const untrusted = trust && servers.some((c) => c.transport === 'stdio' && trust.needsTrust(c.source.file)) && !(await trust.isTrusted());
    const results = await Promise.all(
      servers.map(async (config) => {
        if (untrusted && config.transport === 'stdio' && trust.needsTrust(config.source.file)) return { config, untrusted: true as const };
        try {
          return { config, state: await this.#tools(config) };
        } catch (err) {
          return { config, error: err as Error };
        }
      }),
    );
    for (const r of results) {
      if ('untrusted' in r) {
        if (only && !only(r.config.prefix)) continue;
        const command = r.config.transport === 'stdio' ? commandLine(r.config.command, r.config.args) : '';
        out.push({ name: r.config.name, kind: 'mcp', origin: toolUri(r.config.name, '').slice(0, -1), visibility: 'public', server: r.config.name, untrusted: `not started: the workspace is not trusted (it would run ${command}) — agent-apps trust` });
        continue;
      }
      if (r.error || !r.state) {
        if (only && !only(r.config.prefix)) continue;
        out.push({ name: r.config.name, kind: 'mcp', origin: toolUri(r.config.name, '').slice(0, -1), visibility: 'public', error: r.error?.message ?? 'not connected', server: r.config.name });
        continue;
      }
      for (const [name, tool] of r.state.byBare) {
        if (only && !only(name)) continue;
        const shadowedBy = opts.taken?.(name);
        if (shadowedBy !== undefined) {
          if (only) continue;
          out.push({ ...summary(tool), shadowedBy: shadowedBy ?? '(builtin)' });
          continue;
        }
        out.push(summary(tool));
      }
    }
    // The servers' skills (Skills extension): a local skill, a tool or an earlier server's skill of the same name wins.
    const held = new Map<string, string>();
    for (const r of results) if ('state' in r && r.state) for (const [name, tool] of r.state.byBare) held.set(name, tool.uri ?? name);
    for (const r of results) {
      if (!('state' in r) || !r.state) continue;
      let entries: CheckedEntry[];
      try {
        entries = await this.#skillEntries(r.config);
      } catch (err) {
        out.push({ name: r.config.name, kind: 'mcp-skill', origin: toolUri(r.config.name, '').slice(0, -1), visibility: 'public', error: (err as Error).message, server: r.config.name });
        continue;
      }
      for (const e of entries) {
        if (only && !only(e.name)) continue;
        const s: McpSummary = { name: e.name, kind: 'mcp-skill', origin: e.entry.uri, visibility: e.entry.frontmatter['disable-model-invocation'] === true ? 'hidden' : 'public', server: r.config.name };
        if (typeof e.entry.frontmatter.description === 'string') s.description = printable(e.entry.frontmatter.description).slice(0, DESCRIPTION_MAX);
        if ('problem' in e) s.error = `MCP server '${r.config.name}' offers skill ${JSON.stringify(e.name)}, which cannot run: ${e.problem}`;
        else s.digest = e.digest;
        const shadowedBy = opts.taken?.(e.name) ?? held.get(e.name);
        if (shadowedBy !== undefined) {
          if (only) continue;
          out.push({ ...s, shadowedBy: shadowedBy ?? '(builtin)' });
          continue;
        }
        if (!('problem' in e)) held.set(e.name, e.entry.uri);
        out.push(s);
      }
    }
    return out;
  }

  // ── skills (the Skills extension, host side: docs/mcp.md, "Skills from MCP servers") ──────

  /** The server's skills/list, checked, cached for the connection (and its ttlMs, when the server gives one). */
  async #skillEntries(config: ServerConfig): Promise<CheckedEntry[]> {
    const state = await this.#tools(config);
    const conn = state.conn!;
    const now = Date.now();
    if (!state.skills || state.skills.conn !== conn || state.skills.until < now) {
      const value = conn.listSkills().then(({ skills, invalid, ttlMs }) => {
        for (const bad of invalid) this.#opts.log?.({ type: 'warn', tag: 'mcp', level: 'warn', server: config.name, text: `MCP server '${config.name}' lists a skill entry the Skills extension refuses${bad.uri ? ` (${printable(bad.uri)})` : ''}: ${printable(bad.reason)} — left out` });
        if (ttlMs !== undefined && state.skills?.value === value) state.skills.until = Date.now() + ttlMs;
        return skills.map(checkEntry);
      });
      state.skills = { conn, until: Number.POSITIVE_INFINITY, value };
      value.catch(() => {
        if (state.skills?.value === value) state.skills = undefined;
      });
    }
    return state.skills.value;
  }

  /**
   * A skill of this name that a configured server offers, fetched and verified; undefined if none
   * does. Servers are asked in configuration order; a stdio server of an untrusted workspace is
   * not started for a look-up, and one that cannot start is passed over.
   */
  async findSkill(name: string, paths: readonly string[]): Promise<McpSkillTool | undefined> {
    const { servers } = await this.servers(paths);
    const trust = this.#opts.trust;
    for (const config of servers) {
      if (config.transport === 'stdio' && trust?.needsTrust(config.source.file) && !(await trust.isTrusted())) continue;
      let entries: CheckedEntry[];
      try {
        entries = await this.#skillEntries(config);
      } catch {
        continue;
      }
      const hit = entries.find((e) => e.name === name);
      if (!hit) continue;
      if ('problem' in hit) throw new AgentAppsError('E_MCP', `MCP server '${config.name}' offers skill ${JSON.stringify(name)}, which cannot run: ${hit.problem}`);
      return this.#skillTool(config, hit);
    }
    return undefined;
  }

  #skillTool(config: ServerConfig, checked: Extract<CheckedEntry, { files: unknown }>): Promise<McpSkillTool> {
    const state = this.#state(config);
    const key = `${checked.name}\0${checked.digest}`;
    let tool = state.skillTools.get(key);
    if (!tool) {
      tool = this.#fetchSkill(config, state, checked);
      state.skillTools.set(key, tool);
      tool.catch(() => state.skillTools.delete(key));
    }
    return tool;
  }

  async #fetchSkill(config: ServerConfig, state: ServerState, checked: Extract<CheckedEntry, { files: unknown }>): Promise<McpSkillTool> {
    const conn = state.conn?.alive ? state.conn : await this.connection(config);
    const dir = cacheDir(fingerprint(config), checked);
    const file = await materialise(conn, checked, dir);
    const { skill, diagnostics } = checkAgentSkill(fs.readFileSync(file, 'utf8'), file);
    if (!skill) {
      const e = diagnostics.find((d) => d.severity === 'error')!;
      throw new AgentAppsError('E_MCP', `MCP server '${config.name}', skill ${JSON.stringify(checked.name)}: its SKILL.md cannot run here — ${diagnosticText(e)}`);
    }
    // Trust covers this exact version of the skill (docs/security.md): asked, or refused, before it is anyone's tool.
    const spans = [...skill.body.matchAll(/!`([^`\n]+)`/g)].map((m) => m[1]!);
    await this.#opts.trust?.requireSkill({ server: config.name, name: checked.name, digest: checked.digest, spans, ...(config.source.file ? { file: config.source.file } : {}) });
    for (const d of diagnostics) if (d.severity === 'warning') this.#opts.log?.({ type: 'warn', tag: 'mcp', level: 'debug', server: config.name, text: `MCP server '${config.name}', skill '${checked.name}': ${diagnosticText(d)}` });
    return {
      name: skill.name,
      kind: 'mcp-skill',
      uri: 'file://' + file,
      file,
      ...(config.authority ? { root: config.authority.root } : {}),
      frontmatter: skill.frontmatter,
      prompt: skill.body,
      decl: skill.decl,
      metadata: skill.metadata,
      version: ++versions,
      diagnostics,
      skill: skill.skill,
      mcp: { server: config.name, tool: checked.name, authorityDir: config.authority?.dir },
      mcpSkill: { server: config.name, uri: checked.entry.uri, digest: checked.digest },
    };
  }

  /** The stdio servers configured for these paths: what the workspace trust covers (docs/security.md). */
  async processes(paths: readonly string[]): Promise<SourceProcess[]> {
    return (await this.servers(paths)).servers.flatMap((s) => (s.transport === 'stdio' ? [{ name: s.name, command: s.command, args: s.args, ...(s.source.file ? { file: s.source.file } : {}) }] : []));
  }

  /** Every connection closed, every server process gone (docs/mcp.md: `runtime.close()`). */
  async close(): Promise<void> {
    this.#closed = true;
    const states = [...this.#states.values()];
    this.#states.clear();
    await Promise.all(
      states.map(async (s) => {
        const conn = s.conn ?? (await s.connecting?.catch(() => undefined));
        await conn?.close();
      }),
    );
  }

  /** Live connections (for tests and benchmarks). */
  connections(): Connection[] {
    return [...this.#states.values()].flatMap((s) => (s.conn?.alive ? [s.conn] : []));
  }
}

/**
 * A server's text as we show it (MCP tool output is untrusted, docs/security.md): no terminal control
 * sequences — escape sequences (CSI, OSC) go whole, then C0 controls other than tab and newline,
 * DEL and C1 controls.
 */
function printable(text: string): string {
  return text
    .replace(/\u001b\[[0-?]*[ -/]*[@-~]/g, '')
    .replace(/\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?/g, '')
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '');
}

function summary(tool: McpTool): McpSummary {
  const s: McpSummary = { name: tool.name, kind: 'mcp', origin: tool.uri, visibility: tool.decl.visibility, server: tool.mcp.server };
  if (tool.decl.description) s.description = tool.decl.description;
  return s;
}

// ── schemas from servers ──────────────────────────────────────────────────────────────────

const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
const SCHEMA_ONE = new Set(['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties', 'additionalItems']);
const SCHEMA_LIST = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items']);

/**
 * A server's schema, as our validators and allowed-tools read it: MCP tool output is untrusted
 * (docs/security.md), so its `x-*` keywords (our `x-path`, `x-ref`, `x-command` annotations) are dropped —
 * a server does not choose how allowed-tools reads its args — and so are `$id` and `$schema`
 * (two servers' tools with one `$id`, or a draft our validator does not know, would break
 * validation of every call). Schemas are copied, never shared with the SDK.
 */
export function cleanSchema(schema: unknown): JsonObject | undefined {
  if (!isPlainObject(schema)) return undefined;
  return walk(schema) as JsonObject;
}

function walk(schema: unknown): unknown {
  if (typeof schema === 'boolean') return schema;
  if (!isPlainObject(schema)) return copy(schema);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '__proto__' || key === '$id' || key === '$schema' || key.startsWith('x-')) continue;
    if (SCHEMA_MAPS.has(key) && isPlainObject(value)) {
      const map: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        if (k === '__proto__') continue;
        map[k] = walk(v);
      }
      out[key] = map;
    } else if (SCHEMA_LIST.has(key) && Array.isArray(value)) out[key] = value.map(walk);
    else if (SCHEMA_ONE.has(key)) out[key] = walk(value);
    else out[key] = copy(value);
  }
  return out;
}

function copy(value: unknown): unknown {
  if (value === undefined) return undefined;
  return JSON.parse(JSON.stringify(value), (k, v) => (k === '__proto__' ? undefined : v));
}
