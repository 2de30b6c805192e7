// `agent-apps completion bash|zsh|fish` (docs/terminal.md): a shell completion script. The script asks the
// hidden `agent-apps __complete -- WORD…` for the candidates each time Tab is pressed, so the skill
// names are those of the workspace the command line is in (its --cwd and --path count), looked up
// then: commands, global and command options, skill names after run / describe / debug, a skill's
// --params after `run SKILL`, log levels, the shells. Nothing printed means: let the shell complete
// file names (the value of --cwd, --path, --args-json …).
import type { Command, Option } from 'commander';
import { AgentAppsError } from '../../core/errors.ts';
import { createRuntime } from '../../runtime.ts';
import { runtimeOptions, type GlobalOptions } from '../shared/runtime-options.ts';
import type { CliIO } from '../shared/io.ts';

const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

export function registerCompletion(program: Command, io: CliIO): void {
  program
    .command('completion')
    .description('print a shell completion script (bash, zsh or fish): commands, options, and the skills of the workspace you are in')
    .argument('<shell>', SHELLS.join(', '))
    .addHelpText(
      'after',
      `
The script calls agent-apps each time you press Tab, so skill names come from the workspace of
the command line being completed.

Examples:
  $ agent-apps completion fish > ~/.config/fish/completions/agent-apps.fish
  $ eval "$(agent-apps completion bash)"                  # in ~/.bashrc
  $ source <(agent-apps completion zsh)                   # in ~/.zshrc, after compinit`,
    )
    .action((shell: string) => {
      if (!(SHELLS as readonly string[]).includes(shell)) throw new AgentAppsError('E_USAGE', `completion: unknown shell '${shell}' — one of ${SHELLS.join(', ')}`);
      io.stdout.write(script(shell as Shell));
    });
  program
    .command('__complete', { hidden: true })
    .description('print the completion candidates for a command line (used by the completion scripts)')
    .argument('[words...]', 'the words after agent-apps, the one being completed last')
    .allowUnknownOption()
    .allowExcessArguments()
    .addHelpText('after', '\nExamples:\n  $ agent-apps __complete -- run gr')
    .action(async (words: string[]) => {
      let out: string[];
      try {
        out = await candidates(program, words);
      } catch {
        // Completion never prints an error in the middle of a command line.
        out = [];
      }
      if (out.length) io.stdout.write(out.join('\n') + '\n');
    });
}

export function script(shell: Shell): string {
  switch (shell) {
    case 'bash':
      return `# agent-apps completion for bash: eval "$(agent-apps completion bash)" in ~/.bashrc
_agent_apps_complete() {
  local IFS=$'\\n'
  COMPREPLY=($(agent-apps __complete -- "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _agent_apps_complete agent-apps
`;
    case 'zsh':
      return `#compdef agent-apps
# agent-apps completion for zsh: source <(agent-apps completion zsh) in ~/.zshrc, after compinit
_agent_apps() {
  local -a candidates
  candidates=("\${(@f)$(agent-apps __complete -- "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  if (( \${#candidates} )) && [[ -n "\${candidates[1]}" ]]; then
    compadd -- "\${candidates[@]}"
  else
    _files
  fi
}
compdef _agent_apps agent-apps
`;
    case 'fish':
      return `# agent-apps completion for fish: agent-apps completion fish > ~/.config/fish/completions/agent-apps.fish
function __agent_apps_complete
    set -l words (commandline -opc) (commandline -ct)
    agent-apps __complete -- $words[2..-1] 2>/dev/null
end
complete -c agent-apps -f -a '(__agent_apps_complete)'
`;
  }
}

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error'];
/** Commands whose first argument is a skill. */
const SKILL_COMMANDS = new Set(['run', 'describe', 'debug']);

function longFlags(options: readonly Option[]): string[] {
  return options.filter((o) => o.long && !(o as Option & { hidden?: boolean }).hidden).map((o) => o.long!);
}

/** Flags that take a value (their next word is not a command or a skill). */
function valued(options: readonly Option[]): Set<string> {
  return new Set(options.filter((o) => o.long && (o.required || o.optional)).map((o) => o.long!));
}

