// An Agent Skills eval file (docs/ci.md, "Agent Skills evals: evals/evals.json"): `evals/evals.json` in a skill
// folder, the layout of the format's skill-creator — `{ skill_name, evals: [{ id, prompt,
// expected_output, files?, expectations? }] }`. Each eval is a case of the folder's SKILL.md:
// its prompt is the skill's `arguments`, its files are copied into a temporary workspace the case
// runs in, and its result is graded against `expected_output` by the --grader skill. Keys of the
// format this runner does not use are allowed: other tools write them.
import fs from 'node:fs';
import path from 'node:path';
import { check } from '../kernel/schema.ts';
import type { JsonObject } from '../core/types.ts';
import { dedupe, inOrder, parsePlaced, schemaMessage, schemaPlace, type EvalCase, type EvalFile, type EvalProblem } from './eval-file.ts';

export const EVALS_JSON = 'evals.json';

/** `evals/evals.json` in a folder that holds a SKILL.md. */
export function isAgentSkillsEvals(file: string): boolean {
  const dir = path.dirname(file);
  return path.basename(file) === EVALS_JSON && path.basename(dir) === 'evals' && fs.existsSync(path.join(path.dirname(dir), 'SKILL.md'));
}

const SCHEMA = {
  type: 'object',
  required: ['evals'],
  properties: {
    skill_name: { type: 'string', minLength: 1 },
    evals: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['id', 'prompt'],
        properties: {
          id: { type: ['integer', 'string'] },
          prompt: { type: 'string', minLength: 1 },
          expected_output: { type: 'string' },
          files: { type: 'array', items: { type: 'string', minLength: 1 } },
          expectations: { type: 'array', items: { type: 'string' } },
        },
      },
    },
  },
} as const;

interface Eval {
  id: number | string;
  prompt: string;
  expected_output?: string;
  files?: string[];
  expectations?: string[];
}

/** Reads and checks an `evals/evals.json`: the eval file, or every problem found in it. */
export async function loadAgentSkillsEvals(file: string): Promise<{ file: EvalFile } | { problems: EvalProblem[] }> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    return { problems: [{ file, line: 1, column: 1, message: `cannot read the file: ${(err as Error).message}` }] };
  }
  const out = parsePlaced(file, text, true);
  if ('problems' in out) return out;
  const { data, place } = out.parsed;
  const errors = await check(SCHEMA, data);
  if (errors.length) return { problems: inOrder(dedupe(errors).map((e) => ({ file, ...schemaPlace(e, place), message: schemaMessage(e, data, () => []) }))) };

  const top = data as { skill_name?: string; evals: Eval[] };
  const folder = path.dirname(path.dirname(file));
  const realFolder = fs.realpathSync(folder);
  const problems: EvalProblem[] = [];
  const seen = new Map<string, number>();
  const cases: EvalCase[] = [];
  for (const [i, e] of top.evals.entries()) {
    const name = typeof e.id === 'number' ? `eval ${e.id}` : e.id;
    const problem = (segments: (string | number)[], message: string) => problems.push({ file, ...place(['evals', i, ...segments]), message: `evals[${i}] (${name}): ${message}` });
    const before = seen.get(name);
    if (before !== undefined) problem(['id'], `another eval has this id (evals[${before}]): ids tell evals apart in reports, so each is used once`);
    else seen.set(name, i);
    // The files are the skill folder's (relative to it), and stay inside it: a folder someone else
    // wrote does not get to copy a file of its choosing into the run (docs/security.md).
    const files: string[] = [];
    for (const [j, rel] of (e.files ?? []).entries()) {
      const abs = path.resolve(folder, rel);
      let real: string;
      try {
        real = fs.realpathSync(abs);
      } catch {
        problem(['files', j], `no file at ${rel} (relative to the skill folder ${folder})`);
        continue;
      }
      if (path.isAbsolute(rel) || (real !== realFolder && !real.startsWith(realFolder + path.sep))) {
        problem(['files', j], `${rel} is outside the skill folder: an eval's files are the folder's own`);
        continue;
      }
      files.push(abs);
    }
    cases.push({
      name,
      args: { arguments: e.prompt },
      expect: { grade: { rubric: rubric(e) } },
      line: place(['evals', i]).line,
      places: { grade: place(['evals', i, ...(e.expected_output !== undefined ? ['expected_output'] : [])]) },
      raw: e as unknown as JsonObject,
      input: e.prompt,
      workspace: { from: folder, files },
    });
  }
  if (problems.length) return { problems: inOrder(problems) };
  return { file: { file, format: 'evals-json', skill: folder, skillPlace: place(top.skill_name !== undefined ? ['skill_name'] : []), cases, ...(top.skill_name !== undefined ? { skillName: top.skill_name } : {}) } };
}

/** What the grader judges against: the expected output, then the eval's expectations as a list. */
function rubric(e: Eval): string {
  const parts: string[] = [];
  if (e.expected_output) parts.push(e.expected_output);
  if (e.expectations?.length) parts.push(`Expectations:\n${e.expectations.map((x) => `- ${x}`).join('\n')}`);
  return parts.join('\n\n') || 'The output does what the prompt asks.';
}
