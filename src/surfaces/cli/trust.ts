// `agent-apps trust [PATH] [--list | --revoke]` (docs/security.md, "What a cloned workspace can
// do"): shows what a workspace's configuration would start — its stdio MCP servers, its SKILL.md
// `!` spans — and trusts exactly that; `--list` shows the trusted folders, `--revoke` forgets one.
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { AgentAppsError } from '../../core/errors.ts';
import { createRuntime } from '../../runtime.ts';
import { describeConfig, readTrust, revokeFolder, trustFile, trustFolder, trustSkill } from '../../policy/workspace-trust.ts';
import { gatherProcessConfig } from '../../policy/process-config.ts';
import { globalsOf, runtimeOptions } from '../shared/runtime-options.ts';
import { painter } from '../shared/output.ts';
import type { CliIO } from '../shared/io.ts';

export function registerTrust(program: Command, io: CliIO): void {
  program
    .command('trust')
    .argument('[path]', 'the workspace (default: the one the current folder is in)')
    .description('trust a workspace to start what it configures (its .mcp.json servers, SKILL.md !`…` spans); --list, --revoke')
    .option('--list', 'list the trusted folders and what each trust covers')
    .option('--revoke', 'forget the trust of PATH (or of the current workspace)')
    .addHelpText(
      'after',
      `
A cloned repository or a downloaded skill folder starts nothing by itself: its stdio MCP servers
(.mcp.json, mcp: in a main) and the !\`command\` spans of its SKILL.md skills run only once the
workspace is trusted. In a terminal the first command that would start one asks; without one it
fails with E_UNTRUSTED_WORKSPACE (exit 2). A trust covers exactly the commands it listed: an edited
.mcp.json or a new server asks again. CI=true, --trust-workspace and AGENT_APPS_TRUST_WORKSPACE=1
trust a run without recording anything. Trusts are kept in ${'~'}/.agent-apps/trust.json.

Examples:
  $ agent-apps trust                      trust the workspace you are in (prints what it may start)
  $ agent-apps trust ~/src/their-repo
  $ agent-apps trust --list
  $ agent-apps trust --revoke ~/src/their-repo`,
    )
    .action(async (dir: string | undefined, opts: { list?: boolean; revoke?: boolean }, c: Command) => {
      const g = globalsOf(c);
      const paint = await painter(io.stdout, g.color !== false);
      if (opts.list && opts.revoke) throw new AgentAppsError('E_USAGE', '--list and --revoke: one at a time');
      if (opts.list) {
        const folders = readTrust().folders;
        if (g.json) {
          io.stdout.write(JSON.stringify(Object.entries(folders).map(([folder, r]) => ({ folder, ...r }))) + '\n');
          return;
        }
        const entries = Object.entries(folders);
        if (!entries.length) io.stdout.write(`no trusted folders (${trustFile()})\n`);
        for (const [folder, r] of entries) {
          io.stdout.write(`${paint.bold(folder)}  ${paint.dim(`trusted ${r.trustedAt}`)}\n`);
          if (r.hash || !r.skills) for (const line of r.commands.length ? r.commands : ['(nothing that starts a process)']) io.stdout.write(`  ${line}\n`);
          for (const [key, s] of Object.entries(r.skills ?? {})) io.stdout.write(`  skill ${key} of its MCP server (${s.digest.slice(0, 19)}…)\n`);
        }
        return;
      }
      const rtOpts = runtimeOptions(g);
      const cwd = dir === undefined ? rtOpts.cwd! : path.resolve(rtOpts.cwd!, dir);
      if (!fs.existsSync(cwd) || !fs.statSync(cwd).isDirectory()) throw new AgentAppsError('E_USAGE', `trust: '${dir}' is not a folder`);
      const runtime = await createRuntime({ ...rtOpts, cwd });
      try {
        const trust = runtime.root.globals.internals.workspaceTrust!;
        if (opts.revoke) {
          const had = revokeFolder(trust.workspace);
          io.stdout.write(had ? `${trust.workspace} is no longer trusted\n` : `${trust.workspace} was not trusted\n`);
          return;
        }
        const kernel = runtime.root.globals.internals.kernel;
        const configs = await gatherProcessConfig(kernel, runtime.root.locals.config.paths, (file) => trust.needsTrust(file));
        trustFolder(trust.workspace, configs);
        // Its servers may start now: the skills they offer (docs/mcp.md, "Skills from MCP servers") are trusted as they are.
        const skills = await serverSkills(runtime);
        for (const s of skills) trustSkill(trust.workspace, s);
        const record = readTrust().folders[trust.workspace]!;
        if (g.json) {
          io.stdout.write(JSON.stringify({ folder: trust.workspace, ...record }) + '\n');
          return;
        }
        io.stdout.write(`trusted ${paint.bold(trust.workspace)}`);
        if (!configs.length) io.stdout.write(' (it configures nothing that starts a process)\n');
        else io.stdout.write(`: it may start\n${configs.map((cfg) => `  ${describeConfig(cfg, trust.workspace)}\n`).join('')}`);
        if (skills.length) io.stdout.write(`and run the skills its MCP servers offer:\n${skills.map((s) => `  skill ${s.name} of MCP server '${s.server}' (${s.digest.slice(0, 19)}…)\n`).join('')}`);
        if (configs.length || skills.length) io.stdout.write('a change to any of these asks again\n');
      } finally {
        await runtime.close();
      }
    });
}

/** The skills the configured MCP servers offer now, with their digests (connecting each server). */
async function serverSkills(runtime: Awaited<ReturnType<typeof createRuntime>>): Promise<{ server: string; name: string; digest: string }[]> {
  const kernel = runtime.root.globals.internals.kernel;
  const mcp = await kernel.registry.source('mcp', kernel.base.cwd);
  if (!mcp) return [];
  const listed = (await mcp.list(runtime.root.locals.config.paths, { all: true })) as { kind: string; name: string; server?: string; digest?: string; error?: string; shadowedBy?: string }[];
  return listed.flatMap((s) => (s.kind === 'mcp-skill' && s.server && s.digest && !s.error ? [{ server: s.server, name: s.name, digest: s.digest }] : []));
}
