// Running eval files (docs/ci.md): every file checked first (a malformed one stops everything,
// exit 2), then the cases in parallel — one runtime per workspace, each case one
// `runtime.invoke` through the real pipeline. A case's cassette is replayed for that invocation
// only: an extra middleware (docs/middleware.md, `locals.middleware`, so not its children) that runs right
// after `model` and sets `model.provider: replay` and `model.cassette` — or, with `update`,
// `model.record` on the live model the cascade configures (the first case naming a cassette
// records it; the others replay that recording once it is made).
import fs from 'node:fs';
import path from 'node:path';
import { findWorkspace } from '../loader/search-paths.ts';
import type { Context, InvokeOptions, JsonObject, ToolDescription } from '../core/types.ts';
import { loadEvalFile, type EvalCase, type EvalFile, type EvalProblem, type Place } from './eval-file.ts';
import { asJson, errorOf, judge, type Outcome } from './expect.ts';

export interface CaseResult {
  /** Absolute path of the eval file. */
  file: string;
  skill: string;
  name: string;
  line: number;
  status: 'passed' | 'failed' | 'skipped';
  durationMs: number;
  /** Why it failed, or why it was skipped. */
  reason?: string;
  /** The result (as JSON) when the invocation succeeded. */
  result?: unknown;
  /** The error when it failed. */
  error?: { code: string; message: string };
}

/**
 * What a case needs of a runtime. The caller makes them (createRuntime, with --path, --set,
 * --approve, reporters): evals/ sits below src/runtime.ts and does not import it
 * (docs/architecture.md, The rules).
 */
export interface EvalRuntime {
  root: Context;
  invoke(ref: string, args?: JsonObject, options?: InvokeOptions): Promise<unknown>;
  describe(ref: string): Promise<ToolDescription>;
  close(): Promise<void>;
}

export interface EvalOptions {
  /** A runtime for the workspace at `cwd`: one per workspace, closed by the plan's close(). */
  runtime: (cwd: string) => Promise<EvalRuntime>;
  /** Where the command was started: a file in this workspace runs with this cwd. */
  cwd: string;
  /** How many cases run at once. */
  jobs: number;
  /** Re-record every case's cassette against the live model. */
  update?: boolean;
  /** Only the cases whose title (`file › name`) matches. */
  filter?: RegExp;
  /** Default milliseconds per case (a case's own `timeout` wins). */
  timeout?: number;
  /** How a file is named in titles (relative to the cwd). */
  shown: (file: string) => string;
  /** Called as each case ends, with its index in `plan.cases`. */
  onResult?: (index: number, result: CaseResult) => void;
}

interface PlannedCase {
  file: EvalFile;
  case: EvalCase;
  runtime: EvalRuntime;
  /** replay its cassette, record it (--update), or run as the cascade says. */
  mode: 'replay' | 'record' | 'live';
  /** Runs once every other case has ended: it replays a cassette this run records (--update). */
  after?: boolean;
}

export interface EvalPlan {
  cases: PlannedCase[];
  files: EvalFile[];
  close(): Promise<void>;
}

