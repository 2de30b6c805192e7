// Running eval files (docs/ci.md): every file checked first (a malformed one stops everything,
// exit 2), then the cases' trials in parallel — one runtime per workspace, each trial one
// `runtime.invoke` through the real pipeline, metered (its tokens and cost, whether the skill
// loaded). A case's cassette is replayed for that invocation only: an extra middleware
// (docs/middleware.md, `locals.middleware`, so not its children) that runs right after `model`
// and sets `model.provider: replay` and `model.cassette` — or, with `update`, `model.record` on
// the live model the cascade configures (the first case naming a cassette records it; the others
// replay that recording once it is made). An Agent Skills eval runs in a temporary workspace, and
// --compare-without-skill runs each trial on the bare model too (docs/ci.md, "Agent Skills
// evals: evals/evals.json").
import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findWorkspace } from '../loader/search-paths.ts';
import type { ProgressSink } from '../agent/trace.ts';
import type { Context, InvokeOptions, JsonObject, LoadedTool, ToolDescription } from '../core/types.ts';
import { loadEvalFile, type EvalCase, type EvalFile, type EvalProblem, type Place } from './eval-file.ts';
import { EVALS_JSON, loadAgentSkillsEvals } from './agent-skills.ts';
import { asJson, errorOf, judge, type Outcome } from './expect.ts';

/** Model tokens of the skill under test (its agents, nested ones included; not a check's or a grader's). */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

/** One run of a case (docs/ci.md, "Flaky or broken: trials and pass rates"). */
export interface TrialResult {
  status: 'passed' | 'failed';
  durationMs: number;
  reason?: string;
  result?: unknown;
  error?: { code: string; message: string };
  usage: Usage;
  /** USD of its model calls, when the model has a price. */
  costUsd?: number;
  /** The skill under test resolved, loaded and started its pipeline. */
  loaded: boolean;
}

/** How the trials of one side of a case went: `--compare-without-skill`'s bare model. */
export interface RateSummary {
  trials: number;
  passed: number;
  rate: number;
  tokens: number;
  costUsd?: number;
}

export interface CaseResult {
  /** Absolute path of the eval file. */
  file: string;
  skill: string;
  name: string;
  line: number;
  status: 'passed' | 'failed' | 'skipped';
  /** All its trials' times added up (they may have run at once). */
  durationMs: number;
  /** Why it failed (for several trials: each failing trial's reason), or why it was skipped; a flaky case that passed keeps its failing trials' reasons too. */
  reason?: string;
  /** The result (as JSON) when the invocation succeeded (of its first failing trial, else its first). */
  result?: unknown;
  /** The error when it failed. */
  error?: { code: string; message: string };
  /** How many times it ran, and how many of those passed; not for a skipped case. */
  trials?: number;
  passedTrials?: number;
  /** passedTrials / trials. */
  rate?: number;
  /** The rate it needed (`pass.rate`, default 1). */
  passRate?: number;
  /** Some trials passed and some failed. */
  flaky?: boolean;
  /** The skill under test loaded in every trial; a case whose skill did not load fails. */
  loaded?: boolean;
  /** inputTokens + outputTokens over its trials. */
  tokens?: number;
  usage?: Usage;
  costUsd?: number;
  /** Each trial, when there were several. */
  runs?: { status: 'passed' | 'failed'; durationMs: number; tokens: number; costUsd?: number; reason?: string }[];
  /** The same trials run on the bare model (--compare-without-skill). */
  withoutSkill?: RateSummary;
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
  /** --trials: how many times each case runs when neither it nor its file says (default 1). */
  trials?: number;
  /** --grader: the grader skill of an Agent Skills eval file and of an `expect.grade` without `by`. */
  grader?: string;
  /** --compare-without-skill: run every case of a Markdown skill on the bare model too. */
  compareWithoutSkill?: boolean;
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
  /** How many times it runs: its own `trials`, else its file's, else --trials, else 1. */
  trials: number;
  /** The share of trials that must pass: its own `pass.rate`, else its file's, else 1. */
  passRate: number;
  /** The grader of an `expect.grade` without `by`. */
  grader?: string;
  /** Also run on the bare model (--compare-without-skill, a Markdown skill). */
  bare: boolean;
  /** How reports name the skill: its name when it resolved, else the ref as written. */
  skillName: string;
}

