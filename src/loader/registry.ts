// The tool registry: search roots indexed once, tools loaded on first use and cached by file
// and modification time (docs/concepts.md). `invalidate()` (what `ctx.manager.refresh()` calls) rescans
// the roots and re-stats files, so edits are picked up without restarting.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigurationError, ToolNotFoundError } from '../core/errors.ts';
import type { LoadedTool, ToolDef, ToolSummary } from '../core/types.ts';
import { checkAgentSkill, diagnosticText } from './agent-skills.ts';
import { importCodeSkill, importInline } from './code.ts';
import { declare, parseMarkdown } from './frontmatter.ts';
import { cachedMarkdown } from './library-cache.ts';
import { NAME_RE, codeSkillStem, suggest } from './names.ts';
import { MAX_FRONTMATTER_BYTES, frontmatterProblem, readSkillFile, statProblem } from './read.ts';
import { scanRoot, type IndexEntry, type RootIndex } from './scan.ts';
import type { OpenToolSource, SourcedSummary, ToolSource } from './tool-source.ts';

export interface ListOptions {
  /** Include hidden tools. */
  all?: boolean;
  /** Only these names (checked before anything is loaded). */
  only?: (name: string) => boolean;
  /**
   * Only the MCP servers whose normalised name this admits are connected and listed (`false`:
   * none). Default: every configured server — `only` cannot tell a server's tool names before
   * the server is asked.
   */
  mcpServers?: ((prefix: string) => boolean) | false;
  /**
   * A listing for a person (`agent-apps list`), not an agent (docs/writing-skills.md): a SKILL.md with
   * `user-invocable: false` is left out unless `all`, and one hidden only by
   * `disable-model-invocation: true` is listed.
   */
  user?: boolean;
}

interface FileRecord {
  mtimeMs: number;
  checkedAt: number;
  tool?: LoadedTool;
  error?: unknown;
}

let versions = 0;

export class Registry {
  readonly library: string;
  /** Programmatic tools (`runtime.register`, callback refs): `globals.tools`. */
  readonly programmatic: Map<string, LoadedTool>;
  /** Bumps on every invalidate(): file records are re-stat'ed on next use. */
  generation = 0;
  /**
   * Bumps only when what tools exist or what they contain changed (a name appeared or moved, a
   * file was reloaded, a tool was registered). Plans stay valid while it holds still, so a
   * refresh() that finds nothing new costs a rescan, not a re-plan of every tool.
   */
  structure = 0;
  private fingerprints = new Map<string, string>();
  private roots = new Map<string, RootIndex>();
  private files = new Map<string, FileRecord>();
  private byPaths = new WeakMap<readonly string[], Map<string, IndexEntry | null>>();
  private inline = new WeakMap<ToolDef, LoadedTool>();
  private inlineUris = new Map<string, LoadedTool>();
  private loading = new Map<string, Promise<LoadedTool>>();
  /**
   * Tools from elsewhere (loader/tool-source.ts), by the scheme of their refs: the MCP client
   * (docs/mcp.md), registered by createRuntime and opened on first need — a name no skill holds,
   * a listing.
   */
  private sources = new Map<string, { open: OpenToolSource; opened?: Promise<ToolSource> }>();

  constructor(library: string, programmatic: Map<string, LoadedTool>) {
    this.library = path.resolve(library);
    this.programmatic = programmatic;
  }

  /** Removes a programmatic tool (ephemeral callback refs). */
  unregister(name: string, opts: { ephemeral?: boolean } = {}): void {
    if (this.programmatic.delete(name) && !opts.ephemeral) {
      this.generation++;
      this.structure++;
    }
  }

  /** Forget the root indexes and re-check files on next use. */
  invalidate(): void {
    const known = [...this.roots.keys()];
    this.roots.clear();
    this.byPaths = new WeakMap();
    this.generation++;
    // Look now, so that `structure` tells the planner at once whether its plans still hold.
    for (const dir of known) this.root(dir);
    for (const [file, rec] of this.files) {
      let mtimeMs = -1;
      try {
        mtimeMs = fs.statSync(file).mtimeMs;
      } catch {}
      if (mtimeMs !== rec.mtimeMs) {
        this.structure++;
        break;
      }
    }
  }

