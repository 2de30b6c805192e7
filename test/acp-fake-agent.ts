// A fake ACP agent for the agent-acp provider's tests (docs/agents.md, "ACP agents"), written with the
// SDK's agent side (@agentclientprotocol/sdk) and run as a real process over stdio. It does what
// its script says, one list of steps per session/prompt: stream text, call the `invoke` tool of
// the MCP server it was given in session/new (with the official MCP client: over HTTP with the
// bearer token it was given, or — an agent that declares no HTTP MCP support — by starting the
// stdio server it was given), use a tool of its own after asking permission, ask its client a
// question (elicitation), send a plan, wait for session/cancel, die. Everything it sees goes to a
// JSON-lines log the tests read.
//
//   FAKE_ACP_SCRIPT=script.json FAKE_ACP_LOG=log.jsonl node test/acp-fake-agent.ts
import fs from 'node:fs';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import net from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

export type Step =
  | { text: string }
  /** Text with `{result}` replaced by the text of the last invoke result. */
  | { say: string }
  /** An `elicitation/create` form to the client (session-scoped); the response is logged. */
  | { elicit: { message: string; requestedSchema: Record<string, unknown> } }
  | { thought: string }
  /** Call our invoke: `title`/`name` as the tool call is named (default mcp__agent-apps__invoke); `ask`: request permission first (default true). */
  | { invoke: string; title?: string; name?: string; kind?: string; ask?: boolean }
  /** A tool of the agent's own: on permission, writes `write` (a file in the session's cwd) with `content`. */
  | { tool: { title: string; kind?: string; name?: string; write?: string; content?: string } }
  | { plan: string[] }
  | { waitForCancel: true }
  /**
   * Raw MCP probes an attacker would try: `no-token` (an HTTP request without the bearer token),
   * `wrong-token` (the stdio relay's channel with another token), `other-tool` (tools/call of
   * another name), `bad-args`.
   */
  | { probe: 'no-token' | 'wrong-token' | 'other-tool' | 'bad-args' }
  | { stopReason: acp.StopReason }
  | { exit: number; stderr?: string };

export interface Script {
  /** Advertise mcpCapabilities.http (default true). */
  http?: boolean;
  protocolVersion?: number;
  /** Exit with this code (after a line on stderr) when this request arrives. */
  exitOn?: 'initialize' | 'session/new';
  /** Answer session/new with an error: authentication required. */
  authRequired?: boolean;
  /** Never answer this request. */
  hangOn?: 'initialize';
  prompts: Step[][];
}

const script = JSON.parse(fs.readFileSync(process.env.FAKE_ACP_SCRIPT!, 'utf8')) as Script;
const logFile = process.env.FAKE_ACP_LOG!;
const log = (entry: Record<string, unknown>) => fs.appendFileSync(logFile, JSON.stringify({ ...entry, t: Date.now() }) + "\n");
log({ event: 'start', pid: process.pid, argv: process.argv.slice(2), env: { FAKE_ACP_EXTRA: process.env.FAKE_ACP_EXTRA } });

let mcp: Client | undefined;
let mcpServer: { url: string; headers: Record<string, string> } | undefined;
/** The stdio server's channel (AGENT_APPS_RELAY_URL), for the wrong-token probe. */
let relayUrl: string | undefined;
let lastResult = '';
let cwd = process.cwd();
let prompts = 0;
let calls = 0;
let cancelled: (() => void) | undefined;
let cancelRequested = false;

