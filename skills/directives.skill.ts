import { ctxTarget, internals, type Context, type ChainEntryInput } from 'agent-apps';

export const frontmatter = {
  name: 'directives',
  description: 'Expands remark directives (`:name`, `::name`, `:::name`) in the prompt: each directive naming a tool runs as middleware, in document order, and may replace itself with text.',
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
    const [{ remark }, { default: remarkDirective }] = await Promise.all([import('remark'), import('remark-directive')]);
    parser = remark().use(remarkDirective) as unknown as { parse(text: string): Node };
  }
  return parser.parse(text);
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

export default async function directives(ctx: Context) {
  const target = ctxTarget(ctx);
  const prompt = target.locals.prompt;
  // Only prompts with a colon can hold a directive: skip the parser entirely otherwise.
  if (!prompt || !prompt.raw.includes(':')) {
    if (prompt) prompt.expanded = prompt.raw;
    return target.manager.next();
  }
  const raw = prompt.raw;
  const tree = await parse(raw);
  const registry = internals.kernel(ctx).registry;
  const paths = target.locals.config.paths;
  const found: { node: DirectiveNode; start: number; end: number }[] = [];
  const walk = (node: Node) => {
    if (node.type in KIND) {
      const d = node as unknown as DirectiveNode;
      const start = d.position?.start.offset;
      const end = d.position?.end.offset;
      if (registry.has(d.name, paths) && start !== undefined && end !== undefined) {
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
    fn: (served: Context) => {
      const p = served.locals.prompt!;
      let out = '';
      let at = 0;
      found.forEach(({ start, end }, index) => {
        out += raw.slice(at, start) + (p.replacements?.[index] ?? '');
        at = end;
      });
      p.expanded = out + raw.slice(at);
      return served.manager.next();
    },
  });
  target.manager.inject(entries);
  return target.manager.next();
}

function cleanAttributes(attrs: DirectiveNode['attributes']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(attrs ?? {})) if (typeof v === 'string') out[k] = v;
  return out;
}
