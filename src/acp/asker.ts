// The person behind an ACP client, as agent-apps' asker (the contract in src/core/ask.ts, docs/agents.md):
// an approval gate of agent code — and a question with choices from `ctx.manager.ask` — is a
// `session/request_permission` to the client, which shows it in the editor (docs/agents.md).
// A question without choices (free text) has no ACP form: E_NOT_INTERACTIVE, as with no person.
import type { AgentContext, PermissionOption, ToolKind } from '@agentclientprotocol/sdk';
import { AbortError } from '../core/errors.ts';
import { notInteractive } from '../kernel/asking.ts';
import type { Answer, Asker, Question } from '../core/ask.ts';

/** How each answer of an approval gate is offered: allow once / for this run / deny. */
const APPROVAL_KINDS: Record<string, PermissionOption['kind']> = { allow: 'allow_once', 'allow-run': 'allow_always', deny: 'reject_once' };
const KINDS: Record<string, ToolKind> = { 'file-read': 'read', 'file-write': 'edit', shell: 'execute' };

export class AcpAsker implements Asker {
  readonly #client: () => AgentContext;
  readonly #sessionId: string;
  #n = 0;

  /** `client`: the connection's client context (known once the connection is up). */
  constructor(client: () => AgentContext, sessionId: string) {
    this.#client = client;
    this.#sessionId = sessionId;
  }

  async ask(question: Question, signal: AbortSignal): Promise<Answer> {
    const choices = question.choices ?? [];
    if (!choices.length) throw notInteractive(`'${question.tool ?? 'a skill'}' asked a question that needs a typed answer, which an ACP client cannot give`);
    const approval = question.kind === 'approval';
    const options: PermissionOption[] = choices.map((c) => ({
      optionId: c.value,
      name: c.label ?? c.value,
      kind: approval ? (APPROVAL_KINDS[c.value] ?? 'allow_once') : 'allow_once',
    }));
    const args = approval ? question.args : undefined;
    const code = approval ? question.code : undefined;
    const response = await this.#client().request(
      'session/request_permission',
      {
        sessionId: this.#sessionId,
        toolCall: {
          toolCallId: `question-${++this.#n}`,
          title: question.text,
          kind: approval ? (KINDS[question.tool] ?? 'other') : 'other',
          status: 'pending',
          ...(approval ? { rawInput: { tool: question.tool, args } } : {}),
          ...(code ? { content: [{ type: 'content', content: { type: 'text', text: '```js\n' + code + '\n```' } }] } : {}),
        },
        options,
      },
      { cancellationSignal: signal },
    );
    if (signal.aborted) throw signal.reason instanceof AbortError ? signal.reason : new AbortError(signal.reason);
    if (response.outcome.outcome !== 'selected') throw new AbortError('the ACP client cancelled the question');
    return { value: response.outcome.optionId };
  }
}
