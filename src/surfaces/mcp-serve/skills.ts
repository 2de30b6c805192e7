// The MCP Skills extension (`io.modelcontextprotocol/skills`, docs/mcp.md "Skills over MCP"):
// `mcp serve` publishes the workspace's SKILL.md folders — those the client may reach under the
// untrusted-caller policy, as tools/list offers them (catalog.ts) — with `skills/list`,
// `skills/get` and their files as `skill://NAME/PATH` resources read by `resources/read`. The
// protocol side (methods, capability, entry checks, resource template) is the official SDK's
// `SkillsExtension`; this file is its source: which folders, which files, and reading them.
//
// A skill's files are every regular file under its folder, dot-files included, read without
// following a link: a link, a FIFO or anything else that is not a plain file or folder keeps the
// whole skill out (one warning), as the SDK's own folder adapter does — the entry must list every
// file, and a link could name one outside the folder. Over the extension's limits (512 files,
// 16 MiB) the skill is left out too. Entries are rebuilt when a file's size or mtime changed.
import fs from 'node:fs';
import path from 'node:path';
import type { ServerContext } from '@modelcontextprotocol/server';
import type { Skill, SkillsExtension as SkillsExtensionType } from '@modelcontextprotocol/server/ext/skills';
import type { SkillCatalog } from './catalog.ts';

const MAX_FILES = 512;
const MAX_BYTES = 16 * 1024 * 1024;

interface Folder {
  name: string;
  dir: string;
}

interface Built {
  /** The folder's files' sizes and mtimes: a change rebuilds the entry. */
  stamp: string;
  entry: Skill;
  files: Map<string, string>;
}

/** Every file of a folder as `relative path → absolute path`, or why the skill cannot be served. */
function walk(dir: string): { files: Map<string, string>; stamp: string } | { problem: string } {
  const files = new Map<string, string>();
  const stamp: string[] = [];
  let bytes = 0;
  const visit = (rel: string): string | undefined => {
    for (const d of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${d.name}` : d.name;
      if (d.isDirectory()) {
        const why = visit(child);
        if (why) return why;
      } else if (d.isFile()) {
        const st = fs.statSync(path.join(dir, child));
        bytes += st.size;
        files.set(child, path.join(dir, child));
        stamp.push(`${child}:${st.size}:${st.mtimeMs}`);
        if (files.size > MAX_FILES) return `more than ${MAX_FILES} files`;
        if (bytes > MAX_BYTES) return `more than ${MAX_BYTES} bytes`;
      } else return `${child} is ${d.isSymbolicLink() ? 'a link' : 'not a plain file'}: a served skill's files are its own regular files`;
    }
    return undefined;
  };
  const problem = visit('');
  if (problem) return { problem };
  if (!files.has('SKILL.md')) return { problem: 'no SKILL.md at its root' };
  return { files, stamp: stamp.sort().join('\n') };
}

export async function skillsExtension(catalog: SkillCatalog, warn: (text: string) => void): Promise<SkillsExtensionType> {
  const { SkillsExtension, skillEntry } = await import('@modelcontextprotocol/server/ext/skills');
  const built = new Map<string, Built>();
  const warned = new Set<string>();

  async function folders(): Promise<Folder[]> {
    return (await catalog.skills(true)).filter((s) => s.kind === 'skill-folder' && s.dir).map((s) => ({ name: s.name, dir: s.dir! }));
  }

  async function build(f: Folder): Promise<Built | undefined> {
    let walked: ReturnType<typeof walk>;
    try {
      walked = walk(f.dir);
    } catch (err) {
      walked = { problem: (err as Error).message };
    }
    if ('problem' in walked) {
      const line = `skill ${f.name} (${f.dir}) is not published over the Skills extension: ${walked.problem}`;
      if (!warned.has(line)) warn(line);
      warned.add(line);
      built.delete(f.name);
      return undefined;
    }
    const known = built.get(f.name);
    if (known && known.stamp === walked.stamp) return known;
    const content: Record<string, Uint8Array> = {};
    for (const [rel, abs] of walked.files) content[rel] = fs.readFileSync(abs);
    try {
      const entry = await skillEntry(f.name, content);
      const b = { stamp: walked.stamp, entry, files: walked.files };
      built.set(f.name, b);
      return b;
    } catch (err) {
      const line = `skill ${f.name} (${f.dir}) is not published over the Skills extension: ${(err as Error).message}`;
      if (!warned.has(line)) warn(line);
      warned.add(line);
      return undefined;
    }
  }

  /** `skill://NAME/PATH` → the skill's folder and the file's path in it. */
  function parse(uri: string): { name: string; rel: string } | undefined {
    const m = /^skill:\/\/([^/]+)\/(.+)$/.exec(uri);
    if (!m) return undefined;
    let rel: string;
    try {
      rel = decodeURIComponent(m[2]!);
    } catch {
      return undefined;
    }
    if (rel.split('/').some((seg) => seg === '..' || seg === '.' || seg === '')) return undefined;
    return { name: m[1]!, rel };
  }

  async function find(name: string): Promise<Built | undefined> {
    const f = (await folders()).find((x) => x.name === name);
    return f ? build(f) : undefined;
  }

  return new SkillsExtension({
    onWarning: (w) => warn(`${w.path}: ${w.message}`),
    source: {
      async list(_params: { cursor?: string }, _ctx: ServerContext) {
        const skills: Skill[] = [];
        for (const f of await folders()) {
          const b = await build(f);
          if (b) skills.push(b.entry);
        }
        return { skills };
      },
      async get(uri: string) {
        const p = parse(uri);
        if (!p || p.rel !== 'SKILL.md') return undefined;
        return (await find(p.name))?.entry;
      },
      async read(uri: string) {
        const p = parse(uri);
        if (!p) return undefined;
        const b = await find(p.name);
        const abs = b?.files.get(p.rel);
        if (!abs) return undefined;
        // Read as the entry was built: a file replaced by a link since is refused, not followed.
        const fd = fs.openSync(abs, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
        try {
          const bytes = fs.readFileSync(fd);
          // Text when the bytes are UTF-8 that round-trips (the digest covers the bytes), else a blob.
          const text = bytes.toString('utf8');
          if (!Buffer.from(text, 'utf8').equals(bytes)) return { bytes: new Uint8Array(bytes) };
          return { text, ...(p.rel.endsWith('.md') ? { mimeType: 'text/markdown' } : {}) };
        } finally {
          fs.closeSync(fd);
        }
      },
    },
  });
}