  root(dir: string): RootIndex {
    let index = this.roots.get(dir);
    if (!index) {
      index = scanRoot(dir);
      // The library's main is the hidden root authority, never "the workspace's main".
      if (dir === this.library) index.names.delete('main');
      this.roots.set(dir, index);
      const print = fingerprint(index);
      const before = this.fingerprints.get(dir);
      if (before !== undefined && before !== print) this.structure++;
      this.fingerprints.set(dir, print);
    }
    return index;
  }

  /** Sync name look-up over the search paths (programmatic tools first). */
  lookup(name: string, paths: readonly string[]): IndexEntry | LoadedTool | undefined {
    const prog = this.programmatic.get(name);
    if (prog) return prog;
    let memo = this.byPaths.get(paths);
    if (!memo) {
      memo = new Map();
      this.byPaths.set(paths, memo);
    }
    let hit = memo.get(name);
    if (hit === undefined) {
      hit = null;
      for (const dir of paths) {
        const e = this.root(dir).names.get(name);
        if (e) {
          hit = e;
          break;
        }
      }
      memo.set(name, hit);
    }
    return hit ?? undefined;
  }

  has(name: string, paths: readonly string[]): boolean {
    return this.lookup(name, paths) !== undefined;
  }

  /**
   * What `find` would resolve `ref` to, when that needs no wait: a ToolDef, or a bare name whose
   * tool is programmatic or loaded and checked in this generation — the very tool `find` returns
   * then. Anything else (not loaded yet, a load in flight, a path, a source's tool): undefined,
   * and the caller goes through `find`. The kernel's hot path uses it to skip the promises of a
   * look-up that is already done (docs/serve.md, "Performance").
   */
  findLoaded(ref: string | ToolDef, paths: readonly string[]): LoadedTool | undefined {
    if (typeof ref !== 'string') return this.fromDef(ref);
    if (!NAME_RE.test(ref)) return undefined;
    const hit = this.lookup(ref, paths);
    if (!hit) return undefined;
    return 'decl' in hit ? hit : this.loaded(hit);
  }

  /** The tool of `entry` when `load(entry)` would return it without reading anything: loaded, checked in this generation, no load in flight. */
  loaded(entry: IndexEntry): LoadedTool | undefined {
    if (entry.error || this.loading.has(entry.file)) return undefined;
    const rec = this.files.get(entry.file);
    return rec && rec.checkedAt === this.generation ? rec.tool : undefined;
  }

  /** `findTool` (docs/concepts.md): a bare name, a path, `file://`, `inline://`, `mcp://` or a ToolDef. */
  async find(ref: string | ToolDef, paths: readonly string[], cwd: string): Promise<LoadedTool> {
    if (typeof ref !== 'string') return this.fromDef(ref);
    if (NAME_RE.test(ref)) {
      const hit = this.lookup(ref, paths);
      if (hit) return 'decl' in hit ? hit : this.load(hit);
      // No skill holds the name: a source's tool — an MCP server's `SERVER-TOOL`, if a server is configured.
      const sources = await this.openSources(cwd);
      for (const source of sources) {
        const tool = await source.findBare(ref, paths);
        if (tool) return tool;
      }
      const near: string[] = [];
      let unasked: string | undefined;
      for (const source of sources) {
        near.push(...(await source.suggestions(ref, paths)));
        unasked ??= await source.unasked?.(paths);
      }
      throw new ToolNotFoundError(ref, suggest(ref, [...this.names(paths), ...near]), unasked);
    }
    if (ref.startsWith('inline://')) return this.fromInlineUri(ref);
    const scheme = /^([a-z][a-z0-9+.-]*):\/\//.exec(ref)?.[1];
    const source = scheme !== undefined && scheme !== 'file' ? await this.source(scheme, cwd) : undefined;
    if (source) return source.findUri(ref, paths);
    let file: string;
    if (ref.startsWith('file://')) file = fileURLToPath(ref);
    else if (ref.startsWith('/') || ref.startsWith('./') || ref.startsWith('../') || ref.includes('/') || /\.(md|[cm]?[jt]s)$/.test(ref)) file = path.resolve(cwd, ref);
    else throw new ToolNotFoundError(ref, suggest(ref.toLowerCase(), this.names(paths)), 'not a valid skill name or path');
    if (!fs.existsSync(file)) throw new ToolNotFoundError(ref, [], `no such file: ${file}`);
    // A folder is its Agent Skills file: SKILL.md, else the lower-case skill.md some clients accept.
    if (fs.statSync(file).isDirectory()) file = path.join(file, fs.existsSync(path.join(file, 'SKILL.md')) || !fs.existsSync(path.join(file, 'skill.md')) ? 'SKILL.md' : 'skill.md');
    return this.load(this.entryForFile(file, paths));
  }