export interface EvalPlan {
  cases: PlannedCase[];
  files: EvalFile[];
  close(): Promise<void>;
}

/** Reads one eval file of either format. */
export function loadAnyEvalFile(file: string): Promise<{ file: EvalFile } | { problems: EvalProblem[] }> {
  return path.basename(file) === EVALS_JSON ? loadAgentSkillsEvals(file) : loadEvalFile(file);
}

/** Kinds of skill that run as an agent from a prompt: the ones --compare-without-skill can run bare. */
const PROMPT_KINDS = new Set<string>(['markdown', 'skill-folder', 'mcp-skill']);

/** Loads and checks every file, then resolves each skill in its workspace's runtime. */
export async function planEvals(files: string[], opts: EvalOptions): Promise<{ plan: EvalPlan } | { problems: EvalProblem[] }> {
  const loaded: EvalFile[] = [];
  const problems: EvalProblem[] = [];
  for (const file of files) {
    const out = await loadAnyEvalFile(file);
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
        meterAgents(runtime.root);
        runtimes.set(workspace, runtime);
      }
      const problem = (place: Place, message: string) => problems.push({ file: file.file, ...place, message });
      const resolve = async (ref: string): Promise<LoadedTool> => {
        const config = runtime!.root.locals.config;
        return runtime!.root.globals.internals.kernel.resolve(ref, config.paths, config.cwd);
      };
      const resolves = async (ref: string, place: Place, what: string) => {
        try {
          await resolve(ref);
          return true;
        } catch (err) {
          problem(place, `${what}: ${(err as Error).message}`);
          return false;
        }
      };
      // The skill under test: an unknown one is the eval file's problem (a typo in the suite); one
      // that is there but does not load is the skill's — its cases run and fail, and a baseline
      // counts them as regressions (docs/ci.md, "A baseline").
      let tool: LoadedTool | undefined;
      try {
        tool = await resolve(file.skill);
      } catch (err) {
        if ((err as { code?: unknown }).code === 'E_TOOL_NOT_FOUND') {
          problem(file.skillPlace, `skill: ${(err as Error).message}`);
          continue;
        }
      }
      if (file.format === 'evals-json') {
        if (tool && file.skillName !== undefined && file.skillName !== tool.name) problem(file.skillPlace, `skill_name '${file.skillName}' is not the name of the skill in ${path.dirname(path.dirname(file.file))} ('${tool.name}')`);
        if (opts.grader === undefined) problem({ line: 1, column: 1 }, `an Agent Skills eval file is graded by a skill: give one with --grader SKILL (invoked with { output, rubric, input }, it returns { pass, score?, reason })`);
      }
      const selected = file.cases.filter((c) => !opts.filter || opts.filter.test(`${opts.shown(file.file)} › ${c.name}`));
      for (const c of selected) {
        if (c.expect.check !== undefined) await resolves(c.expect.check, c.places.check!, `cases (${c.name}): expect.check`);
        if (c.expect.grade !== undefined) {
          const by = c.expect.grade.by ?? opts.grader;
          if (by === undefined) {
            // An Agent Skills file without --grader is one problem of the file (above), not one per eval.
            if (file.format === 'test-yaml') problem(c.places.grade!, `cases (${c.name}): expect.grade has no by: SKILL, and no --grader SKILL was given`);
          }
          else if (file.format === 'test-yaml' || c === selected[0]) await resolves(by, c.places.grade!, `${file.format === 'evals-json' ? '--grader' : `cases (${c.name}): expect.grade.by`}`);
        }
        const trials = c.trials ?? file.trials ?? opts.trials ?? 1;
        const passRate = c.passRate ?? file.passRate ?? 1;
        const bare = opts.compareWithoutSkill === true && tool !== undefined && PROMPT_KINDS.has(tool.kind);
        const skillName = tool?.name ?? file.skillName ?? file.skill;
        const shared = { file, case: c, runtime, trials, passRate, bare, skillName, ...(opts.grader !== undefined ? { grader: opts.grader } : {}) };
        if (c.cassette !== undefined && !c.skip) {
          if (opts.update) {
            // The first case naming a cassette records it; the others replay that recording after it.
            if (!recorded.has(c.cassette)) {
              recorded.add(c.cassette);
              cases.push({ ...shared, mode: 'record' });
              continue;
            }
            cases.push({ ...shared, mode: 'replay', after: true });
            continue;
          } else if (!fs.existsSync(c.cassette)) {
            problem(c.places.cassette!, `cases (${c.name}): no cassette at ${c.cassette} — record it against a live model with agent-apps test --update`);
          }
        }
        cases.push({ ...shared, mode: c.cassette !== undefined && !c.skip ? 'replay' : 'live' });
      }
      if (tool && opts.update && selected.some((c) => c.cassette !== undefined && !c.skip)) {
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
      return { problems: dedupeProblems(problems) };
    }
    return { plan: { cases, files: loaded, close } };
  } catch (err) {
    await close();
    throw err;
  }
}