const app = acp
  .agent({ name: 'fake-acp-agent' })
  .onRequest(acp.methods.agent.initialize, ({ params }) => {
    log({ event: 'initialize', params });
    if (script.exitOn === 'initialize') die(4, 'fake agent: giving up at initialize');
    if (script.hangOn === 'initialize') return new Promise<never>(() => {});
    return {
      protocolVersion: script.protocolVersion ?? acp.PROTOCOL_VERSION,
      agentCapabilities: { mcpCapabilities: { http: script.http !== false, sse: false } },
      agentInfo: { name: 'fake-acp-agent', version: '1.0.0' },
      authMethods: script.authRequired ? [{ id: 'fake-login', name: 'fake login' }] : [],
    };
  })
  .onRequest(acp.methods.agent.session.new, async ({ params }) => {
    log({ event: 'session/new', params });
    if (script.exitOn === 'session/new') die(5, 'fake agent: giving up at session/new');
    if (script.authRequired) throw acp.RequestError.authRequired();
    cwd = params.cwd;
    const server = params.mcpServers.find((s) => 'type' in s && s.type === 'http' && s.name === 'agent-apps') as { url: string; headers: { name: string; value: string }[] } | undefined;
    const stdio = params.mcpServers.find((s) => !('type' in s) && 'command' in s && s.name === 'agent-apps') as acp.McpServerStdio | undefined;
    if (server) {
      mcpServer = { url: server.url, headers: Object.fromEntries(server.headers.map((h) => [h.name, h.value])) };
      mcp = new Client({ name: 'fake-acp-agent', version: '1.0.0' });
      await mcp.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: mcpServer.headers } }));
    } else if (stdio) {
      // As an agent starts a stdio MCP server: the command with its args, its env on top of the defaults.
      const env = Object.fromEntries(stdio.env.map((e) => [e.name, e.value]));
      relayUrl = env.AGENT_APPS_RELAY_URL;
      const transport = new StdioClientTransport({ command: stdio.command, args: stdio.args, env, stderr: 'pipe' });
      transport.stderr?.on('data', (d: Buffer) => process.stderr.write(d));
      mcp = new Client({ name: 'fake-acp-agent', version: '1.0.0' });
      await mcp.connect(transport);
      log({ event: 'stdio-server', pid: transport.pid });
    }
    if (mcp) {
      const { tools } = await mcp.listTools();
      log({ event: 'tools', tools: tools.map((t) => t.name) });
    }
    return { sessionId: 'fake-session-1' };
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const text = params.prompt.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n---\n');
    const steps = script.prompts[prompts++] ?? [{ text: '(the script has no more prompts)' }];
    log({ event: 'prompt', n: prompts, text });
    cancelRequested = false;
    const sessionId = params.sessionId;
    const update = (u: acp.SessionUpdate) => client.notify(acp.methods.client.session.update, { sessionId, update: u });
    for (const step of steps) {
      if (cancelRequested) return { stopReason: 'cancelled' };
      if ('say' in step) {
        await update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: step.say.replace('{result}', lastResult) } });
      } else if ('elicit' in step) {
        const response = await client.request(acp.methods.client.elicitation.create, { sessionId, mode: 'form', message: step.elicit.message, requestedSchema: step.elicit.requestedSchema as acp.ElicitationSchema });
        log({ event: 'elicitation', response });
      } else if ('text' in step) {
        // Two chunks, as a model streams them.
        const half = Math.ceil(step.text.length / 2);
        for (const part of [step.text.slice(0, half), step.text.slice(half)]) if (part) await update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: part } });
      } else if ('thought' in step) {
        await update({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: step.thought } });
      } else if ('plan' in step) {
        await update({ sessionUpdate: 'plan', entries: step.plan.map((content) => ({ content, priority: 'medium', status: 'pending' })) });
      } else if ('invoke' in step) {
        const toolCallId = `call-${++calls}`;
        const title = step.title ?? 'mcp__agent-apps__invoke';
        await update({ sessionUpdate: 'tool_call', toolCallId, title, ...(step.name ? { name: step.name } : {}), kind: (step.kind ?? 'other') as acp.ToolKind, status: 'pending', rawInput: { code: step.invoke } });
        if (step.ask !== false) {
          const outcome = await permission(client, sessionId, { toolCallId, title, ...(step.name ? { name: step.name } : {}), kind: (step.kind ?? 'other') as acp.ToolKind, rawInput: { code: step.invoke } });
          if (outcome !== 'allow') {
            await update({ sessionUpdate: 'tool_call_update', toolCallId, status: 'failed', content: [{ type: 'content', content: { type: 'text', text: 'permission refused' } }] });
            continue;
          }
        }
        await update({ sessionUpdate: 'tool_call_update', toolCallId, status: 'in_progress' });
        const result = (await mcp!.callTool({ name: 'invoke', arguments: { code: step.invoke } })) as { content: { type: string; text?: string }[]; isError?: boolean };
        const out = result.content.map((c) => c.text ?? '').join('');
        lastResult = out;
        log({ event: 'invoke-result', code: step.invoke, text: out, isError: result.isError === true });
        await update({ sessionUpdate: 'tool_call_update', toolCallId, status: result.isError ? 'failed' : 'completed', content: [{ type: 'content', content: { type: 'text', text: out } }] });
      } else if ('tool' in step) {
        const toolCallId = `call-${++calls}`;
        const t = step.tool;
        const call = { toolCallId, title: t.title, kind: (t.kind ?? 'edit') as acp.ToolKind, ...(t.name ? { name: t.name } : {}), rawInput: { path: t.write, content: t.content } };
        await update({ sessionUpdate: 'tool_call', ...call, status: 'pending' });
        const outcome = await permission(client, sessionId, call);
        if (outcome === 'allow' && t.write) fs.writeFileSync(path.join(cwd, t.write), t.content ?? 'written by the fake agent\n');
        await update({ sessionUpdate: 'tool_call_update', toolCallId, status: outcome === 'allow' ? 'completed' : 'failed', content: [{ type: 'content', content: { type: 'text', text: outcome === 'allow' ? `wrote ${t.write ?? 'nothing'}` : 'permission refused' } }] });
      } else if ('waitForCancel' in step) {
        log({ event: 'waiting' });
        if (!cancelRequested) await new Promise<void>((resolve) => (cancelled = resolve));
        log({ event: 'cancelled' });
        return { stopReason: 'cancelled' };
      } else if ('probe' in step) {
        await probe(step.probe);
      } else if ('stopReason' in step) {
        return { stopReason: step.stopReason };
      } else if ('exit' in step) {
        die(step.exit, step.stderr ?? 'fake agent: dying mid-prompt');
      }
    }
    return { stopReason: 'end_turn' };
  })
  .onNotification(acp.methods.agent.session.cancel, () => {
    log({ event: 'cancel' });
    cancelRequested = true;
    cancelled?.();
  });

