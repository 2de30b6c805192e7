// What a workspace's configuration would start (docs/security.md, "What a cloned workspace can
// do"): its stdio MCP servers (`.mcp.json`, `mcp:` in its mains) and the `!`command`` spans of its
// SKILL.md skills — what a trust covers and what the trust question lists. Read only when
// something is about to start, never on a plain run.
import type { Kernel } from '../kernel/orchestrator.ts';
import type { ProcessConfig } from './workspace-trust.ts';
import { commandLine } from '../core/command-line.ts';

/** `!`command`` in a SKILL.md body. */
const SPAN = /!`([^`\n]+)`/g;

export async function gatherProcessConfig(kernel: Kernel, paths: readonly string[], needsTrust: (file: string | undefined) => boolean): Promise<ProcessConfig[]> {
  const out: ProcessConfig[] = [];
  const registry = kernel.registry;
  // The stdio MCP servers, asked of the `mcp` tool source (src/mcp/hub.ts) through the loader's
  // interface: policy/ does not import mcp/ (docs/architecture.md, The rules).
  const mcp = await registry.source('mcp', kernel.base.cwd);
  for (const p of (await mcp?.processes?.(paths)) ?? []) {
    if (!needsTrust(p.file)) continue;
    out.push({ kind: 'mcp', name: p.name, command: commandLine(p.command, p.args), ...(p.file ? { file: p.file } : {}) });
  }
  // SKILL.md folders are Markdown: reading them runs nothing (no import).
  for (const summary of await registry.list(paths, { all: true, mcpServers: false })) {
    if (summary.kind !== 'skill-folder' || summary.error) continue;
    try {
      const tool = await kernel.resolve(summary.name, paths, kernel.base.cwd);
      if (!tool.file || !needsTrust(tool.file) || !tool.prompt?.includes('!`')) continue;
      for (const m of tool.prompt.matchAll(SPAN)) out.push({ kind: 'span', name: tool.name, command: m[1]!, file: tool.file });
    } catch {
      // a skill that does not load runs nothing
    }
  }
  return out;
}
