// The terminal UI's building blocks (docs/terminal.md): `h` (React.createElement — the sources are .ts, run
// by Node's type stripping, which does not transform JSX), the colour theme (none at all with
// NO_COLOR or --no-color), and the views every app shares: a result, an error line, pretty JSON,
// the agent's finished blocks and its live part. Every line that shows a value is cut to the
// terminal's width (`…`); model text wraps.
import React from 'react';
import { Box, Text, useWindowSize } from 'ink';
import { Spinner } from '@inkjs/ui';
import { cut, firstLines, jsonLines, oneLine, errorLine, tokens, type JsonKind } from './text.ts';
import type { AgentLive, Block, SkillCall } from './agent-state.ts';
import type { Focus } from './types.ts';

export const h = React.createElement;
export type Element = React.ReactElement;

export interface Theme {
  color: boolean;
  accent?: string;
  ok?: string;
  error?: string;
  warn?: string;
  key?: string;
  json: Record<JsonKind, string | undefined>;
}

export function themeFor(color: boolean): Theme {
  if (!color) return { color: false, json: { key: undefined, string: undefined, number: undefined, boolean: undefined, null: undefined, punct: undefined } };
  return { color: true, accent: 'cyan', ok: 'green', error: 'red', warn: 'yellow', key: 'magenta', json: { key: 'cyan', string: 'green', number: 'yellow', boolean: 'magenta', null: 'gray', punct: undefined } };
}

export const ThemeContext = React.createContext<Theme>(themeFor(false));
export const useTheme = (): Theme => React.useContext(ThemeContext);

/** Which part reads the keys: a question first, then a breakpoint, then the app's own part. */
export const FocusContext = React.createContext<Focus>('none');

/** One line of text, cut to the width with `…`. */
export function Line(props: { color?: string; dim?: boolean; bold?: boolean; inverse?: boolean; children?: React.ReactNode }): Element {
  return h(Text, { wrap: 'truncate-end', color: props.color, dimColor: props.dim, bold: props.bold, inverse: props.inverse }, props.children);
}

/** Pretty JSON, coloured by token kind, each line cut to the width. */
export function Json(props: { value: unknown; maxLines?: number }): Element {
  const theme = useTheme();
  const lines = jsonLines(props.value);
  const max = props.maxLines ?? Infinity;
  const shown = lines.length > max ? lines.slice(0, max) : lines;
  return h(
    Box,
    { flexDirection: 'column' },
    ...shown.map((tokens, i) => h(Text, { key: i, wrap: 'truncate-end' }, ...tokens.map((t, j) => h(Text, { key: j, color: theme.json[t.kind] }, t.text)))),
    lines.length > max ? h(Line, { key: 'more', dim: true }, `… ${lines.length - max} more lines`) : null,
  );
}

/** A skill's result: a string raw (it wraps), nothing for undefined, anything else as coloured JSON. */
export function Result(props: { value: unknown }): Element | null {
  const v = props.value;
  if (v === undefined) return null;
  if (typeof v === 'string') return h(Text, null, oneLineSafe(v));
  return h(Json, { value: v });
}

