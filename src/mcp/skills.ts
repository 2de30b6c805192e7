// Skills from MCP servers (docs/mcp.md, "Skills from MCP servers"): the host side of the Skills
// extension (`io.modelcontextprotocol/skills`). A configured server's `skills/list` entries become
// skills of the runtime (kind `mcp-skill`); the first time one is asked for, every file of its
// entry is read through the SDK's SkillsClient — which checks each against the entry's size and
// sha256 digest, and SKILL.md's frontmatter against the entry's — and written to a cache folder
// named by the entry's digests, so that the skill then runs exactly like a local SKILL.md folder
// (its body the prompt, its files listed to the model and read with file-read, its cassette
// beside it). Nothing is fetched for a listing. A cached copy is used only while every file's
// bytes still match the entry.
//
// What a server sends is untrusted (docs/security.md): a file's path must stay inside the skill's
// folder (no `..`, no absolute path, no backslash or control character), the skill is bounded by
// the extension's limits (512 files, 16 MiB), and a skill offered as "dynamic" (no digests) is
// refused — nothing could say it is the skill that was trusted.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AgentAppsError } from '../core/errors.ts';
import { agentSkillNameProblems } from '../loader/names.ts';
import { agentAppsHome } from '../loader/search-paths.ts';
import type { Connection, McpSkillEntry } from './client.ts';

const MAX_FILES = 512;
const MAX_BYTES = 16 * 1024 * 1024;

/** One file of an entry: its path in the folder and what the entry says of it. */
export interface SkillEntryFile {
  rel: string;
  uri: string;
  digest: string;
  size: number;
}

/** An entry as the runtime uses it: its name, its files, one digest for the whole skill — or why it cannot run. */
export type CheckedEntry = { name: string; entry: McpSkillEntry; files: SkillEntryFile[]; digest: string } | { name: string; entry: McpSkillEntry; problem: string };

/** The skill's name (its frontmatter's), its files by path, and the digest of the whole: sha256 over every file's path, digest and size. */
export function checkEntry(entry: McpSkillEntry): CheckedEntry {
  const name = String(entry.frontmatter.name);
  const bad = agentSkillNameProblems(name).find((p) => p.severity === 'error');
  if (bad) return { name, entry, problem: bad.message };
  if (entry.resources === 'dynamic') return { name, entry, problem: 'the server offers its files as "dynamic", without digests: agent-apps runs only skills whose every file it can check' };
  if (!entry.uri.endsWith('/SKILL.md')) return { name, entry, problem: `its entry's uri ${JSON.stringify(entry.uri)} does not name a SKILL.md` };
  const base = entry.uri.slice(0, -'SKILL.md'.length);
  const files: SkillEntryFile[] = [];
  let bytes = 0;
  for (const r of entry.resources) {
    const rel = relativePath(base, r.uri);
    if (rel === undefined) return { name, entry, problem: `its file ${JSON.stringify(r.uri)} is not inside the skill's folder ${base}` };
    bytes += r.size;
    files.push({ rel, uri: r.uri, digest: r.digest, size: r.size });
  }
  if (!files.some((f) => f.rel === 'SKILL.md')) return { name, entry, problem: 'its entry lists no SKILL.md' };
  if (files.length > MAX_FILES) return { name, entry, problem: `it has ${files.length} files, over the extension's ${MAX_FILES}` };
  if (bytes > MAX_BYTES) return { name, entry, problem: `it has ${bytes} bytes, over the extension's ${MAX_BYTES}` };
  if (new Set(files.map((f) => f.rel)).size !== files.length) return { name, entry, problem: 'its entry lists one file twice' };
  const lines = files.map((f) => `${f.rel}\0${f.digest}\0${f.size}`).sort();
  const digest = 'sha256:' + createHash('sha256').update(lines.join('\n')).digest('hex');
  return { name, entry, files, digest };
}

/** `references/GUIDE.md` of `skill://pdf/references/GUIDE.md` under `skill://pdf/`; undefined for anything that would leave the folder. */
function relativePath(base: string, uri: string): string | undefined {
  if (!uri.startsWith(base)) return undefined;
  let rel: string;
  try {
    rel = decodeURIComponent(uri.slice(base.length).split('#')[0]!.split('?')[0]!);
  } catch {
    return undefined;
  }
  if (!rel || rel.startsWith('/') || /[\\\u0000-\u001f\u007f]/.test(rel)) return undefined;
  const parts = rel.split('/');
  if (parts.some((p) => p === '' || p === '.' || p === '..')) return undefined;
  return rel;
}

/** The cache folder of one skill of one server at one digest: `~/.agent-apps/mcp-skills/SERVER-KEY/DIGEST/NAME/`. */
export function cacheDir(serverKey: string, skill: { name: string; digest: string }, env: NodeJS.ProcessEnv = process.env): string {
  const server = createHash('sha256').update(serverKey).digest('hex').slice(0, 16);
  return path.join(agentAppsHome(env), 'mcp-skills', server, skill.digest.replace(/^sha256:/, '').slice(0, 32), skill.name);
}

const sha256 = (bytes: Uint8Array) => 'sha256:' + createHash('sha256').update(bytes).digest('hex');

/** True when `dir` holds exactly the entry's bytes (a previous fetch, whole). */
function cached(dir: string, files: readonly SkillEntryFile[]): boolean {
  try {
    for (const f of files) {
      const file = path.join(dir, f.rel);
      const st = fs.lstatSync(file);
      if (!st.isFile() || st.size !== f.size) return false;
      if (sha256(fs.readFileSync(file)) !== f.digest.toLowerCase()) return false;
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * The skill's folder on disk, every file of it read through `conn` (verified by the SDK) unless
 * the cache already holds exactly these bytes. Written into a temporary folder and renamed into
 * place: a folder that exists is whole. Returns the path of its SKILL.md.
 */
export async function materialise(conn: Connection, checked: Extract<CheckedEntry, { files: unknown }>, dir: string): Promise<string> {
  const skillMd = path.join(dir, 'SKILL.md');
  if (cached(dir, checked.files)) return skillMd;
  const tmp = `${dir}.${process.pid}.${Date.now()}.tmp`;
  fs.mkdirSync(tmp, { recursive: true });
  try {
    for (const f of checked.files) {
      const bytes = await conn.readSkillFile(checked.entry, f.rel);
      // The SDK checked the digest; the bytes written are checked once more, as the cache is later.
      if (sha256(bytes) !== f.digest.toLowerCase()) throw new AgentAppsError('E_MCP', `MCP server '${conn.server.name}', skill ${JSON.stringify(checked.name)}: ${f.rel} does not match its digest; nothing of the skill is used`);
      const file = path.join(tmp, f.rel);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, bytes, { flag: 'wx' });
    }
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    try {
      fs.renameSync(tmp, dir);
    } catch (err) {
      // Another process put the same skill there first: theirs is as good, if it is whole.
      if (!cached(dir, checked.files)) throw err;
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return skillMd;
}
