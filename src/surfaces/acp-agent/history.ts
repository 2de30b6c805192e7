// An `agent-apps acp` session's history (docs/agents.md, "Loading and resuming a session"): every session
// is recorded as a run file, <workspace>/.agent-apps/runs/<session id>.jsonl (the file
// `agent-apps runs` lists and `runs show` prints), with
//   run-start  (tag cli, trigger acp, the session's skill and cwd) when it opens — again when it is
//              loaded or resumed; run-end when it closes;
//   acp-prompt (tag acp) with the prompt's text, when a prompt starts;
//   acp-turn   (tag acp) with the session/updates the prompt sent (text chunks joined) and how it
//              ended, when it answers.
// session/load reads them back and replays them as session/update notifications: each prompt as a
// user_message_chunk, then what agent-apps sent for it.
import fs from 'node:fs';
import path from 'node:path';
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import type { LogEvent } from '../../core/types.ts';
import { RUNS_DIR } from '../shared/reporters.ts';
import { readRun } from '../shared/runs.ts';

/** The ids `agent-apps acp` gives its sessions (randomUUID): nothing else is looked up on disk. */
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const PROMPT_EVENT = 'acp-prompt';
export const TURN_EVENT = 'acp-turn';

export interface SessionHistory {
  /** The run file. */
  file: string;
  skill: string | undefined;
  cwd: string | undefined;
  /** The pid of a process that has the session open now (its `.live` marker), if that process is alive. */
  openIn: number | undefined;
  /** What session/load replays, in order. */
  updates: SessionUpdate[];
}

/** The session's record in `workspace`, or undefined when there is none (an unknown id, or not an ACP session's file). */
export function readHistory(workspace: string, sessionId: string): SessionHistory | undefined {
  if (!SESSION_ID.test(sessionId)) return undefined;
  const dir = path.join(workspace, RUNS_DIR);
  if (!fs.existsSync(path.join(dir, `${sessionId}.jsonl`))) return undefined;
  const run = readRun(dir, sessionId);
  const start = run.events.find((e) => e.type === 'run-start' && e.tag === 'cli');
  if (start?.trigger !== 'acp') return undefined;
  const updates: SessionUpdate[] = [];
  for (const e of run.events) {
    if (e.tag !== 'acp') continue;
    if (e.type === PROMPT_EVENT && typeof e.prompt === 'string') updates.push({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: e.prompt } });
    else if (e.type === TURN_EVENT && Array.isArray(e.updates)) updates.push(...(e.updates as SessionUpdate[]).filter(isUpdate));
  }
  return {
    file: run.file,
    skill: typeof start.skill === 'string' ? start.skill : undefined,
    cwd: typeof start.cwd === 'string' ? start.cwd : undefined,
    openIn: livePid(dir, sessionId),
    updates,
  };
}

/** A prompt's updates as they are recorded: runs of text chunks of one kind joined into one chunk. */
export function joinChunks(updates: SessionUpdate[]): SessionUpdate[] {
  const out: SessionUpdate[] = [];
  for (const u of updates) {
    const last = out.at(-1);
    if (last && isTextChunk(u) && isTextChunk(last) && last.sessionUpdate === u.sessionUpdate) {
      out[out.length - 1] = { ...last, content: { type: 'text', text: last.content.text + u.content.text } } as SessionUpdate;
    } else out.push(u);
  }
  return out;
}

type TextChunk = Extract<SessionUpdate, { sessionUpdate: 'agent_message_chunk' | 'agent_thought_chunk' | 'user_message_chunk' }> & { content: { type: 'text'; text: string } };

function isTextChunk(u: SessionUpdate): u is TextChunk {
  return (u.sessionUpdate === 'agent_message_chunk' || u.sessionUpdate === 'agent_thought_chunk' || u.sessionUpdate === 'user_message_chunk') && u.content.type === 'text';
}

function isUpdate(u: unknown): u is SessionUpdate {
  return u !== null && typeof u === 'object' && typeof (u as { sessionUpdate?: unknown }).sessionUpdate === 'string';
}

/** The pid in the session's `.live` marker (reporters.ts writes it while a process records the file), when that process is alive. */
function livePid(dir: string, id: string): number | undefined {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(path.join(dir, `${id}.live`), 'utf8'));
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? pid : undefined;
  }
}

/** The fields of a session's run-start (tag cli, as `agent-apps runs` reads them). */
export function runStart(sessionId: string, skill: string, cwd: string, how: 'new' | 'load' | 'resume'): Omit<LogEvent, 'timestamp' | 'contextId' | 'tool'> & { record: true } {
  return { type: 'run-start', tag: 'cli', level: 'info', text: `acp session ${sessionId}: ${skill}${how === 'new' ? '' : ` (${how === 'load' ? 'loaded' : 'resumed'})`}`, skill, args: {}, pid: process.pid, trigger: 'acp', session: sessionId, cwd, ...(how !== 'new' ? { opened: how } : {}), record: true };
}
