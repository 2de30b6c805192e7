// What `agent-apps mcp serve` exposes (SPEC §16, server): exactly the skills `agent-apps list`
// shows — public and not broken — narrowed by `--allow` (allowed-tools syntax), in name order.
// Markdown and SKILL.md skills among them are MCP prompts as well.
import { parseAllowedTools, type AllowedTools } from '../kernel/allowed-tools.ts';
import type { JsonObject } from '../core/types.ts';
import type { Runtime } from '../runtime.ts';

export interface ExposedSkill {
  name: string;
  kind: string;
  description?: string;
  params?: JsonObject;
  returns?: JsonObject;
}

/** Skills whose body is a prompt: they are MCP prompts too. */
const PROMPT_KINDS = new Set(['markdown', 'skill-folder']);

/** A skill list is re-read from disk at most this often (a client may call tools/list per request). */
const RESCAN_MS = 1000;

export class SkillCatalog {
  readonly #runtime: Runtime;
  readonly #allow: AllowedTools | undefined;
  #skills: Map<string, ExposedSkill> | undefined;
  #loading: Promise<Map<string, ExposedSkill>> | undefined;
  #scannedAt = 0;

  /** `allow`: allowed-tools patterns (`greet file-*`); a skill is exposed when some rule names it. */
  constructor(runtime: Runtime, allow?: string) {
    this.#runtime = runtime;
    this.#allow = allow === undefined ? undefined : parseAllowedTools(allow);
  }

  get allow(): AllowedTools | undefined {
    return this.#allow;
  }

  /** The exposed skills in name order; `fresh` re-reads the search paths (new or edited files). */
  async skills(fresh = false): Promise<ExposedSkill[]> {
    return [...(await this.#load(fresh)).values()];
  }

  async prompts(fresh = false): Promise<ExposedSkill[]> {
    return (await this.skills(fresh)).filter((s) => PROMPT_KINDS.has(s.kind));
  }

  /** The exposed skill `name`, or undefined; a miss re-reads the search paths once (a skill added since). */
  async find(name: string): Promise<ExposedSkill | undefined> {
    const hit = (await this.#load(false)).get(name);
    if (hit || Date.now() - this.#scannedAt < RESCAN_MS) return hit;
    return (await this.#load(true)).get(name);
  }

  /** The exposed skill `name` as last read, without reading anything. */
  peek(name: string): ExposedSkill | undefined {
    return this.#skills?.get(name);
  }

  isPrompt(skill: ExposedSkill): boolean {
    return PROMPT_KINDS.has(skill.kind);
  }

  #load(fresh: boolean): Promise<Map<string, ExposedSkill>> {
    if (this.#loading) return this.#loading;
    if (this.#skills && !(fresh && Date.now() - this.#scannedAt >= RESCAN_MS)) return Promise.resolve(this.#skills);
    const loading = this.#scan(fresh && this.#skills !== undefined).finally(() => {
      if (this.#loading === loading) this.#loading = undefined;
    });
    this.#loading = loading;
    return loading;
  }

  async #scan(rescan: boolean): Promise<Map<string, ExposedSkill>> {
    const root = this.#runtime.root;
    if (rescan) await root.manager.refresh();
    const listed = (await this.#runtime.list()).filter((s) => !s.error && s.visibility === 'public' && this.#allows(s.name));
    const kernel = root.globals.internals.kernel;
    const { paths, cwd } = root.locals.config;
    const out = new Map<string, ExposedSkill>();
    for (const s of listed.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      try {
        const { decl } = await kernel.resolve(s.name, paths, cwd);
        out.set(s.name, { name: s.name, kind: s.kind, description: decl.description, params: decl.params, returns: decl.returns });
      } catch {
        // Listed but no longer loadable (edited in between): it is not offered until it loads again.
      }
    }
    this.#skills = out;
    this.#scannedAt = Date.now();
    return out;
  }

  #allows(name: string): boolean {
    return !this.#allow || this.#allow.rules.some((r) => r.match(name));
  }
}

/** MCP wants an object schema for a tool's input: the skill's `params`, or an empty object schema. */
export function inputSchemaOf(skill: ExposedSkill): JsonObject {
  const p = skill.params;
  if (p && p.type === 'object') return p;
  if (p && p.type === undefined && typeof p.properties === 'object') return { type: 'object', ...p };
  return { type: 'object' };
}

/** `returns` is an MCP output schema only when it describes an object (structured results are objects). */
export function outputSchemaOf(skill: ExposedSkill): JsonObject | undefined {
  return skill.returns && skill.returns.type === 'object' ? skill.returns : undefined;
}
