// Workspace trust (docs/security.md, "What a cloned workspace can do"): a workspace's own
// configuration that starts a process or runs a command — a stdio MCP server from `.mcp.json` or an
// `mcp:` key, a `SKILL.md` `!` span, `shell` in a hook — runs only once the person trusted that
// folder, as an editor's folder trust does. A trust covers the exact process-starting
// configuration seen (a hash of it): an edited `.mcp.json` or a new server asks again.
//
// - Who decides: `agent-apps trust`, an answer at the terminal (asked once per runtime, listing
//   every command), `--trust-workspace`, `AGENT_APPS_TRUST_WORKSPACE=1`, or `CI=true` (CI runs the
//   repository's own code). Without any of them and no terminal: E_UNTRUSTED_WORKSPACE (exit 2).
// - What needs it: configuration read from files inside the workspace. The library, `~/.agent-apps`,
//   `~/.agents` and the search roots the person added (`--path`, `AGENT_APPS_PATH`, `--set paths`)
//   are the person's own and need none.
// - Where it is kept: `~/.agent-apps/trust.json` (AGENT_APPS_HOME), one record per real path.
// Nothing here is read on a run that starts no process: a plain `run` pays nothing for it.
import { hashHex } from '../core/ids.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AgentAppsError } from '../core/errors.ts';
import type { Answer, PlainQuestion } from '../core/ask.ts';

/** One thing a workspace's configuration would start. */
export interface ProcessConfig {
  kind: 'mcp' | 'span' | 'hook';
  /** The server's name, the skill's name. */
  name: string;
  /** The command line as it would run. */
  command: string;
  /** Where it is configured. */
  file?: string;
}

export interface TrustRecord {
  /** sha256 of the process-starting configuration that was trusted. */
  hash: string;
  trustedAt: string;
  /** The commands it covered, as the person saw them. */
  commands: string[];
  /**
   * Skills of MCP servers the workspace configures, trusted one by one (`SERVER/NAME` → the
   * digest of every file of it): a changed digest is a new skill that asks again. Kept apart from
   * `hash`, which only the process-starting configuration makes.
   */
  skills?: Record<string, { digest: string; trustedAt: string }>;
}

/** A skill of an MCP server about to run (docs/mcp.md, "Skills from MCP servers"). */
export interface SkillSubject {
  server: string;
  name: string;
  /** sha256 over every file of the skill: what the trust covers. */
  digest: string;
  /** Where its server is configured. */
  file?: string;
  /** The `!`command`` spans of its SKILL.md, shown in the question. */
  spans: string[];
}

export const skillKey = (s: { server: string; name: string }) => `${s.server}/${s.name}`;

interface TrustFile {
  version: 1;
  folders: Record<string, TrustRecord>;
}

export const TRUST_ENV = 'AGENT_APPS_TRUST_WORKSPACE';

/** `~/.agent-apps/trust.json` (AGENT_APPS_HOME when set). */
export function trustFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.AGENT_APPS_HOME ?? path.join(os.homedir(), '.agent-apps'), 'trust.json');
}

function realDir(dir: string): string {
  try {
    return fs.realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
}

const inside = (file: string, dir: string) => file === dir || file.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);

export function readTrust(env: NodeJS.ProcessEnv = process.env): TrustFile {
  const file = trustFile(env);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return { version: 1, folders: {} };
  }
  try {
    const parsed = JSON.parse(text) as Partial<TrustFile>;
    if (parsed && typeof parsed === 'object' && parsed.folders && typeof parsed.folders === 'object') return { version: 1, folders: parsed.folders };
  } catch {}
  // A damaged file trusts nothing; it is rewritten on the next trust.
  return { version: 1, folders: {} };
}

function writeTrust(data: TrustFile, env: NodeJS.ProcessEnv): void {
  const file = trustFile(env);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  // Written whole and renamed in, so that two processes never leave half a file.
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(data, null, 2) + '\n', { mode: 0o600 });
  fs.renameSync(tmp, file);
}

/** The hash a trust covers: every command, in a stable order. */
export function hashConfigs(configs: readonly ProcessConfig[]): string {
  const lines = configs.map((c) => `${c.kind}\0${c.name}\0${c.command}\0${c.file ?? ''}`).sort();
  return hashHex(lines.join('\n'));
}

export function describeConfig(c: ProcessConfig, workspace?: string): string {
  const where = c.file ? ` (${workspace ? path.relative(workspace, c.file) || c.file : c.file})` : '';
  const what = c.kind === 'mcp' ? `MCP server '${c.name}'` : c.kind === 'span' ? `a !\`…\` span of skill '${c.name}'` : `a shell hook of '${c.name}'`;
  return `${what}: ${c.command}${where}`;
}

