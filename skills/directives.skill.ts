import { existsSync } from 'node:fs';
import path from 'node:path';
import { AbortError, ctxTarget, parseAllowedTools, type Context, type ChainEntryInput, kernelOf, servedTool } from 'agent-apps';

export const frontmatter = {
  name: 'directives',
  description: 'Expands remark directives (`:name`, `::name`, `:::name`) in a Markdown skill\'s prompt: each directive naming a tool runs as middleware, in document order, and may replace itself with text (a text directive needs a boundary: `a:b` is text). A SKILL.md body is plain Markdown — no directives, only `$ARGUMENTS`, `$N`, `${CLAUDE_SKILL_DIR}` and the `!`command`` spans its allowed-tools permit.',
  metadata: { role: 'middleware', visibility: 'hidden', tags: ['meta-internal'], params: { type: 'boolean' }, returns: {} },
};

interface DirectiveNode {
  type: 'textDirective' | 'leafDirective' | 'containerDirective';
  name: string;
  attributes?: Record<string, string | null | undefined>;
  children?: Node[];
  position?: { start: { offset?: number }; end: { offset?: number } };
}
interface Node {
  type: string;
  value?: string;
  children?: Node[];
  data?: { directiveLabel?: boolean };
  position?: { start: { offset?: number }; end: { offset?: number } };
}

const KIND = { textDirective: 'text', leafDirective: 'leaf', containerDirective: 'container' } as const;
let parser: { parse(text: string): Node } | undefined;

async function parse(text: string): Promise<Node> {
  if (!parser) {
    const { remark, remarkDirective } = await loadRemark();
    parser = remark().use(remarkDirective) as { parse(text: string): Node };
  }
  return parser.parse(text);
}

type Remark = { remark: typeof import('remark').remark; remarkDirective: typeof import('remark-directive').default };

/** remark and remark-directive: the build's one-file bundle of both (~100 ms faster to load than their ~90 modules, scripts/build.js) when built, else the packages. */
async function loadRemark(): Promise<Remark> {
  // From skills/ or, built, from dist/skills/ (src/loader/search-paths.ts, the library).
  const bundle = new URL(import.meta.url.endsWith('.ts') ? '../dist/bundles/remark.js' : '../bundles/remark.js', import.meta.url);
  if (existsSync(bundle)) return (await import(bundle.href)) as Remark;
  const [{ remark }, { default: remarkDirective }] = await Promise.all([import('remark'), import('remark-directive')]);
  return { remark, remarkDirective };
}

function textOf(node: Node): string {
  if (typeof node.value === 'string') return node.value;
  return (node.children ?? []).map(textOf).join('');
}

function labelOf(node: DirectiveNode): string {
  // Text and leaf directives hold their label as their children; a container's is a marked paragraph.
  if (node.type !== 'containerDirective') return (node.children ?? []).map(textOf).join('');
  const label = (node.children ?? []).find((c) => c.data?.directiveLabel);
  return label ? textOf(label) : '';
}

// A tool without a prompt (a code skill) passes through without an async frame of its own
// (docs/serve.md, "Performance"); a prompt is expanded by `expand`. What throws still rejects.
export default function directives(ctx: Context): Promise<unknown> {
  const target = ctxTarget(ctx);
  const prompt = target.locals.prompt;
  if (!prompt) return target.manager.next();
  return expand(ctx, target, prompt);
}