function dedupeProblems(problems: EvalProblem[]): EvalProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.file}:${p.line}:${p.column}:${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** One unit of work of the pool: one trial of a case, with its skill or on the bare model. */
interface Unit {
  index: number;
  trial: number;
  variant: 'skill' | 'bare';
  mode: PlannedCase['mode'];
  after: boolean;
}

/**
 * Runs the planned cases' trials, `jobs` at a time — the trials of one case side by side in the
 * pool — and gives each case's result (in plan order) once its last trial ended.
 */
export async function runEvals(plan: EvalPlan, opts: EvalOptions): Promise<CaseResult[]> {
  const results: CaseResult[] = new Array(plan.cases.length);
  const units: Unit[] = [];
  const ran = plan.cases.map(() => ({ skill: [] as TrialResult[], bare: [] as TrialResult[], left: 0 }));
  plan.cases.forEach((p, index) => {
    if (p.case.skip) return;
    for (let trial = 0; trial < p.trials; trial++) {
      // --update: the first trial records the cassette; the others replay the recording after it.
      const recording = p.mode === 'record' && trial > 0;
      units.push({ index, trial, variant: 'skill', mode: recording ? 'replay' : p.mode, after: p.after === true || recording });
      // The bare model never records into the skill's cassette: with --update it runs live.
      if (p.bare) units.push({ index, trial, variant: 'bare', mode: p.mode === 'record' ? 'live' : p.mode, after: p.after === true });
    }
    ran[index]!.left = p.trials * (p.bare ? 2 : 1);
  });
  plan.cases.forEach((p, index) => {
    if (!p.case.skip) return;
    const c = p.case;
    results[index] = { file: p.file.file, skill: p.skillName, name: c.name, line: c.line, status: 'skipped', durationMs: 0, ...(typeof c.skip === 'string' ? { reason: c.skip } : {}) };
    opts.onResult?.(index, results[index]!);
  });
  for (const wave of [units.filter((u) => !u.after), units.filter((u) => u.after)]) {
    let next = 0;
    const worker = async () => {
      while (next < wave.length) {
        const u = wave[next++]!;
        const p = plan.cases[u.index]!;
        const r = await runTrial(p, u, opts);
        const done = ran[u.index]!;
        (u.variant === 'skill' ? done.skill : done.bare)[u.trial] = r;
        if (--done.left === 0) {
          results[u.index] = caseResult(p, done.skill, done.bare);
          opts.onResult?.(u.index, results[u.index]!);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(opts.jobs, wave.length)) }, worker));
  }
  return results;
}

