// Text for the terminal UI (docs/terminal.md), with no ink in it: one-line previews of values, the first
// lines of a code block, pretty JSON split into coloured tokens, token counts. Everything shown
// may come from a model or agent code, so control characters are escaped first (docs/security.md).
import { escapeControl } from '../shared/escape.ts';
import { safeJsonReplacer } from '../../core/json.ts';

/** A value as one line: a string as it is, anything else as JSON; whitespace runs become one space; cut at `max` characters with `…`. */
export function oneLine(value: unknown, max = 400): string {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (value === undefined) text = 'undefined';
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  return cut(escapeControl(text.replace(/\s+/g, ' ').trim()), max);
}

/** `text` cut to at most `max` characters, the last one `…` when cut. */
export function cut(text: string, max: number): string {
  if (max <= 0) return '';
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, Math.max(0, max - 1)).join('') + '…';
}

/** The first `n` non-blank-led lines of `code` (escaped, tabs as two spaces) and how many more there are. */
export function firstLines(code: string, n: number): { lines: string[]; more: number } {
  const all = code.replace(/\r\n?/g, '\n').replace(/^\s*\n/, '').replace(/\s+$/, '').split('\n');
  const lines = all.slice(0, n).map((l) => escapeControl(l.replace(/\t/g, '  ')));
  return { lines, more: Math.max(0, all.length - n) };
}

/** The kinds of token in pretty-printed JSON, each shown in its own colour. */
export type JsonKind = 'key' | 'string' | 'number' | 'boolean' | 'null' | 'punct';

export interface JsonToken {
  text: string;
  kind: JsonKind;
}

/**
 * `value` as `JSON.stringify(value, null, 2)` would print it, split into lines of tokens (keys,
 * strings, numbers …), so a renderer can colour each. Strings are escaped for the terminal.
 */
export function jsonLines(value: unknown): JsonToken[][] {
  let text: string;
  try {
    text = JSON.stringify(value, safeJsonReplacer(), 2) ?? 'undefined';
  } catch {
    text = String(value);
  }
  return text.split('\n').map(tokenizeLine);
}

const TOKEN = /("(?:[^"\\]|\\.)*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|\b(true|false)\b|\b(null)\b|([^"\d\-tfn]+|.)/g;

function tokenizeLine(line: string): JsonToken[] {
  const out: JsonToken[] = [];
  let m: RegExpExecArray | null;
  TOKEN.lastIndex = 0;
  while ((m = TOKEN.exec(line))) {
    if (m[1] !== undefined) {
      out.push({ text: escapeControl(m[1]), kind: m[2] !== undefined ? 'key' : 'string' });
      if (m[2] !== undefined) out.push({ text: m[2], kind: 'punct' });
    } else if (m[3] !== undefined) out.push({ text: m[3], kind: 'number' });
    else if (m[4] !== undefined) out.push({ text: m[4], kind: 'boolean' });
    else if (m[5] !== undefined) out.push({ text: m[5], kind: 'null' });
    else out.push({ text: m[6]!, kind: 'punct' });
  }
  return out;
}


/** 1234 → "1,234"; with `compact`, 1234 → "1.2k" (for narrow terminals). */
export function tokens(n: number, compact = false): string {
  if (!compact || n < 1000) return n.toLocaleString('en-US');
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** An error as `[CODE] message` on one line (code omitted when it has none). */
export function errorLine(err: unknown, max = 400): { code?: string; message: string } {
  const e = err as { code?: unknown; message?: unknown } | undefined;
  const code = typeof e?.code === 'string' && e.code ? escapeControl(e.code) : undefined;
  let message = typeof e?.message === 'string' ? e.message : String(err);
  if (code && message.startsWith(`${code}: `)) message = message.slice(code.length + 2);
  return { ...(code ? { code } : {}), message: oneLine(message, max) };
}
