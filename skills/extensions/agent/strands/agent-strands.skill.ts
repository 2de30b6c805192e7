// agent-strands: the default agent provider (docs/agents.md). It owns the
// LLM loop only: build the model from `config`, run the Strands agent loop with one `invoke`
// tool, execute code through `invokeRef`, report lifecycle events to `hookRef` and follow its
// directives. Tool filtering, returns enforcement and the sandbox live in the `agent` skill.
// The SDK is imported when the skill runs, not when it is listed.

import type { BaseModelConfig, Model } from '@strands-agents/sdk';
import type { AgentArgs, Context } from 'agent-apps';
import type { ModelConfig } from './models.ts';

export const frontmatter = {
  name: 'agent-strands',
  description: 'Agent provider: runs the Strands agent loop with the model chosen by model.provider (bedrock, openai, anthropic or replay), retrying transient model errors and falling back along model.fallback.',
  metadata: {
    visibility: 'hidden',
    role: 'skill',
    tags: ['meta-internal'],
    params: {
      type: 'object',
      properties: {
        prompt: { type: 'string', description: 'System prompt for the model.' },
        config: {
          type: 'object',
          description: 'The cascade\'s model configuration: provider, modelId, baseURL, region, temperature, maxTokens, maxTurns, cassette, record, replay, retries, retryDelayMs, fallback, baseDir …',
        },
        invokeRef: { type: 'string', description: 'Callback ref that executes the invoke tool\'s code: invoked with { code }.' },
        hookRef: { type: 'string', description: 'Callback ref for lifecycle events; its answer is a directive.' },
        userMessage: { type: 'string', description: 'The first user message.' },
        skillName: { type: 'string', description: 'The skill whose pipeline started this agent.' },
        agentSignal: { description: 'AbortSignal that stops the loop (in-process callers only).' },
        journal: { type: 'object', description: "The run keeps a journal (docs/runs.md): { turns } — model responses to play back before the model is asked; every response is reported as a 'response' hook event." },
      },
      required: ['prompt', 'invokeRef'],
    },
    returns: {},
  },
};

/** The contract's `AgentArgs` (src/agent/provider.ts), of which only `prompt` and `invokeRef` are required here. */
type StrandsArgs = Pick<AgentArgs, 'prompt' | 'invokeRef'> &
  Partial<Omit<AgentArgs, 'config'>> & { config?: ModelConfig & { baseDir?: string; maxTurns?: number; deltas?: boolean } };

export default async function agentStrands(ctx: Context, args: StrandsArgs): Promise<unknown> {
  const [{ createModel }, { runAgentLoop }, { withStrandsLog }, journaled] = await Promise.all([
    import('./models.ts'),
    import('./loop.ts'),
    import('./logging.ts'),
    args.journal ? import('./journal-model.ts') : undefined,
  ]);
  const config = args.config ?? {};
  const { hookRef, invokeRef } = args;
  // The SDK's notice that it picked its default modelId is not a warning here: when that model
  // cannot be reached, the error says which model config to set (and a console run would print the
  // notice before the one line that matters).
  const onLog = (level: 'debug' | 'info' | 'warn' | 'error', text: string) =>
    ctx.manager.log({ type: 'strands', tag: 'agent', level: level === 'warn' && DEFAULT_MODEL_NOTICE.test(text) ? 'debug' : level, text });
  // The SDK logs from model constructors too (e.g. a defaulted modelId): never to the console.
  // The run's journal (docs/runs.md): each response reported whole before its tools run; a resumed run's journaled responses played first.
  const journal = args.journal;
  const wrap = journaled && journal ? { wrap: (m: Model<BaseModelConfig>) => new journaled.JournalModel(m, Array.isArray(journal.turns) ? journal.turns : [], (r) => (hookRef ? ctx.manager.invoke(hookRef, { type: 'response', ...r }) : Promise.resolve())) } : {};
  const model = await withStrandsLog(onLog, () => createModel(config, { ...(typeof config.baseDir === 'string' ? { baseDir: config.baseDir } : {}), ...wrap }));
  const signal = isAbortSignal(args.agentSignal) ? args.agentSignal : ctx.run.signal;
  const maxTurns = typeof config.maxTurns === 'number' ? config.maxTurns : undefined;
  // A live view in a terminal (the CLI's, docs/terminal.md) shows the text as it streams, unless model.deltas says otherwise.
  // (A provider may be called with a bare context in tests: no globals, no view.)
  const viewWantsDeltas = ctx.globals?.internals.progress?.deltas === true;
  const out = await runAgentLoop({
    model,
    systemPrompt: args.prompt,
    userMessage: args.userMessage ?? 'Execute the task.',
    ...(maxTurns !== undefined ? { maxTurns } : {}),
    signal,
    deltas: config.deltas === true || (config.deltas === undefined && viewWantsDeltas),
    ...(config.contextEdit ? { contextEdit: config.contextEdit as boolean | { windowSize?: number } } : {}),
    onCode: (code) => ctx.manager.invoke(invokeRef, { code }),
    // Each retry and fallback is a log event too (docs/ci.md); the hook's `retry` event is the trace's.
    onRetry: (r) =>
      ctx.manager.log({
        type: 'retry',
        tag: 'agent',
        level: 'warn',
        text:
          r.fallback !== undefined
            ? `${r.reason} — falling back to model.fallback[${r.fallback - 1}]${r.modelId ? ` (${r.modelId})` : ''}`
            : `${r.reason} — retry ${r.retry} of ${r.retries} in ${r.delayMs} ms${r.retryAfterMs !== undefined ? " (the server's Retry-After)" : ''}`,
        ...r,
      }),
    ...(hookRef ? { onHook: (event) => ctx.manager.invoke(hookRef, event) } : {}),
    onLog,
  });
  return out.stopped ? out.stopped.result : out.text;
}

const DEFAULT_MODEL_NOTICE = /using default modelId/;

function isAbortSignal(v: unknown): v is AbortSignal {
  return typeof v === 'object' && v !== null && typeof (v as AbortSignal).aborted === 'boolean' && typeof (v as AbortSignal).addEventListener === 'function';
}
