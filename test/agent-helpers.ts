// Helpers for the agent suites (seed 004, SPEC §11): Markdown agent skills written on the fly with
// their cassettes, over the fixture workspace test/fixtures/agent-ws (wordcount, echo, shout …).
// Everything runs for real: the agent skill, the Strands loop with the replay model, isolated-vm.
import fs from 'node:fs';
import path from 'node:path';
import type { TestContext } from 'node:test';
import YAML from 'yaml';
import { type Context, type Runtime, type RuntimeOptions, kernelOf } from '../src/index.ts';
import { systemPrompt } from '../src/agent/index.ts';
import { fixture, runtimeAt, tempDir } from './helpers.ts';

export const AGENT_WS = fixture('agent-ws');

export interface AgentSkillSpec {
  /** The prompt body (directives allowed). */
  body?: string;
  description?: string;
  params?: object;
  returns?: object;
  'allowed-tools'?: string;
  /** Extra `metadata.model` keys (provider replay and the cassette are filled in). */
  model?: Record<string, unknown>;
  /** Other metadata keys (role, …). */
  metadata?: Record<string, unknown>;
  /** The cassette: one entry per model response. */
  turns?: { text?: string; invoke?: string }[];
}

/** Writes `<name>.md` and `<name>.cassette.yaml` for each spec into `dir`. */
export function writeAgentSkills(dir: string, skills: Record<string, AgentSkillSpec>): void {
  for (const [name, spec] of Object.entries(skills)) {
    const metadata: Record<string, unknown> = { ...(spec.metadata ?? {}) };
    if (spec.params) metadata.params = spec.params;
    if (spec.returns) metadata.returns = spec.returns;
    if (spec['allowed-tools'] !== undefined) metadata['allowed-tools'] = spec['allowed-tools'];
    metadata.model = { provider: 'replay', cassette: `${name}.cassette.yaml`, ...(spec.model ?? {}) };
    const front = YAML.stringify({ name, description: spec.description ?? `test agent ${name}`, metadata });
    fs.writeFileSync(path.join(dir, `${name}.md`), `---\n${front}---\n${spec.body ?? `You are the test agent ${name}.`}\n`);
    fs.writeFileSync(path.join(dir, `${name}.cassette.yaml`), YAML.stringify({ turns: spec.turns ?? [] }, { lineWidth: 0 }));
  }
}

/**
 * A runtime over the fixture workspace with `skills` (and any other `files`) written to a temp
 * search path in front of it.
 */
export async function agentRuntime(t: TestContext, skills: Record<string, AgentSkillSpec> = {}, opts: RuntimeOptions & { files?: Record<string, string> } = {}): Promise<Runtime> {
  const dir = tempDir(t, 'agent-apps-agents-');
  writeAgentSkills(dir, skills);
  const { files, ...rest } = opts;
  for (const [rel, text] of Object.entries(files ?? {})) fs.writeFileSync(path.join(dir, rel), text);
  return runtimeAt(t, AGENT_WS, { ...rest, paths: [dir, ...(rest.paths ?? [])] });
}

/** Absolute path of a file in the fixture workspace's skills/. */
export function wsSkill(file: string): string {
  return path.join(AGENT_WS, 'skills', file);
}

export interface TraceEntry {
  type: string;
  timestamp: number;
  [key: string]: any;
}

/**
 * Invokes `ref` with a middleware wrapped around `agent-execute` that reads the served skill's
 * `locals.agent` after the agent ran (seed 004: "available to any middleware that runs after the
 * agent"), whether the run succeeded or failed.
 */
export async function invokeWithTrace(rt: Runtime, ref: string, args: unknown = {}): Promise<{ value?: unknown; error?: any; trace: TraceEntry[]; usage?: any; served?: Context }> {
  const seen: { trace: TraceEntry[]; usage?: any; served?: Context } = { trace: [] };
  const probe = {
    'trace-probe': {
      after: ['directives'],
      before: ['agent-execute'],
      fn: async (served: Context) => {
        seen.served = served;
        try {
          await served.manager.next();
        } finally {
          const agent = served.locals.agent as { trace?: TraceEntry[]; usage?: unknown } | undefined;
          seen.trace = agent?.trace ?? [];
          seen.usage = agent?.usage;
        }
      },
    },
  };
  try {
    const value = await rt.invoke(ref, args, { context: { middleware: probe } } as never);
    return { value, ...seen };
  } catch (error) {
    return { error, ...seen };
  }
}

/** Subscribes a queue to `topic` before the run; `drain()` returns what arrived. */
export async function eventQueue(rt: Runtime, topic: string) {
  const queue = `q-${Math.random().toString(36).slice(2, 8)}`;
  await rt.invoke('event-subscribe', { topic, queue });
  return {
    async drain(): Promise<{ type: string; data: any; source?: string; topic: string }[]> {
      return (await rt.invoke('event-wait', { topic, queue, timeout: 0 })) as never;
    },
  };
}

/** The system prompt and visible tools the agent builds for a skill, via the exported helpers. */
export async function promptFor(rt: Runtime, opts: { prompt?: string; allowedTools?: string; self?: string; returns?: object; middlewareMode?: boolean }) {
  const kernel = kernelOf(rt.root);
  const cfg = rt.root.locals.config;
  const { resolveVisibleTools } = await import('../src/index.ts');
  const visible = await resolveVisibleTools(kernel, cfg.paths, cfg.cwd, { allowedTools: opts.allowedTools, self: opts.self, provider: 'agent-strands' });
  const system = systemPrompt(opts.prompt ?? 'PROMPT', visible, { returns: opts.returns as never, middlewareMode: opts.middlewareMode, maxSteps: 30 });
  return { visible, system };
}

export function types(trace: TraceEntry[]): string[] {
  return trace.map((e) => e.type);
}