/** Loads and checks every file, then resolves each skill in its workspace's runtime. */
export async function planEvals(files: string[], opts: EvalOptions): Promise<{ plan: EvalPlan } | { problems: EvalProblem[] }> {
  const loaded: EvalFile[] = [];
  const problems: EvalProblem[] = [];
  for (const file of files) {
    const out = await loadEvalFile(file);
    if ('problems' in out) problems.push(...out.problems);
    else loaded.push(out.file);
  }
  if (problems.length) return { problems };

  const runtimes = new Map<string, EvalRuntime>();
  const close = async () => {
    for (const rt of runtimes.values()) await rt.close();
  };
  try {
    const cases: PlannedCase[] = [];
    const recorded = new Set<string>();
    for (const file of loaded) {
      const workspace = findWorkspace(path.dirname(file.file));
      let runtime = runtimes.get(workspace);
      if (!runtime) {
        const cwd = findWorkspace(opts.cwd) === workspace ? opts.cwd : workspace;
        runtime = await opts.runtime(cwd);
        runtimes.set(workspace, runtime);
      }
      const problem = (place: Place, message: string) => problems.push({ file: file.file, ...place, message });
      const resolves = async (ref: string, place: Place, what: string) => {
        const config = runtime!.root.locals.config;
        try {
          await runtime!.root.globals.internals.kernel.resolve(ref, config.paths, config.cwd);
          return true;
        } catch (err) {
          problem(place, `${what}: ${(err as Error).message}`);
          return false;
        }
      };
      if (!(await resolves(file.skill, file.skillPlace, 'skill'))) continue;
      const selected = file.cases.filter((c) => !opts.filter || opts.filter.test(`${opts.shown(file.file)} › ${c.name}`));
      for (const c of selected) {
        if (c.expect.check !== undefined) await resolves(c.expect.check, c.places.check!, `cases (${c.name}): expect.check`);
        if (c.cassette !== undefined && !c.skip) {
          if (opts.update) {
            // The first case naming a cassette records it; the others replay that recording after it.
            if (!recorded.has(c.cassette)) {
              recorded.add(c.cassette);
              cases.push({ file, case: c, runtime, mode: 'record' });
              continue;
            }
            cases.push({ file, case: c, runtime, mode: 'replay', after: true });
            continue;
          } else if (!fs.existsSync(c.cassette)) {
            problem(c.places.cassette!, `cases (${c.name}): no cassette at ${c.cassette} — record it against a live model with agent-apps test --update`);
          }
        }
        cases.push({ file, case: c, runtime, mode: c.cassette !== undefined && !c.skip ? 'replay' : 'live' });
      }
      if (opts.update && selected.some((c) => c.cassette !== undefined && !c.skip)) {
        const model = (await runtime.describe(file.skill)).metadata.model as JsonObject | undefined;
        // A cassette without a provider replays too (the `model` middleware's rule).
        if (model?.provider === 'replay' || (model?.provider === undefined && typeof model?.cassette === 'string' && model.cassette)) {
          const why = model.provider === 'replay' ? 'model.provider: replay' : 'model.cassette and no model.provider';
          problem(file.skillPlace, `--update records against a live model, but '${file.skill}' replays a cassette (${why}): choose a live one, e.g. --set model.provider=openai --set model.baseURL=http://127.0.0.1:11434/v1`);
        }
      }
    }
    if (problems.length) {
      await close();
      return { problems };
    }
    return { plan: { cases, files: loaded, close } };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Runs the planned cases, `jobs` at a time; results in plan order. */
export async function runEvals(plan: EvalPlan, opts: EvalOptions): Promise<CaseResult[]> {
  const results: CaseResult[] = new Array(plan.cases.length);
  const indices = plan.cases.map((_, i) => i);
  for (const wave of [indices.filter((i) => !plan.cases[i]!.after), indices.filter((i) => plan.cases[i]!.after)]) {
    let next = 0;
    const worker = async () => {
      while (next < wave.length) {
        const i = wave[next++]!;
        results[i] = await runCase(plan.cases[i]!, opts);
        opts.onResult?.(i, results[i]!);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(opts.jobs, wave.length)) }, worker));
  }
  return results;
}

async function runCase(p: PlannedCase, opts: EvalOptions): Promise<CaseResult> {
  const c = p.case;
  const base = { file: p.file.file, skill: p.file.skill, name: c.name, line: c.line };
  if (c.skip) return { ...base, status: 'skipped', durationMs: 0, ...(typeof c.skip === 'string' ? { reason: c.skip } : {}) };
  const started = performance.now();
  const outcome = await invokeCase(p, opts);
  const reason = await judge(c, outcome, (skill, args) => p.runtime.invoke(skill, args as JsonObject));
  const durationMs = Math.round((performance.now() - started) * 10) / 10;
  return {
    ...base,
    status: reason === undefined ? 'passed' : 'failed',
    durationMs,
    ...(reason !== undefined ? { reason } : {}),
    ...(outcome.ok ? { result: asJson(outcome.result) } : { error: outcome.error }),
  };
}

/** One invocation of the case's skill: replaying its cassette (or recording it), within its timeout. */
async function invokeCase(p: PlannedCase, opts: EvalOptions): Promise<Outcome> {
  const c = p.case;
  const middleware: JsonObject = {};
  if (c.cassette !== undefined && p.mode !== 'live') {
    const cassette = c.cassette;
    const update = p.mode === 'record';
    middleware['eval-cassette'] = {
      after: ['model'],
      before: ['$configure'],
      fn: (ctx: Context) => {
        const model: JsonObject = { ...(ctx.locals.config.model ?? {}) };
        if (update) model.record = cassette;
        else Object.assign(model, { provider: 'replay', cassette });
        ctx.locals.config.model = model;
        return ctx.manager.next();
      },
    } as JsonObject;
  }
  const timeout = c.timeout ?? opts.timeout;
  const controller = timeout ? new AbortController() : undefined;
  let timedOut = false;
  const timer = controller
    ? setTimeout(() => {
        timedOut = true;
        controller.abort(`timed out after ${timeout} ms`);
      }, timeout)
    : undefined;
  try {
    const context = { locals: { middleware }, ...(controller ? { signal: controller.signal } : {}) };
    const result = await p.runtime.invoke(p.file.skill, c.args, { context });
    return { ok: true, result };
  } catch (err) {
    if (timedOut) return { ok: false, error: { code: 'E_TIMEOUT', message: `no outcome after ${timeout} ms (the case's timeout)` } };
    return { ok: false, error: errorOf(err) };
  } finally {
    clearTimeout(timer);
  }
}
