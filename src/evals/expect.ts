// Judging a case (docs/ci.md): what the invocation returned or threw, against the case's `expect`.
// equals — deep equality of the result's JSON; match — a regex on the string (or JSON) of the
// result; schema — ajv; error — the code it must fail with; check — a skill that says `true` or
// why not; grade — a grader skill that says `{ pass, score?, reason }` of the output against a
// rubric. Without `expect`, a case passes when the skill succeeds. Every key given must hold.
import { isDeepStrictEqual } from 'node:util';
import { check as checkSchema } from '../kernel/schema.ts';
import { formatSchemaErrors } from '../core/errors.ts';
import { safeJsonReplacer } from '../core/json.ts';
import type { EvalCase } from './eval-file.ts';

/** How the invocation ended. */
export type Outcome = { ok: true; result: unknown } | { ok: false; error: { code: string; message: string } };

/** Runs a `check:` or grader skill with its args and returns what it returned. */
export type RunCheck = (skill: string, args: Record<string, unknown>) => Promise<unknown>;

const SHOWN = 300;

/**
 * Undefined when the case passes, else why it failed (one line). `grader` is the skill of an
 * `expect.grade` without `by` (--grader).
 */
export async function judge(c: EvalCase, outcome: Outcome, runCheck: RunCheck, grader?: string): Promise<string | undefined> {
  const expect = c.expect;
  if (expect.error !== undefined) {
    if (outcome.ok) return `expected it to fail with ${expect.error}, but it returned ${shown(outcome.result)}`;
    if (outcome.error.code !== expect.error) return `expected it to fail with ${expect.error}, but it failed with ${outcome.error.code}: ${outcome.error.message}`;
  } else if (!outcome.ok && (expect.check === undefined || 'equals' in expect || expect.match !== undefined || expect.schema !== undefined || expect.grade !== undefined)) {
    // A failed run has no result to compare; a check alone is handed the error and decides.
    return `failed with ${outcome.error.code}: ${outcome.error.message}`;
  }
  if (outcome.ok) {
    const result = asJson(outcome.result);
    if ('equals' in expect && !isDeepStrictEqual(result, expect.equals)) {
      return `expected ${shown(expect.equals)}, got ${shown(result)}`;
    }
    if (expect.match !== undefined) {
      const text = typeof result === 'string' ? result : JSON.stringify(result);
      if (!new RegExp(expect.match).test(text)) return `expected a match for /${expect.match}/, got ${shown(result)}`;
    }
    if (expect.schema !== undefined) {
      const errors = await checkSchema(expect.schema, result);
      if (errors.length) return `the result breaks expect.schema: ${formatSchemaErrors(errors)} (got ${shown(result)})`;
    }
    const by = expect.grade?.by ?? grader;
    if (expect.grade !== undefined && by !== undefined) {
      const failed = await grade(by, { output: result, rubric: expect.grade.rubric, input: c.input !== undefined ? c.input : c.args }, runCheck);
      if (failed !== undefined) return failed;
    }
  }
  if (expect.check !== undefined) {
    const args = {
      result: outcome.ok ? asJson(outcome.result) : null,
      error: outcome.ok ? null : outcome.error,
      args: c.args,
      case: c.raw,
    };
    let verdict: unknown;
    try {
      verdict = await runCheck(expect.check, args);
    } catch (err) {
      return `check ${expect.check} failed: ${errorOf(err).code}: ${errorOf(err).message}`;
    }
    if (verdict !== true) {
      const reason = typeof verdict === 'string' ? verdict : shown(verdict);
      return `check ${expect.check}: ${reason}`;
    }
  }
  return undefined;
}

/**
 * A grader's verdict: undefined when it passed the output, else the case's reason — the grader's
 * own `reason` (with its `score`), or what was wrong with its answer.
 */
async function grade(by: string, args: { output: unknown; rubric: unknown; input: unknown }, runCheck: RunCheck): Promise<string | undefined> {
  let verdict: unknown;
  try {
    verdict = await runCheck(by, args);
  } catch (err) {
    return `grade by ${by} failed: ${errorOf(err).code}: ${errorOf(err).message}`;
  }
  const v = verdict as { pass?: unknown; score?: unknown; reason?: unknown } | null;
  if (v === null || typeof v !== 'object' || typeof v.pass !== 'boolean') return `grade by ${by} returned ${shown(asJson(verdict))}, not { pass, score?, reason }`;
  if (v.pass) return undefined;
  const score = typeof v.score === 'number' ? ` (score ${v.score})` : '';
  const reason = typeof v.reason === 'string' && v.reason ? v.reason : 'no reason given';
  return `grade by ${by}${score}: ${reason}`;
}

/**
 * An error as a case reports it: its stable code and message. One without a code is E_SKILL, as
 * on every other output (the kernel gives a skill's plain `throw new Error()` that code already).
 */
export function errorOf(err: unknown): { code: string; message: string } {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' && e.code ? e.code : 'E_SKILL';
  const message = typeof e?.message === 'string' ? e.message : String(err);
  return { code, message };
}

/**
 * The result as JSON data (what `equals`, `match` and `schema` see), as `--json` prints it:
 * nothing is `null`; Maps, Sets, BigInts and cycles printable.
 */
export function asJson(value: unknown): unknown {
  const text = value === undefined ? undefined : JSON.stringify(value, safeJsonReplacer());
  return text === undefined ? null : JSON.parse(text);
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > SHOWN ? `${text.slice(0, SHOWN)}… (${text.length} characters)` : text;
}