/** Records `workspace` as trusted for exactly `configs` (`agent-apps trust`, an answer, `init`). */
export function trustFolder(workspace: string, configs: readonly ProcessConfig[], env: NodeJS.ProcessEnv = process.env): TrustRecord {
  const data = readTrust(env);
  const key = realDir(workspace);
  const skills = data.folders[key]?.skills;
  const record: TrustRecord = { hash: hashConfigs(configs), trustedAt: new Date().toISOString(), commands: configs.map((c) => describeConfig(c, workspace)), ...(skills ? { skills } : {}) };
  data.folders[key] = record;
  writeTrust(data, env);
  return record;
}

/** Records one MCP server's skill, at this digest, as trusted in `workspace` (the folder's process trust is left as it was). */
export function trustSkill(workspace: string, subject: Pick<SkillSubject, 'server' | 'name' | 'digest'>, env: NodeJS.ProcessEnv = process.env): void {
  const data = readTrust(env);
  const key = realDir(workspace);
  const record = (data.folders[key] ??= { hash: '', trustedAt: new Date().toISOString(), commands: [] });
  record.skills = { ...record.skills, [skillKey(subject)]: { digest: subject.digest, trustedAt: new Date().toISOString() } };
  writeTrust(data, env);
}

/** Forgets `workspace`'s trust; false when it had none. */
export function revokeFolder(workspace: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const data = readTrust(env);
  const key = realDir(workspace);
  if (!(key in data.folders)) return false;
  delete data.folders[key];
  writeTrust(data, env);
  return true;
}

export interface WorkspaceTrustOptions {
  workspace: string;
  /** Search roots that are the person's own though they may lie inside the workspace. */
  ownRoots: readonly string[];
  /** `--trust-workspace` / `createRuntime({ trustWorkspace: true })`. */
  trusted?: boolean;
  env?: NodeJS.ProcessEnv;
  /** Everything the workspace's configuration would start (the MCP servers, the `!` spans). */
  gather(): Promise<ProcessConfig[]>;
  /** A person to ask, when there is one (a terminal, an ACP client). */
  ask?(question: PlainQuestion): Promise<Answer> | undefined;
}

/** One runtime's view of its workspace's trust. */
export class WorkspaceTrust {
  readonly workspace: string;
  readonly #o: WorkspaceTrustOptions;
  readonly #own: string[];
  readonly #env: NodeJS.ProcessEnv;
  /** The hash this runtime found trusted (or the person trusted), so unchanged config is not re-read each time. */
  #trustedHash: string | undefined;
  #asking: Promise<void> | undefined;

  constructor(o: WorkspaceTrustOptions) {
    this.#o = o;
    this.#env = o.env ?? process.env;
    this.workspace = realDir(o.workspace);
    const env = this.#env;
    const homes = [env.AGENT_APPS_HOME ?? path.join(os.homedir(), '.agent-apps'), env.AGENT_APPS_AGENTS_HOME ?? path.join(os.homedir(), '.agents')];
    this.#own = [...homes, ...o.ownRoots].map(realDir);
  }