async function permission(client: acp.AgentContext, sessionId: string, toolCall: acp.ToolCallUpdate): Promise<'allow' | 'reject' | 'cancelled'> {
  const response = await client.request(acp.methods.client.session.requestPermission, {
    sessionId,
    toolCall,
    options: [
      { optionId: 'yes', name: 'Allow', kind: 'allow_once' },
      { optionId: 'always', name: 'Always allow', kind: 'allow_always' },
      { optionId: 'no', name: 'Reject', kind: 'reject_once' },
    ],
  });
  const outcome = response.outcome.outcome === 'selected' ? (['yes', 'always'].includes(response.outcome.optionId) ? 'allow' : 'reject') : 'cancelled';
  log({ event: 'permission', title: toolCall.title, name: toolCall.name, outcome });
  return outcome;
}

async function probe(kind: 'no-token' | 'wrong-token' | 'other-tool' | 'bad-args'): Promise<void> {
  if (kind === 'wrong-token') {
    // The relay's channel, reached with a token of our own making: it must close without a word.
    const socket = net.connect({ path: relayUrl!.slice('unix:'.length) });
    let answered = '';
    socket.setEncoding('utf8').on('data', (d: string) => (answered += d));
    socket.on('error', () => {});
    socket.write('not-the-token\n' + JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) + '\n');
    await new Promise((resolve) => socket.once('close', resolve));
    log({ event: 'probe', kind, answered });
    return;
  }
  if (kind === 'no-token') {
    const res = await fetch(mcpServer!.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'invoke', arguments: { code: 'return 1' } } }),
    });
    log({ event: 'probe', kind, status: res.status });
    return;
  }
  const result = (await mcp!.callTool(kind === 'other-tool' ? { name: 'file-write', arguments: { path: 'x', text: 'y' } } : { name: 'invoke', arguments: { script: 'return 1' } })) as { content: { text?: string }[]; isError?: boolean };
  log({ event: 'probe', kind, isError: result.isError === true, text: result.content.map((c) => c.text ?? '').join('') });
}

function die(code: number, message: string): never {
  log({ event: 'exit', code });
  process.stderr.write(message + '\n');
  process.exit(code);
}

const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout) as WritableStream<Uint8Array>, Readable.toWeb(process.stdin) as unknown as ReadableStream<Uint8Array>));
await connection.closed;
log({ event: 'closed' });
await mcp?.close().catch(() => {});
process.exit(0);