/** A string as the terminal may show it: control characters escaped, line breaks kept. */
function oneLineSafe(s: string): string {
  return s.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** An error as one red line: `✗ error [CODE]: message`. */
export function ErrorLine(props: { error: unknown; prefix?: string }): Element {
  const theme = useTheme();
  const { code, message } = errorLine(props.error);
  return h(Line, { color: theme.error }, `✗ ${props.prefix ?? 'error'}${code ? ` [${code}]` : ''}: ${message}`);
}

/** A finished agent block, written once above the live part. */
export function BlockView(props: { block: Block; narrow?: boolean }): Element {
  const theme = useTheme();
  const b = props.block;
  switch (b.kind) {
    case 'turn':
      return h(Line, { dim: true }, `── ${b.skill} · turn ${b.turn}`);
    case 'text':
      return h(Text, { dimColor: b.reasoning, italic: b.reasoning }, oneLineSafe(b.text));
    case 'error':
      return h(Line, { color: theme.error }, `✗ ${b.skill}: ${b.text}`);
    case 'done':
      return h(Line, { dim: true }, `── ${b.skill} · ${b.turns} turn${b.turns === 1 ? '' : 's'} · ${tokens(b.usage.totalTokens, props.narrow)} tokens${b.interrupted ? ' · interrupted' : ''}`);
    case 'code':
      return h(CodeBlock, { tool: b.tool, code: b.code, calls: b.calls, result: b.result, error: b.error, interrupted: b.interrupted });
  }
}

/** Lines of an `invoke` code block shown collapsed. */
export const CODE_LINES = 3;

/** An `invoke` call: the first lines of its code, the skills it called, its result or error. */
export function CodeBlock(props: { tool: string; code: string; calls: SkillCall[]; result?: string; error?: string; interrupted?: boolean; running?: boolean }): Element {
  const theme = useTheme();
  const { lines, more } = firstLines(props.code, CODE_LINES);
  const status = props.running
    ? null
    : props.error !== undefined
      ? h(Line, { key: 'status', color: theme.error }, `  ✗ ${props.error}`)
      : props.interrupted
        ? h(Line, { key: 'status', color: theme.warn }, '  ✗ interrupted')
        : h(Line, { key: 'status', color: theme.ok }, `  ✓ ${props.result ?? ''}`);
  return h(
    Box,
    { flexDirection: 'column' },
    h(Line, { key: 'head', color: theme.accent }, `⚙ ${props.tool}`),
    ...lines.map((l, i) => h(Line, { key: `l${i}`, dim: true }, `  │ ${l}`)),
    more ? h(Line, { key: 'more', dim: true }, `  │ … ${more} more line${more === 1 ? '' : 's'}`) : null,
    ...props.calls.map((c, i) => h(CallLine, { key: `c${i}`, call: c })),
    status,
  );
}

/** A skill the code called: its name, its args (cut first when the line is too long), its outcome. */
function CallLine(props: { call: SkillCall }): Element {
  const theme = useTheme();
  const { columns } = useWindowSize();
  const c = props.call;
  const head = `  → ${c.tool}`;
  const outcome = !c.done ? ' …' : c.error !== undefined ? ` ✗ ${c.error}` : ` ✓ ${c.result ?? ''}`;
  const shownOutcome = cut(outcome, Math.max(8, Math.floor(columns / 2)));
  const room = columns - Array.from(head).length - Array.from(shownOutcome).length - 1;
  const args = room >= 4 ? cut(` ${c.args}`, room) : '';
  return h(
    Text,
    { wrap: 'truncate-end' },
    h(Text, { color: theme.accent }, head),
    h(Text, { dimColor: true }, args),
    h(Text, { color: !c.done ? undefined : c.error !== undefined ? theme.error : theme.ok, dimColor: !c.done }, shownOutcome),
  );
}

/** An agent's live part: the streaming line, the code running now, and a status line with the turn and the tokens. */
export function AgentLiveView(props: { agent: AgentLive; columns: number }): Element {
  const a = props.agent;
  const narrow = props.columns < 60;
  const usage = a.usage.totalTokens
    ? narrow
      ? ` · ${tokens(a.usage.totalTokens, true)} tok`
      : ` · ${tokens(a.usage.totalTokens)} tokens (in ${tokens(a.usage.inputTokens)}, out ${tokens(a.usage.outputTokens)})`
    : '';
  const label = `${a.skill} · turn ${a.turn || 1}${usage}`;
  return h(
    Box,
    { flexDirection: 'column' },
    a.reasoning ? h(Text, { key: 'r', dimColor: true, italic: true }, oneLineSafe(a.reasoning)) : null,
    a.text ? h(Text, { key: 't' }, oneLineSafe(a.text)) : null,
    a.code ? h(CodeBlock, { key: 'c', tool: a.code.tool, code: a.code.code, calls: a.code.calls, running: true }) : null,
    h(Box, { key: 's' }, h(Spinner, { label: a.stopping ? `${label} · stopping` : a.code ? label : `${label}${narrow ? '' : ' · thinking'}` })),
  );
}

/** Shown while a line of `value` would not fit: the caller decides; this is the one-line form. */
export function Preview(props: { value: unknown; color?: string }): Element {
  return h(Line, { color: props.color }, oneLine(props.value));
}