/** The candidates for the last of `words` (the words after `agent-apps`). */
export async function candidates(program: Command, words: string[]): Promise<string[]> {
  const cur = words.length ? words[words.length - 1]! : '';
  const before = words.slice(0, -1);
  const globalsValued = valued(program.options);
  const g: GlobalOptions = {};
  const note = (flag: string, value: string | undefined) => {
    if (value === undefined) return;
    if (flag === '--cwd') g.cwd = value;
    else if (flag === '--path') g.path = [...(g.path ?? []), value];
  };
  const pick = (list: Iterable<string>) => [...new Set(list)].filter((c) => c.startsWith(cur)).sort();
  // The command: the first word that is neither an option nor an option's value.
  let i = 0;
  let cmd: Command | undefined;
  for (; i < before.length; i++) {
    const w = before[i]!;
    if (w.startsWith('-')) {
      const [flag, inline] = splitFlag(w);
      if (globalsValued.has(flag) && inline === undefined) note(flag, before[++i]);
      else note(flag, inline);
      continue;
    }
    cmd = program.commands.find((c) => c.name() === w || c.aliases().includes(w));
    break;
  }
  const prev = before[before.length - 1];
  if (!cmd) {
    if (prev === '--log-level') return pick(LEVELS);
    if (prev && globalsValued.has(prev)) return [];
    if (cur.startsWith('-')) return pick(longFlags(program.options));
    return pick(program.commands.filter((c) => !(c as Command & { _hidden?: boolean })._hidden).map((c) => c.name()));
  }
  const cmdValued = new Set([...globalsValued, ...valued(cmd.options)]);
  // Positional words after the command, and the workspace its options name.
  const positional: string[] = [];
  for (let j = i + 1; j < before.length; j++) {
    const w = before[j]!;
    if (w === '--') break;
    if (w.startsWith('-')) {
      const [flag, inline] = splitFlag(w);
      if (cmdValued.has(flag) && inline === undefined) {
        note(flag, before[j + 1]);
        // After `run SKILL`, --name VALUE is the skill's; its value is skipped alike.
        j++;
      } else note(flag, inline);
      continue;
    }
    positional.push(w);
  }
  if (prev === '--log-level') return pick(LEVELS);
  if (prev === '--break' || (prev && cmdValued.has(prev) && !SKILL_COMMANDS.has(cmd.name()))) {
    return prev === '--break' ? pick(await skillNames(g, true)) : [];
  }
  const name = cmd.name();
  if (name === 'completion' && positional.length === 0) return pick(SHELLS);
  if (name === 'mcp' && positional.length === 0 && !cur.startsWith('-')) return pick(cmd.commands.map((c) => c.name()));
  if (SKILL_COMMANDS.has(name)) {
    if (positional.length === 0 && !cur.startsWith('-')) return pick(await skillNames(g, false));
    if (positional.length >= 1 && cur.startsWith('-') && name !== 'describe') {
      return pick([...(await skillFlags(g, positional[0]!)), ...longFlags(cmd.options).filter((f) => !longFlags(program.options).includes(f)), '--help', '--json']);
    }
    if (positional.length >= 1 && !cur.startsWith('-')) return [];
  }
  if (cur.startsWith('-')) return pick([...longFlags(cmd.options), ...longFlags(program.options), '--help']);
  return [];
}

function splitFlag(w: string): [string, string | undefined] {
  const eq = w.indexOf('=');
  return eq < 0 ? [w, undefined] : [w.slice(0, eq), w.slice(eq + 1)];
}

async function skillNames(g: GlobalOptions, all: boolean): Promise<string[]> {
  const rt = await createRuntime(runtimeOptions(g));
  try {
    // Completion never starts an MCP server or runs a command (docs/security.md): skill files only.
    const cfg = rt.root.locals.config;
    return (await rt.root.globals.internals.kernel.registry.list(cfg.paths, { all, mcpServers: false })).filter((s) => !s.error).map((s) => s.name);
  } finally {
    await rt.close();
  }
}

async function skillFlags(g: GlobalOptions, skill: string): Promise<string[]> {
  const rt = await createRuntime(runtimeOptions(g));
  try {
    const cfg = rt.root.locals.config;
    const registry = rt.root.globals.internals.kernel.registry;
    // A name no skill file holds would be looked up among MCP servers — started for it: not here.
    if (!registry.lookup(skill, cfg.paths)) return [];
    const params = (await rt.root.globals.internals.kernel.resolve(skill, cfg.paths, cfg.cwd)).decl.params as { properties?: Record<string, { type?: unknown }> } | undefined;
    const props = params?.properties && typeof params.properties === 'object' ? params.properties : {};
    return Object.entries(props).flatMap(([k, p]) => (p?.type === 'boolean' ? [`--${k}`, `--no-${k}`] : [`--${k}`]));
  } catch {
    return [];
  } finally {
    await rt.close();
  }
}