  /** Adds a source of tools for refs `SCHEME://…` and names no skill holds (createRuntime: `mcp`). */
  addSource(scheme: string, open: OpenToolSource): void {
    this.sources.set(scheme, { open });
  }

  /**
   * The source of this scheme, opened if it was not (`mcp`: the MCP hub, src/mcp/hub.ts — the SDK
   * itself loads only when a server is used). `T` names the source's own type for its own
   * methods (`registry.source<McpHub>('mcp')`).
   */
  source<T extends ToolSource = ToolSource>(scheme: string, cwd: string = process.cwd()): Promise<T | undefined> {
    const s = this.sources.get(scheme);
    if (!s) return Promise.resolve(undefined);
    s.opened ??= s.open(cwd);
    return s.opened as Promise<T>;
  }

  /** Every source, opened, in the order added. */
  openSources(cwd: string = process.cwd()): Promise<ToolSource[]> {
    return Promise.all([...this.sources.keys()].map(async (scheme) => (await this.source(scheme, cwd))!));
  }

  /** Closes what the opened sources opened: every MCP connection (runtime.close()). */
  async closeSources(): Promise<void> {
    for (const s of this.sources.values()) if (s.opened) await (await s.opened).close();
  }

  /** Every invocable name on these paths (for suggestions and `list`). */
  names(paths: readonly string[]): string[] {
    const out = new Set<string>(this.programmatic.keys());
    for (const dir of paths) for (const name of this.root(dir).names.keys()) out.add(name);
    return [...out];
  }

  async load(entry: IndexEntry): Promise<LoadedTool> {
    if (entry.error) throw new ConfigurationError(entry.error, { place: { file: entry.file } });
    // A load in flight first: its record exists before its tool does (concurrent first use).
    const pending = this.loading.get(entry.file);
    if (pending) return pending;
    const rec = this.files.get(entry.file);
    if (rec && rec.checkedAt === this.generation) {
      if (rec.tool) return rec.tool;
      throw rec.error;
    }
    const p = this.loadFresh(entry, rec).finally(() => this.loading.delete(entry.file));
    this.loading.set(entry.file, p);
    return p;
  }

  private async loadFresh(entry: IndexEntry, rec: FileRecord | undefined): Promise<LoadedTool> {
    let st: fs.Stats;
    try {
      st = fs.statSync(entry.file);
    } catch {
      throw new ToolNotFoundError(entry.name, [], `${entry.file} was removed`);
    }
    const mtimeMs = st.mtimeMs;
    if (rec && rec.mtimeMs === mtimeMs) {
      rec.checkedAt = this.generation;
      if (rec.tool) return rec.tool;
      throw rec.error;
    }
    // A file seen before that changed on disk: everything planned from it is stale.
    if (rec) this.structure++;
    const next: FileRecord = { mtimeMs, checkedAt: this.generation };
    this.files.set(entry.file, next);
    try {
      // Not a regular file, or over the size cap, since the scan (or a path ref, never scanned).
      const problem = statProblem(entry.file, st);
      if (problem) throw new ConfigurationError(problem, { place: { file: entry.file } });
      next.tool = await this.loadFile(entry, mtimeMs, ++versions);
      return next.tool;
    } catch (err) {
      next.error = err;
      throw err;
    }
  }

