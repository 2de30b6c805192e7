// Helpers for the ACP suites (docs/agents.md): the fixture workspace test/fixtures/acp-ws copied to a
// throw-away folder, the fake ACP agent (test/acp-fake-agent.ts) scripted per test and its log,
// and `agent-apps acp` driven by the SDK's client side over real stdio. Every process started here
// is stopped when its test ends.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { BIN, REPO, cliEnv, tempDir } from './cli-process.ts';
import type { Script } from './acp-fake-agent.ts';

export const FIXTURE = path.join(REPO, 'test', 'fixtures', 'acp-ws');
export const FAKE_AGENT = path.join(REPO, 'test', 'acp-fake-agent.ts');

/** A fresh copy of the fixture workspace (marker files and cassettes land there). */
export function workspace(): string {
  const dir = tempDir('agent-apps-acp-ws-');
  fs.cpSync(FIXTURE, dir, { recursive: true });
  return dir;
}

export interface LogEntry {
  event: string;
  [key: string]: any;
}

export interface FakeAgent {
  /** What the CLI's environment needs for the fixture's agent-acp skills to start the fake agent with `script`. */
  env: Record<string, string>;
  log(): LogEntry[];
  /** The fake agent's pid, once it started. */
  pid(): number | undefined;
}

/** The fake agent, scripted: its script and log in a temp folder. */
export function fakeAgent(script: Script): FakeAgent {
  const dir = tempDir('agent-apps-acp-fake-');
  const scriptFile = path.join(dir, 'script.json');
  const logFile = path.join(dir, 'log.jsonl');
  fs.writeFileSync(scriptFile, JSON.stringify(script));
  const log = (): LogEntry[] =>
    fs.existsSync(logFile)
      ? fs
          .readFileSync(logFile, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as LogEntry)
      : [];
  return {
    env: { ACP_NODE: process.execPath, ACP_FAKE_AGENT: FAKE_AGENT, FAKE_ACP_SCRIPT: scriptFile, FAKE_ACP_LOG: logFile },
    log,
    pid: () => log().find((e) => e.event === 'start')?.pid as number | undefined,
  };
}

/** True while a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `check` until it is true (bounded: a test never hangs on it). */
export async function until(check: () => boolean, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export interface AcpServer {
  child: ChildProcessWithoutNullStreams;
  agent: acp.ClientContext;
  /** Every session/update, in order. */
  updates: acp.SessionNotification[];
  /** Every permission request, in order. */
  permissions: acp.RequestPermissionRequest[];
  /** How the next permission requests are answered (default: the first allow option). */
  answer: (request: acp.RequestPermissionRequest) => acp.RequestPermissionResponse | Promise<acp.RequestPermissionResponse>;
  /** Every elicitation request, in order (a client that declared `elicitation` gets them). */
  elicitations: acp.CreateElicitationRequest[];
  /** How the next elicitation requests are answered (default: decline). */
  elicit: (request: acp.CreateElicitationRequest) => acp.CreateElicitationResponse | Promise<acp.CreateElicitationResponse>;
  /** The initialize answer. */
  init: acp.InitializeResponse;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Closes stdin and waits for the process to exit. */
  close(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

interface Owner {
  after(fn: () => unknown): unknown;
}

/** `agent-apps acp ARGS` in `cwd`, connected to the SDK's client side and initialized (declaring `clientCapabilities`). */
export async function startAcp(t: Owner, args: string[], cwd: string, env: Record<string, string | undefined> = {}, clientCapabilities: acp.ClientCapabilities = {}): Promise<AcpServer> {
  const child = spawn(process.execPath, [BIN, 'acp', ...args], { cwd, env: cliEnv({ NO_COLOR: '1', ...env }), stdio: 'pipe' });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const server = {} as AcpServer;
  server.updates = [];
  server.permissions = [];
  server.elicitations = [];
  server.elicit = () => ({ action: 'decline' });
  server.answer = (r) => {
    const option = r.options.find((o) => o.kind === 'allow_once') ?? r.options[0]!;
    return { outcome: { outcome: 'selected', optionId: option.optionId } };
  };
  const app = acp
    .client({ name: 'agent-apps-test' })
    .onNotification(acp.methods.client.session.update, ({ params }) => void server.updates.push(params))
    .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
      server.permissions.push(params);
      return server.answer(params);
    })
    .onRequest(acp.methods.client.elicitation.create, async ({ params }) => {
      server.elicitations.push(params);
      return server.elicit(params);
    });
  const connection = app.connect(acp.ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as unknown as ReadableStream<Uint8Array>));
  Object.assign(server, {
    child,
    agent: connection.agent,
    stderr: () => stderr,
    exited,
    close: async () => {
      child.stdin.end();
      return exited;
    },
  });
  t.after(async () => {
    connection.close();
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  server.init = await connection.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities });
  return server;
}

/** The text of the agent_message_chunk updates, in order. */
export function messageText(updates: acp.SessionNotification[]): string[] {
  return updates.flatMap((n) => (n.update.sessionUpdate === 'agent_message_chunk' && n.update.content.type === 'text' ? [n.update.content.text] : []));
}
