// What `agent-apps test` prints (docs/ci.md): a line per case and the summary line
// `N passed, N failed` for people (and CI logs, which read that line), or one report for
// machines — JUnit XML (CI test tabs), TAP 13, or JSON. Every one of them gives each case's
// trials and pass rate, its model tokens, cost and time.
import { yaml } from '../core/yaml.ts';
import type { CaseResult } from './run.ts';

export type ReporterName = 'text' | 'junit' | 'json' | 'tap';
export const REPORTERS: readonly ReporterName[] = ['text', 'junit', 'json', 'tap'];

export interface ReportInfo {
  /** How a file is named (relative to the cwd). */
  shown: (file: string) => string;
  durationMs: number;
  /** How the run compares with --baseline (src/evals/baseline.ts): in the JSON report. */
  baseline?: unknown;
}

interface Paint {
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  dim(s: string): string;
}

export const title = (r: CaseResult, shown: (file: string) => string): string => `${shown(r.file)} › ${r.name}`;

/**
 * `N passed, N failed` (`, N skipped`, `, N flaky` when some were — flaky cases are counted among
 * the passed or failed too): alone on its line, as CI reads it.
 */
export function summaryLine(results: readonly CaseResult[]): string {
  const n = count(results);
  const flaky = results.filter((r) => r.flaky).length;
  return `${n.passed} passed, ${n.failed} failed${n.skipped ? `, ${n.skipped} skipped` : ''}${flaky ? `, ${flaky} flaky` : ''}`;
}

/** `3/5 (60%)`. */
export function rateText(passed: number, trials: number): string {
  return `${passed}/${trials} (${Math.round((passed / trials) * 100)}%)`;
}

/** `$0.000123`: three significant digits below a cent, else four decimals. */
export function usdText(usd: number): string {
  return `$${usd >= 0.01 ? usd.toFixed(4) : Number(usd.toPrecision(3)).toString()}`;
}

/**
 * One case for a person: a mark, the title, its trials' pass rate when it ran more than once (and
 * *flaky* when they disagreed), the bare model's beside it (--compare-without-skill); the time,
 * tokens and cost; a failure's reasons indented below it — for a flaky case that passed, dimmed.
 */
export function textLine(r: CaseResult, shown: (file: string) => string, paint: Paint, escape: (s: string) => string): string {
  const name = escape(title(r, shown));
  if (r.status === 'skipped') return `${paint.yellow('-')} ${name} ${paint.dim(`(skipped${r.reason ? `: ${escape(r.reason)}` : ''})`)}\n`;
  let rate = '';
  if (r.trials !== undefined && (r.trials > 1 || r.withoutSkill)) rate += ` ${rateText(r.passedTrials ?? 0, r.trials)}`;
  if (r.flaky) rate += ` ${paint.yellow('flaky')}`;
  if (r.withoutSkill) rate += ` · without the skill ${rateText(r.withoutSkill.passed, r.withoutSkill.trials)}`;
  const time = paint.dim(`(${costText(r)})`);
  const reasons = (text: string, dim: boolean) =>
    text
      .split('\n')
      .map((l) => `    ${dim ? paint.dim(escape(l)) : escape(l)}\n`)
      .join('');
  if (r.status === 'passed') return `${paint.green('✓')} ${name}${rate} ${time}\n${r.reason ? reasons(r.reason, true) : ''}`;
  return `${paint.red('✗')} ${name}${rate} ${time}\n${reasons(r.reason ?? 'failed', false)}`;
}

/** `812 ms`, then `, 527 tokens` and `, $0.0001` when the case used a model. */
function costText(r: CaseResult): string {
  return `${formatMs(r.durationMs)}${r.tokens ? `, ${r.tokens} tokens` : ''}${r.costUsd !== undefined ? `, ${usdText(r.costUsd)}` : ''}`;
}

export function report(name: Exclude<ReporterName, 'text'>, results: readonly CaseResult[], info: ReportInfo): string {
  if (name === 'junit') return junit(results, info);
  if (name === 'tap') return tap(results, info);
  return json(results, info);
}

/**
 * `{ passed, failed, skipped, flaky, durationMs, cases: [{ file, line, skill, name, status,
 * durationMs, trials, passedTrials, rate, passRate, flaky, loaded, tokens, usage, costUsd?,
 * reason?, result?, error?, runs?, withoutSkill? }], baseline? }` on one line.
 */
function json(results: readonly CaseResult[], info: ReportInfo): string {
  const cases = results.map((r) => ({ ...r, file: info.shown(r.file) }));
  const flaky = results.filter((r) => r.flaky).length;
  return JSON.stringify({ ...count(results), flaky, durationMs: Math.round(info.durationMs), cases, ...(info.baseline !== undefined ? { baseline: info.baseline } : {}) }) + '\n';
}

