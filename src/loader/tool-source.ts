// Tools that are not skill files on the search paths: a source the registry asks for a name no
// skill holds, for a ref of its scheme (`mcp://SERVER/TOOL`) and for a listing. The MCP client
// (src/mcp/hub.ts) is one, registered by createRuntime. The interface is the loader's and the
// loader never imports a source: loader/ sits below mcp/ (docs/architecture.md, The rules).
import type { LoadedTool, ToolSummary } from '../core/types.ts';

/** What a listing asks of a source (the registry's ListOptions, narrowed). */
export interface SourceListOptions {
  all?: boolean;
  only?: (name: string) => boolean;
  /** Which of the source's servers the listing needs, by normalised name; default all. */
  servers?: (prefix: string) => boolean;
  /** The origin of the skill that holds this name, if one does (it wins over the source's tool). */
  taken?: (name: string) => string | null | undefined;
}

/** A listing entry of a source: `shadowedBy` when a skill of the same name wins. */
export type SourcedSummary = ToolSummary & { shadowedBy?: string };

/** A command a source would start (a stdio MCP server): what the workspace trust covers (docs/security.md). */
export interface SourceProcess {
  name: string;
  command: string;
  args: string[];
  /** Where it is configured. */
  file?: string;
}

export interface ToolSource {
  /** A bare name no skill holds: this source's tool of that name, or undefined. */
  findBare(name: string, paths: readonly string[]): Promise<LoadedTool | undefined>;
  /** Near names for a ToolNotFoundError. */
  suggestions(name: string, paths: readonly string[]): Promise<string[]>;
  /** Why the source could not say whether it has the name (a server it did not start), for the error. */
  unasked?(paths: readonly string[]): Promise<string | undefined>;
  /** A ref of this source's scheme (`mcp://…`). */
  findUri(uri: string, paths: readonly string[]): Promise<LoadedTool>;
  list(paths: readonly string[], opts: SourceListOptions): Promise<SourcedSummary[]>;
  /** The processes it would start for these paths, if it starts any. */
  processes?(paths: readonly string[]): Promise<SourceProcess[]>;
  /** Everything it opened closed (runtime.close()). */
  close(): Promise<void>;
}

/**
 * Makes the source on first need — its module loads then, not at startup. `cwd` is the working
 * folder of the call that needed it.
 */
export type OpenToolSource = (cwd: string) => Promise<ToolSource>;
