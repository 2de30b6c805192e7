// The repl's line editor as a pure function of (state, key) → state and an action (docs/terminal.md), so
// the keys are testable without a terminal. The ink component (line-editor.ts) only feeds it keys.
// Keys: printable text inserts (a paste too, newlines as spaces); ← → / Ctrl-B Ctrl-F move;
// Home End / Ctrl-A Ctrl-E jump; Backspace, Delete; Ctrl-U / Ctrl-K kill to the start / end;
// Ctrl-W deletes the word before the cursor; ↑ ↓ walk the history; Tab completes; Enter submits;
// Ctrl-C cancels; Ctrl-D on an empty line is end of input (otherwise it deletes forward).

export interface LineState {
  text: string;
  /** Cursor position, in code points. */
  cursor: number;
  /** Index into the history while walking it (history.length = the line being edited). */
  hist: number;
  /** The line being edited, kept while the history is shown in its place. */
  draft: string;
}

/** The subset of ink's `Key` the editor reads. */
export interface KeyInfo {
  upArrow?: boolean;
  downArrow?: boolean;
  leftArrow?: boolean;
  rightArrow?: boolean;
  home?: boolean;
  end?: boolean;
  return?: boolean;
  escape?: boolean;
  ctrl?: boolean;
  meta?: boolean;
  tab?: boolean;
  backspace?: boolean;
  delete?: boolean;
}

export type LineAction = 'submit' | 'complete' | 'cancel' | 'eof' | 'escape' | undefined;

/** An empty line; its history index is past the end (the line being edited), whatever the history's length. */
export function emptyLine(): LineState {
  return { text: '', cursor: 0, hist: Number.MAX_SAFE_INTEGER, draft: '' };
}

export function lineWith(text: string): LineState {
  return { text, cursor: Array.from(text).length, hist: Number.MAX_SAFE_INTEGER, draft: '' };
}

export function editLine(s: LineState, input: string, key: KeyInfo, history: readonly string[]): { state: LineState; action?: LineAction } {
  const chars = Array.from(s.text);
  const at = (text: string[], cursor: number): LineState => ({ ...s, text: text.join(''), cursor: Math.max(0, Math.min(cursor, text.length)) });
  if (key.return) return { state: s, action: 'submit' };
  if (key.tab) return { state: s, action: 'complete' };
  if (key.escape) return { state: s, action: 'escape' };
  if (key.ctrl) {
    switch (input) {
      case 'c':
        return { state: s, action: 'cancel' };
      case 'd':
        if (!chars.length) return { state: s, action: 'eof' };
        return { state: at(chars.toSpliced(s.cursor, 1), s.cursor) };
      case 'a':
        return { state: { ...s, cursor: 0 } };
      case 'e':
        return { state: { ...s, cursor: chars.length } };
      case 'b':
        return { state: { ...s, cursor: Math.max(0, s.cursor - 1) } };
      case 'f':
        return { state: { ...s, cursor: Math.min(chars.length, s.cursor + 1) } };
      case 'u':
        return { state: at(chars.slice(s.cursor), 0) };
      case 'k':
        return { state: at(chars.slice(0, s.cursor), s.cursor) };
      case 'w': {
        let i = s.cursor;
        while (i > 0 && chars[i - 1] === ' ') i--;
        while (i > 0 && chars[i - 1] !== ' ') i--;
        return { state: at([...chars.slice(0, i), ...chars.slice(s.cursor)], i) };
      }
      case 'p':
        return historyMove(s, -1, history);
      case 'n':
        return historyMove(s, 1, history);
      default:
        if (!key.leftArrow && !key.rightArrow && !key.upArrow && !key.downArrow) return { state: s };
    }
  }
  if (key.leftArrow) return { state: { ...s, cursor: Math.max(0, s.cursor - 1) } };
  if (key.rightArrow) return { state: { ...s, cursor: Math.min(chars.length, s.cursor + 1) } };
  if (key.home) return { state: { ...s, cursor: 0 } };
  if (key.end) return { state: { ...s, cursor: chars.length } };
  if (key.upArrow) return historyMove(s, -1, history);
  if (key.downArrow) return historyMove(s, 1, history);
  if (key.backspace) {
    if (s.cursor === 0) return { state: s };
    return { state: at(chars.toSpliced(s.cursor - 1, 1), s.cursor - 1) };
  }
  if (key.delete) return { state: at(chars.toSpliced(s.cursor, 1), s.cursor) };
  if (key.meta || !input) return { state: s };
  // Text, typed or pasted: one line, control characters dropped.
  const text = Array.from(input.replace(/\r\n?|\n/g, ' ').replace(/[\u0000-\u001f\u007f]/g, ''));
  if (!text.length) return { state: s };
  return { state: at([...chars.slice(0, s.cursor), ...text, ...chars.slice(s.cursor)], s.cursor + text.length) };
}

/**
 * The keys in one read. ink hands a read that is more than one key over as one string (a paste,
 * or keys typed faster than they are read): text with a Tab in it would insert the text and drop
 * the Tab. Split at each Tab, so the same keys do the same whether they came one read at a time
 * or together (docs/terminal.md, The repl). Newlines stay text: in a read they are a paste's.
 */
export function splitKeys(input: string, key: KeyInfo): [string, KeyInfo][] {
  if (key.tab || key.ctrl || key.meta || input.length < 2 || !input.includes('\t')) return [[input, key]];
  const keys: [string, KeyInfo][] = [];
  for (const part of input.split(/(\t)/)) if (part) keys.push(part === '\t' ? ['', { tab: true }] : [part, {}]);
  return keys;
}

function historyMove(s: LineState, step: -1 | 1, history: readonly string[]): { state: LineState } {
  // An index past the end (the history grew, or a fresh line) is the line being edited.
  const cur = Math.min(s.hist, history.length);
  const next = Math.max(0, Math.min(history.length, cur + step));
  if (next === cur) return { state: s };
  const draft = cur === history.length ? s.text : s.draft;
  const text = next === history.length ? draft : history[next]!;
  return { state: { text, cursor: Array.from(text).length, hist: next, draft } };
}

/** Replaces code points [from, to) of the line with `text` and puts the cursor after it. */
export function replaceRange(s: LineState, from: number, to: number, text: string): LineState {
  const chars = Array.from(s.text);
  const inserted = Array.from(text);
  return { ...s, text: [...chars.slice(0, from), ...inserted, ...chars.slice(to)].join(''), cursor: from + inserted.length };
}
