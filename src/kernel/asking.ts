// The runtime's side of asking a person (docs/agents.md): the asker a runtime holds (src/core/ask.ts
// is its contract), one question at a time, withdrawn when its caller aborts. Used by
// `ctx.manager.ask()` and by the approval gates of agent code (src/agent/approval.ts).
import { AbortError, AgentAppsError } from '../core/errors.ts';
import type { Answer, Asker, Choice, Question } from '../core/ask.ts';
import type { Globals } from '../core/types.ts';


/**
 * One asker, one question at a time. A question waits in line behind the ones asked before it;
 * one whose signal aborts — in line or on screen — rejects at once with E_ABORTED and the line
 * moves on, whether or not the asker honours the signal.
 */
export class AskDesk {
  readonly asker: Asker;
  #tail: Promise<unknown> = Promise.resolve();

  constructor(asker: Asker) {
    this.asker = asker;
  }

  /**
   * Asks `question` when its turn comes. `before`, called when the turn comes, may answer without
   * asking (an approval that an earlier answer already covers: "allow for this run").
   */
  ask(question: Question, signal: AbortSignal, before?: () => Answer | undefined): Promise<Answer> {
    if (signal.aborted) return Promise.reject(aborted(signal));
    let release!: () => void;
    const turn = this.#tail;
    this.#tail = new Promise<void>((r) => (release = r));
    return new Promise<Answer>((resolve, reject) => {
      let done = false;
      const finish = (fn: () => void) => {
        if (done) return;
        done = true;
        signal.removeEventListener('abort', onAbort);
        release();
        fn();
      };
      const onAbort = () => finish(() => reject(aborted(signal)));
      signal.addEventListener('abort', onAbort, { once: true });
      void turn.then(async () => {
        if (done) return;
        try {
          const early = before?.();
          if (early) return finish(() => resolve(early));
          const answer = checkAnswer(question, await this.asker.ask(question, signal));
          finish(() => resolve(answer));
        } catch (err) {
          finish(() => reject(signal.aborted ? aborted(signal) : err));
        }
      });
    });
  }
}

/**
 * A run's own asker (docs/agents.md, "Asking a person"): a request from outside that can answer
 * questions itself — an MCP client with elicitation, a gateway with `approvals:` (docs/serve.md) —
 * puts one on the run's nonlocals; `ctx.manager.ask` and the approval gates of that run use it
 * before the runtime's. It rides under a symbol key, which data from outside can never carry.
 */
const RUN_ASKER = Symbol('agent-apps.run-asker');

/** Puts `asker` on a run's nonlocals (before the run starts); returns them. */
export function withRunAsker<T extends object>(nonlocals: T, asker: Asker): T {
  (nonlocals as Record<symbol, unknown>)[RUN_ASKER] = new AskDesk(asker);
  return nonlocals;
}

/** The run's own asker, when the request that started it brought one. */
export function runDesk(nonlocals: object): AskDesk | undefined {
  const desk = (nonlocals as Record<symbol, unknown>)[RUN_ASKER];
  return desk instanceof AskDesk ? desk : undefined;
}

/** Gives a runtime its asker (or takes it away with undefined). */
export function setAsker(globals: Globals, asker: Asker | undefined): void {
  globals.internals.asker = asker ? new AskDesk(asker) : undefined;
}

/** The runtime's asker, or undefined when there is no person to ask. */
export function askDesk(globals: Globals): AskDesk | undefined {
  const desk = globals.internals.asker;
  return desk instanceof AskDesk ? desk : undefined;
}

export { notInteractive } from '../core/errors.ts';

/** `choices` as given to `ask()`: strings or Choice objects; duplicates and empty values refused. */
export function normalizeChoices(choices: unknown): Choice[] {
  if (choices === undefined || choices === null) return [];
  if (!Array.isArray(choices)) throw new AgentAppsError('E_VALIDATION', 'ask: choices must be a list of strings');
  const out: Choice[] = [];
  for (const c of choices) {
    const choice: Choice | undefined =
      typeof c === 'string'
        ? { value: c }
        : c !== null && typeof c === 'object' && typeof (c as Choice).value === 'string'
          ? { value: (c as Choice).value, ...(typeof (c as Choice).label === 'string' ? { label: (c as Choice).label } : {}), ...(typeof (c as Choice).key === 'string' ? { key: (c as Choice).key } : {}) }
          : undefined;
    if (!choice || !choice.value) throw new AgentAppsError('E_VALIDATION', `ask: a choice must be a non-empty string, got ${JSON.stringify(c)}`);
    if (out.some((o) => o.value === choice.value)) throw new AgentAppsError('E_VALIDATION', `ask: choice '${choice.value}' is listed twice`);
    out.push(choice);
  }
  return out;
}

/** An asker's answer must be one it was offered (a broken asker is not a person saying yes). */
function checkAnswer(question: Question, answer: unknown): Answer {
  const a = answer as Answer | undefined;
  if (!a || typeof a !== 'object' || typeof a.value !== 'string') throw new AgentAppsError('E_VALIDATION', `the asker answered ${JSON.stringify(answer)}: an answer is { value: string, reason?: string }`);
  const choices = question.choices ?? [];
  if (choices.length && !choices.some((c) => c.value === a.value)) {
    throw new AgentAppsError('E_VALIDATION', `the asker answered '${a.value.slice(0, 80)}', which is not one of ${choices.map((c) => `'${c.value}'`).join(', ')}`);
  }
  const out: Answer = { value: a.value };
  if (typeof a.reason === 'string' && a.reason.trim()) out.reason = a.reason.trim();
  const by = a.by;
  if (by && typeof by.who === 'string' && typeof by.via === 'string' && typeof by.at === 'number') out.by = { who: by.who, via: by.via, at: by.at };
  return out;
}

function aborted(signal: AbortSignal): AbortError {
  const reason = signal.reason;
  return reason instanceof AbortError ? reason : new AbortError(reason);
}

declare module '../core/types.ts' {
  interface RuntimeState {
    /** The person to ask, one question at a time (createRuntime({ asker }), the terminal UI). */
    asker?: AskDesk;
  }
}
