// `agent-apps test [PATH…]` (docs/ci.md): runs eval files — `*.test.yaml`, a skill and its cases,
// or an Agent Skills `evals/evals.json` — and says which cases passed, each as many times as its
// trials say. Exit 0 all passed, 1 a case failed (with --baseline: a case regressed), 2 a
// malformed eval file (each problem with its file:line:col), a baseline that is not this
// project's, or a usage error. The work is in src/evals/; this file is the command line: where to
// look, how many at once, and where each kind of output goes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Option, type Command } from 'commander';
import { AgentAppsError } from '../../core/errors.ts';
import { LIBRARY_ROOT, agentAppsHome, agentsHome, defaultPaths, findWorkspace } from '../../loader/search-paths.ts';
import { EXIT, formatError, painter } from '../shared/output.ts';
import { escapeControl } from '../shared/escape.ts';
import { consoleReporter } from '../shared/reporters.ts';
import { globalsOf, runtimeOptions } from '../shared/runtime-options.ts';
import type { CliIO } from '../shared/io.ts';

interface TestOptions {
  jobs?: string;
  reporter?: 'text' | 'junit' | 'json' | 'tap';
  out?: string;
  update?: boolean;
  filter?: string;
  timeout?: string;
  trials?: string;
  grader?: string;
  compareWithoutSkill?: boolean;
  baseline?: string;
  tolerance?: string;
  saveBaseline?: string;
}

export function registerTest(program: Command, io: CliIO): void {
  program
    .command('test')
    .description('run eval files (*.test.yaml): each case invokes a skill and checks its result')
    .argument('[paths...]', 'eval files or folders to search (default: the workspace’s skill folders and tests/)')
    .option('-j, --jobs <n>', 'how many cases run at once (default: the number of CPUs)')
    .addOption(new Option('--reporter <name>', 'the report: text for people, junit, json or tap for machines').choices(['text', 'junit', 'json', 'tap']))
    .option('--out <file>', 'write the report to <file> (stdout then shows the text listing)')
    .option('--update', 're-record every case’s cassette against the live model the skill is configured with')
    .option('--filter <regex>', 'only the cases whose title (FILE › NAME) matches (case-insensitive)')
    .option('--timeout <ms>', 'abort a case after <ms> milliseconds (a case’s own timeout wins); it then fails with E_TIMEOUT')
    .option('--trials <n>', 'run each case <n> times (a case’s or its file’s trials: wins); a case passes when its pass.rate of them pass')
    .option('--grader <skill>', 'the grader of evals/evals.json files (and of expect.grade without by): invoked with { output, rubric, input }, returns { pass, score?, reason }')
    .option('--compare-without-skill', 'also run each case of a Markdown skill on the bare model (its model config, not its body) and show both pass rates')
    .option('--baseline <file>', 'compare with a saved baseline: a case whose pass rate fell, or whose skill did not load, is a regression (exit 1)')
    .option('--tolerance <x>', 'with --baseline: how far a pass rate may fall before it is a regression (0 to 1, default 0)')
    .option('--save-baseline <file>', 'write each case’s pass rate, tokens, cost and whether its skill loaded to <file> (JSON)')
    .addHelpText(
      'after',
      `
An eval file names a skill and its cases; put it beside the skill (skills/NAME.test.yaml) or
under tests/:

  skill: summarize
  cases:
    - name: counts words
      args: { text: "a b c" }
      cassette: summarize.cassette.yaml   # replay this recording (relative to this file); live model without
      expect: { equals: { words: 3 } }
    - name: says hello
      expect: { match: "^Hello" }         # a regex on the result (its JSON unless a string)
    - name: has the right shape
      expect: { schema: { type: object, required: [words] } }
    - name: rejects a bad arg
      args: { txt: 1 }
      expect: { error: E_VALIDATION }     # it must fail with this code
    - name: judged by a skill
      expect: { check: judge-summary }    # invoked with { result, error, args, case }; true passes

A case may also have timeout: MS and skip: true | REASON. Without expect it passes when the
skill succeeds. Cases run in parallel in one runtime per workspace, each through the whole
pipeline; --set, --path and --approve apply to every case.

Flaky or broken: trials: N (on a case or the file; else --trials) runs a case N times, and
pass: { rate: 0.8 } says what share must pass (default 1). A case some of whose trials passed
and some failed is marked flaky, with its rate (3/5 (60%)).

  trials: 5
  cases:
    - name: answers politely
      pass: { rate: 0.8 }
      expect: { grade: { by: judge-tone, rubric: "Polite, and answers the question." } }

An Agent Skills folder's evals/evals.json ({ skill_name, evals: [{ id, prompt, expected_output,
files? }] }) is an eval file too: each prompt is the skill's arguments, run in a temporary
workspace holding its files, graded against expected_output by --grader SKILL.

Output: with the text reporter (the default) a line per case and the summary line
"N passed, N failed" on stdout. With --reporter junit|json|tap the report goes to stdout (or
--out FILE) and the case lines and summary go to stderr (to stdout with --out).

Exit codes: 0 every case passed, 1 a case failed, 2 a malformed eval file (FILE:LINE:COL) or
bad usage. With --baseline: 1 when a case regressed against it, else 0 (a new case, or one that
failed as often before, does not fail the run); a baseline that is not this project's is 2.

Examples:
  $ agent-apps test                                     every eval file of the workspace
  $ agent-apps test skills/hello.test.yaml --filter world
  $ agent-apps test --reporter junit --out report.xml   in CI: the report for the CI, the lines in the log
  $ agent-apps test tests/ --jobs 1 --reporter tap > evals.tap
  $ agent-apps test --trials 5 --save-baseline evals-baseline.json
  $ agent-apps test --trials 5 --baseline evals-baseline.json --tolerance 0.2
  $ agent-apps test skills/pdf-notes --grader grade-output --compare-without-skill
  $ agent-apps test --update --set model.provider=openai --set model.baseURL=http://127.0.0.1:11434/v1`,
    )
    .action(async (paths: string[], opts: TestOptions, cmd: Command) => {
      const code = await runTests(paths, opts, cmd, io);
      (program as Command & { exitCodeOverride?: number }).exitCodeOverride = code;
    });
}

