// Reading skill files safely (docs/writing-skills.md, docs/security.md): only regular files (a FIFO,
// a device, a directory named `x.md` is a configuration error naming it — and is never opened,
// since opening a FIFO blocks), and never more than the caps: 5 MiB a file, 1 MiB of frontmatter.
import fs from 'node:fs';
import path from 'node:path';
import { ConfigurationError } from '../core/errors.ts';

export const MAX_SKILL_FILE_BYTES = 5 * 1024 * 1024;
export const MAX_FRONTMATTER_BYTES = 1024 * 1024;

const MiB = (n: number) => `${+(n / (1024 * 1024)).toFixed(1)} MiB`;
// O_NONBLOCK: should the file be swapped for a FIFO between the stat and the open, the open
// still returns at once (and the fstat after it refuses the file). Not defined on Windows.
const OPEN_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0);

function kindOf(st: fs.Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSocket()) return 'a socket';
  return 'not a file';
}

/** Why `st` cannot be a skill file (not regular, over the size cap), or undefined. */
export function statProblem(file: string, st: fs.Stats): string | undefined {
  const base = path.basename(file);
  if (!st.isFile()) return `${base} is not a regular file (${kindOf(st)})`;
  if (st.size > MAX_SKILL_FILE_BYTES) return `${base} is ${MiB(st.size)}, over the ${MiB(MAX_SKILL_FILE_BYTES)} limit for a skill file`;
  return undefined;
}

/** stat (following symlinks) + statProblem; a file that cannot be stat'ed is a problem too. */
export function checkSkillFile(file: string): { stat?: fs.Stats; problem?: string } {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (err) {
    const code = (err as { code?: string }).code;
    return { problem: code === 'ENOENT' ? `${path.basename(file)} does not exist (a dangling symbolic link?)` : `cannot read ${path.basename(file)}: ${(err as Error).message}` };
  }
  const problem = statProblem(file, st);
  return problem ? { stat: st, problem } : { stat: st };
}

/** The whole of a regular skill file, up to the 5 MiB cap. Throws a ConfigurationError naming the file. */
export function readSkillFile(file: string): string {
  // One byte past the cap tells a file that grew since the stat from one that fits.
  const buf = readRegular(file, MAX_SKILL_FILE_BYTES + 1);
  if (buf.length > MAX_SKILL_FILE_BYTES) throw new ConfigurationError(`${path.basename(file)} is over the ${MiB(MAX_SKILL_FILE_BYTES)} limit for a skill file`, { place: { file } });
  return buf.toString('utf8');
}

/** The first `bytes` bytes of a regular skill file (the scan's cheap look at its name). */
export function readSkillHead(file: string, bytes = 8192): string {
  return readRegular(file, bytes).toString('utf8');
}

/** At most `max` bytes of `file`, checked regular before it is opened and again on the descriptor. */
function readRegular(file: string, max: number): Buffer {
  const { problem } = checkSkillFile(file);
  if (problem) throw new ConfigurationError(problem, { place: { file } });
  let fd: number;
  try {
    fd = fs.openSync(file, OPEN_FLAGS);
  } catch (err) {
    throw new ConfigurationError(`cannot read ${path.basename(file)}: ${(err as Error).message}`, { place: { file }, cause: err });
  }
  try {
    const st = fs.fstatSync(fd);
    const again = statProblem(file, st);
    if (again) throw new ConfigurationError(again, { place: { file } });
    const chunks: Buffer[] = [];
    let total = 0;
    while (total < max) {
      // Sized by the stat (plus a byte to see the end), so a small file costs one small buffer.
      const chunk = Buffer.allocUnsafe(Math.min(max - total, Math.max(st.size - total + 1, 16 * 1024)));
      const n = fs.readSync(fd, chunk, 0, chunk.length, total);
      if (n === 0) break;
      chunks.push(n === chunk.length ? chunk : chunk.subarray(0, n));
      total += n;
    }
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
  } finally {
    fs.closeSync(fd);
  }
}