  private async loadFile(entry: IndexEntry, mtimeMs: number, version: number): Promise<LoadedTool> {
    const uri = 'file://' + entry.file;
    if (entry.kind === 'code') {
      const mod = await importCodeSkill(entry.file, mtimeMs);
      const big = codeFrontmatterProblem(mod.frontmatter);
      if (big) throw new ConfigurationError(big, { place: { file: entry.file } });
      const { name, decl, metadata, frontmatter } = declare(mod.frontmatter, entry.name, entry.file);
      return { name, kind: 'code', uri, file: entry.file, root: entry.root, frontmatter, fn: mod.fn, decl, metadata, version };
    }
    // CRLF files (written on Windows) parse like LF ones: no stray '\r' in values or the prompt.
    const text = readSkillFile(entry.file).replace(/\r\n?/g, '\n');
    if (entry.kind === 'skill-folder') {
      // Agent Skills (docs/writing-skills.md): the format's rules; warnings ride along, an error is the first one.
      const { skill, diagnostics } = checkAgentSkill(text, entry.file);
      if (!skill) {
        const e = diagnostics.find((d) => d.severity === 'error')!;
        throw new ConfigurationError(e.message, { place: { file: entry.file, line: e.line, column: e.column } });
      }
      const { name, decl, metadata, frontmatter, body, skill: ext } = skill;
      return { name, kind: 'skill-folder', uri, file: entry.file, root: entry.root, frontmatter, prompt: body, decl, metadata, version, diagnostics, skill: ext };
    }
    const big = frontmatterProblem(text);
    if (big) throw new ConfigurationError(big, { place: { file: entry.file } });
    const { frontmatter: fm, body } = cachedMarkdown(entry.file, text) ?? parseMarkdown(text, entry.file);
    const { name, decl, metadata, frontmatter } = declare(fm, entry.name, entry.file);
    return { name, kind: entry.kind, uri, file: entry.file, root: entry.root, frontmatter, prompt: body, decl, metadata, version };
  }

  private entryForFile(file: string, paths: readonly string[]): IndexEntry {
    const base = path.basename(file);
    const stem = codeSkillStem(base);
    const folder = base === 'SKILL.md' || base === 'skill.md';
    const kind = folder ? 'skill-folder' : base.endsWith('.md') ? 'markdown' : 'code';
    const name = folder ? path.basename(path.dirname(file)) : (stem ?? base.replace(/\.(md|[cm]?[jt]s)$/, ''));
    const root = paths.find((p) => file.startsWith(p + path.sep)) ?? path.dirname(file);
    return { name: NAME_RE.test(name) ? name : 'anonymous', kind, file, root, dir: path.dirname(kind === 'skill-folder' ? path.dirname(file) : file) };
  }

  private fromDef(def: ToolDef): LoadedTool {
    let tool = this.inline.get(def);
    if (!tool) {
      const fm = def.frontmatter ?? {};
      const { name, decl, metadata, frontmatter } = declare({ ...fm, name: fm.name ?? def.name ?? 'anonymous' }, 'anonymous');
      tool = { name, kind: 'inline', uri: null, frontmatter, prompt: def.prompt, fn: def.fn, decl, metadata, version: ++versions };
      this.inline.set(def, tool);
    }
    return tool;
  }

  /** A programmatic tool: `runtime.register`, callback refs, skill-register (kind `registered`). */
  register(def: ToolDef, kind: 'programmatic' | 'builtin' | 'registered' = 'programmatic', opts: { ephemeral?: boolean } = {}): LoadedTool {
    const fm = def.frontmatter ?? {};
    const { name, decl, metadata, frontmatter } = declare({ ...fm, name: def.name ?? fm.name }, def.name ?? '');
    const tool: LoadedTool = { name, kind, uri: null, frontmatter, prompt: def.prompt, fn: def.fn, decl, metadata, version: ++versions };
    this.programmatic.set(name, tool);
    // Plans computed before may have treated this name as data: recompute them — except for
    // ephemeral callback refs, whose generated names no cascade can mention.
    if (!opts.ephemeral) {
      this.generation++;
      this.structure++;
    }
    return tool;
  }

