// What the model is given (docs/agents.md): the system prompt is the skill's expanded prompt plus the
// tool documentation; the user message is the invocation's args as YAML under a one-line
// instruction (or the `message` arg where the params declare one).
import type { JsonObject } from '../core/types.ts';
import { yaml } from '../core/yaml.ts';
import { listFolder } from '../loader/read.ts';
import type { ToolDoc, VisibleTools } from './visible-tools.ts';

export function systemPrompt(skillPrompt: string, visible: VisibleTools, opts: { returns?: JsonObject; middlewareMode?: boolean; maxSteps?: number; skillDir?: string }): string {
  const parts: string[] = [skillPrompt.trim()];
  if (opts.skillDir) parts.push(skillFolderSection(opts.skillDir));
  parts.push(`## How you act

You have one tool, \`invoke\`. Its \`code\` is the body of an async JavaScript function that runs
in a sandbox (no Node.js APIs, no network, no files) with these globals:

- \`ctx.manager.invoke(name, args)\` — call a tool by name; returns a promise of its result.
  Args are validated against the tool's params. Only bare tool names work (no paths or URIs).
- \`ctx.manager.finish(value)\` — return \`value\` as your final result and stop.
- \`ctx.args\` — the args of this task.  \`memory\` — an object that persists across your calls.
- \`console.log(...)\` — printed output is returned to you with the result.
${opts.middlewareMode ? "- `target.manager.next()` — you are serving another skill's pipeline: this runs the rest of it and returns its result.\n" : ''}
Write whole pieces of work in one call: loops, conditionals, \`await Promise.all([...])\`, try/catch
all work. The value the code returns (or an error it throws) comes back to you as the tool result.${opts.maxSteps !== undefined && Number.isFinite(opts.maxSteps) ? ` You have at most ${opts.maxSteps} invoke calls.` : ''}`);
  if (opts.returns) {
    parts.push(`## Your result

Finish with \`ctx.manager.finish(value)\`, where \`value\` matches this JSON Schema:

\`\`\`json
${JSON.stringify(opts.returns)}
\`\`\``);
  } else {
    parts.push('## Your result\n\nWhen the task is done, either call `ctx.manager.finish(value)` with the result, or answer with the result as plain text.');
  }
  const docs = visible.tools.map(toolDoc).join('\n\n');
  if (visible.mode === 'constrained') {
    parts.push(`## Tools you can call\n\n${docs || '(none)'}`);
  } else {
    parts.push(`## Tools\n\nMore tools exist than are listed here. Find them with \`await ctx.manager.invoke('skill-list', { query })\` and read one's params with \`await ctx.manager.invoke('skill-describe', { name })\`.\n\n${docs}`);
  }
  if (visible.middleware.length) {
    parts.push(
      `## Middleware\n\nThese are middleware, not tools to call directly. Activate one for a call by passing it in the call's args: \`ctx.manager.invoke('tool', { ...args, $context: { middleware: { NAME: ARGS } } })\`.\n\n${visible.middleware.map(toolDoc).join('\n\n')}`,
    );
  }
  return parts.join('\n\n');
}

function toolDoc(t: ToolDoc): string {
  let out = `### ${t.name}\n${t.description ?? '(no description)'}`;
  if (t.approval) out += '\nA person must approve each call (it waits for them); a refusal is an E_DENIED error with their reason.';
  out += t.params ? `\nparams: ${JSON.stringify(t.params)}` : '\nparams: none';
  if (t.returns && Object.keys(t.returns).length) out += `\nreturns: ${JSON.stringify(t.returns)}`;
  return out;
}

export function userMessage(args: unknown, params: JsonObject | undefined): string {
  const declaresMessage = !!params && typeof params.properties === 'object' && params.properties !== null && 'message' in (params.properties as object);
  if (declaresMessage && args && typeof args === 'object' && typeof (args as { message?: unknown }).message === 'string') {
    return (args as { message: string }).message;
  }
  const empty = !args || (typeof args === 'object' && Object.keys(args as object).length === 0);
  if (empty) return 'Carry out the task described in your instructions.';
  return `Carry out the task described in your instructions with these args:\n\n${yaml().stringify(args).trimEnd()}`;
}

/**
 * Progressive disclosure (docs/writing-skills.md): a SKILL.md skill's model is told its folder and the files
 * in it by name — never their contents, which it reads with file-read (relative to the folder)
 * when the instructions call for them.
 */
export function skillFolderSection(dir: string): string {
  const listing = listFolder(dir);
  const files = listing.files.filter((f) => !f.endsWith('/') && f !== 'SKILL.md' && f !== 'skill.md');
  const shown = files.length ? files.map((f) => `- ${f}`).join('\n') + (listing.truncated ? '\n- … (more files; the listing stops here)' : '') : '(no other files)';
  return `## This skill's folder

These instructions come from the Agent Skills folder \`${dir}\`. Its other files are listed here by path, not included: read one when the instructions call for it, with \`await ctx.manager.invoke('file-read', { path: 'references/…' })\` — a relative path is the folder's. A script in it runs only through the \`shell\` tool, where allowed-tools permits it.

${shown}`;
}
