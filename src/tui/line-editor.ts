// A one-line editor (ink): the repl's prompt and the deny-reason line at a gate. The keys are
// line-edit.ts's; Tab asks `complete` and shows the candidates under the line when there are
// several. The cursor is drawn as an inverse cell (a style, kept without colour).
import React from 'react';
import { Box, Text, useInput } from 'ink';
import { editLine, emptyLine, replaceRange, type LineState } from './line-edit.ts';
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
  const history = props.history ?? [];
  const [state, setState] = React.useState<LineState>(() => emptyLine());
  const [candidates, setCandidates] = React.useState<string[]>([]);
  const stateRef = React.useRef(state);
  stateRef.current = state;
  const set = (next: LineState) => {
    if (next.text !== stateRef.current.text) props.onChange?.(next.text);
    stateRef.current = next;
    setState(next);
  };
  useInput(
    (input, key) => {
      const { state: next, action } = editLine(stateRef.current, input, key, history);
      if (next !== stateRef.current) {
        set(next);
        if (candidates.length) setCandidates([]);
      }
      switch (action) {
        case 'submit': {
          const line = stateRef.current.text;
          set(emptyLine());
          setCandidates([]);
          props.onSubmit(line);
          break;
        }
        case 'cancel': {
          const line = stateRef.current.text;
          set(emptyLine());
          setCandidates([]);
          props.onCancel?.(line);
          break;
        }
        case 'eof':
          props.onEof?.();
          break;
        case 'escape':
          props.onEscape?.();
          break;
        case 'complete': {
          if (!props.complete) break;
          const at = stateRef.current;
          void props.complete(at.text, at.cursor).then((c) => {
            // Typing went on meanwhile: this completion is for a line that is gone.
            if (!c || stateRef.current !== at) return;
            if (c.replacement.length > c.word.length || c.candidates.length === 1) set(replaceRange(at, c.from, c.to, c.replacement));
            setCandidates(c.candidates.length > 1 ? c.candidates : []);
          }, () => undefined);
          break;
        }
      }
    },
    { isActive: props.active },
  );
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