  private async fromInlineUri(ref: string): Promise<LoadedTool> {
    const cached = this.inlineUris.get(ref);
    if (cached) return cached;
    const m = /^inline:\/\/code,(.*)$/s.exec(ref);
    if (!m) throw new ToolNotFoundError(ref.slice(0, 40), [], 'inline refs look like inline://code,<url-encoded module source>');
    let source: string;
    try {
      source = decodeURIComponent(m[1]!);
    } catch {
      throw new ConfigurationError('inline:// ref is not valid URL-encoding');
    }
    const mod = await importInline(source);
    const { name, decl, metadata, frontmatter } = declare(mod.frontmatter ?? {}, 'anonymous');
    const tool: LoadedTool = { name, kind: 'inline', uri: ref, frontmatter, fn: mod.fn, decl, metadata, version: ++versions };
    if (this.inlineUris.size > 500) this.inlineUris.clear();
    this.inlineUris.set(ref, tool);
    return tool;
  }

  /** The library's root `main` (cascade level 1). */
  libraryMain(): IndexEntry | undefined {
    return this.root(this.library).mains.get(this.library);
  }

  /**
   * The `main` skills of the tool's search root, outermost folder first, down to the tool's own
   * folder — the inherit chain (docs/concepts.md). The tool itself and the library's main are excluded.
   */
  authorities(tool: LoadedTool): IndexEntry[] {
    if (!tool.root) return [];
    let ownDir: string;
    if (tool.kind === 'mcp' || tool.kind === 'mcp-skill') {
      // An MCP tool (or a server's skill) runs with the cascade of the folder whose main configured its server.
      // The MCP tool's own record (McpTool, src/mcp/hub.ts) carries that folder.
      const dir = (tool as LoadedTool & { mcp?: { authorityDir?: string } }).mcp?.authorityDir;
      if (!dir) return [];
      ownDir = dir;
    } else {
      if (!tool.file) return [];
      ownDir = tool.kind === 'skill-folder' ? path.dirname(path.dirname(tool.file)) : path.dirname(tool.file);
    }
    const index = this.root(tool.root);
    const dirs: string[] = [];
    for (let d = ownDir; ; d = path.dirname(d)) {
      dirs.push(d);
      if (d === tool.root || path.dirname(d) === d || !d.startsWith(tool.root)) break;
    }
    const out: IndexEntry[] = [];
    for (const d of dirs.reverse()) {
      const m = index.mains.get(d);
      if (m && m.file !== tool.file && !(tool.root === this.library && d === this.library)) out.push(m);
    }
    return out;
  }

  /** `findAuthority`: the nearest `main` above the tool, or the library's. */
  findAuthority(tool: LoadedTool): IndexEntry | undefined {
    const chain = this.authorities(tool);
    return chain[chain.length - 1] ?? this.libraryMain();
  }

  /**
   * Every tool on the paths, loaded, shadowed ones omitted; broken files included with their
   * error. `only` is a cheap filter on names, applied before anything is loaded: a name it
   * refuses is neither listed nor imported (agent discovery passes what the agent may call).
   * Files load concurrently — each import bounded by AGENT_APPS_IMPORT_TIMEOUT_MS — so one
   * skill that never settles costs the timeout once, not once per skill behind it. Then the
   * tools of the configured MCP servers (kind `mcp`), each server connected for it; a server
   * that cannot start is one broken entry.
   */
  async list(paths: readonly string[], opts: ListOptions = {}): Promise<ToolSummary[]> {
    if (opts.mcpServers === false) return this.listFiles(paths, opts);
    const [files, sources] = await Promise.all([this.listFiles(paths, opts), this.openSources()]);
    // The sources' tools — MCP servers' (docs/mcp.md): a skill of the same name wins; without a
    // filter, the shadowed MCP tool is listed, marked, and the skill says what it shadows.
    const mcp: SourcedSummary[] = [];
    for (const source of sources) {
      mcp.push(
        ...(await source.list(paths, {
          all: opts.all,
          only: opts.only,
          servers: opts.mcpServers,
          taken: (name) => {
            const hit = this.lookup(name, paths);
            return hit === undefined ? undefined : 'decl' in hit ? hit.uri : 'file://' + hit.file;
          },
        })),
      );
    }
    if (!mcp.length) return files;
    for (const m of mcp) {
      if (m.shadowedBy === undefined) continue;
      const winner = files.find((f) => f.name === m.name && !f.error);
      if (winner) (winner as ToolSummary & { shadows?: string }).shadows = m.origin ?? undefined;
    }
    return [...files, ...mcp];
  }

