// Baselines (docs/ci.md, "A baseline"): `--save-baseline FILE` writes what each case did — its
// pass rate, tokens, cost, whether its skill loaded — and `--baseline FILE` compares a run with
// it. A case whose rate fell by more than the tolerance, or whose skill did not load, is a
// regression (exit 1); a better rate and a new case are reported, never failed. A file that is
// not a baseline, or is another project's, stops the run before any case runs (E_VALIDATION).
import fs from 'node:fs';
import path from 'node:path';
import { AgentAppsError } from '../core/errors.ts';
import { formatSchemaErrors } from '../core/errors.ts';
import { check } from '../kernel/schema.ts';
import type { CaseResult } from './run.ts';

export const BASELINE_VERSION = 1;

/** Which project a baseline is of: its name and the eval files it ran (relative to the workspace). */
export interface Project {
  name: string;
  evals: string[];
}

export interface BaselineCase {
  rate: number;
  trials: number;
  tokens: number;
  costUsd?: number;
  loaded: boolean;
}

export interface Baseline {
  version: typeof BASELINE_VERSION;
  project: Project;
  /** `FILE › NAME` (FILE relative to the workspace) → what the case did. */
  cases: Record<string, BaselineCase>;
}

const SCHEMA = {
  type: 'object',
  required: ['version', 'project', 'cases'],
  properties: {
    version: { const: BASELINE_VERSION },
    project: {
      type: 'object',
      required: ['name', 'evals'],
      properties: { name: { type: 'string' }, evals: { type: 'array', items: { type: 'string' } } },
    },
    cases: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        required: ['rate', 'loaded'],
        properties: {
          rate: { type: 'number', minimum: 0, maximum: 1 },
          trials: { type: 'integer', minimum: 1 },
          tokens: { type: 'number', minimum: 0 },
          costUsd: { type: 'number', minimum: 0 },
          loaded: { type: 'boolean' },
        },
      },
    },
  },
} as const;

/**
 * The workspace's identity: the `name` of its package.json when it has one (what stays the same in
 * every checkout of it), else its folder's name; and the eval files, relative to it.
 */
export function projectOf(workspace: string, files: string[]): Project {
  let name = path.basename(workspace);
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(workspace, 'package.json'), 'utf8')) as { name?: unknown };
    if (typeof pkg.name === 'string' && pkg.name) name = pkg.name;
  } catch {
    // no package.json (or not one we can read): the folder's name
  }
  return { name, evals: files.map((f) => relative(workspace, f)).sort() };
}

/** A case's key in a baseline: `FILE › NAME`, FILE relative to the workspace with `/`. */
export function caseId(workspace: string, r: Pick<CaseResult, 'file' | 'name'>): string {
  return `${relative(workspace, r.file)} › ${r.name}`;
}

function relative(workspace: string, file: string): string {
  const rel = path.relative(workspace, file);
  return rel.startsWith('..') || path.isAbsolute(rel) ? file : rel.split(path.sep).join('/');
}

/** Reads `file` (named `shown` in messages) and checks it is a baseline of `project`; E_VALIDATION otherwise. */
export async function readBaseline(file: string, shown: string, project: Project): Promise<Baseline> {
  const bad = (why: string) => new AgentAppsError('E_VALIDATION', `--baseline ${shown}: ${why}`);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw bad(`cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}) — write one with agent-apps test --save-baseline ${shown}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw bad(`not JSON (${(err as Error).message}) — a baseline is what agent-apps test --save-baseline writes`);
  }
  const errors = await check(SCHEMA, data);
  if (errors.length) throw bad(`not a baseline of agent-apps test (version ${BASELINE_VERSION}): ${formatSchemaErrors(errors)}`);
  const baseline = data as Baseline;
  if (baseline.project.name !== project.name) throw bad(`it is the baseline of another project ('${baseline.project.name}'; this is '${project.name}')`);
  const here = new Set(project.evals);
  if (baseline.project.evals.length && !baseline.project.evals.some((f) => here.has(f))) {
    throw bad(`it is the baseline of other eval files (${baseline.project.evals.slice(0, 3).join(', ')}${baseline.project.evals.length > 3 ? ' …' : ''}) than this run's (${project.evals.slice(0, 3).join(', ')}${project.evals.length > 3 ? ' …' : ''})`);
  }
  return baseline;
}

