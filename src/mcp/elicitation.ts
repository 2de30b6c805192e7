// A server's elicitation, asked through the run's asker (docs/mcp.md, "When a server asks"): the
// form of an `elicitation/create` (2025-11-25) or of an input_required round (2026-07-28) becomes
// one question per field for the asker of src/core/ask.ts — the terminal, the ACP client of
// `agent-apps acp`, the MCP client of `mcp serve` — and the answers become the form's content.
//
//   an enum (enum, oneOf, enumNames), a boolean      → a question with choices, plus "decline"
//                                                      (or "skip" for an optional field)
//   a string, a number, a multi-select               → free text (an empty answer declines, or
//                                                      skips an optional field); a number that is
//                                                      not one is asked again, twice at most
//   anything else, or a URL-mode request             → declined
//
// The asker's E_NOT_INTERACTIVE (or any failure) declines; an aborted run cancels. No SDK here:
// client.ts hands the request in and the result out.
import { AbortError } from '../core/errors.ts';
import type { Asker, Choice } from '../core/ask.ts';

export interface FormRequest {
  message: string;
  requestedSchema: { properties?: Record<string, unknown>; required?: string[] };
}

export type FormContent = Record<string, string | number | boolean | string[]>;
export type FormResult = { action: 'accept'; content: FormContent } | { action: 'decline' } | { action: 'cancel' };

type Field =
  | { kind: 'choice'; choices: Choice[]; value: (picked: string) => string | boolean }
  | { kind: 'text'; default?: string }
  | { kind: 'number'; integer: boolean; default?: number }
  | { kind: 'multi'; values: string[] };

const MAX_TEXT = 2000;
const TRIES = 3;

/** A server's text, shown to a person: no control characters, bounded. */
function clean(text: unknown): string {
  const s = typeof text === 'string' ? text : '';
  // eslint-disable-next-line no-control-regex
  const flat = s.replace(/\u001b\[[0-?]*[ -/]*[@-~]/g, '').replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '').replace(/\s*\n\s*/g, ' ').trim();
  return flat.length > MAX_TEXT ? `${flat.slice(0, MAX_TEXT)}…` : flat;
}

function fieldOf(schema: unknown): Field | undefined {
  const s = (schema ?? {}) as Record<string, unknown>;
  if (s.type === 'boolean') return { kind: 'choice', choices: [{ value: 'yes' }, { value: 'no' }], value: (v) => v === 'yes' };
  if (s.type === 'string' && Array.isArray(s.oneOf)) {
    const choices = (s.oneOf as { const?: unknown; title?: unknown }[]).filter((o) => typeof o?.const === 'string' && o.const).map((o) => ({ value: o.const as string, ...(typeof o.title === 'string' ? { label: clean(o.title) } : {}) }));
    return choices.length ? { kind: 'choice', choices, value: (v) => v } : undefined;
  }
  if (s.type === 'string' && Array.isArray(s.enum)) {
    const names = Array.isArray(s.enumNames) ? s.enumNames : [];
    const choices = (s.enum as unknown[]).flatMap((v, i) => (typeof v === 'string' && v ? [{ value: v, ...(typeof names[i] === 'string' ? { label: clean(names[i]) } : {}) }] : []));
    return choices.length ? { kind: 'choice', choices, value: (v) => v } : undefined;
  }
  if (s.type === 'string') return { kind: 'text', ...(typeof s.default === 'string' ? { default: s.default } : {}) };
  if (s.type === 'number' || s.type === 'integer') return { kind: 'number', integer: s.type === 'integer', ...(typeof s.default === 'number' ? { default: s.default } : {}) };
  if (s.type === 'array') {
    const items = (s.items ?? {}) as { enum?: unknown; anyOf?: unknown };
    const values = Array.isArray(items.enum) ? items.enum : Array.isArray(items.anyOf) ? (items.anyOf as { const?: unknown }[]).map((o) => o?.const) : [];
    const strings = values.filter((v): v is string => typeof v === 'string');
    return strings.length ? { kind: 'multi', values: strings } : undefined;
  }
  return undefined;
}

/** A value not among `taken`: the extra choice that declines (or skips). */
function sentinel(word: string, taken: Choice[]): string {
  let v = `(${word})`;
  while (taken.some((c) => c.value === v)) v = `(${v})`;
  return v;
}

/**
 * Asks `form` through `asker`, field by field, on behalf of `tool` (the MCP tool whose call it
 * came in). Never rejects: a failure declines, an abort cancels.
 */
export async function askForm(asker: Asker, tool: string, form: FormRequest, signal: AbortSignal): Promise<FormResult> {
  const properties = Object.entries(form.requestedSchema?.properties ?? {});
  const required = new Set(Array.isArray(form.requestedSchema?.required) ? form.requestedSchema.required : []);
  const fields = properties.map(([key, schema]) => ({ key, schema: (schema ?? {}) as { title?: unknown; description?: unknown }, field: fieldOf(schema) }));
  if (!fields.length || fields.some((f) => !f.field)) return { action: 'decline' };
  const message = clean(form.message);
  const content: FormContent = {};
  try {
    for (const { key, schema, field } of fields) {
      const must = required.has(key);
      const title = clean(schema.title) || key;
      const about = clean(schema.description);
      const plain = fields.length === 1 && !clean(schema.title) && !about;
      const base = plain ? message : `${message} — ${title}${about ? ` (${about})` : ''}`;
      const ask = async (text: string, choices?: Choice[]) => (await asker.ask({ kind: 'question', text, tool, ...(choices ? { choices } : {}) }, signal)).value;
      if (field!.kind === 'choice') {
        const extra = { value: sentinel(must ? 'decline' : 'skip', field!.choices), label: must ? 'decline (answer nothing)' : 'skip' };
        const picked = await ask(base, [...field!.choices, extra]);
        if (picked === extra.value) {
          if (must) return { action: 'decline' };
          continue;
        }
        content[key] = field!.value(picked);
        continue;
      }
      const hint = field!.kind === 'multi' ? `; comma-separated, of: ${field!.values.join(', ')}` : '';
      let text = `${base} (${must ? 'an empty answer declines' : 'an empty answer skips it'}${hint})`;
      let done = false;
      for (let attempt = 0; attempt < TRIES && !done; attempt++) {
        const line = (await ask(text)).trim();
        if (!line) {
          const fallback = field!.kind === 'text' || field!.kind === 'number' ? field!.default : undefined;
          if (fallback !== undefined) content[key] = fallback;
          else if (must) return { action: 'decline' };
          done = true;
        } else if (field!.kind === 'text') {
          content[key] = line;
          done = true;
        } else if (field!.kind === 'number') {
          const n = Number(line);
          if (Number.isFinite(n) && (!field!.integer || Number.isInteger(n))) {
            content[key] = n;
            done = true;
          } else text = `${base} ('${line.slice(0, 40)}' is not ${field!.integer ? 'a whole number' : 'a number'}; ${must ? 'an empty answer declines' : 'an empty answer skips it'})`;
        } else {
          const picked = line.split(',').map((v) => v.trim()).filter(Boolean);
          const wrong = picked.find((v) => !field!.values.includes(v));
          if (!wrong) {
            content[key] = picked;
            done = true;
          } else text = `${base} ('${wrong.slice(0, 40)}' is not one of: ${field!.values.join(', ')})`;
        }
      }
      if (!done) return { action: 'decline' };
    }
  } catch (err) {
    if (signal.aborted || err instanceof AbortError) return { action: 'cancel' };
    return { action: 'decline' };
  }
  return { action: 'accept', content };
}