  private async listFiles(paths: readonly string[], opts: ListOptions): Promise<ToolSummary[]> {
    const only = opts.only ?? (() => true);
    const seen = new Set<string>();
    const out: (ToolSummary | Promise<ToolSummary | undefined>)[] = [];
    // What each listed name shadows: the first skill of that name in a later root (docs/concepts.md).
    const winners = new Set<string>();
    const shadows = new Map<string, string>();
    for (const tool of this.programmatic.values()) {
      seen.add(tool.name);
      if (!only(tool.name)) continue;
      if (tool.decl.visibility === 'hidden' && !opts.all) continue;
      winners.add(tool.name);
      out.push(summary(tool));
    }
    for (const dir of paths) {
      const index = this.root(dir);
      for (const entry of index.names.values()) {
        if (seen.has(entry.name)) {
          if (!shadows.has(entry.name) && winners.has(entry.name)) shadows.set(entry.name, 'file://' + entry.file);
          continue;
        }
        seen.add(entry.name);
        if (!only(entry.name)) continue;
        winners.add(entry.name);
        out.push(
          this.load(entry).then(
            (tool) => (listedFor(tool, opts) ? summary(tool) : undefined),
            (err: unknown) => ({ name: entry.name, kind: entry.kind, origin: 'file://' + entry.file, visibility: 'public' as const, error: (err as Error).message }),
          ),
        );
      }
      for (const b of index.broken) {
        if (index.names.get(b.name)?.file === b.file) continue;
        if (opts.only && !only(b.name)) continue;
        out.push({ name: b.name, kind: b.kind, origin: 'file://' + b.file, visibility: 'public', error: b.error });
      }
    }
    const list = (await Promise.all(out)).filter((s) => s !== undefined);
    for (const s of list) {
      const shadowed = shadows.get(s.name);
      if (shadowed !== undefined && !s.error && winners.has(s.name)) s.shadows = shadowed;
    }
    return list;
  }

  /**
   * What the scan of these roots has to tell a person that is neither a skill nor a broken one:
   * a root that yields no skill while `SKILL.md` files lie below a folder the scan skips.
   */
  notices(paths: readonly string[]): string[] {
    return paths.flatMap((dir) => this.root(dir).notes);
  }

  /** The origin of the skill that `name` shadows on these paths: the next root's, after the winner (docs/concepts.md). */
  shadowed(name: string, paths: readonly string[]): string | undefined {
    let found = this.programmatic.has(name);
    for (const dir of paths) {
      const e = this.root(dir).names.get(name);
      if (!e) continue;
      if (found) return 'file://' + e.file;
      found = true;
    }
    return undefined;
  }
}

/** Hidden tools only with `all`; for a person, SKILL.md's own flags decide (ListOptions.user). */
function listedFor(tool: LoadedTool, opts: ListOptions): boolean {
  if (opts.all) return true;
  if (opts.user && tool.skill) {
    if (tool.skill.userInvocable === false) return false;
    if (tool.skill.modelInvocable === false) return true;
  }
  return tool.decl.visibility !== 'hidden';
}

function fingerprint(index: RootIndex): string {
  let out = '';
  for (const [name, e] of index.names) out += `${name}=${e.file}${e.error ? '!' : ''};`;
  for (const [dir, e] of index.mains) out += `@${dir}=${e.file};`;
  return out;
}

function summary(tool: LoadedTool): ToolSummary {
  const s: ToolSummary = { name: tool.name, kind: tool.kind, origin: tool.uri, visibility: tool.decl.visibility };
  if (tool.decl.description) s.description = tool.decl.description;
  const warnings = tool.diagnostics?.filter((d) => d.severity === 'warning');
  if (warnings?.length) s.warnings = warnings.map(diagnosticText);
  return s;
}

/** A code skill's exported frontmatter over the 1 MiB cap (as JSON), or undefined. */
function codeFrontmatterProblem(fm: unknown): string | undefined {
  if (fm === undefined || fm === null || typeof fm !== 'object') return undefined;
  let size: number;
  try {
    size = Buffer.byteLength(JSON.stringify(fm) ?? '', 'utf8');
  } catch {
    return undefined;
  }
  return size > MAX_FRONTMATTER_BYTES ? `frontmatter is ${+(size / 1048576).toFixed(1)} MiB, over the 1 MiB limit` : undefined;
}