/** A case's trials as one result: its rate against its pass rate, flaky when they disagreed. */
function caseResult(p: PlannedCase, trials: TrialResult[], bare: TrialResult[]): CaseResult {
  const c = p.case;
  const n = trials.length;
  const passed = trials.filter((t) => t.status === 'passed').length;
  const loaded = trials.every((t) => t.loaded);
  // A small margin: 3 of 5 passes a rate of 0.6 whatever 0.6 * 5 is in floating point.
  const enough = passed >= p.passRate * n - 1e-9;
  const status = enough && loaded ? 'passed' : 'failed';
  const failing = trials.map((t, i) => ({ t, i })).filter(({ t }) => t.status === 'failed');
  const shown = failing[0]?.t ?? trials[0]!;
  let reason: string | undefined;
  if (failing.length) {
    if (n === 1) reason = shown.reason;
    else {
      // Each distinct reason once, with the trials that gave it.
      const by = new Map<string, number[]>();
      for (const { t, i } of failing) by.set(t.reason ?? 'failed', [...(by.get(t.reason ?? 'failed') ?? []), i + 1]);
      reason = [...by].map(([why, which]) => `trial${which.length > 1 ? 's' : ''} ${which.join(', ')} of ${n}: ${why}`).join('\n');
    }
    if (status === 'failed' && !enough && n > 1) reason = `${passed} of ${n} trials passed, ${p.passRate === 1 ? 'all' : `a rate of ${p.passRate}`} needed\n${reason}`;
  }
  const usage = sumUsage(trials);
  const cost = sumCost(trials);
  return {
    file: p.file.file,
    skill: p.skillName,
    name: c.name,
    line: c.line,
    status,
    durationMs: round1(trials.reduce((t, r) => t + r.durationMs, 0)),
    ...(reason !== undefined ? { reason } : {}),
    ...(shown.error ? { error: shown.error } : { result: shown.result }),
    trials: n,
    passedTrials: passed,
    rate: passed / n,
    passRate: p.passRate,
    flaky: passed > 0 && passed < n,
    loaded,
    tokens: usage.inputTokens + usage.outputTokens,
    usage,
    ...(cost !== undefined ? { costUsd: cost } : {}),
    ...(n > 1
      ? { runs: trials.map((t) => ({ status: t.status, durationMs: t.durationMs, tokens: t.usage.inputTokens + t.usage.outputTokens, ...(t.costUsd !== undefined ? { costUsd: t.costUsd } : {}), ...(t.reason !== undefined ? { reason: t.reason } : {}) })) }
      : {}),
    ...(bare.length ? { withoutSkill: rateOf(bare) } : {}),
  };
}

function rateOf(trials: TrialResult[]): RateSummary {
  const passed = trials.filter((t) => t.status === 'passed').length;
  const usage = sumUsage(trials);
  const cost = sumCost(trials);
  return { trials: trials.length, passed, rate: passed / trials.length, tokens: usage.inputTokens + usage.outputTokens, ...(cost !== undefined ? { costUsd: cost } : {}) };
}

function sumUsage(trials: TrialResult[]): Usage {
  return trials.reduce((u, t) => ({ inputTokens: u.inputTokens + t.usage.inputTokens, outputTokens: u.outputTokens + t.usage.outputTokens }), { inputTokens: 0, outputTokens: 0 });
}

function sumCost(trials: TrialResult[]): number | undefined {
  let cost: number | undefined;
  for (const t of trials) if (t.costUsd !== undefined) cost = (cost ?? 0) + t.costUsd;
  return cost === undefined ? undefined : roundUsd(cost);
}

/** To a billionth of a dollar: sums of prices per token print as 0.00038925, not 0.00038925000000000006. */
const roundUsd = (usd: number) => Math.round(usd * 1e9) / 1e9;

const round1 = (ms: number) => Math.round(ms * 10) / 10;

