// What `agent-apps test` prints (docs/ci.md): a line per case and the summary line
// `N passed, N failed` for people (and CI logs, which read that line), or one report for
// machines — JUnit XML (CI test tabs), TAP 13, or JSON.
import { yaml } from '../core/yaml.ts';
import type { CaseResult } from './run.ts';

export type ReporterName = 'text' | 'junit' | 'json' | 'tap';
export const REPORTERS: readonly ReporterName[] = ['text', 'junit', 'json', 'tap'];

export interface ReportInfo {
  /** How a file is named (relative to the cwd). */
  shown: (file: string) => string;
  durationMs: number;
}

interface Paint {
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  dim(s: string): string;
}

export const title = (r: CaseResult, shown: (file: string) => string): string => `${shown(r.file)} › ${r.name}`;

/** `N passed, N failed` (`, N skipped` when some were): alone on its line, as CI reads it. */
export function summaryLine(results: readonly CaseResult[]): string {
  const n = count(results);
  return `${n.passed} passed, ${n.failed} failed${n.skipped ? `, ${n.skipped} skipped` : ''}`;
}

/** One case for a person: a mark, the title, the time; a failure's reason indented below it. */
export function textLine(r: CaseResult, shown: (file: string) => string, paint: Paint, escape: (s: string) => string): string {
  const name = escape(title(r, shown));
  if (r.status === 'skipped') return `${paint.yellow('-')} ${name} ${paint.dim(`(skipped${r.reason ? `: ${escape(r.reason)}` : ''})`)}\n`;
  const time = paint.dim(`(${formatMs(r.durationMs)})`);
  if (r.status === 'passed') return `${paint.green('✓')} ${name} ${time}\n`;
  return `${paint.red('✗')} ${name} ${time}\n    ${escape(r.reason ?? 'failed')}\n`;
}

export function report(name: Exclude<ReporterName, 'text'>, results: readonly CaseResult[], info: ReportInfo): string {
  if (name === 'junit') return junit(results, info);
  if (name === 'tap') return tap(results, info);
  return json(results, info);
}

/** `{ passed, failed, skipped, durationMs, cases: [{ file, line, skill, name, status, durationMs, reason?, result?, error? }] }` on one line. */
function json(results: readonly CaseResult[], info: ReportInfo): string {
  const cases = results.map((r) => ({ ...r, file: info.shown(r.file) }));
  return JSON.stringify({ ...count(results), durationMs: Math.round(info.durationMs), cases }) + '\n';
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
    out += '  ---\n' + yaml().stringify(block, { lineWidth: 0 }).replace(/^(?=.)/gm, '  ') + '  ...\n';
  });
  return out;
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
      const head = `    <testcase ${attrs({ name: r.name, classname: r.skill, file: shown, line: r.line, time: seconds(r.durationMs) })}`;
      if (r.status === 'passed') {
        out += `${head}/>\n`;
      } else if (r.status === 'skipped') {
        out += `${head}>\n      <skipped${r.reason ? ` ${attrs({ message: r.reason })}` : ''}/>\n    </testcase>\n`;
      } else {
        const reason = r.reason ?? 'failed';
        const type = r.error?.code ?? 'expect';
        const details = `${reason}\n  at ${shown}:${r.line}`;
        out += `${head}>\n      <failure ${attrs({ message: reason, type })}>${xmlText(details)}</failure>\n    </testcase>\n`;
      }
    }
    out += '  </testsuite>\n';
  }
  return out + '</testsuites>\n';
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
