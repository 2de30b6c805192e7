// A plain asker (src/core/ask.ts): questions as text on a stream, answers as lines from
// another — no ink, no ANSI codes. Tests drive approval gates end to end with it
// (`createRuntime({ asker: lineAsker({ input, output }) })`), and `run` uses it in a terminal
// when no richer asker is given.
import type { Interface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { notInteractive } from './errors.ts';
import type { Answer, ApprovalQuestion, Asker, PlainQuestion, Question } from './ask.ts';

export interface LineAskerOptions {
  input: Readable;
  /** Where questions are written (stderr in a terminal: stdout carries only the result). Optional. */
  output?: Writable;
  /** Lines of calling code shown at a gate (default 12; the rest is counted). */
  codeLines?: number;
}

/**
 * Answers at an approval gate: `y` or an empty line allow once, `a` allows for this run, `n` denies
 * and the next line is the reason (empty: none). A plain question takes one of its choices (its
 * value, its number or its key), or any text when it has none. The input's end means nobody is
 * left to answer: E_NOT_INTERACTIVE.
 */
export class LineAsker implements Asker {
  readonly #input: Readable;
  readonly #out: Writable | undefined;
  readonly #codeLines: number;
  readonly #lines: string[] = [];
  /** Opened on the first question: an asker nobody uses never reads its input. */
  #rl: Interface | undefined;
  #waiter: ((line: string | null) => void) | undefined;
  #ended = false;

  constructor(o: LineAskerOptions) {
    this.#input = o.input;
    this.#out = o.output;
    this.#codeLines = o.codeLines ?? 12;
  }

  async ask(question: Question, signal: AbortSignal): Promise<Answer> {
    this.#open();
    return question.kind === 'approval' ? this.#approval(question, signal) : this.#plain(question, signal);
  }

  /** Stops reading the input (lets the process exit). */
  close(): void {
    this.#rl?.close();
    this.#ended = true;
  }

  #open(): void {
    if (this.#rl || this.#ended) return;
    // node:readline when a question is first asked: every run loads this module (the public API
    // exports it), and few ask (~1 ms of each start).
    const rl = process.getBuiltinModule('node:readline').createInterface({ input: this.#input, terminal: false, crlfDelay: Infinity });
    this.#rl = rl;
    rl.on('line', (line) => {
      const w = this.#waiter;
      if (w) {
        this.#waiter = undefined;
        w(line);
      } else this.#lines.push(line);
    });
    rl.on('close', () => {
      this.#ended = true;
      const w = this.#waiter;
      this.#waiter = undefined;
      w?.(null);
    });
  }

  async #approval(q: ApprovalQuestion, signal: AbortSignal): Promise<Answer> {
    this.#write(renderApproval(q, this.#codeLines));
    for (;;) {
      this.#write('allow? [y] once / [a] for this run / [n] deny: ');
      const line = (await this.#line(signal, 'an approval was needed')).trim().toLowerCase();
      if (line === '' || line === 'y' || line === 'yes') return { value: 'allow' };
      if (line === 'a' || line === 'all' || line === 'always') return { value: 'allow-run' };
      if (line === 'n' || line === 'no') {
        this.#write('reason (optional, the model sees it): ');
        const reason = (await this.#line(signal, 'an approval was needed').catch(() => '')).trim();
        return reason ? { value: 'deny', reason } : { value: 'deny' };
      }
      this.#write(`'${printable(line).slice(0, 40)}' is not y, a or n\n`);
    }
  }

  async #plain(q: PlainQuestion, signal: AbortSignal): Promise<Answer> {
    const choices = q.choices ?? [];
    let text = `${q.tool ? `${printable(q.tool)} asks: ` : ''}${printable(q.text)}\n`;
    choices.forEach((c, i) => (text += `  ${i + 1}. ${printable(c.label ?? c.value)}${c.key ? ` [${printable(c.key)}]` : ''}\n`));
    this.#write(text);
    for (;;) {
      this.#write('> ');
      const line = (await this.#line(signal, 'a question was asked')).trim();
      if (!choices.length) return { value: line };
      const n = Number(line);
      const hit = choices.find((c) => c.value === line || c.key === line) ?? (Number.isInteger(n) && n >= 1 && n <= choices.length ? choices[n - 1] : undefined);
      if (hit) return { value: hit.value };
      this.#write(`choose one of ${choices.map((c, i) => `${i + 1} (${printable(c.value)})`).join(', ')}\n`);
    }
  }

  #write(text: string): void {
    this.#out?.write(text);
  }

  #line(signal: AbortSignal, what: string): Promise<string> {
    if (this.#lines.length) return Promise.resolve(this.#lines.shift()!);
    if (this.#ended) return Promise.reject(notInteractive(what));
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        if (this.#waiter === got) this.#waiter = undefined;
        reject(signal.reason);
      };
      const got = (line: string | null) => {
        signal.removeEventListener('abort', onAbort);
        if (line === null) reject(notInteractive(what));
        else resolve(line);
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiter = got;
    });
  }
}

export function lineAsker(o: LineAskerOptions): LineAsker {
  return new LineAsker(o);
}

/** An approval question as plain lines: who calls what, with which args, from which code. */
export function renderApproval(q: ApprovalQuestion, codeLines = 12): string {
  const why = q.because.kind === 'ask-tools' ? `ask-tools '${q.because.pattern}'` : `trust: ask (${q.because.source})`;
  let out = `\n${q.agent ? `the agent of '${printable(q.agent)}'` : 'agent code'} wants to call ${printable(q.tool)}  (${printable(why)})\n`;
  const args = JSON.stringify(q.args ?? {}) ?? '{}';
  out += `  args: ${printable(args.length > 2000 ? args.slice(0, 2000) + '…' : args)}\n`;
  if (q.code) {
    const lines = q.code.replace(/\s+$/, '').split('\n');
    out += '  code:\n';
    for (const l of lines.slice(0, codeLines)) out += `    │ ${printable(l)}\n`;
    if (lines.length > codeLines) out += `    │ … ${lines.length - codeLines} more lines\n`;
  }
  return out;
}

/**
 * Text from agent code or a model, safe to print on a terminal: control characters (escape
 * sequences, carriage returns, newlines) shown escaped, never interpreted.
 */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => (c === '\t' ? '  ' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}
