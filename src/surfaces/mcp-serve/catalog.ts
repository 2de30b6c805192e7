// What `agent-apps mcp serve` offers (docs/mcp.md, "Serving"; docs/security.md, "The callers"):
// what an MCP client may call under the untrusted-caller policy (src/policy/) — the workspace's own
// skills, or what `--allow` names (library built-ins only when named) — in name order, mapped onto
// MCP's two kinds of thing as other clients map Agent Skills onto them:
//
// | skill                                          | tool (model-invoked) | prompt (user-invoked) |
// | ---------------------------------------------- | -------------------- | --------------------- |
// | code skill                                     | yes                  | no                    |
// | Markdown / SKILL.md skill                      | yes                  | yes                   |
// | `disable-model-invocation: true`               | no                   | yes                   |
// | `user-invocable: false`                        | yes                  | no                    |
// | `trust: deny`, terminal-only (repl, tutor …)   | no                   | no                    |
import { pathToFileURL } from 'node:url';
import { parseAllowedTools, type AllowedTools } from '../../kernel/allowed-tools.ts';
import { isCallable } from '../../policy/callable.ts';
import { isBuiltin, isTerminalOnly, surfacePolicy, type Surface } from '../../policy/untrusted.ts';
import { trustOf } from '../../policy/approval.ts';
import type { JsonObject } from '../../core/types.ts';
import type { Runtime } from '../../runtime.ts';

export interface ExposedSkill {
  name: string;
  kind: string;
  description?: string;
  params?: JsonObject;
  returns?: JsonObject;
  /** Offered by tools/list (a model may call it). */
  tool: boolean;
  /** Offered by prompts/list (a person picks it). */
  prompt: boolean;
  /** A SKILL.md folder's directory: what the Skills extension publishes (skills.ts). */
  dir?: string;
}

/** Skills whose body is a prompt: they may be MCP prompts. */
const PROMPT_KINDS = new Set(['markdown', 'skill-folder']);

/** A skill list is re-read from disk at most this often (a client may call tools/list per request). */
const RESCAN_MS = 1000;

export class SkillCatalog {
  readonly #runtime: Runtime;
  readonly #allow: AllowedTools | undefined;
  /** The surface every request of this server comes through: its callers and allow-list. */
  readonly surface: Surface;
  #skills: Map<string, ExposedSkill> | undefined;
  #loading: Promise<Map<string, ExposedSkill>> | undefined;
  #scannedAt = 0;

  /** `allow`: allowed-tools patterns (`greet file-*`); without it, the workspace's own skills. */
  constructor(runtime: Runtime, allow?: string) {
    this.#runtime = runtime;
    this.#allow = allow === undefined ? undefined : parseAllowedTools(allow);
    this.surface = { name: 'an MCP client', ...(allow !== undefined ? { allow } : {}) };
  }

  get allow(): AllowedTools | undefined {
    return this.#allow;
  }

  /** Everything offered, in name order; `fresh` re-reads the search paths (new or edited files). */
  async skills(fresh = false): Promise<ExposedSkill[]> {
    return [...(await this.#load(fresh)).values()];
  }

  async tools(fresh = false): Promise<ExposedSkill[]> {
    return (await this.skills(fresh)).filter((s) => s.tool);
  }

  async prompts(fresh = false): Promise<ExposedSkill[]> {
    return (await this.skills(fresh)).filter((s) => s.prompt);
  }

  /** The offered skill `name`, or undefined; a miss re-reads the search paths once (a skill added since). */
  async find(name: string): Promise<ExposedSkill | undefined> {
    const hit = (await this.#load(false)).get(name);
    if (hit || Date.now() - this.#scannedAt < RESCAN_MS) return hit;
    return (await this.#load(true)).get(name);
  }

  /** The offered skill `name` as last read, without reading anything. */
  peek(name: string): ExposedSkill | undefined {
    return this.#skills?.get(name);
  }

  isPrompt(skill: ExposedSkill): boolean {
    return skill.prompt;
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
    const kernel = root.globals.internals.kernel;
    const policy = surfacePolicy(root, this.surface);
    // Hidden ones too: a SKILL.md with disable-model-invocation is hidden from agents yet a prompt,
    // and a hidden skill --allow names literally is offered.
    // Only names the policy could admit are loaded (imported): a library built-in only when --allow names it.
    const library = pathToFileURL(kernel.registry.library).href + '/';
    const maybe = (s: { name: string; origin: string | null }) => (this.#allow ? this.#allow.rules.some((r) => r.match(s.name)) : !s.origin?.startsWith(library));
    const listed = (await this.#runtime.list({ all: true })).filter((s) => !s.error && maybe(s));
    const { paths, cwd } = root.locals.config;
    const out = new Map<string, ExposedSkill>();
    for (const s of listed.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      try {
        const tool = await kernel.resolve(s.name, paths, cwd);
        if (isTerminalOnly(tool)) continue;
        const modelInvocable = tool.skill?.modelInvocable !== false;
        // Hidden only by disable-model-invocation: still a prompt, as it is still in a person's `list`.
        const hidden = tool.decl.visibility === 'hidden' && modelInvocable;
        if (!isCallable(tool.name, hidden, policy, undefined, undefined, isBuiltin(kernel, tool)).ok) continue;
        if ((await trustOf(kernel, tool, paths)).value === 'deny') continue;
        const exposed: ExposedSkill = {
          name: s.name,
          kind: s.kind,
          description: tool.decl.description,
          params: tool.decl.params ?? (s.kind === 'skill-folder' ? skillArguments(tool.skill?.argumentHint) : undefined),
          returns: tool.decl.returns,
          tool: modelInvocable && isCallable(tool.name, tool.decl.visibility === 'hidden', policy, undefined, undefined, isBuiltin(kernel, tool)).ok,
          prompt: PROMPT_KINDS.has(s.kind) && tool.skill?.userInvocable !== false,
          ...(s.kind === 'skill-folder' && tool.skill?.dir ? { dir: tool.skill.dir } : {}),
        };
        if (exposed.tool || exposed.prompt) out.set(s.name, exposed);
      } catch {
        // Listed but not loadable (edited in between, or a trust value that is wrong): not offered until it loads again.
      }
    }
    this.#skills = out;
    this.#scannedAt = Date.now();
    return out;
  }
}

/**
 * A SKILL.md that declares no params takes the format's one argument, `arguments` (what `$ARGUMENTS`
 * and `$N` read): a client that sees an empty schema would never pass it.
 */
function skillArguments(hint: string | undefined): JsonObject {
  const description = `The skill's arguments, space-separated (its $ARGUMENTS)${hint ? `: ${hint}` : ''}.`;
  return { type: 'object', properties: { arguments: { type: 'string', description } } };
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