async function runTrial(p: PlannedCase, u: Unit, opts: EvalOptions): Promise<TrialResult> {
  const c = p.case;
  const meter = new TrialMeter();
  const started = performance.now();
  const workspace = c.workspace ? trialWorkspace(c.workspace) : undefined;
  try {
    const outcome = await trials.run(meter, () => invokeCase(p, u, opts, meter, workspace));
    // What the check or grader spends is not the case's: judged outside the trial's meter.
    const reason =
      u.variant === 'skill' && !meter.loaded && !outcome.ok
        ? `the skill did not load: ${outcome.error.code}: ${outcome.error.message}`
        : await trials.exit(() => judge(c, outcome, (skill, args) => p.runtime.invoke(skill, args as JsonObject), p.grader));
    return {
      status: reason === undefined ? 'passed' : 'failed',
      durationMs: round1(performance.now() - started),
      ...(reason !== undefined ? { reason } : {}),
      ...(outcome.ok ? { result: asJson(outcome.result) } : { error: outcome.error }),
      usage: { inputTokens: meter.inputTokens, outputTokens: meter.outputTokens },
      ...(meter.costUsd !== undefined ? { costUsd: roundUsd(meter.costUsd) } : {}),
      loaded: meter.loaded,
    };
  } finally {
    meter.forget();
    if (workspace) fs.rmSync(workspace, { recursive: true, force: true });
  }
}

/** A temporary folder holding an eval's files at their paths relative to the skill folder. */
function trialWorkspace(spec: { from: string; files: string[] }): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-eval-')));
  for (const file of spec.files) {
    const to = path.join(dir, path.relative(spec.from, file));
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.cpSync(file, to, { recursive: true, dereference: true });
  }
  return dir;
}

/** The bare model's system prompt (--compare-without-skill): the skill's body left out. */
const BARE_PROMPT = 'Do what the user asks.';

/**
 * One invocation of the case's skill: replaying its cassette (or recording it), within its
 * timeout, metered (its tokens, whether the skill loaded), in its temporary workspace when it has
 * one, and — the bare variant — with the skill's body left out.
 */
