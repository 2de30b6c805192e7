// Asking a person (docs/agents.md): `ctx.manager.ask(question, { choices })` and the approval gates of
// agent code both end in one `Asker` the runtime holds. The terminal UI (src/surfaces/tui) provides it when
// a run is interactive (`createRuntime({ asker })`); without one, asking fails with
// E_NOT_INTERACTIVE and an approval gate is refused (E_ALLOWED_TOOLS, "needs approval").
//
// This file is the contract the UI implements; it imports nothing. How the UI plugs in:
//   createRuntime({ interactive: true, asker })          — one asker per runtime (a repl session)
//   runSkill(skill, tokens, opts, g, io, { asker })      — src/surfaces/cli/run.ts, for `run` / `debug`
// The runtime hands questions to the asker one at a time (src/kernel/asking.ts queues them), and
// withdraws a question whose caller was aborted by aborting `signal`.

/** One choice the person can pick; `key` is the key that picks it in a terminal (`y`, `a`, `n`). */
export interface Choice {
  /** The value `ask()` resolves to when this choice is picked. */
  value: string;
  /** What the person sees (defaults to `value`). */
  label?: string;
  /** A single key that picks it (the UI may ignore it). */
  key?: string;
  /** After picking it, ask for an optional free-text line (the deny reason). */
  reason?: boolean;
}

/** A plain question from `ctx.manager.ask()` or the `ask` skill. */
export interface PlainQuestion {
  kind: 'question';
  /** The question text. */
  text: string;
  /** The choices; empty or absent = free text. */
  choices?: Choice[];
  /** The tool that asks (the context's tool). */
  tool?: string;
}

/**
 * An approval gate: may this call from agent code run? `tool`, `args`, `code` and `agent` come from
 * a model: render them with control characters escaped (`printable` in src/core/line-asker.ts).
 */
export interface ApprovalQuestion {
  kind: 'approval';
  /** A one-line question, e.g. "Allow shell?" (for a plain renderer). */
  text: string;
  /** The tool agent code calls. */
  tool: string;
  /** Its args, as agent code passed them. */
  args: unknown;
  /** The source of the execution that called it (the `invoke` code), when known. */
  code?: string;
  /** The agent skill whose code calls it. */
  agent?: string;
  /** Set when agent code does not call the tool but names it: `event-subscribe's ref`, `$context.middleware`. */
  via?: string;
  /** Why the gate opened: the agent's `ask-tools`, or `trust: ask` (with where it was set). */
  because: { kind: 'ask-tools'; pattern: string } | { kind: 'trust'; source: string };
  /** Always APPROVAL_CHOICES. */
  choices: Choice[];
}

export type Question = PlainQuestion | ApprovalQuestion;

/** What an asker returns: the picked choice's value (or free text), plus an optional reason line. */
export interface Answer {
  value: string;
  /** The optional reason typed after a choice with `reason: true` (the deny reason). */
  reason?: string;
  /**
   * Who answered, through what and when, for an answer that did not come from the terminal: a
   * remote approval (docs/serve.md) — a Slack user id, an email address or `web`, and the gateway.
   */
  by?: { who: string; via: string; at: number };
}

/**
 * A person to ask. `ask` resolves with the answer, or rejects when `signal` aborts (the question is
 * withdrawn: the run or the call was aborted) — the UI must then remove its prompt; the runtime
 * does not wait for that promise once `signal` has aborted.
 * An approval question's answer is one of APPROVAL_CHOICES' values (`allow`, `allow-run`, `deny`,
 * with `reason` for a deny); a plain question's is one of its choices' values, or free text when it
 * has no choices. Anything else is refused (E_VALIDATION) as a broken asker.
 * Ctrl-C at a prompt aborts the run: the UI does what the CLI does on SIGINT (in a raw-mode ink app,
 * `process.kill(process.pid, 'SIGINT')` reaches the CLI's handler: the root context is aborted,
 * every waiting question is withdrawn through its signal, exit 130).
 * The runtime never asks two questions at once: the next one comes after the last one settled.
 */
export interface Asker {
  ask(question: Question, signal: AbortSignal): Promise<Answer>;
}

/** The three answers at an approval gate (keys: y or Enter, a, n then an optional reason line). */
export const APPROVAL_CHOICES: readonly Choice[] = Object.freeze([
  Object.freeze({ value: 'allow', label: 'allow once', key: 'y' }),
  Object.freeze({ value: 'allow-run', label: 'allow for this run', key: 'a' }),
  Object.freeze({ value: 'deny', label: 'deny', key: 'n', reason: true }),
]) as readonly Choice[];

/** Options of `ctx.manager.ask(question, options)`. */
export interface AskOptions {
  /** Strings (or Choice objects); the result is one of their values. Absent or empty = free text. */
  choices?: (string | Choice)[];
}
