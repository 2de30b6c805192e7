// Agent progress on stderr (issue: in a TTY the CLI shows turns, tool calls and streamed text;
// with --json or without a TTY it is quiet). The agent skill calls this for every hook event.
import type { Painter } from './output.ts';
import { escapeControl } from './escape.ts';

interface ProgressEvent {
  type: string;
  skill: string;
  [key: string]: unknown;
}

// Model text and agent code are untrusted: no escape sequence of theirs reaches the terminal
// (docs/security.md). Streamed text keeps its line breaks; every other line is one line.
export function progressPrinter(stream: NodeJS.WriteStream, paint: Painter): (e: ProgressEvent) => void {
  let midLine = false;
  const line = (text: string) => {
    if (midLine) stream.write('\n');
    midLine = false;
    stream.write(text + '\n');
  };
  return (e) => {
    switch (e.type) {
      case 'turn-start':
        line(paint.dim(`── ${e.skill} · turn ${String(e.turnNumber ?? '?')}`));
        break;
      case 'message':
        if (typeof e.text !== 'string' || !e.text) break;
        if (e.delta) {
          stream.write(paint.dim(escapeControl(e.text, { newlines: true })));
          midLine = !e.text.endsWith('\n');
        } else if (!midLine) line(paint.dim(escapeControl(e.text.trim(), { newlines: true })));
        else line('');
        break;
      case 'tool-call': {
        const code = String((e.args as { code?: unknown } | undefined)?.code ?? '');
        const first = code.split('\n').find((l) => l.trim()) ?? '';
        const more = code.split('\n').length > 1 ? paint.dim(` (+${code.split('\n').length - 1} lines)`) : '';
        line(`${paint.cyan('⚙ invoke')} ${escapeControl(first.trim().slice(0, 100))}${more}`);
        break;
      }
      case 'tool-result':
        if (e.error || e.denied) line(paint.red(`  ✗ ${escapeControl(String((e.error as { message?: string })?.message ?? e.error ?? 'denied').split('\n')[0])}`));
        else line(paint.green('  ✓ ') + paint.dim(escapeControl(String(typeof e.result === 'string' ? e.result : JSON.stringify(e.result)).split('\n')[0]!.slice(0, 120))));
        break;
      case 'error':
        line(paint.red(`  model error: ${escapeControl(String((e.error as { message?: string })?.message ?? e.error))}`));
        break;
    }
  };
}
