// A one-line editor (ink): the repl's prompt and the deny-reason line at a gate. The keys are
// line-edit.ts's, one at a time even when a read holds several (splitKeys); Tab asks `complete`
// and shows the candidates under the line when there are several, and keys that come meanwhile
// wait for it. The cursor is drawn as an inverse cell (a style, kept without colour).
import React from 'react';
import { Box, Text, useInput } from 'ink';
import { editLine, emptyLine, replaceRange, splitKeys, type KeyInfo, type LineState } from './line-edit.ts';
import type { Completion } from './complete.ts';
import { h, useTheme, type Element } from './ui.ts';

export interface LineEditorProps {
  prompt: string;
  /** Reads keys only while active. */
  active: boolean;
  history?: readonly string[];
  complete?: (line: string, cursor: number) => Promise<Completion | undefined>;
  onSubmit(line: string): void;
  /** Ctrl-C; `line` is what was typed (the repl clears it, or leaves on an empty line). */
  onCancel?(line: string): void;
  /** Ctrl-D on an empty line. */
  onEof?(): void;
  onEscape?(): void;
  /** Called with every change of the text (the repl forgets a pending "Ctrl-C again"). */
  onChange?(line: string): void;
  /** A dim line under the editor. */
  hint?: string;
}

export function LineEditor(props: LineEditorProps): Element {
  const theme = useTheme();
  const [state, setState] = React.useState<LineState>(() => emptyLine());
  const [candidates, setCandidates] = React.useState<string[]>([]);
  const stateRef = React.useRef(state);
  stateRef.current = state;
  // Keys handled after a completion settles run with the props and candidates of that moment.
  const propsRef = React.useRef(props);
  propsRef.current = props;
  const candidatesRef = React.useRef(candidates);
  candidatesRef.current = candidates;
  // Keys that came while a completion was looked up: they apply after it, in order, as they
  // would after a completion that took no time (a Tab typed ahead of the text after it).
  const waiting = React.useRef<[string, KeyInfo][] | undefined>(undefined);
  const set = (next: LineState) => {
    if (next.text !== stateRef.current.text) propsRef.current.onChange?.(next.text);
    stateRef.current = next;
    setState(next);
  };
  const shown = (next: string[]) => {
    candidatesRef.current = next;
    setCandidates(next);
  };
  const feed = (keys: [string, KeyInfo][]): void => {
    for (let i = 0; i < keys.length; i++) {
      if (waiting.current) {
        waiting.current.push(...keys.slice(i));
        return;
      }
      handle(...keys[i]!);
    }
  };
  const handle = (input: string, key: KeyInfo): void => {
    const p = propsRef.current;
    const { state: next, action } = editLine(stateRef.current, input, key, p.history ?? []);
    if (next !== stateRef.current) {
      set(next);
      if (candidatesRef.current.length) shown([]);
    }
    switch (action) {
      case 'submit': {
        const line = stateRef.current.text;
        set(emptyLine());
        shown([]);
        p.onSubmit(line);
        break;
      }
      case 'cancel': {
        const line = stateRef.current.text;
        set(emptyLine());
        shown([]);
        p.onCancel?.(line);
        break;
      }
      case 'eof':
        p.onEof?.();
        break;
      case 'escape':
        p.onEscape?.();
        break;
      case 'complete': {
        if (!p.complete) break;
        const at = stateRef.current;
        waiting.current = [];
        let settled = false;
        const settle = (c: Completion | undefined) => {
          if (settled) return;
          settled = true;
          clearTimeout(giveUp);
          // Typing went on meanwhile (a key that did not wait): this completion is for a line that is gone.
          if (c && stateRef.current === at) {
            if (c.replacement.length > c.word.length || c.candidates.length === 1) set(replaceRange(at, c.from, c.to, c.replacement));
            shown(c.candidates.length > 1 ? c.candidates : []);
          }
          const rest = waiting.current ?? [];
          waiting.current = undefined;
          feed(rest);
        };
        // A lookup that hangs must not hold the keys after it: they go on without the completion.
        const giveUp = setTimeout(() => settle(undefined), 2000);
        p.complete(at.text, at.cursor).then(settle, () => settle(undefined));
        break;
      }
    }
  };
  useInput((input, key) => feed(splitKeys(input, key)), { isActive: props.active });
  const chars = Array.from(state.text);
  const before = chars.slice(0, state.cursor).join('');
  const at = chars[state.cursor] ?? ' ';
  const after = chars.slice(state.cursor + 1).join('');
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, null, h(Text, { color: theme.accent, bold: true }, props.prompt), before, props.active ? h(Text, { inverse: true }, at) : at, after),
    candidates.length ? h(Text, { wrap: 'truncate-end', dimColor: true }, candidates.join('  ')) : null,
    props.hint ? h(Text, { wrap: 'truncate-end', dimColor: true }, props.hint) : null,
  );
}
