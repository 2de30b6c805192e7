// Importing code skills: `.skill.ts` through Node's type stripping, `tsx` only when stripping
// cannot run the file (enums, namespaces, parameter properties …).
import { pathToFileURL } from 'node:url';
import { ConfigurationError } from '../core/errors.ts';
import type { ToolDef } from '../core/types.ts';

export interface CodeModule {
  frontmatter?: unknown;
  fn?: ToolDef['fn'];
}

/** docs/security.md: an import that has not settled by then is a broken skill (E_CONFIG naming the file). */
export const DEFAULT_IMPORT_TIMEOUT_MS = 10_000;

/** `AGENT_APPS_IMPORT_TIMEOUT_MS`, read at each import (so tests and embedders may set it late). */
export function importTimeoutMs(): number {
  const ms = Number(process.env.AGENT_APPS_IMPORT_TIMEOUT_MS);
  return Number.isFinite(ms) && ms > 0 ? ms : DEFAULT_IMPORT_TIMEOUT_MS;
}

/**
 * Code modules, process-wide: one import per file and modification time, whatever the number of
 * runtimes (docs/security.md: a createRuntime()/close() cycle leaves no module instance behind). Node
 * keeps every module it evaluated for the life of the process, so a per-runtime URL would leak
 * one instance per skill per runtime; an edited file gets a new URL (`?v=N`) once, on its new
 * mtime. Only the latest import of each file is kept here.
 */
const modules = new Map<string, { mtimeMs: number; module: Promise<Record<string, unknown>> }>();
let reloads = 0;

export async function importCodeSkill(file: string, mtimeMs: number): Promise<CodeModule> {
  let hit = modules.get(file);
  if (!hit || hit.mtimeMs !== mtimeMs) {
    // The first import of a file uses its plain URL; a file edited since gets a fresh one.
    const url = pathToFileURL(file).href + (hit ? `?v=${++reloads}` : '');
    hit = { mtimeMs, module: importModule(file, url) };
    // A rejection is reported to whoever awaits it (bounded() below); none is unhandled here.
    hit.module.catch(() => {});
    modules.set(file, hit);
  }
  return fromModule(await bounded(hit.module, file), file);
}

async function importModule(file: string, url: string): Promise<Record<string, unknown>> {
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX' && file.endsWith('.ts')) {
      try {
        const { tsImport } = await import('tsx/esm/api');
        return (await tsImport(url, import.meta.url)) as Record<string, unknown>;
      } catch (inner) {
        throw importError(file, inner);
      }
    }
    throw importError(file, err);
  }
}

/**
 * The import, or E_CONFIG once the timeout passes. The timer is ref'd on purpose: a top-level
 * await that never settles holds nothing open, and without a pending timer Node would end the
 * process (exit 13) instead of reporting the file. It is cleared as soon as the import settles,
 * so it keeps nothing alive after that; an import that never settles holds nothing either.
 */
function bounded<T>(pending: Promise<T>, file: string): Promise<T> {
  const ms = importTimeoutMs();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ConfigurationError(`import did not settle within ${ms} ms (AGENT_APPS_IMPORT_TIMEOUT_MS)`, { place: { file } })), ms);
  });
  return Promise.race([pending, timeout]).finally(() => clearTimeout(timer));
}

export async function importInline(source: string): Promise<CodeModule> {
  const url = `data:text/javascript,${encodeURIComponent(source)}`;
  try {
    return fromModule(await bounded(import(url) as Promise<Record<string, unknown>>, 'inline://'), 'inline://');
  } catch (err) {
    if (err instanceof ConfigurationError) throw err;
    throw importError('inline://', err);
  }
}

function fromModule(mod: Record<string, unknown>, file: string): CodeModule {
  const def = mod.default;
  // `export default defineSkill(frontmatter, fn)` and `export const frontmatter` + `export default fn` both work.
  if (def && typeof def === 'object' && typeof (def as ToolDef).fn === 'function') {
    const td = def as ToolDef;
    return { frontmatter: td.frontmatter ?? mod.frontmatter ?? (td.name ? { name: td.name } : undefined), fn: td.fn };
  }
  if (typeof def !== 'function') {
    throw new ConfigurationError('a code skill must `export default async function (ctx, args) { … }`', { place: { file } });
  }
  return { frontmatter: mod.frontmatter, fn: def as ToolDef['fn'] };
}

function importError(file: string, err: unknown): ConfigurationError {
  const e = err as { message?: string };
  const first = String(e?.message ?? err).split('\n')[0];
  return new ConfigurationError(`cannot load skill: ${first}`, { place: { file, ...syntaxPlace(file, err) }, cause: err });
}

/**
 * Where a SyntaxError is, as `FILE:LINE` over the source line and a caret (Node's own format).
 * Type stripping puts it in the error's stack; for JavaScript the ESM loader does not, so — on
 * this error path only — `node --check` reads the file again and says it the same way.
 */
function syntaxPlace(file: string, err: unknown): { line?: number; column?: number } {
  if (!(err instanceof SyntaxError) || file === 'inline://') return {};
  const found = caretPlace(String(err.stack ?? ''), file);
  if (found.line !== undefined || file.endsWith('.ts')) return found;
  // node:child_process only on this path: loading it costs every start ~3 ms (docs/cli.md, "Start-up").
  const check = process.getBuiltinModule('node:child_process').spawnSync(process.execPath, ['--check', file], { encoding: 'utf8', timeout: 5000 });
  return caretPlace(check.stderr ?? '', file);
}

function caretPlace(text: string, file: string): { line?: number; column?: number } {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^(.*):(\d+)$/.exec(lines[i]!);
    if (!m || (m[1] !== file && !m[1]!.endsWith(file))) continue;
    // The source line(s) follow, then the caret under the column.
    for (const caret of lines.slice(i + 1, i + 5)) {
      const at = /^(\s*)\^+\s*$/.exec(caret);
      if (at) return { line: Number(m[2]), column: at[1]!.length + 1 };
    }
    return { line: Number(m[2]) };
  }
  return {};
}