/** What a run did, as a baseline: the cases that ran (not the skipped ones). */
export function baselineOf(project: Project, workspace: string, results: readonly CaseResult[]): Baseline {
  const cases: Record<string, BaselineCase> = {};
  for (const r of results) {
    if (r.status === 'skipped' || r.trials === undefined) continue;
    cases[caseId(workspace, r)] = { rate: r.rate ?? 0, trials: r.trials, tokens: r.tokens ?? 0, ...(r.costUsd !== undefined ? { costUsd: r.costUsd } : {}), loaded: r.loaded !== false };
  }
  return { version: BASELINE_VERSION, project, cases };
}

export function writeBaseline(file: string, baseline: Baseline): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(baseline, null, 2) + '\n');
}

export interface Change {
  /** `FILE › NAME`. */
  id: string;
  before?: BaselineCase;
  after?: BaselineCase;
  /** Why it is a regression: the rate fell, or the skill did not load. */
  reason?: string;
}

export interface Comparison {
  file: string;
  tolerance: number;
  regressions: Change[];
  improvements: Change[];
  added: Change[];
  /** In the baseline, not run now (deleted, filtered out, skipped). */
  missing: Change[];
}

/** How `results` compare with `baseline`: a fall of the rate by more than `tolerance`, or a skill that did not load, is a regression. */
export function compareWithBaseline(baseline: Baseline, workspace: string, results: readonly CaseResult[], tolerance: number, shown: string): Comparison {
  const now = baselineOf(baseline.project, workspace, results).cases;
  const out: Comparison = { file: shown, tolerance, regressions: [], improvements: [], added: [], missing: [] };
  for (const [id, after] of Object.entries(now)) {
    const before = baseline.cases[id];
    if (!after.loaded) out.regressions.push({ id, ...(before ? { before } : {}), after, reason: 'the skill did not load' });
    else if (!before) out.added.push({ id, after });
    else if (before.rate - after.rate > tolerance + 1e-9) out.regressions.push({ id, before, after, reason: `pass rate ${pct(before.rate)} → ${pct(after.rate)}${tolerance ? ` (more than the tolerance ${tolerance})` : ''}` });
    else if (after.rate > before.rate + 1e-9 || !before.loaded) out.improvements.push({ id, before, after });
  }
  for (const [id, before] of Object.entries(baseline.cases)) if (!(id in now)) out.missing.push({ id, before });
  return out;
}

const pct = (rate: number) => `${Math.round(rate * 100)}%`;

/** The comparison for a person: a line per change, then the counts. */
export function comparisonText(c: Comparison, paint: { red(s: string): string; green(s: string): string; dim(s: string): string }): string {
  let out = `against the baseline ${c.file}${c.tolerance ? ` (tolerance ${c.tolerance})` : ''}:\n`;
  for (const r of c.regressions) out += `  ${paint.red('regression')}  ${r.id}: ${r.reason}\n`;
  for (const r of c.improvements) out += `  ${paint.green('improved')}    ${r.id}: ${r.before!.loaded ? `pass rate ${pct(r.before!.rate)} → ${pct(r.after!.rate)}` : 'the skill loads again'}\n`;
  for (const r of c.added) out += `  ${paint.dim('new')}         ${r.id}: pass rate ${pct(r.after!.rate)}\n`;
  for (const r of c.missing) out += `  ${paint.dim('not run')}     ${r.id}\n`;
  const n = c.regressions.length;
  const parts = [`${n} ${n === 1 ? 'regression' : 'regressions'}`, `${c.improvements.length} improved`, `${c.added.length} new`];
  if (c.missing.length) parts.push(`${c.missing.length} not run`);
  return out + `  ${parts.join(', ')}\n`;
}
