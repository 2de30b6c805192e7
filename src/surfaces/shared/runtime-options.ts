// Global options (docs/cli.md): their definitions, how they combine when given both before and after
// a subcommand, and how they become createRuntime options — shared by every subcommand.
import fs from 'node:fs';
import path from 'node:path';
import { Command, Option } from 'commander';
import { AgentAppsError } from '../../core/errors.ts';
import { parseAllowedTools } from '../../kernel/allowed-tools.ts';
import type { LogLevel } from '../../core/types.ts';
import { mergeOverrides, parseOverrides } from './overrides.ts';
import type { RuntimeOptions } from '../../runtime.ts';

export interface GlobalOptions {
  cwd?: string;
  path?: string[];
  set?: string[];
  debug?: boolean;
  profile?: boolean;
  logLevel?: string;
  json?: boolean;
  color?: boolean;
  shutdownGrace?: string;
  approve?: string[];
  /** text | json | stream-json (docs/ci.md); `--json` is `json`. Kept in step with `json` by mergeGlobals. */
  outputFormat?: string;
  /** A run that had a denied tool call ends ok: false, exit 1, E_DENIED (docs/ci.md). */
  failOnDenial?: boolean;
  /** The workspace's own process-starting configuration may run without a recorded trust (docs/security.md). */
  trustWorkspace?: boolean;
  /** `--approvals-via NAME`: approval gates go to the workspace's `serve`, through its gateway NAME (docs/serve.md). */
  approvalsVia?: string;
}

