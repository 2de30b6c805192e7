// Which of an ACP agent's tool calls are calls of our own MCP server's `invoke` (docs/agents.md). Two
// questions with two answers:
// - may it run without asking (a `session/request_permission` we allow)? Only when the tool call's
//   name or title *is* our tool's id as agents spell it — `mcp__agent-apps__invoke` (Claude's
//   adapter), `@agent-apps/invoke` and `agent-apps/invoke` (Kiro), `agent-apps___invoke` … — the
//   whole string, not a text that contains it: a terminal command or a file edit whose title merely
//   mentions agent-apps is the agent's own tool and stays behind the gate. A call of a kind no MCP
//   tool call has (edit, delete, move, execute) is never ours.
// - is it reported by our MCP server already (so its `tool_call` update is not a second tool-call
//   event)? The same, or a tool named like `invoke` whose input is `{ code }`: reporting only,
//   never a permission.
import { SERVER_NAME, TOOL_NAME } from './invoke-server.ts';

/** The part of an ACP tool call (`ToolCall` / `ToolCallUpdate`) that names it. */
export interface ToolCallNames {
  name?: string | null;
  title?: string | null;
  kind?: string | null;
  rawInput?: unknown;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const SERVER = escape(SERVER_NAME);
const TOOL = escape(TOOL_NAME);
/** `[mcp__]agent-apps<sep>invoke`, `@agent-apps/invoke`, `invoke (agent-apps)`, `agent-apps: invoke`, optionally in backticks. */
const OUR_IDS = [
  new RegExp(`^\`?(?:mcp__)?@?${SERVER}(?:__|___|[/.:_-])\\s*${TOOL}\`?$`, 'i'),
  new RegExp(`^\`?${TOOL}\\s*\\((?:mcp(?: server)?:?\\s*)?@?${SERVER}(?: mcp(?: server)?)?\\)\`?$`, 'i'),
];
const NEVER_OURS = new Set(['edit', 'delete', 'move', 'execute']);

/** The tool call is a call of our `invoke`: allowed without asking. */
export function isOurTool(call: ToolCallNames): boolean {
  if (call.kind && NEVER_OURS.has(call.kind)) return false;
  return [call.name, call.title].some((s) => typeof s === 'string' && OUR_IDS.some((re) => re.test(s.trim())));
}

/** The tool call is (very likely) our `invoke`, whose events our MCP server reports itself. */
export function isReportedByUs(call: ToolCallNames): boolean {
  if (isOurTool(call)) return true;
  const code = (call.rawInput as { code?: unknown } | null | undefined)?.code;
  const named = [call.name, call.title].some((s) => typeof s === 'string' && new RegExp(`(^|[^a-z])${TOOL}([^a-z]|$)`, 'i').test(s));
  return named && typeof code === 'string';
}

/** How a tool call of the agent's own is named in events, logs and questions. */
export function toolLabel(call: ToolCallNames): string {
  const name = typeof call.name === 'string' && call.name.trim() ? call.name.trim() : undefined;
  const title = typeof call.title === 'string' && call.title.trim() ? call.title.trim() : undefined;
  return name ?? title ?? 'tool';
}
