// What bin/agent-apps.js runs: the CLI; exits with its code once stdout and stderr have drained.
// The public entry (src/index.ts) is not imported here: skills' `agent-apps` resolves to the one
// beside the runtime (src/runtime.ts), loaded when a skill imports it, and a command that runs no
// skill (`--help`, `list`) does without it (docs/cli.md, "Start-up").
import { main } from './main.ts';

export async function run(argv: string[]): Promise<void> {
  // `agent-apps run x | head -1`: a reader that went away is not an error of ours.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
    throw err;
  });
  const code = await main(argv);
  process.exitCode = code;
  // Leftover timers or sockets from a skill must not keep a finished CLI run alive.
  const done = () => process.exit(code);
  let pending = 2;
  const flushed = () => {
    if (--pending === 0) done();
  };
  process.stdout.write('', flushed);
  process.stderr.write('', flushed);
}