/** The frontmatter cap: a leading `---` block whose closing `---` lies past 1 MiB. */
export function frontmatterProblem(text: string): string | undefined {
  if (!text.startsWith('---')) return undefined;
  const end = text.indexOf('\n---', 3);
  // A UTF-16 unit is at most 3 bytes of UTF-8: only a block past a third of the cap needs counting.
  if ((end === -1 ? text.length : end) <= MAX_FRONTMATTER_BYTES / 3) return undefined;
  const bytes = Buffer.byteLength(end === -1 ? text : text.slice(0, end), 'utf8');
  if (bytes <= MAX_FRONTMATTER_BYTES) return undefined;
  return `frontmatter is ${end === -1 ? 'unterminated and ' : ''}${MiB(bytes)}, over the ${MiB(MAX_FRONTMATTER_BYTES)} limit`;
}

/** Why `text` is not a text file (a NUL byte in its first 8 KiB), or undefined. */
export function binaryProblem(text: string, file: string): string | undefined {
  const at = text.slice(0, 8192).indexOf('\u0000');
  return at === -1 ? undefined : `${path.basename(file)} is not a text file (a NUL byte at offset ${at})`;
}

export interface FolderListing {
  /** Paths relative to the folder, `/`-separated; folders end with `/`. */
  files: string[];
  /** More entries than the cap: the listing stops there. */
  truncated: boolean;
  /** Symbolic links that lead back into a folder already listed (a loop), or nowhere. */
  skipped: { path: string; why: string }[];
}

const LIST_SKIP = new Set(['.git', 'node_modules', '.DS_Store']);

/**
 * The files of a skill folder, for progressive disclosure (docs/writing-skills.md): names only, never
 * contents. Bounded: at most `max` entries and `depth` levels; a symbolic link is followed only
 * inside the folder, and to a folder once (its real path is remembered), so a link loop ends the
 * walk there instead of running forever; a dangling link, one that loops on itself or one that
 * leaves the folder is reported, not thrown.
 */
export function listFolder(dir: string, opts: { max?: number; depth?: number } = {}): FolderListing {
  const max = opts.max ?? 200;
  const maxDepth = opts.depth ?? 6;
  const out: FolderListing = { files: [], truncated: false, skipped: [] };
  const seen = new Set<string>();
  let root: string;
  try {
    root = fs.realpathSync(dir);
    seen.add(root);
  } catch {
    return out;
  }
  const walk = (abs: string, rel: string, depth: number): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(abs, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const ent of entries) {
      if (out.files.length >= max) {
        out.truncated = true;
        return;
      }
      if (LIST_SKIP.has(ent.name)) continue;
      const childAbs = path.join(abs, ent.name);
      const childRel = rel ? `${rel}/${ent.name}` : ent.name;
      let isDir = ent.isDirectory();
      if (ent.isSymbolicLink()) {
        let real: string;
        try {
          real = fs.realpathSync(childAbs);
          isDir = fs.statSync(real).isDirectory();
        } catch (err) {
          const code = (err as { code?: string }).code;
          out.skipped.push({ path: childRel, why: code === 'ELOOP' ? 'a symbolic link loop' : 'a dangling symbolic link' });
          continue;
        }
        // A downloaded folder's link out of it (`data -> /usr`) is not the folder's: its names are
        // not listed to the model, as the scan does not follow it (docs/security.md).
        if (real !== root && !real.startsWith(root + path.sep)) {
          out.skipped.push({ path: isDir ? childRel + '/' : childRel, why: `a symbolic link out of the skill's folder (to ${real})` });
          continue;
        }
        if (isDir && seen.has(real)) {
          out.skipped.push({ path: childRel + '/', why: 'a symbolic link loop (it leads to a folder already listed)' });
          continue;
        }
        if (isDir) seen.add(real);
      } else if (isDir) {
        try {
          seen.add(fs.realpathSync(childAbs));
        } catch {}
      }
      if (isDir) {
        out.files.push(childRel + '/');
        if (depth < maxDepth) walk(childAbs, childRel, depth + 1);
      } else out.files.push(childRel);
    }
  };
  walk(dir, '', 1);
  return out;
}
