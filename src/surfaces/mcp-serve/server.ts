// The MCP server half of docs/mcp.md ("Serving your skills"): the workspace's skills as MCP tools (and Markdown / SKILL.md
// skills as prompts too), served by the official SDK's low-level `Server` — the tool set comes
// from the search paths at request time, and arguments are checked by the skill pipeline itself
// (validate-args), so nothing here re-derives schemas or validation.
//
// One `SkillHost` (runtime + catalog) is shared by every `Server` instance the serving entries
// build: one per stdio connection, one per HTTP request (2026-07-28) or per session (2025-11-25).
// A skill that asks — ctx.manager.ask, an approval gate — asks the client when it can answer
// (elicitation.ts, docs/mcp.md "Questions and approvals").
import { McpServer, ProtocolError, ProtocolErrorCode, isInputRequiredResult, type CallToolResult, type GetPromptResult, type McpServerFactory, type ProgressToken, type Prompt, type ServerContext, type Tool } from '@modelcontextprotocol/server';
import type { Asker } from '../../core/ask.ts';
import type { Context, JsonObject, Nonlocals } from '../../core/types.ts';
import { withRunAsker } from '../../kernel/asking.ts';
import { withTraceParent } from '../../core/tracing.ts';
import type { Runtime } from '../../runtime.ts';
import { formatResult } from '../shared/output.ts';
import { VERSION } from '../../core/version.ts';
import { inputSchemaOf, outputSchemaOf, type ExposedSkill, type SkillCatalog } from './catalog.ts';
import { withProgress } from './progress.ts';
import type { SkillsExtension } from '@modelcontextprotocol/server/ext/skills';
import { invokeUntrusted } from '../../policy/untrusted.ts';
import { ParkedRuns, clientAsking } from './elicitation.ts';

export interface CallOptions {
  /** Aborted when the client cancels (or the connection goes): the invocation is aborted with it. */
  signal?: AbortSignal;
  /** Set when the client sent a progress token: receives one line per log or agent event. */
  progress?: (message: string) => void;
  /** Set when the client can answer questions: the run's asker (elicitation.ts). */
  asker?: Asker;
  /** The span the call runs under (docs/ci.md, "Tracing"). */
  traceparent?: string;
}

export class SkillHost {
  readonly runtime: Runtime;
  readonly catalog: SkillCatalog;
  /** Invocations under way, so that a shutdown can let their `finally` blocks run. */
  readonly #running = new Set<Promise<unknown>>();
  /** 2026-07-28 calls whose run waits for the client's answer to a question. */
  readonly parked: ParkedRuns;
  /** The Skills extension over the catalog's SKILL.md folders (skills.ts), set before serving. */
  skills?: SkillsExtension;

