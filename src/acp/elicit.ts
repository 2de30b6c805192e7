// ACP form elicitation (`elicitation/create`, stable in ACP v1) as agent-apps' questions, both ways
// (docs/agents.md):
// - formQuestions / answerForm: an ACP agent the provider drives asks its client — us — for input:
//   each field of the form is one question to the run's person (choices for enums and booleans,
//   a typed answer for text and numbers), checked against the field before it is sent back;
// - questionForm / formAnswer: under `agent-apps acp` a skill's plain question (`ctx.manager.ask`)
//   is a one-field form to the editor, when the editor declares form elicitation.
import type { CreateElicitationRequest, CreateElicitationResponse, ElicitationContentValue, ElicitationPropertySchema, ElicitationSchema } from '@agentclientprotocol/sdk';
import type { Choice, PlainQuestion } from '../core/ask.ts';

/** One field of a form, as a question: its text, its choices (none: a typed answer) and how an answer becomes its value. */
export interface FieldQuestion {
  key: string;
  text: string;
  choices: { value: string; label: string; key: string }[];
  /** The field's value for an answer; an Error says what is wrong with it; undefined leaves an optional field out. */
  read(answer: string): ElicitationContentValue | undefined | Error;
}

/** How many times a field is asked again after an answer it cannot take. */
const RETRIES = 2;

/**
 * The questions a form asks, one per field in the form's order — or a string saying why the form
 * cannot be asked (a URL elicitation, a field of a type ACP added later).
 */
export function formQuestions(request: CreateElicitationRequest): FieldQuestion[] | string {
  if (request.mode !== 'form') return `an elicitation of mode '${String(request.mode)}' (agent-apps answers forms only)`;
  const schema = (request as { requestedSchema?: ElicitationSchema }).requestedSchema ?? {};
  const required = new Set(schema.required ?? []);
  const entries = Object.entries(schema.properties ?? {});
  const out: FieldQuestion[] = [];
  for (const [key, field] of entries) {
    const q = fieldQuestion(request.message, key, field, required.has(key), entries.length === 1);
    if (typeof q === 'string') return q;
    out.push(q);
  }
  return out;
}

function fieldQuestion(message: string, key: string, field: ElicitationPropertySchema, required: boolean, only: boolean): FieldQuestion | string {
  const f = field as Record<string, unknown>;
  const title = typeof f.title === 'string' && f.title.trim() ? f.title.trim() : key;
  const description = typeof f.description === 'string' && f.description.trim() ? f.description.trim() : '';
  const dflt = f.default;
  // A typed answer may be left empty when the field is optional: the hint says what that gives.
  const hint = (extra: string, typed: boolean) => {
    const parts = [extra, typed && !required ? (dflt !== undefined && dflt !== null ? `empty: ${JSON.stringify(dflt)}` : 'empty: left out') : ''].filter(Boolean);
    return parts.length ? ` (${parts.join('; ')})` : '';
  };
  // One field: the message is the question; several: the message, then the field.
  const text = (extra = '', typed = true) => (only && title === key && !description ? `${message}${hint(extra, typed)}` : `${message}\n${title}${description ? ` — ${description}` : ''}${hint(extra, typed)}`);
  const empty = (): ElicitationContentValue | undefined | Error => {
    if (dflt !== undefined && dflt !== null) return dflt as ElicitationContentValue;
    return required ? new Error(`'${title}' needs an answer`) : undefined;
  };
  switch (f.type) {
    case 'boolean':
      return {
        key,
        text: text('', false),
        choices: [
          { value: 'true', label: 'yes', key: 'y' },
          { value: 'false', label: 'no', key: 'n' },
        ],
        read: (a) => a === 'true',
      };
    case 'string': {
      const options = enumOptions(f.enum, f.oneOf);
      if (options) return { key, text: text('', false), choices: keyed(options), read: (a) => (options.some((o) => o.value === a) ? a : new Error(`'${a}' is not one of the choices`)) };
      const min = typeof f.minLength === 'number' ? f.minLength : undefined;
      const max = typeof f.maxLength === 'number' ? f.maxLength : undefined;
      const pattern = typeof f.pattern === 'string' ? safeRegExp(f.pattern) : undefined;
      return {
        key,
        text: text(f.format ? `${String(f.format)}` : ''),
        choices: [],
        read: (a) => {
          if (!a) return empty();
          if (min !== undefined && a.length < min) return new Error(`at least ${min} characters`);
          if (max !== undefined && a.length > max) return new Error(`at most ${max} characters`);
          if (pattern && !pattern.test(a)) return new Error(`it must match ${String(f.pattern)}`);
          return a;
        },
      };
    }
    case 'number':
    case 'integer': {
      const integer = f.type === 'integer';
      const min = typeof f.minimum === 'number' ? f.minimum : undefined;
      const max = typeof f.maximum === 'number' ? f.maximum : undefined;
      const range = min !== undefined && max !== undefined ? `${min} to ${max}` : min !== undefined ? `at least ${min}` : max !== undefined ? `at most ${max}` : '';
      return {
        key,
        text: text([integer ? 'a whole number' : 'a number', range].filter(Boolean).join(', ')),
        choices: [],
        read: (a) => {
          if (!a.trim()) return empty();
          const n = Number(a.trim());
          if (!Number.isFinite(n) || (integer && !Number.isInteger(n))) return new Error(`'${a}' is not ${integer ? 'a whole number' : 'a number'}`);
          if ((min !== undefined && n < min) || (max !== undefined && n > max)) return new Error(`${n} is not ${range}`);
          return n;
        },
      };
    }
    case 'array': {
      const items = (f.items ?? {}) as Record<string, unknown>;
      const options = enumOptions(items.enum, items.anyOf);
      if (!options) return `the field '${key}' is a list of a kind agent-apps cannot ask for`;
      const minItems = typeof f.minItems === 'number' ? f.minItems : 0;
      const maxItems = typeof f.maxItems === 'number' ? f.maxItems : undefined;
      return {
        key,
        text: text(`one or more of ${options.map((o) => o.value).join(', ')}, separated by commas`),
        choices: [],
        read: (a) => {
          const picked = a
            .split(',')
            .map((x) => x.trim())
            .filter(Boolean);
          if (!picked.length && !required && dflt === undefined) return undefined;
          if (!picked.length && Array.isArray(dflt)) return dflt as string[];
          const wrong = picked.find((p) => !options.some((o) => o.value === p));
          if (wrong !== undefined) return new Error(`'${wrong}' is not one of ${options.map((o) => o.value).join(', ')}`);
          if (picked.length < minItems || (maxItems !== undefined && picked.length > maxItems)) return new Error(`pick ${maxItems === undefined ? `at least ${minItems}` : `${minItems} to ${maxItems}`}`);
          return [...new Set(picked)];
        },
      };
    }
    default:
      return `the field '${key}' is of type '${String(f.type)}', which agent-apps cannot ask for`;
  }
}

