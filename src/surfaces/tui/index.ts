// The terminal UI (docs/terminal.md): ink apps drawn on stderr when a run is interactive. Loaded only by
// load.ts, when something is about to be shown; everything here may import ink and React.
export { Screen, screen, currentScreen, uiColor, type ScreenOptions } from './screen.ts';
export { runRepl, type CliOptions, type ReplHost } from './repl.ts';
export { runTutor, STEPS as TUTOR_STEPS, readState as readTutorState } from './tutor.ts';
