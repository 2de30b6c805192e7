// One ACP `session/prompt` as the provider sees it (docs/agents.md: one prompt is one turn): the text the
// agent streamed, cut into segments at its tool calls, and the cassette entries the turn records.
//
// A cassette (docs/agents.md) is the model's side of a run for the Strands replay model, which plays one
// entry per model response and ends a turn at an entry without `invoke`. An ACP agent runs its own
// loop inside one prompt — text, a tool call, its result, more text, another call — so a prompt
// is recorded as one entry per tool call (the text before it and its code) or, with no tool call,
// one entry with its text. The text after the prompt's last tool call is not recorded: the agent
// skill answers a turn that used tools with `continue`, so the next prompt's answer is the model
// response that follows in a replay. A tool of the agent's own (an edit, a shell command) is
// recorded as code that is only a comment naming it: a replay does not redo it, and keeps the turn
// structure (the agent skill continues after a turn with a tool call, in both runs).

import type { CassetteEntry } from '../agent/acp-provider.ts';

export type { CassetteEntry } from '../agent/acp-provider.ts';

export class PromptTurn {
  readonly number: number;
  /** Everything the agent said in this prompt: the turn's text (turn-end's `result`). */
  text = '';
  #segment = '';
  #reasoning = '';
  readonly #entries: CassetteEntry[] = [];

  constructor(number: number) {
    this.number = number;
  }

  addText(text: string): void {
    this.text += text;
    this.#segment += text;
  }

  addReasoning(text: string): void {
    this.#reasoning += text;
  }

  /** Tool calls seen in this prompt (ours and the agent's own). */
  get toolCalls(): number {
    return this.#entries.length;
  }

  /** A call of our `invoke` with `code`: it closes the segment before it, which is returned. */
  invoke(code: string): Segment {
    const segment = this.closeSegment();
    this.#entries.push({ ...(segment.text ? { text: segment.text } : {}), invoke: code });
    return segment;
  }

  /** A tool call of the agent's own: recorded as a comment naming it (see above). */
  ownTool(label: string, kind?: string | null): Segment {
    const k = kind?.replace(/[^a-z_]/gi, '');
    return this.invoke(`// agent-apps: here the ACP agent used its own tool ${oneLine(label)}${k ? ` (${k})` : ''}; a replay does not run it`);
  }

  /** The text (and reasoning) since the last tool call, which ends here. */
  closeSegment(): Segment {
    const out = { text: this.#segment, reasoning: this.#reasoning };
    this.#segment = '';
    this.#reasoning = '';
    return out;
  }

  /** This turn's cassette entries so far: one per tool call, or its text when it had none. */
  cassette(): CassetteEntry[] {
    if (this.#entries.length) return this.#entries.map((e) => ({ ...e }));
    return [this.text ? { text: this.text } : {}];
  }
}

export interface Segment {
  text: string;
  reasoning: string;
}

/**
 * A label from the agent inside a JavaScript line comment: every line terminator JavaScript knows
 * is flattened, so nothing the agent names can end the comment and become code.
 */
function oneLine(text: string): string {
  return JSON.stringify(text.replace(/[\r\n\u2028\u2029]+/g, ' ').slice(0, 200));
}