/** TAP version 13: `ok N - title`, a failure's details as a YAML block, `# SKIP` for skipped cases. */
function tap(results: readonly CaseResult[], info: ReportInfo): string {
  let out = `TAP version 13\n1..${results.length}\n`;
  results.forEach((r, i) => {
    // In a TAP description `#` starts a directive: escape it.
    const desc = title(r, info.shown).replace(/\\/g, '\\\\').replace(/#/g, '\\#').replace(/[\r\n]+/g, ' ');
    if (r.status === 'skipped') {
      out += `ok ${i + 1} - ${desc} # SKIP${r.reason ? ` ${r.reason.replace(/[\r\n]+/g, ' ')}` : ''}\n`;
      return;
    }
    out += `${r.status === 'passed' ? 'ok' : 'not ok'} ${i + 1} - ${desc}\n`;
    const block: Record<string, unknown> = { duration_ms: r.durationMs };
    if (r.status === 'failed') {
      Object.assign(block, { message: r.reason, severity: 'fail', file: info.shown(r.file), line: r.line, skill: r.skill });
      if (r.error) block.error = r.error;
    }
    if (r.trials !== undefined && r.trials > 1) Object.assign(block, { trials: r.trials, passed_trials: r.passedTrials, rate: r.rate, pass_rate: r.passRate, flaky: r.flaky });
    out += '  ---\n' + yaml().stringify(block, { lineWidth: 0 }).replace(/^(?=.)/gm, '  ') + '  ...\n';
    // The case's cost as a comment line: TAP consumers show it, and none reads it as a result.
    out += `# ${tapComment(r)}\n`;
  });
  return out;
}

/** `tokens 527 (in 450, out 77), cost $0.0001, 812 ms, 3/5 trials passed (60%), flaky, without the skill 0/5 (0%)`. */
function tapComment(r: CaseResult): string {
  const parts = [`tokens ${r.tokens ?? 0} (in ${r.usage?.inputTokens ?? 0}, out ${r.usage?.outputTokens ?? 0})`];
  if (r.costUsd !== undefined) parts.push(`cost ${usdText(r.costUsd)}`);
  parts.push(formatMs(r.durationMs));
  if (r.trials !== undefined) parts.push(`${rateText(r.passedTrials ?? 0, r.trials).replace(' ', ' trials passed ')}`);
  if (r.flaky) parts.push('flaky');
  if (r.loaded === false) parts.push('the skill did not load');
  if (r.withoutSkill) parts.push(`without the skill ${rateText(r.withoutSkill.passed, r.withoutSkill.trials)}`);
  return parts.join(', ').replace(/[\r\n]+/g, ' ');
}

/**
 * JUnit XML as CI systems read it: one <testsuite> per eval file, one <testcase> per case (its
 * classname the skill, file and line attributes), <failure> with the reason, <skipped/>.
 */
function junit(results: readonly CaseResult[], info: ReportInfo): string {
  const files = new Map<string, CaseResult[]>();
  for (const r of results) {
    const list = files.get(r.file) ?? [];
    list.push(r);
    files.set(r.file, list);
  }
  const all = count(results);
  let out = '<?xml version="1.0" encoding="UTF-8"?>\n';
  out += `<testsuites ${attrs({ name: 'agent-apps test', tests: results.length, failures: all.failed, errors: 0, skipped: all.skipped, time: seconds(info.durationMs) })}>\n`;
  for (const [file, list] of files) {
    const n = count(list);
    const time = list.reduce((t, r) => t + r.durationMs, 0);
    const shown = info.shown(file);
    out += `  <testsuite ${attrs({ name: shown, tests: list.length, failures: n.failed, errors: 0, skipped: n.skipped, time: seconds(time), file: shown })}>\n`;
    for (const r of list) {
      const head = `    <testcase ${attrs({ name: r.name, classname: r.skill, file: shown, line: r.line, time: seconds(r.durationMs) })}>\n`;
      if (r.status === 'skipped') {
        out += `${head}      <skipped${r.reason ? ` ${attrs({ message: r.reason })}` : ''}/>\n    </testcase>\n`;
        continue;
      }
      out += head + properties(r);
      if (r.status === 'failed') {
        const reason = r.reason ?? 'failed';
        const type = r.loaded === false ? 'E_NOT_LOADED' : r.error?.code ?? 'expect';
        const details = `${reason}\n  at ${shown}:${r.line}`;
        out += `      <failure ${attrs({ message: reason, type })}>${xmlText(details)}</failure>\n`;
      }
      out += '    </testcase>\n';
    }
    out += '  </testsuite>\n';
  }
  return out + '</testsuites>\n';
}

/**
 * A case's figures as JUnit `<properties>` (which GitLab, Jenkins and the test-report actions show
 * per case): trials, passed trials, rate, flaky, whether the skill loaded, tokens, cost, time.
 */
function properties(r: CaseResult): string {
  const values: [string, string | number | boolean | undefined][] = [
    ['trials', r.trials],
    ['passedTrials', r.passedTrials],
    ['rate', r.rate],
    ['passRate', r.passRate],
    ['flaky', r.flaky],
    ['loaded', r.loaded],
    ['tokens', r.tokens],
    ['inputTokens', r.usage?.inputTokens],
    ['outputTokens', r.usage?.outputTokens],
    ['costUsd', r.costUsd],
    ['durationMs', r.durationMs],
    ['withoutSkill.rate', r.withoutSkill?.rate],
    ['withoutSkill.passedTrials', r.withoutSkill?.passed],
  ];
  let out = '      <properties>\n';
  for (const [name, value] of values) if (value !== undefined) out += `        <property ${attrs({ name, value: String(value) })}/>\n`;
  return out + '      </properties>\n';
}

function count(results: readonly CaseResult[]): { passed: number; failed: number; skipped: number } {
  const n = { passed: 0, failed: 0, skipped: 0 };
  for (const r of results) n[r.status]++;
  return n;
}

function attrs(values: Record<string, string | number>): string {
  return Object.entries(values)
    .map(([k, v]) => `${k}="${xmlText(String(v)).replace(/"/g, '&quot;').replace(/\n/g, '&#10;')}"`)
    .join(' ');
}

/**
 * Text for XML 1.0: the five specials escaped, and the characters XML cannot hold at all (C0
 * controls but tab and newlines, lone surrogates, U+FFFE/FFFF) — which a model's text or an ANSI
 * colour in an error message may carry — written as `\xNN` / `\uNNNN`.
 */
function xmlText(s: string): string {
  return s
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, (c) => {
      const code = c.charCodeAt(0);
      return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
    })
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

export function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`;
}