async function runTests(paths: string[], opts: TestOptions, cmd: Command, io: CliIO): Promise<number> {
  const g = globalsOf(cmd);
  const rtOpts = runtimeOptions(g);
  const cwd = rtOpts.cwd!;
  const searchPaths = (rtOpts.paths ?? []).map((p) => path.resolve(cwd, p));
  const jobs = positiveInt('--jobs', opts.jobs) ?? os.availableParallelism();
  const timeout = positiveInt('--timeout', opts.timeout);
  const trials = positiveInt('--trials', opts.trials);
  let tolerance = 0;
  if (opts.tolerance !== undefined) {
    if (opts.baseline === undefined) throw new AgentAppsError('E_USAGE', '--tolerance goes with --baseline FILE: it says how far a pass rate may fall from the baseline');
    tolerance = Number(opts.tolerance);
    if (!/^\s*[\d.]+\s*$/.test(opts.tolerance) || !Number.isFinite(tolerance) || tolerance < 0 || tolerance > 1) throw new AgentAppsError('E_USAGE', `--tolerance must be a number from 0 to 1, a share of the trials (got '${opts.tolerance}')`);
  }
  const reporter = opts.reporter ?? (g.json ? 'json' : 'text');
  let filter: RegExp | undefined;
  if (opts.filter !== undefined) {
    try {
      filter = new RegExp(opts.filter, 'i');
    } catch (err) {
      throw new AgentAppsError('E_USAGE', `--filter: ${(err as Error).message}`);
    }
  }
  const color = g.color !== false;
  // Files are named relative to the cwd when they are in its workspace (`../tests/x.test.yaml`
  // from skills/), else by their absolute path.
  const workspace = findWorkspace(cwd);
  const inside = (dir: string, file: string) => {
    const rel = path.relative(dir, file);
    return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
  };
  const shown = (file: string) => (inside(cwd, file) || inside(workspace, file) ? path.relative(cwd, file) : file);

  // Where eval files are: the named files and folders, or the workspace's skill folders and tests/.
  const { findEvalFiles } = await import('../../evals/find.ts');
  let targets: string[];
  if (paths.length) {
    targets = paths.map((p) => path.resolve(cwd, p));
    const missing = paths.find((p, i) => !fs.existsSync(targets[i]!));
    if (missing !== undefined) throw new AgentAppsError('E_USAGE', `test: '${missing}' does not exist`);
  } else {
    const userLevel = new Set([LIBRARY_ROOT, path.join(agentAppsHome(), 'skills'), path.join(agentsHome(), 'skills')]);
    targets = [...defaultPaths({ cwd, workspace, paths: searchPaths }).filter((p) => !userLevel.has(p)), path.join(workspace, 'tests')];
  }
  const files = findEvalFiles(targets);
  if (!files.length) {
    const where = paths.length ? paths.join(', ') : targets.map(shown).join(', ');
    throw new AgentAppsError('E_USAGE', `test: no eval files (*.test.yaml) in ${where} — write one beside a skill (skills/NAME.test.yaml) or under tests/; agent-apps test --help shows the format`);
  }

  // The text listing goes to stdout unless the report does; --out sends the report to a file.
  const listing = reporter === 'text' || opts.out !== undefined ? io.stdout : io.stderr;
  // A text report written to a file carries no colour codes.
  const paint = await painter(listing, color && !(reporter === 'text' && opts.out !== undefined));
  const errPaint = await painter(io.stderr, color);

  // A baseline is checked before anything runs: not one, or another project's, is E_VALIDATION (exit 2).
  const { projectOf, readBaseline, compareWithBaseline, comparisonText, baselineOf, writeBaseline } = await import('../../evals/baseline.ts');
  const project = projectOf(workspace, files);
  let baseline: Awaited<ReturnType<typeof readBaseline>> | undefined;
  if (opts.baseline !== undefined) {
    try {
      baseline = await readBaseline(path.resolve(cwd, opts.baseline), opts.baseline, project);
    } catch (err) {
      io.stderr.write(formatError(err, { debug: false, paint: errPaint }) + '\n');
      return EXIT.usage;
    }
  }
  const [{ planEvals, runEvals }, { createRuntime }] = await Promise.all([import('../../evals/run.ts'), import('../../runtime.ts')]);
  const { report, summaryLine, textLine, formatMs, rateText } = await import('../../evals/reporters.ts');
  const { skillRef } = await import('../../evals/eval-file.ts');
  const runtimeOpts = {
    ...rtOpts,
    paths: searchPaths,
    // Log events reach the terminal only when asked for (--log-level): cases run in parallel.
    ...(rtOpts.logLevel ? { reporters: [consoleReporter(io.stderr, errPaint)] } : {}),
  };
  const evalOptions = {
    // One runtime per workspace, made here: evals/ does not import the composition root.
    runtime: (dir: string) => createRuntime({ ...runtimeOpts, cwd: dir }),
    cwd,
    jobs,
    update: opts.update === true,
    ...(filter ? { filter } : {}),
    ...(timeout !== undefined ? { timeout } : {}),
    ...(trials !== undefined ? { trials } : {}),
    // A grader named by a path is the cwd's; a name is looked up like any skill.
    ...(opts.grader !== undefined ? { grader: skillRef(opts.grader, cwd) } : {}),
    ...(opts.compareWithoutSkill ? { compareWithoutSkill: true } : {}),
    shown,
  };
  const planned = await planEvals(files, evalOptions);
  if ('problems' in planned) {
    let out = '';
    for (const p of planned.problems) out += `${shown(p.file)}:${p.line}:${p.column}: ${errPaint.red('error')}: ${escapeControl(p.message)}\n`;
    const n = planned.problems.length;
    const last = `${n} ${n === 1 ? 'problem' : 'problems'} in eval files: no case ran`;
    out += `${last}\n`;
    io.stderr.write(out);
    // The JSON report of a run that never started: the problems, under the code they share.
    if (reporter === 'json') {
      const problems = planned.problems.map((p) => ({ file: shown(p.file), line: p.line, column: p.column, message: p.message }));
      const text = JSON.stringify({ error: { code: 'E_VALIDATION', message: last, problems } }) + '\n';
      if (opts.out !== undefined) fs.writeFileSync(path.resolve(cwd, opts.out), text);
      else io.stdout.write(text);
    }
    return EXIT.usage;
  }
  const { plan } = planned;
  let stopListening: (() => void) | undefined;
  try {
    if (!plan.cases.length) throw new AgentAppsError('E_USAGE', `test: no case matches --filter ${opts.filter} (in ${files.length} eval ${files.length === 1 ? 'file' : 'files'})`);
    if (rtOpts.logLevel) {
      for (const rt of new Set(plan.cases.map((c) => c.runtime))) rt.root.manager.configure({ level: rtOpts.logLevel, global: true });
    }
    // Case lines in file order, each as soon as every case before it has ended.
    const done: (string | undefined)[] = new Array(plan.cases.length);
    let printed = 0;
    let ended = 0;
    // Ctrl-C (docs/security.md): say how far the run got, exit 130 at once; the sandbox child goes with us.
    const interrupted = () => {
      io.stderr.write(`\ninterrupted (SIGINT): ${ended} of ${plan.cases.length} cases had ended\n`);
      process.exit(EXIT.interrupted);
    };
    process.on('SIGINT', interrupted);
    stopListening = () => process.off('SIGINT', interrupted);
    const lines: string[] = [];
    const started = performance.now();
    const results = await runEvals(plan, {
      ...evalOptions,
      onResult(i, r) {
        ended++;
        done[i] = textLine(r, shown, paint, escapeControl);
        while (printed < done.length && done[printed] !== undefined) {
          const line = done[printed++]!;
          lines.push(line);
          if (reporter !== 'text' || opts.out === undefined) listing.write(line);
        }
      },
    });
    const durationMs = performance.now() - started;
    const summary = summaryLine(results);
    const failed = results.some((r) => r.status === 'failed');
    const comparison = baseline ? compareWithBaseline(baseline, workspace, results, tolerance, opts.baseline!) : undefined;
    // The gate: with a baseline, a regression against it; without one, any failed case.
    const failing = comparison ? comparison.regressions.length > 0 : failed;
    const ran = results.reduce((n, r) => n + (r.trials ?? 0), 0);
    let tail = paint.dim(`${results.length} ${results.length === 1 ? 'case' : 'cases'}${ran > results.length ? ` (${ran} trials)` : ''} from ${plan.files.length} eval ${plan.files.length === 1 ? 'file' : 'files'} in ${formatMs(durationMs)}`) + '\n';
    // The flaky cases again, where the summary is: they passed some trials and failed others.
    for (const r of results.filter((x) => x.flaky)) tail += `${paint.yellow('flaky')} ${escapeControl(`${shown(r.file)} › ${r.name}`)} ${rateText(r.passedTrials!, r.trials!)}, ${r.status === 'passed' ? 'passed' : 'failed'} (pass.rate ${r.passRate})\n`;
    const compared = results.filter((r) => r.withoutSkill);
    if (compared.length) {
      const sum = (f: (r: (typeof results)[number]) => number) => compared.reduce((n, r) => n + f(r), 0);
      tail += `with the skill ${rateText(sum((r) => r.passedTrials!), sum((r) => r.trials!))}, without it ${rateText(sum((r) => r.withoutSkill!.passed), sum((r) => r.withoutSkill!.trials))} (${compared.length} ${compared.length === 1 ? 'case' : 'cases'})\n`;
    }
    if (comparison) tail += comparisonText(comparison, paint);
    if (opts.saveBaseline !== undefined) {
      const saved = baselineOf(project, workspace, results);
      writeBaseline(path.resolve(cwd, opts.saveBaseline), saved);
      tail += paint.dim(`baseline written to ${opts.saveBaseline} (${Object.keys(saved.cases).length} cases)`) + '\n';
    }
    tail += `${failed ? paint.red(summary) : paint.green(summary)}\n`;
    const info = { shown, durationMs, ...(comparison ? { baseline: comparison } : {}) };
    if (opts.out !== undefined) {
      const file = path.resolve(cwd, opts.out);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, reporter === 'text' ? lines.join('') + tail : report(reporter, results, info));
      listing.write(reporter === 'text' ? `${summary}\n` : tail);
    } else {
      listing.write(tail);
      if (reporter !== 'text') io.stdout.write(report(reporter, results, info));
    }
    return failing ? EXIT.failed : EXIT.ok;
  } finally {
    stopListening?.();
    await plan.close();
  }
}

function positiveInt(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new AgentAppsError('E_USAGE', `${flag} must be a whole number ≥ 1 (got '${value}')`);
  return n;
}
