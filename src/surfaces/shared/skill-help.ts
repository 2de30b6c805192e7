// `agent-apps run SKILL --help`: the skill's own usage, read from its params schema — the same
// schema that coerces `--PARAM VALUE` (skill-args.ts) and that validate-args enforces.
import { isPlainObject } from '../../core/path.ts';
import type { ToolDecl } from '../../core/types.ts';

type Schema = Record<string, unknown>;

export function skillHelp(decl: ToolDecl, extra: { argumentHint?: string } = {}): string {
  const params = isPlainObject(decl.params) ? (decl.params as Schema) : {};
  const props = isPlainObject(params.properties) ? (params.properties as Record<string, Schema>) : {};
  const required = new Set(Array.isArray(params.required) ? (params.required as string[]) : []);
  const rows = flatten(props).map(([name, prop]) => [flag(name, prop), describe(name, prop, required.has(name))] as const);
  const usage = Object.entries(props)
    .map(([name, prop]) => (required.has(name) ? flag(name, prop) : `[${flag(name, prop)}]`))
    .join(' ');
  // A SKILL.md's argument-hint (Claude Code's): what its `arguments` arg holds (docs/writing-skills.md).
  const hint = extra.argumentHint !== undefined && !('arguments' in props) ? ` --arguments "${extra.argumentHint}"` : '';
  let out = `Usage: agent-apps run ${decl.name}${usage ? ' ' + usage : ''}${hint}\n`;
  if (decl.description) out += `\n${decl.description}\n`;
  if (hint) out += `\nArguments: ${extra.argumentHint} — one string, split on whitespace: $ARGUMENTS, $0, $1 … in the skill.\n`;
  if (rows.length) {
    const w = Math.max(...rows.map((r) => r[0].length));
    out += '\nParams:\n' + rows.map(([f, d]) => `  ${f.padEnd(w)}  ${d}`.trimEnd()).join('\n') + '\n';
  } else if (decl.params === undefined) out += '\nThis skill declares no params; any --NAME VALUE is passed through as a string.\n';
  out += `\nRun options: --args-json JSON|-, --json; 'agent-apps run --help' has the rest.\n`;
  return out;
}

/** An object param's properties get rows of their own: `--opts.format <string>`. */
function flatten(props: Record<string, Schema>, prefix = ''): [string, Schema][] {
  return Object.entries(props).flatMap(([name, prop]): [string, Schema][] => {
    const nested = prop.type === 'object' && isPlainObject(prop.properties) ? flatten(prop.properties as Record<string, Schema>, `${prefix}${name}.`) : [];
    return [[prefix + name, prop], ...nested];
  });
}

function flag(name: string, prop: Schema): string {
  const t = typeName(prop);
  return t === 'boolean' ? `--${name}` : `--${name} <${t === 'object' || t === 'array' ? 'json' : (t ?? 'value')}>`;
}

function describe(name: string, prop: Schema, required: boolean): string {
  const notes: string[] = [];
  if (Array.isArray(prop.enum)) notes.push(`one of ${prop.enum.map((e) => JSON.stringify(e)).join(', ')}`);
  if (prop.type === 'array') notes.push('repeat the flag for more items');
  if (prop.type === 'boolean') notes.push(`--no-${name} for false`);
  if (required) notes.push('required');
  if (prop.default !== undefined) notes.push(`default: ${JSON.stringify(prop.default)}`);
  if (typeof prop.description !== 'string') return notes.join('; ');
  return notes.length ? `${prop.description} (${notes.join('; ')})` : prop.description;
}

function typeName(prop: Schema): string | undefined {
  if (typeof prop.type === 'string') {
    if (prop.type === 'array' && isPlainObject(prop.items) && typeof prop.items.type === 'string') return `${prop.items.type}…`;
    return prop.type;
  }
  if (Array.isArray(prop.type)) return prop.type.filter((t) => t !== 'null').join('|') || undefined;
  if (Array.isArray(prop.enum)) return 'value';
  return undefined;
}
