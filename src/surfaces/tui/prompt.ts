// The question at a gate (docs/terminal.md): an approval — the tool agent code calls, its args, the code
// that calls it, why it needs approval — answered with y or Enter (allow once), a (allow for this
// run) or n (deny, then an optional reason line the model sees; Esc goes back); or a plain
// question from ctx.manager.ask(): a choice by its key (or number) or ↑ ↓ and Enter, or a line of free text.
// Ctrl-C at a gate interrupts: a `run` is aborted (exit 130); in the repl, the running command.
import React from 'react';
import { Box, Text, useInput } from 'ink';
import type { ApprovalQuestion, Choice, PlainQuestion } from '../../core/ask.ts';
import { escapeControl } from '../shared/escape.ts';
import { LineEditor } from './line-editor.ts';
import { oneLine } from './text.ts';
import { Line, h, useTheme, type Element } from './ui.ts';
import type { PendingQuestion } from './types.ts';

export interface QuestionViewProps {
  pending: PendingQuestion;
  /** Questions waiting behind this one. */
  more: number;
  active: boolean;
  onInterrupt(): void;
  columns: number;
}

export function QuestionView(props: QuestionViewProps): Element {
  const theme = useTheme();
  const q = props.pending.question;
  const [mode, setMode] = React.useState<{ reasonFor?: Choice }>({});
  const [selected, setSelected] = React.useState(0);
  const choices = q.choices ?? [];
  const answer = (choice: Choice) => {
    if (choice.reason) setMode({ reasonFor: choice });
    else props.pending.answer({ value: choice.value });
  };
  useInput(
    (input, key) => {
      if (key.ctrl && input === 'c') return props.onInterrupt();
      if (!choices.length) return;
      if (key.upArrow || key.leftArrow) return setSelected((i) => (i + choices.length - 1) % choices.length);
      if (key.downArrow || key.rightArrow || key.tab) return setSelected((i) => (i + 1) % choices.length);
      // Enter picks the highlighted choice: the first (allow once) until the arrows move.
      if (key.return) return answer(choices[selected]!);
      // A choice by its key, or by its number when it has no key ([1] [2] …).
      const picked = choices.find((c, i) => (c.key !== undefined ? c.key.toLowerCase() === input.toLowerCase() : input === String(i + 1)));
      if (picked) answer(picked);
    },
    { isActive: props.active && !mode.reasonFor && choices.length > 0 },
  );
  const narrow = props.columns < 60;
  const boxed = props.columns >= 40;
  const body =
    q.kind === 'approval'
      ? h(ApprovalBody, { q, narrow })
      : h(Text, { bold: true }, `? ${escapeControl((q as PlainQuestion).text, { newlines: true })}`);
  let input: Element;
  if (mode.reasonFor) {
    input = h(LineEditor, {
      prompt: `${mode.reasonFor.label ?? mode.reasonFor.value}, reason › `,
      hint: 'optional: the model sees it · Enter sends · Esc goes back',
      active: props.active,
      onSubmit: (line: string) => props.pending.answer({ value: mode.reasonFor!.value, ...(line.trim() ? { reason: line.trim() } : {}) }),
      onCancel: () => props.onInterrupt(),
      onEscape: () => setMode({}),
    });
  } else if (!choices.length) {
    input = h(LineEditor, { prompt: '› ', active: props.active, onSubmit: (line: string) => props.pending.answer({ value: line }), onCancel: () => props.onInterrupt() });
  } else {
    input = h(
      Text,
      { wrap: 'wrap' },
      ...choices.flatMap((c, i) => [
        i ? h(Text, { key: `s${i}` }, narrow ? '  ' : '   ') : null,
        h(Text, { key: `k${i}`, color: theme.key, bold: true, inverse: i === selected && props.active }, c.key ? `[${c.key}${i === 0 ? '/⏎' : ''}]` : `[${i + 1}]`),
        h(Text, { key: `l${i}` }, ` ${c.label ?? c.value}`),
      ]),
    );
  }
  return h(
    Box,
    { flexDirection: 'column', ...(boxed ? { borderStyle: 'round', borderColor: theme.warn, paddingX: 1 } : {}) },
    body,
    input,
    props.more > 0 ? h(Line, { dim: true }, `(${props.more} more waiting)`) : null,
  );
}

/** Lines of the calling code shown: around the call, when it can be found. */
const CODE_WINDOW = 4;

function ApprovalBody(props: { q: ApprovalQuestion; narrow: boolean }): Element {
  const theme = useTheme();
  const { q } = props;
  const label = (s: string) => h(Text, { dimColor: true }, `${s.padEnd(props.narrow ? 4 : 5)} `);
  const who = q.agent ? `${escapeControl(q.agent)}'s code` : 'agent code';
  const why = q.because.kind === 'ask-tools' ? `ask-tools: ${q.because.pattern}` : `trust: ask (${q.because.source})`;
  const code = codeWindow(q.code, q.tool);
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, { wrap: 'truncate-end', bold: true, color: theme.warn }, `? ${who} calls `, h(Text, { color: theme.accent }, escapeControl(q.tool))),
    h(Text, { wrap: 'truncate-end' }, label('args'), oneLine(q.args ?? {})),
    ...code.map((l, i) =>
      h(Text, { key: `c${i}`, wrap: 'truncate-end' }, label(i === 0 ? 'code' : ''), h(Text, { dimColor: !l.call, bold: l.call }, `${String(l.n).padStart(3)} ${l.call ? '›' : '│'} ${l.text}`)),
    ),
    h(Text, { wrap: 'truncate-end' }, label('why'), h(Text, { dimColor: true }, escapeControl(why))),
  );
}

/** Up to CODE_WINDOW lines of `code`, starting a line before the one that names `tool`. */
export function codeWindow(code: string | undefined, tool: string): { n: number; text: string; call: boolean }[] {
  if (!code) return [];
  const lines = code.replace(/\r\n?/g, '\n').replace(/\s+$/, '').split('\n');
  const quoted = new RegExp(`(['"\`])${tool.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\1`);
  const at = lines.findIndex((l) => quoted.test(l));
  const start = at < 0 ? 0 : Math.max(0, at - 1);
  const out = lines.slice(start, start + CODE_WINDOW).map((text, i) => ({ n: start + i + 1, text: escapeControl(text.replace(/\t/g, '  ')), call: start + i === at }));
  const rest = lines.length - (start + out.length);
  if (rest > 0) out.push({ n: start + out.length + 1, text: `… ${rest} more line${rest === 1 ? '' : 's'}`, call: false });
  return out;
}
