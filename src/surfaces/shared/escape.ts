// Text that reaches a terminal may come from a model or agent code (docs/security.md): control characters are
// written as escapes, so it cannot move the cursor, recolour, or forge lines.
/**
 * C0 and C1 controls, DEL, the Unicode line and paragraph separators and the bidirectional
 * overrides: anything that could break a line, move the cursor, start an escape sequence or
 * reorder what the reader sees.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * `text` with every control character written as an escape (`\n`, `\x1b`, `\u202e`);
 * `{ newlines: true }` keeps line breaks and tabs (streamed model text, printed as it comes).
 */
export function escapeControl(text: unknown, opts: { newlines?: boolean } = {}): string {
  const s = typeof text === 'string' ? text : String(text);
  return s.replace(CONTROL, (c) => {
    if (opts.newlines && (c === '\n' || c === '\t')) return c;
    const named = NAMED[c];
    if (named !== undefined) return named;
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