async function expand(ctx: Context, target: Context, prompt: NonNullable<Context['locals']['prompt']>): Promise<unknown> {
  // A SKILL.md's body is the format's plain Markdown: it gets the format's substitutions and
  // `!`command`` spans, and no directives — `superpowers:brainstorming` there is text, never
  // the skill `brainstorming` (docs/writing-skills.md, "Claude Code's extensions").
  const claude = agentSkillText(ctx, target);
  if (claude) {
    prompt.expanded = await claude(prompt.raw);
    return target.manager.next();
  }
  // Only prompts with a colon can hold a directive: skip the parser entirely otherwise.
  if (!prompt.raw.includes(':')) {
    prompt.expanded = prompt.raw;
    return target.manager.next();
  }
  const raw = prompt.raw;
  const tree = await parse(raw);
  const registry = kernelOf(ctx).registry;
  const paths = target.locals.config.paths;
  const found: { node: DirectiveNode; start: number; end: number }[] = [];
  const walk = (node: Node) => {
    if (node.type in KIND) {
      const d = node as DirectiveNode;
      const start = d.position?.start.offset;
      const end = d.position?.end.offset;
      if (start !== undefined && end !== undefined && !(d.type === 'textDirective' && wordBefore(raw, start)) && registry.has(d.name, paths)) {
        found.push({ node: d, start, end });
        return; // a directive that is a tool replaces its whole span, children included
      }
    }
    for (const child of node.children ?? []) walk(child);
  };
  walk(tree);
  prompt.replacements = {};
  const entries: ChainEntryInput[] = found.map(({ node }, index) => ({
    name: node.name,
    args: { ...cleanAttributes(node.attributes), directive: { index, kind: KIND[node.type], label: labelOf(node) } },
  }));
  // The continuation after the last directive renders the expanded prompt.
  entries.push({
    name: 'directives-render',
    fn: async (served: Context) => {
      const p = served.locals.prompt!;
      let out = '';
      let at = 0;
      for (const [index, { start, end }] of found.entries()) {
        out += raw.slice(at, start) + (p.replacements?.[index] ?? '');
        at = end;
      }
      p.expanded = out + raw.slice(at);
      return served.manager.next();
    },
  });
  target.manager.inject(entries);
  return target.manager.next();
}

/**
 * True when a letter or digit stands right before the `:` at `offset`: `superpowers:brainstorming`,
 * `10:30`, `note:x` are text, not text directives (remark-directive would read `:brainstorming`).
 */
function wordBefore(raw: string, offset: number): boolean {
  const prev = [...raw.slice(Math.max(0, offset - 2), offset)].at(-1);
  return prev !== undefined && /[\p{L}\p{N}]/u.test(prev);
}

function cleanAttributes(attrs: DirectiveNode['attributes']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(attrs ?? {})) if (typeof v === 'string') out[k] = v;
  return out;
}

// ── Agent Skills bodies (docs/writing-skills.md, "Claude Code's extensions") ────────────────