async function invokeCase(p: PlannedCase, u: Unit, opts: EvalOptions, meter: TrialMeter, workspace: string | undefined): Promise<Outcome> {
  const c = p.case;
  const middleware: JsonObject = {
    // First in the skill's chain: reaching it means the skill resolved and loaded.
    'eval-trial': {
      before: ['cwd', 'paths', 'model', 'log', 'mcp', '$configure'],
      fn: (served: Context) => {
        meter.loaded = true;
        return served.manager.next();
      },
    } as JsonObject,
  };
  if (c.cassette !== undefined && u.mode !== 'live') {
    const cassette = c.cassette;
    const update = u.mode === 'record';
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
  if (u.variant === 'bare') middleware['eval-without-skill'] = withoutSkill(p) as unknown as JsonObject;
  // The temporary workspace is every invocation's under the case (nonlocals: its children too):
  // their working directory, and the folder an agent's file access is kept to.
  const nonlocals = workspace
    ? {
        middleware: {
          'eval-workspace': {
            before: ['cwd', '$configure'],
            fn: (served: Context) => {
              served.locals.config.cwd = workspace;
              served.locals.config.workspace = workspace;
              return served.manager.next();
            },
          },
        },
      }
    : undefined;
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
    const context = { locals: { middleware }, ...(nonlocals ? { nonlocals } : {}), ...(controller ? { signal: controller.signal } : {}) };
    const result = await p.runtime.invoke(p.file.skill, c.args, { context });
    return { ok: true, result };
  } catch (err) {
    if (timedOut) return { ok: false, error: { code: 'E_TIMEOUT', message: `no outcome after ${timeout} ms (the case's timeout)` } };
    return { ok: false, error: errorOf(err) };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The bare model (--compare-without-skill): once the skill's args are checked and its model
 * configured — the cascade's, the case's cassette — the `agent` skill runs on that same model
 * config with the same tools and result schema, but a one-line system prompt instead of the
 * skill's body and the task as the user's message; its answer is the skill's result.
 */
function withoutSkill(p: PlannedCase) {
  return {
    after: ['$pre-execute', 'directives'],
    before: ['execute', 'agent-execute'],
    fn: async (served: Context) => {
      const args = (served.args ?? {}) as JsonObject;
      const message = typeof args.arguments === 'string' && args.arguments.trim() ? args.arguments : JSON.stringify(args);
      const allowed = served.run.tool.allowedTools ?? served.run.middleware['allowed-tools'];
      const agentArgs: JsonObject = {
        prompt: BARE_PROMPT,
        config: { ...(served.locals.config.model ?? {}) },
        userMessage: message,
        skillName: served.run.tool.name,
        name: `${served.run.tool.name} (without the skill)`,
        ...(typeof allowed === 'string' ? { allowedTools: allowed } : {}),
        ...(served.run.tool.returns !== undefined ? { returns: served.run.tool.returns } : {}),
      };
      // From the runtime's root: the skill's allowed-tools govern what it calls, and the bare
      // model is not the skill calling something.
      const inherited = served.nonlocals.middleware;
      const result = await p.runtime.root.manager.invoke('agent', agentArgs, { context: { signal: served.run.signal, ...(inherited ? { nonlocals: { middleware: inherited } } : {}) } });
      served.manager.finish(result);
      return result;
    },
  };
}

// ── metering a trial ────────────────────────────────────────────────────────────────────────
// Cases run at once in one runtime, and the agent reports its tokens to the runtime's one
// progress sink (src/agent/trace.ts). An agent's events name it (agentId) and the agent that
// started it (parentAgentId): an agent belongs to its parent's trial — every agent reports
// turn-start before its code can start another — and an agent without a known parent to the
// trial whose async context its first event was reported in (AsyncLocalStorage, as `mcp serve`
// routes progress: docs/mcp.md). The async context alone is not enough: a nested agent started by
// agent code is reported from the sandbox's channel, whose context is the trial that started it.

const trials = new AsyncLocalStorage<TrialMeter>();
/** agentId → the trial it belongs to, while the trial runs. */
const byAgent = new Map<string, TrialMeter>();

class TrialMeter {
  inputTokens = 0;
  outputTokens = 0;
  costUsd: number | undefined;
  loaded = false;
  readonly agents: string[] = [];
  forget(): void {
    for (const id of this.agents) byAgent.delete(id);
  }
}

const metered = new WeakSet<object>();

/** Puts the trial meter in front of the runtime's progress sink (once per runtime). */
function meterAgents(root: Context): void {
  const internals = root.globals.internals;
  if (metered.has(internals)) return;
  metered.add(internals);
  const inner = internals.progress;
  const sink: ProgressSink = (e) => {
    const id = typeof e.agentId === 'string' ? e.agentId : undefined;
    const parent = typeof e.parentAgentId === 'string' ? e.parentAgentId : undefined;
    // An agent already seen, or its parent, first: the async context of an event that comes through
    // the sandbox's channel is that channel's (the trial that started the sandbox), not the trial's.
    const meter = (id !== undefined ? byAgent.get(id) : undefined) ?? (parent !== undefined ? byAgent.get(parent) : undefined) ?? trials.getStore();
    if (meter) {
      if (id !== undefined && !byAgent.has(id)) {
        byAgent.set(id, meter);
        meter.agents.push(id);
      }
      if (e.type === 'usage') {
        meter.inputTokens += count(e.inputTokens);
        meter.outputTokens += count(e.outputTokens);
        if (typeof e.costUsd === 'number' && Number.isFinite(e.costUsd)) meter.costUsd = (meter.costUsd ?? 0) + e.costUsd;
      }
    }
    inner?.(e);
  };
  if (inner?.deltas !== undefined) sink.deltas = inner.deltas;
  internals.progress = sink;
}

function count(v: unknown): number {
  const n = Number(v ?? 0);
  return Number.isFinite(n) && n > 0 ? n : 0;
}
