// Loads the terminal UI when it is shown, never before (docs/terminal.md, issue 11: a non-interactive run
// must not pay for ink and React). In dist/, the build bundles src/surfaces/tui with ink, React and
// @inkjs/ui into tui/bundle.js — one file loads in about a third of the time of the ~600 modules it
// replaces (scripts/build.js); from src/ (a checkout) the sources load as they are.
import fs from 'node:fs';

export type Tui = typeof import('./index.ts');

let loading: Promise<Tui> | undefined;

export function loadTui(): Promise<Tui> {
  if (!loading) {
    const here = import.meta.url;
    const bundle = new URL('./bundle.js', here);
    const url = here.endsWith('.js') && fs.existsSync(bundle) ? bundle.href : new URL(here.endsWith('.ts') ? './index.ts' : './index.js', here).href;
    loading = import(url) as Promise<Tui>;
  }
  return loading;
}

/** What the CLI puts on `globals.internals.terminal` for the skills that draw (repl, tutor). */
export interface TerminalHost {
  /** The process's screen (loads the UI on first call). */
  screen(): Promise<import('./screen.ts').Screen>;
  /** The CLI's runtime options (the repl's session runtime starts from them). */
  cliOptions?: import('./repl.ts').CliOptions;
}

/**
 * The screen for a skill that draws: the CLI's (`owned: false`: the CLI removes it when the run
 * ends), or — for a runtime made in code with `interactive: true` — one of its own, on the
 * process's streams, which the skill closes when done.
 */
export async function terminalFor(internals: { terminal?: TerminalHost }): Promise<{ tui: Tui; screen: import('./screen.ts').Screen; cliOptions?: import('./repl.ts').CliOptions; owned: boolean }> {
  const tui = await loadTui();
  const host = internals.terminal;
  if (host) return { tui, screen: await host.screen(), ...(host.cliOptions ? { cliOptions: host.cliOptions } : {}), owned: false };
  return { tui, screen: tui.screen({}), owned: true };
}