/** `!`command``: a command Claude Code runs before the model sees the skill, its output in place. */
const COMMAND = /!`([^`\n]+)`/g;
/** `${CLAUDE_SKILL_DIR}`, `$ARGUMENTS[N]`, `$ARGUMENTS`, `$N` (0-based). */
const SUBSTITUTION = /\$\{CLAUDE_SKILL_DIR\}|\$ARGUMENTS\[(\d+)\]|\$ARGUMENTS(?![A-Za-z0-9_\[])|\$(\d+)/g;

type Arguments = { all: string; list: string[] };

/**
 * For a SKILL.md skill, what its own text becomes before the model sees it: each `!`command``
 * span is run through `shell` and replaced by its stdout when the skill's allowed-tools permits
 * the command as substituted (commandOf: each argument one quoted shell word, none starting with
 * `-`); otherwise it stays as written, with a warn event naming it. Then `$ARGUMENTS`,
 * `$ARGUMENTS[N]`, `$N` and `${CLAUDE_SKILL_DIR}` take the invocation's `arguments` arg and the
 * skill's folder; an unmatched `$N` stays. Command output is inserted as it is: it is never
 * substituted or run.
 */
function agentSkillText(ctx: Context, target: Context): ((text: string) => Promise<string>) | undefined {
  const tool = servedTool(target).decl;
  // A server's skill (kind mcp-skill, docs/mcp.md) runs like a local folder: it is one, fetched and verified.
  if ((tool.kind !== 'skill-folder' && tool.kind !== 'mcp-skill') || !tool.file) return undefined;
  const dir = tool.skill?.dir ?? path.dirname(tool.file);
  const args = argumentsOf(target.args);
  const substitute = (text: string) =>
    text.replace(SUBSTITUTION, (whole, indexed: string | undefined, n: string | undefined) => {
      if (whole === '${CLAUDE_SKILL_DIR}') return dir;
      if (indexed !== undefined || n !== undefined) return args?.list[Number(indexed ?? n)] ?? whole;
      return args?.all ?? '';
    });
  return async (text: string) => {
    let out = '';
    let at = 0;
    for (const m of text.matchAll(COMMAND)) {
      out += substitute(text.slice(at, m.index));
      out += await runCommand(ctx, target, m[0], commandOf(m[1]!, dir, args));
      at = m.index + m[0].length;
    }
    return out + substitute(text.slice(at));
  };
}

/**
 * The command of a `!` span with the substitutions made for the shell: each argument is one
 * single-quoted word (so `'--format=…' --output=/x` cannot split or re-quote itself), and an
 * argument that starts with `-` refuses the span — after `git log` it would be an option
 * (`--output=/etc/x` writes a file), whatever the allowed-tools pattern says.
 */
function commandOf(written: string, dir: string, args: Arguments | undefined): { command: string; refused?: string } {
  let refused: string | undefined;
  const command = written.replace(SUBSTITUTION, (whole, indexed: string | undefined, n: string | undefined) => {
    if (whole === '${CLAUDE_SKILL_DIR}') return /^[A-Za-z0-9_@%+=:,./-]+$/.test(dir) ? dir : shellQuote(dir);
    const picked = indexed !== undefined || n !== undefined ? args?.list[Number(indexed ?? n)] : undefined;
    if ((indexed !== undefined || n !== undefined) && picked === undefined) return whole;
    const words = picked !== undefined ? [picked] : (args?.list ?? []);
    const option = words.find((w) => /^\s*-/.test(w));
    if (option !== undefined) refused ??= `the argument ${JSON.stringify(option.length > 80 ? option.slice(0, 79) + '…' : option)} starts with '-', which the command would read as an option (an argument is one quoted word, and never an option)`;
    return words.map(shellQuote).join(' ');
  });
  return refused === undefined ? { command } : { command, refused };
}

/** One POSIX shell word: single quotes, each `'` written as `'\''`. */
function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The invocation's `arguments` arg: a string split on whitespace, or a list. */
function argumentsOf(args: unknown): Arguments | undefined {
  const value = args && typeof args === 'object' ? (args as { arguments?: unknown }).arguments : undefined;
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) {
    const list = value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
    return { all: list.join(' '), list };
  }
  const all = (typeof value === 'string' ? value : JSON.stringify(value)).trim();
  return { all, list: all ? all.split(/\s+/) : [] };
}

async function runCommand(ctx: Context, target: Context, written: string, { command, refused }: { command: string; refused?: string }): Promise<string> {
  // `prompts/get` of `mcp serve` asks for the prompt, not for its commands: it sets
  // `nonlocals.runCommands: false`, and every span stays as written (docs/mcp.md).
  if (target.nonlocals.runCommands === false) {
    target.manager.log({ level: 'debug', type: 'command-not-run', text: `${written} was not run: the prompt was asked for without running its commands; it stays as written` });
    return written;
  }
  const spec = target.run.tool.allowedTools;
  const kernel = kernelOf(ctx);
  const { cwd, paths } = target.locals.config;
  let permitted = false;
  if (refused === undefined && typeof spec === 'string') {
    const shell = await kernel.resolve('shell', paths, cwd);
    permitted = parseAllowedTools(spec).allows('shell', { command }, { cwd, params: shell.decl.params });
  }
  if (!permitted) {
    const why =
      refused ??
      `${spec === undefined ? 'the skill has no allowed-tools' : `allowed-tools '${spec}' does not permit ${command === written.slice(2, -1) ? 'it' : JSON.stringify(command)}`} (a command runs when allowed-tools admits it as one simple command, e.g. Bash(git:*) for git …)`;
    target.manager.log({ level: 'warn', type: 'command-not-run', text: `${written} was not run: ${why}; it stays as written` });
    return written;
  }
  // A span is a command the skill's folder chose: in a workspace the person has not trusted it
  // does not run (docs/security.md, "What a cloned workspace can do") — asked, or E_UNTRUSTED_WORKSPACE.
  const tool = servedTool(target).decl;
  await ctx.globals.internals.workspaceTrust?.require({ kind: 'span', name: tool.name, command: written.slice(2, -1), ...(tool.file ? { file: tool.file } : {}) });
  let result: { code: number | null; stdout: string; stderr: string };
  try {
    // Through the skill's own pipeline context: validate-allowed-tools checks the call again.
    result = (await target.manager.invoke('shell', { command })) as typeof result;
  } catch (err) {
    if (err instanceof AbortError || target.run.signal.aborted) throw err;
    target.manager.log({ level: 'warn', type: 'command-not-run', text: `${written} failed: ${(err as Error).message}; it stays as written` });
    return written;
  }
  if (result.code !== 0) {
    const why = result.stderr.trim().split('\n')[0]?.slice(0, 200);
    target.manager.log({ level: 'warn', type: 'command-failed', text: `${written} exited with ${result.code ?? 'a timeout'}${why ? `: ${why}` : ''}` });
  }
  return result.stdout.replace(/\n$/, '');
}