/** A form answered by asking each field's question in turn: `accept` with the values, or `decline` after an answer a field cannot take. */
export async function answerForm(questions: FieldQuestion[], ask: (text: string, choices: FieldQuestion['choices'], signal: AbortSignal) => Promise<string>, signal: AbortSignal): Promise<CreateElicitationResponse> {
  const content: Record<string, ElicitationContentValue> = {};
  for (const q of questions) {
    let text = q.text;
    let value: ElicitationContentValue | undefined | Error;
    for (let i = 0; i <= RETRIES; i++) {
      value = q.read(await ask(text, q.choices, signal));
      if (!(value instanceof Error)) break;
      text = `${q.text}\n${value.message}: try again`;
    }
    if (value instanceof Error) return { action: 'decline' };
    if (value !== undefined) content[q.key] = value;
  }
  return { action: 'accept', content };
}

/** `enum: [...]` or `oneOf: [{ const, title }]` as choices; undefined when neither is there. */
function enumOptions(list: unknown, titled: unknown): { value: string; label: string }[] | undefined {
  if (Array.isArray(titled) && titled.length) {
    const out = titled.filter((o): o is { const: string; title?: string } => typeof (o as { const?: unknown })?.const === 'string').map((o) => ({ value: o.const, label: typeof o.title === 'string' && o.title ? o.title : o.const }));
    if (out.length) return out;
  }
  if (Array.isArray(list) && list.length) {
    const out = list.filter((v): v is string => typeof v === 'string').map((v) => ({ value: v, label: v }));
    if (out.length) return out;
  }
  return undefined;
}

/** Choices with a key each: 1–9 in order, none past nine (the terminal picks those with the arrows). */
function keyed(options: { value: string; label: string }[]): FieldQuestion['choices'] {
  return options.map((o, i) => ({ ...o, key: i < 9 ? String(i + 1) : '' }));
}

function safeRegExp(source: string): RegExp | undefined {
  try {
    return new RegExp(source, 'u');
  } catch {
    return undefined;
  }
}

// ── the other way: our question as a form ────────────────────────────────────────────────────

/** The one field a question's form has. */
export const ANSWER_FIELD = 'answer';

/** A plain question as a one-field form: its choices as a single-select, else a text field. */
export function questionForm(question: PlainQuestion): ElicitationSchema {
  const choices: Choice[] = question.choices ?? [];
  const field: ElicitationPropertySchema = choices.length
    ? { type: 'string', title: 'Answer', oneOf: choices.map((c) => ({ const: c.value, title: c.label ?? c.value })) }
    : { type: 'string', title: 'Answer' };
  return { type: 'object', properties: { [ANSWER_FIELD]: field }, required: [ANSWER_FIELD] };
}

/** The answer in an accepted form's content (a string; anything else as text), or undefined when there is none. */
export function formAnswer(response: CreateElicitationResponse): string | undefined {
  const value = (response as { content?: Record<string, unknown> | null }).content?.[ANSWER_FIELD];
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : Array.isArray(value) ? value.join(', ') : String(value);
}