  constructor(runtime: Runtime, catalog: SkillCatalog) {
    this.runtime = runtime;
    this.catalog = catalog;
    this.parked = new ParkedRuns((running) => {
      this.#running.add(running);
      void running.finally(() => this.#running.delete(running)).catch(() => {});
    });
  }

  async listTools(): Promise<Tool[]> {
    return (await this.catalog.tools(true)).map((s) => {
      const tool: Tool = { name: s.name, inputSchema: inputSchemaOf(s) as Tool['inputSchema'] };
      if (s.description) tool.description = s.description;
      const output = outputSchemaOf(s);
      if (output) tool.outputSchema = output as Tool['outputSchema'];
      return tool;
    });
  }

  /**
   * `tools/call` → `runtime.invoke` through the full pipeline. Every skill error — an unknown or
   * unexposed name, invalid args (E_VALIDATION), a refusal, a throw — is a result with
   * `isError: true` and the text `CODE: message`, so that a model can read it and correct itself.
   */
  async callTool(name: string, args: unknown, opts: CallOptions = {}): Promise<CallToolResult> {
    const skill = await this.catalog.find(name);
    if (!skill?.tool) return errorResult('E_TOOL_NOT_FOUND', `no tool '${name}' is served here — tools/list shows the ones that are`);
    // An MCP client is an untrusted caller: the policy checks the request before anything runs (src/policy/).
    const nonlocals = withTraceParent(opts.asker ? withRunAsker({} as Nonlocals, opts.asker) : ({} as Nonlocals), opts.traceparent);
    const context = opts.asker || opts.traceparent ? { context: { nonlocals } } : {};
    const invoke = () => invokeUntrusted(this.runtime.root, this.catalog.surface, name, args ?? {}, { ...(opts.signal ? { signal: opts.signal } : {}), ...context });
    const running = opts.progress ? withProgress(opts.progress, invoke) : invoke();
    this.#running.add(running);
    try {
      return toolResult(await running);
    } catch (err) {
      const e = err as { code?: unknown; message?: unknown };
      return errorResult(typeof e?.code === 'string' ? e.code : 'E_SKILL', String(e?.message ?? err));
    } finally {
      this.#running.delete(running);
    }
  }

  /** `completion/complete` for a prompt argument: the values its schema enumerates, by prefix. */
  async completePrompt(name: string, argument: string, value: string): Promise<{ values: string[]; total: number; hasMore: boolean }> {
    const skill = await this.catalog.find(name);
    if (!skill?.prompt) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `no prompt '${name}' is served here — prompts/list shows the ones that are`);
    const schema = ((skill.params?.properties ?? {}) as Record<string, { enum?: unknown; type?: unknown }>)[argument];
    const known = Array.isArray(schema?.enum) ? schema.enum.map(String) : schema?.type === 'boolean' ? ['true', 'false'] : [];
    const hits = known.filter((v) => v.toLowerCase().startsWith(value.toLowerCase()));
    return { values: hits.slice(0, 100), total: hits.length, hasMore: hits.length > 100 };
  }

