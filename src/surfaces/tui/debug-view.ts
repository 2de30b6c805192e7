// `debug --break TOOL` in a terminal (docs/terminal.md): at a breakpoint, the pipeline tree so far with the
// paused entry highlighted (entries still running show `…`); `s` steps to the next chain entry or
// pipeline and pauses there, `c` or Enter continues, `i` writes the served context (serialized)
// above, Ctrl-C interrupts the run.
import { Box, Text, useInput } from 'ink';
import { buildTree, treeLines } from '../shared/debug-tree.ts';
import { escapeControl } from '../shared/escape.ts';
import type { PendingPause } from './types.ts';
import { Json, Line, h, useTheme, type Element } from './ui.ts';

export interface PauseViewProps {
  pending: PendingPause;
  active: boolean;
  /** Writes to the transcript (the inspected context goes there, so it can be scrolled back to). */
  print(el: Element): void;
  onInterrupt(): void;
  columns: number;
  rows: number;
}

export function PauseView(props: PauseViewProps): Element {
  const theme = useTheme();
  const { request, resume } = props.pending;
  useInput(
    (input, key) => {
      if (key.ctrl && input === 'c') return props.onInterrupt();
      const k = input.toLowerCase();
      if (k === 's') return resume('step');
      if (k === 'c' || key.return) return resume('continue');
      if (k === 'i') {
        let value: unknown;
        try {
          value = request.inspect();
        } catch (err) {
          value = { error: (err as Error).message };
        }
        props.print(h(Box, { flexDirection: 'column' }, h(Line, { bold: true }, `context at ${escapeControl(request.where)} (serialized)`), h(Json, { value })));
      }
    },
    { isActive: props.active },
  );
  const lines = treeLines(buildTree(request.events));
  // The paused place is the last breakpoint; the tree is cut from the top to fit the terminal.
  let paused = -1;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i]!.node.kind === 'break') {
      paused = i;
      break;
    }
  }
  const room = Math.max(3, props.rows - 6);
  const from = Math.max(0, Math.min(lines.length - room, paused >= 0 ? paused - room + 2 : lines.length - room));
  const shown = lines.slice(from, from + room);
  const narrow = props.columns < 60;
  return h(
    Box,
    { flexDirection: 'column' },
    h(Line, { bold: true, color: theme.warn }, `⏸ paused at ${escapeControl(request.where)}`),
    from > 0 ? h(Line, { dim: true }, `  … ${from} line${from === 1 ? '' : 's'} above`) : null,
    ...shown.map((l, i) => {
      const here = from + i === paused;
      const n = l.node;
      const mark = n.kind === 'pipeline' ? '▸' : n.kind === 'break' ? (here ? '▶' : '⏸') : '·';
      const time = l.ms !== undefined ? ` ${l.ms.toFixed(narrow ? 1 : 3)} ms` : n.open ? ' …' : '';
      const label = escapeControl(n.kind === 'break' ? n.label.replace(/^breakpoint at /, '') : n.label);
      return h(
        Text,
        { key: i, wrap: 'truncate-end' },
        '  '.repeat(Math.min(l.depth, narrow ? 6 : 20)),
        h(Text, { color: here ? theme.warn : n.kind === 'pipeline' ? theme.accent : undefined, bold: here, inverse: here, dimColor: n.kind === 'break' && !here }, `${mark} ${label}`),
        h(Text, { dimColor: true }, time),
        n.error ? h(Text, { color: theme.error }, ` ✗ ${escapeControl(n.error)}`) : null,
      );
    }),
    h(
      Text,
      { wrap: 'truncate-end' },
      h(Text, { color: theme.key, bold: true }, 's'),
      narrow ? ' step  ' : ' step to the next entry   ',
      h(Text, { color: theme.key, bold: true }, 'c'),
      narrow ? ' go on  ' : ' continue   ',
      h(Text, { color: theme.key, bold: true }, 'i'),
      narrow ? ' context' : ' inspect the context   ',
      narrow ? null : h(Text, { dimColor: true }, 'Ctrl-C stops the run'),
    ),
  );
}