export const OUTPUT_FORMATS = ['text', 'json', 'stream-json'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error'];
const KEYS = ['cwd', 'path', 'set', 'debug', 'profile', 'logLevel', 'json', 'color', 'shutdownGrace', 'approve', 'outputFormat', 'failOnDenial', 'trustWorkspace', 'approvalsVia'] as const;

/**
 * Adds the global options to `cmd`. The program shows them; subcommands get hidden copies, so
 * that `list --json` and `describe greet --set x=1` work although the program parses its own
 * options only before the subcommand (which keeps `run file-read --path x` the skill's arg).
 */
export function addGlobalOptions(cmd: Command, hidden = false): Command {
  const options = [
    new Option('--cwd <dir>', 'run as if started in <dir>'),
    new Option('--path <dir>', 'prepend a skill search path (repeatable)').argParser(collect),
    new Option('--set <key.path=value>', 'override cascade metadata; VALUE is YAML (repeatable)').argParser(collect),
    new Option('--debug', 'instrument the pipeline (= --set debug=true) and print stacks on errors'),
    new Option('--profile', 'time every pipeline and chain entry (= --set profile=true)'),
    new Option('--log-level <level>', 'minimum log level').choices(LEVELS),
    new Option('--json', 'print results and listings as JSON on one line (= --output-format json)'),
    new Option('--output-format <format>', 'text, json or stream-json (run: NDJSON events and one result line on stdout; other commands: json)').choices(OUTPUT_FORMATS),
    new Option('--fail-on-denial', 'a run in which a tool call of agent code was denied fails: exit 1, E_DENIED'),
    new Option('--no-color', 'disable colour (NO_COLOR and a non-TTY output disable it too)'),
    new Option('--shutdown-grace <ms>', 'on SIGINT/SIGTERM, how long shutdown handlers may run before the root is aborted (default: 3000)'),
    new Option('--approve <patterns>', "pre-approve agent calls that need a person's approval (ask-tools, trust: ask): 'all', or allowed-tools patterns such as 'shell(command=echo *)' (repeatable)").argParser(collect),
    new Option('--approvals-via <gateway>', "send approval gates to the workspace's agent-apps serve, which asks its approvers through that gateway (slack, email, web); AGENT_APPS_SERVE_URL / AGENT_APPS_SERVE_TOKEN say where serve is"),
    new Option('--trust-workspace', "let this run start what the workspace configures (its .mcp.json servers, SKILL.md !`…` spans) without a recorded trust (see 'agent-apps trust')"),
  ];
  for (const o of options) cmd.addOption(hidden ? o.hideHelp() : o);
  return cmd;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** The global options given to `cmd` and its ancestors; lists concatenate, later flags win. */
export function globalsOf(cmd: Command): GlobalOptions {
  const chain: Command[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) chain.unshift(c);
  let out: GlobalOptions = {};
  for (const c of chain) {
    const given: GlobalOptions = {};
    for (const key of KEYS) {
      if (c.getOptionValueSource(key) === 'cli') (given as Record<string, unknown>)[key] = c.getOptionValue(key);
    }
    out = mergeGlobals(out, given);
  }
  return out;
}

export function mergeGlobals(a: GlobalOptions, b: GlobalOptions): GlobalOptions {
  const out: GlobalOptions = { ...a };
  b = withFormat(b);
  // A later --json replaces an earlier --output-format.
  if (b.json !== undefined && b.outputFormat === undefined) delete out.outputFormat;
  for (const key of KEYS) {
    const v = b[key];
    if (v === undefined) continue;
    if (key === 'path' || key === 'set' || key === 'approve') out[key] = [...(a[key] ?? []), ...(v as string[])];
    else (out as Record<string, unknown>)[key] = v;
  }
  return out;
}

/**
 * `--json` is `--output-format json`: the two are one setting. Given together at one place,
 * --output-format wins; given at two places (before and after the command), the later one does.
 */
function withFormat(g: GlobalOptions): GlobalOptions {
  if (g.outputFormat !== undefined) {
    if (!(OUTPUT_FORMATS as readonly string[]).includes(g.outputFormat)) throw new AgentAppsError('E_USAGE', `--output-format must be one of ${OUTPUT_FORMATS.join(', ')} (got '${g.outputFormat}')`);
    return { ...g, json: g.outputFormat !== 'text' };
  }
  return g;
}

/** The output format the options ask for (default text). */
export function outputFormat(g: GlobalOptions): OutputFormat {
  return (g.outputFormat as OutputFormat | undefined) ?? (g.json ? 'json' : 'text');
}

/**
 * The output format a command line asks for, read from its tokens alone — for an error that
 * comes before the options are parsed (a usage error must still end stream-json's output with
 * its result line). The last --output-format or --json before `--` counts.
 */
export function formatInArgv(argv: readonly string[]): OutputFormat | undefined {
  let format: OutputFormat | undefined;
  for (let i = 0; i < argv.length; i++) {
    const t = argv[i]!;
    if (t === '--') break;
    if (t === '--json') format = 'json';
    const value = t === '--output-format' ? argv[i + 1] : t.startsWith('--output-format=') ? t.slice('--output-format='.length) : undefined;
    if (value !== undefined && (OUTPUT_FORMATS as readonly string[]).includes(value)) format = value as OutputFormat;
  }
  return format;
}

export function runtimeOptions(g: GlobalOptions): RuntimeOptions & { logLevel?: LogLevel } {
  const cwd = path.resolve(g.cwd ?? process.cwd());
  if (g.cwd !== undefined && !isDirectory(cwd)) throw new AgentAppsError('E_USAGE', `--cwd: '${g.cwd}' is not a directory`);
  for (const p of g.path ?? []) {
    if (!isDirectory(path.resolve(cwd, p))) throw new AgentAppsError('E_USAGE', `--path: '${p}' is not a directory`);
  }
  let overrides = parseOverrides(g.set ?? []);
  if (g.debug) overrides = mergeOverrides(overrides, { debug: true });
  if (g.profile) overrides = mergeOverrides(overrides, { profile: true });
  if (g.logLevel !== undefined && !LEVELS.includes(g.logLevel)) {
    throw new AgentAppsError('E_USAGE', `--log-level must be one of ${LEVELS.join(', ')} (got '${g.logLevel}')`);
  }
  return { cwd, paths: g.path ?? [], overrides, logLevel: g.logLevel as LogLevel | undefined, ...approveOption(g.approve), ...(g.trustWorkspace ? { trustWorkspace: true } : {}) };
}

/** `--approve all` or allowed-tools patterns (docs/terminal.md); several flags add up, `all` wins. */
function approveOption(list: string[] | undefined): { approve?: string } {
  if (!list?.length) return {};
  const parts = list.map((p) => p.trim()).filter(Boolean);
  if (!parts.length) throw new AgentAppsError('E_USAGE', "--approve needs 'all' or allowed-tools patterns, e.g. --approve 'shell(command=echo *)'");
  if (parts.includes('all')) return { approve: 'all' };
  const approve = parts.join(' ');
  try {
    parseAllowedTools(approve);
  } catch (err) {
    throw new AgentAppsError('E_USAGE', `--approve: ${(err as Error).message}`);
  }
  return { approve };
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}