  /** Settles when every invocation under way has, or after `ms`. Parked runs are aborted: nobody can resume them now. */
  async drain(ms: number): Promise<void> {
    this.parked.close();
    if (!this.#running.size) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.#running]), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
  }

  async listPrompts(): Promise<Prompt[]> {
    return (await this.catalog.prompts(true)).map((s) => {
      const prompt: Prompt = { name: s.name };
      if (s.description) prompt.description = s.description;
      const args = promptArguments(s);
      if (args.length) prompt.arguments = args;
      return prompt;
    });
  }

  /**
   * `prompts/get`: the skill's prompt with its directives expanded for `args`, taken from the
   * pipeline right after `directives` — what the agent would be given, without running it. Args
   * arrive as strings (MCP prompt arguments) and are coerced by the skill's `params`.
   */
  async getPrompt(name: string, raw: Record<string, string> = {}, signal?: AbortSignal, asker?: Asker): Promise<GetPromptResult> {
    const skill = await this.catalog.find(name);
    if (!skill?.prompt) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `no prompt '${name}' is served here — prompts/list shows the ones that are`);
    const args = coerceArgs(raw, skill.params);
    let expanded: string | undefined;
    const middleware = {
      'mcp-prompt': {
        after: ['directives'],
        before: ['execute', 'agent-execute'],
        // Not calling next(): the chain stops here, the agent never runs.
        fn: (served: Context) => {
          expanded = served.locals.prompt?.expanded ?? served.locals.prompt?.raw ?? '';
          return expanded;
        },
      },
      // What this returns is the prompt, not the skill's result: its `returns` does not apply.
      'validate-returns': false,
    };
    try {
      // Checked as any request from a client is (prompt arguments are args: no $-keys, refs by name …).
      // A prompt is read, not run: a SKILL.md's `!`command`` spans stay as written (runCommands, skills/directives.skill.ts).
      const nonlocals = { runCommands: false } as Nonlocals;
      if (asker) withRunAsker(nonlocals, asker);
      await invokeUntrusted(this.runtime.root, this.catalog.surface, name, args, { ...(signal ? { signal } : {}), context: { middleware, nonlocals }, as: 'prompt' });
    } catch (err) {
      if (expanded === undefined) {
        const e = err as { code?: unknown; message?: unknown };
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${typeof e?.code === 'string' ? e.code : 'E_SKILL'}: ${String(e?.message ?? err)}`);
      }
    }
    const result: GetPromptResult = { messages: [{ role: 'user', content: { type: 'text', text: expanded ?? '' } }] };
    if (skill.description) result.description = skill.description;
    return result;
  }
}

/** The factory both serving entries call for a fresh `Server` instance. */
export function serverFactory(host: SkillHost): McpServerFactory {
  return () => createServer(host);
}

export function createServer(host: SkillHost): McpServer {
  // McpServer for its resources (the Skills extension's skill:// template, skills.ts); tools,
  // prompts and completion are our own handlers on its low-level Server, so they are declared
  // after it is made (declared in its options, McpServer would install handlers of its own).
  const mcp = new McpServer(
    { name: 'agent-apps', version: VERSION },
    {
      // `logging` installs the SDK's logging/setLevel handler (2025-11-25 era).
      capabilities: { resources: {}, logging: {} },
      instructions: `The skills of the agent-apps workspace ${host.runtime.root.locals.config.workspace}. Each tool runs one skill through its full pipeline; errors come back as results whose text starts with a code (E_VALIDATION: …).`,
      // A 2026-07-28 retry's requestState is checked by the SDK's seam before the handler runs.
      requestState: { verify: host.parked.verify },
    },
  );
  const server = mcp.server;
  server.registerCapabilities({ tools: {}, prompts: {}, completions: {} });
  host.skills?.attach(mcp);
  server.setRequestHandler('tools/list', async () => ({ tools: await host.listTools() }));
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const { name, arguments: args } = request.params;
    // Tracing (docs/ci.md, "Tracing"): a server span per call, under the client's when its _meta has a traceparent.
    const span = host.runtime.root.globals.internals.tracer?.span(`tools/call ${name}`, {
      ...(typeof ctx.mcpReq._meta?.traceparent === 'string' ? { parent: ctx.mcpReq._meta.traceparent } : {}),
      kind: 'server',
      attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name },
    });
    const traced = span ? { traceparent: span.traceparent } : {};
    const token = ctx.mcpReq._meta?.progressToken;
    const progress = token === undefined ? undefined : progressNotifier(ctx, token);
    const asking = clientAsking(server, ctx);
    const result =
      asking?.mode === 'rounds' || ctx.mcpReq.requestState() !== undefined
        ? await host.parked.serve(
            { method: 'tools/call', name, args: args ?? {} },
            ctx,
            asking?.mode === 'rounds' ? asking.client : '(unnamed)',
            progress?.send,
            (asker, signal, sink) => host.callTool(name, args ?? {}, { signal, progress: sink, asker, ...traced }),
            (message) => errorResult('E_ABORTED', message),
          )
        : await host.callTool(name, args ?? {}, { signal: ctx.mcpReq.signal, progress: progress?.send, ...(asking ? { asker: asking.asker } : {}), ...traced });
    span?.end(errorOfResult(result));
    await progress?.end();
    if (isInputRequiredResult(result)) return result;
    const skill = host.catalog.peek(name);
    return server.projectCallToolResult(result, skill ? outputSchemaOf(skill) : undefined);
  });
  server.setRequestHandler('prompts/list', async () => ({ prompts: await host.listPrompts() }));
  server.setRequestHandler('completion/complete', async (request) => {
    const { ref, argument } = request.params;
    if (ref.type !== 'ref/prompt') throw new ProtocolError(ProtocolErrorCode.InvalidParams, `no resource template '${ref.uri}' is served here (agent-apps serves no resources)`);
    return { completion: await host.completePrompt(ref.name, argument.name, argument.value) };
  });
  server.setRequestHandler('prompts/get', async (request, ctx) => {
    const { name, arguments: raw = {} } = request.params;
    const asking = clientAsking(server, ctx);
    if (asking?.mode === 'rounds' || ctx.mcpReq.requestState() !== undefined) {
      return host.parked.serve(
        { method: 'prompts/get', name, args: raw },
        ctx,
        asking?.mode === 'rounds' ? asking.client : '(unnamed)',
        undefined,
        (asker, signal) => host.getPrompt(name, raw, signal, asker),
        (message) => {
          throw new ProtocolError(ProtocolErrorCode.InvalidParams, `E_ABORTED: ${message}`);
        },
      );
    }
    return host.getPrompt(name, raw, ctx.mcpReq.signal, asking?.asker);
  });
  // Resources are McpServer's: the skill:// files of the Skills extension, nothing else listed
  // (an unknown URI is the SDK's not-found answer).
  return mcp;
}

/**
 * `notifications/progress` for one call: sent in order, `progress` counting up from 1; nothing
 * after `end()` (work the skill left running must not report on a finished request).
 */
function progressNotifier(ctx: ServerContext, token: ProgressToken): { send(message: string): void; end(): Promise<void> } {
  let count = 0;
  let ended = false;
  let sent: Promise<void> = Promise.resolve();
  return {
    send(message) {
      if (ended) return;
      const progress = ++count;
      sent = sent.then(() => ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress, message } })).catch(() => {});
    },
    async end() {
      ended = true;
      await sent;
      // The SDK's client dispatches a notification a microtask later than a response read in the
      // same chunk, and drops progress for a finished request (typescript-sdk#2580): a moment
      // between the last notification and the result keeps them in separate reads.
      if (count) await new Promise((resolve) => setTimeout(resolve, 10));
    },
  };
}

/** An object result is structured content plus its JSON as text; anything else is text. */
export function toolResult(value: unknown): CallToolResult {
  if (value === undefined) return { content: [] };
  const text = typeof value === 'string' ? value : (formatResult(value, true) ?? 'null');
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    // The JSON copy, not the value: what a skill returns may hold a BigInt, a Map or a cycle.
    return { content: [{ type: 'text', text }], structuredContent: JSON.parse(text) as Record<string, unknown> };
  }
  return { content: [{ type: 'text', text }] };
}

function errorResult(code: string, message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `${code}: ${message}` }] };
}

function promptArguments(skill: ExposedSkill): NonNullable<Prompt['arguments']> {
  const params = skill.params as { properties?: Record<string, { description?: unknown }>; required?: unknown } | undefined;
  if (!params?.properties || typeof params.properties !== 'object') return [];
  const required = new Set(Array.isArray(params.required) ? params.required : []);
  return Object.entries(params.properties).map(([name, schema]) => {
    const arg: NonNullable<Prompt['arguments']>[number] = { name };
    if (typeof schema?.description === 'string') arg.description = schema.description;
    if (required.has(name)) arg.required = true;
    return arg;
  });
}

/** MCP prompt arguments are strings: numbers, booleans and JSON values by the param's declared type. */
export function coerceArgs(raw: Record<string, string>, params: JsonObject | undefined): JsonObject {
  const properties = (params?.properties ?? {}) as Record<string, { type?: unknown }>;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(raw)) {
    const type = properties[key]?.type;
    const types = Array.isArray(type) ? type : [type];
    if (typeof value !== 'string' || types.includes('string') || type === undefined) out[key] = value;
    else if ((types.includes('number') || types.includes('integer')) && value.trim() !== '' && Number.isFinite(Number(value))) out[key] = Number(value);
    else if (types.includes('boolean') && (value === 'true' || value === 'false')) out[key] = value === 'true';
    else {
      try {
        out[key] = JSON.parse(value);
      } catch {
        out[key] = value; // validate-args says what is wrong with it
      }
    }
  }
  return out;
}

/** A call's result as a span's error (`CODE: message`, errorResult's text), or undefined when it succeeded. */
function errorOfResult(result: unknown): { code: string; message: string } | undefined {
  const r = result as { isError?: unknown; content?: { type?: string; text?: unknown }[] } | null;
  if (r?.isError !== true) return undefined;
  const text = typeof r.content?.[0]?.text === 'string' ? r.content[0].text : '';
  const m = /^(E_[A-Z0-9_]+): ?/.exec(text);
  return { code: m ? m[1]! : 'E_MCP_TOOL', message: m ? text.slice(m[0].length) : text };
}
