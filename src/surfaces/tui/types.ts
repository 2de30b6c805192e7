// Shapes shared by the screen (screen.ts) and the parts it shows, kept apart so that no two of
// those modules import each other.
import type { Answer, Question } from '../../core/ask.ts';
import type { LogEvent } from '../../core/types.ts';

export interface PendingQuestion {
  id: number;
  question: Question;
  answer(a: Answer): void;
}

/** A breakpoint as the debug view shows it (skills/debug.skill.ts asks through internals.breakpoint). */
export interface PauseRequest {
  /** `greet` or `greet › execute`. */
  where: string;
  /** The debug events of the run so far: the pipeline tree up to the breakpoint. */
  events: LogEvent[];
  /** The served context, serialized (`i` shows it). */
  inspect(): unknown;
}

export interface PendingPause {
  id: number;
  request: PauseRequest;
  resume(how: 'continue' | 'step'): void;
}

export type Focus = 'question' | 'pause' | 'main' | 'none';