  /** Why the workspace counts as trusted without a record, if it does. */
  get trustedBy(): string | undefined {
    if (this.#o.trusted) return '--trust-workspace';
    const flag = this.#env[TRUST_ENV];
    if (flag && flag !== '0' && flag !== 'false') return TRUST_ENV;
    if (this.#env.CI === 'true' || this.#env.CI === '1') return 'CI';
    return undefined;
  }

  /** True when configuration from `file` needs the workspace's trust (it is the workspace's own, not the person's). */
  needsTrust(file: string | undefined): boolean {
    if (file === undefined) return false;
    const real = realDir(file);
    return inside(real, this.workspace) && !this.#own.some((root) => inside(real, root));
  }

  /** Is the workspace trusted for what it configures now? Never asks. */
  async isTrusted(): Promise<boolean> {
    if (this.trustedBy) return true;
    const configs = await this.#o.gather();
    const hash = hashConfigs(configs);
    if (hash === this.#trustedHash) return true;
    const record = readTrust(this.#env).folders[this.workspace];
    if (record?.hash === hash) {
      this.#trustedHash = hash;
      return true;
    }
    return false;
  }

  /**
   * Called before `subject` starts: returns when it may (trusted, or the person said so now),
   * throws E_UNTRUSTED_WORKSPACE otherwise — naming the command and the ways to trust.
   */
  async require(subject: ProcessConfig): Promise<void> {
    if (!this.needsTrust(subject.file) || this.trustedBy) return;
    if (await this.isTrusted()) return;
    const configs = await this.#o.gather();
    if (!configs.some((c) => c.kind === subject.kind && c.name === subject.name && c.command === subject.command)) configs.push(subject);
    const question: PlainQuestion = {
      kind: 'question',
      text: `Trust the workspace ${this.workspace}? Its configuration would start:\n${configs.map((c) => `  • ${describeConfig(c, this.workspace)}`).join('\n')}\nTrust covers exactly these; a change asks again.`,
      // Enter picks the first choice: it must not be the one that starts a stranger's command.
      choices: [
        { value: 'no', key: 'n', label: 'do not trust it' },
        { value: 'trust', key: 'y', label: 'trust this workspace' },
      ],
    };
    const asked = this.#asking ?? this.#o.ask?.(question);
    if (asked) {
      const pending = (this.#asking ??= Promise.resolve(asked).then((answer) => {
        if ((answer as Answer).value !== 'trust') throw this.#refusal(subject, 'the person declined to trust it');
        const record = trustFolder(this.workspace, configs, this.#env);
        this.#trustedHash = record.hash;
      }));
      try {
        return await pending;
      } finally {
        // A decline is final for this runtime; a trust is remembered by its hash.
        if (this.#trustedHash) this.#asking = undefined;
      }
    }
    throw this.#refusal(subject);
  }

  /**
   * Called before a skill of an MCP server runs (docs/mcp.md, "Skills from MCP servers"): one the
   * workspace's own configuration brings needs a trust of its exact digest — asked at a terminal
   * (listing its `!` spans), else E_UNTRUSTED_WORKSPACE. A server the person configured needs none.
   */
  async requireSkill(subject: SkillSubject): Promise<void> {
    if (!this.needsTrust(subject.file) || this.trustedBy) return;
    const key = skillKey(subject);
    if (this.#trustedSkills.get(key) === subject.digest) return;
    const was = readTrust(this.#env).folders[this.workspace]?.skills?.[key];
    if (was?.digest === subject.digest) {
      this.#trustedSkills.set(key, subject.digest);
      return;
    }
    const what = `the skill '${subject.name}' of MCP server '${subject.server}' (${subject.digest.slice(0, 19)}…)`;
    const changed = was ? `it changed since it was trusted (it was ${was.digest.slice(0, 19)}…)` : 'it is not trusted';
    const pendingKey = `${key}\0${subject.digest}`;
    let pending = this.#skillAsks.get(pendingKey);
    if (!pending) {
      const spans = subject.spans.length ? `\nIts SKILL.md would run:\n${subject.spans.map((c) => `  • ${c}`).join('\n')}` : '';
      const question: PlainQuestion = {
        kind: 'question',
        text: `Trust ${what}, which the workspace ${this.workspace} configures? ${was ? 'It changed since you trusted it. ' : ''}It would run as a skill of this workspace, with its tools.${spans}\nTrust covers exactly this version; a change asks again.`,
        choices: [
          { value: 'no', key: 'n', label: 'do not trust it' },
          { value: 'trust', key: 'y', label: 'trust this skill' },
        ],
      };
      const asked = this.#o.ask?.(question);
      if (!asked) throw this.#skillRefusal(what, changed);
      pending = Promise.resolve(asked).then((answer) => {
        if ((answer as Answer).value !== 'trust') throw this.#skillRefusal(what, 'the person declined to trust it');
        trustSkill(this.workspace, subject, this.#env);
        this.#trustedSkills.set(key, subject.digest);
      });
      this.#skillAsks.set(pendingKey, pending);
    }
    return pending;
  }

  #trustedSkills = new Map<string, string>();
  #skillAsks = new Map<string, Promise<void>>();

  #skillRefusal(what: string, why: string): AgentAppsError {
    return new AgentAppsError(
      'E_UNTRUSTED_WORKSPACE',
      `${what} — not run: the workspace ${this.workspace} configures its server, and ${why}. Trust it with 'agent-apps trust ${this.workspace}' (which trusts the skills its servers offer now), by answering at a terminal, or pass --trust-workspace, or set ${TRUST_ENV}=1`,
    );
  }

  #refusal(subject: ProcessConfig, why = 'it is not trusted'): AgentAppsError {
    return new AgentAppsError(
      'E_UNTRUSTED_WORKSPACE',
      `${describeConfig(subject, this.workspace)} — not started: the workspace ${this.workspace} configures it, and ${why}. Trust it with 'agent-apps trust ${this.workspace}', or pass --trust-workspace, or set ${TRUST_ENV}=1`,
    );
  }
}

declare module '../core/types.ts' {
  interface RuntimeState {
    /** The workspace's trust (docs/security.md), made by createRuntime. */
    workspaceTrust?: WorkspaceTrust;
  }
}
