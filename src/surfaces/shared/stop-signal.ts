// How a long-running surface (`serve`, `mcp serve`) learns it should stop (docs/cli.md, "Signals"):
// SIGINT / SIGTERM or a reason of its own; the first one wins and wakes `stopped`; a second
// Ctrl-C exits at once. `release()` takes the signal handlers off again.
import { EXIT } from '../../core/errors.ts';

export interface StopSignal<W extends string> {
  /** Settles once something asked to stop. */
  readonly stopped: Promise<void>;
  /** Why it stops (undefined while it runs). */
  readonly reason: W | 'SIGINT' | 'SIGTERM' | undefined;
  stop(why: W | 'SIGINT' | 'SIGTERM'): void;
  release(): void;
}

export function stopSignal<W extends string>(): StopSignal<W> {
  let reason: W | 'SIGINT' | 'SIGTERM' | undefined;
  let wake!: () => void;
  const stopped = new Promise<void>((resolve) => (wake = resolve));
  const stop = (why: W | 'SIGINT' | 'SIGTERM') => {
    if (reason) {
      if (why === 'SIGINT') process.exit(EXIT.interrupted); // a second Ctrl-C: out at once
      return;
    }
    reason = why;
    wake();
  };
  const onInt = () => stop('SIGINT');
  const onTerm = () => stop('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return {
    stopped,
    get reason() {
      return reason;
    },
    stop,
    release() {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
    },
  };
}
