// The person behind an ACP client, as agent-apps' asker (the contract in src/core/ask.ts, docs/agents.md):
// - an approval gate of agent code is a `session/request_permission` to the client, which shows it
//   in the editor: allow once / allow for this run / deny are what permission options are for;
// - a plain question from `ctx.manager.ask` is a form (`elicitation/create`, one field: a choice
//   or a typed answer) when the client declares form elicitation (elicit.ts); without it a
//   question with choices is a permission request as well, and one without choices (free text)
//   has no ACP form: E_NOT_INTERACTIVE, as with no person.
import type { AgentContext, ClientCapabilities, PermissionOption, ToolKind } from '@agentclientprotocol/sdk';
import { AbortError, AgentAppsError } from '../core/errors.ts';
import type { Answer, Asker, PlainQuestion, Question } from '../core/ask.ts';
import { formAnswer, questionForm } from './elicit.ts';

/** How each answer of an approval gate is offered: allow once / for this run / deny. */
const APPROVAL_KINDS: Record<string, PermissionOption['kind']> = { allow: 'allow_once', 'allow-run': 'allow_always', deny: 'reject_once' };
const KINDS: Record<string, ToolKind> = { 'file-read': 'read', 'file-write': 'edit', shell: 'execute' };

export class AcpAsker implements Asker {
  readonly #client: () => AgentContext;
  readonly #sessionId: string;
  #n = 0;

  readonly #capabilities: () => ClientCapabilities | undefined;

  /**
   * `client`: the connection's client context (known once the connection is up); `capabilities`:
   * what the client declared in `initialize`.
   */
  constructor(client: () => AgentContext, sessionId: string, capabilities: () => ClientCapabilities | undefined = () => undefined) {
    this.#client = client;
    this.#sessionId = sessionId;
    this.#capabilities = capabilities;
  }

  async ask(question: Question, signal: AbortSignal): Promise<Answer> {
    if (question.kind === 'question' && this.#capabilities()?.elicitation?.form) return this.#elicit(question, signal);
    const choices = question.choices ?? [];
    if (!choices.length) throw new AgentAppsError('E_NOT_INTERACTIVE', `'${question.tool ?? 'a skill'}' asked a question that needs a typed answer, and this ACP client takes no forms (its initialize declares no elicitation.form)`);
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

  /** A plain question as a one-field form: the client's accept is the answer; decline is E_DENIED, cancel an abort. */
  async #elicit(question: PlainQuestion, signal: AbortSignal): Promise<Answer> {
    const response = await this.#client().request('elicitation/create', { sessionId: this.#sessionId, mode: 'form', message: question.text, requestedSchema: questionForm(question) }, { cancellationSignal: signal });
    if (signal.aborted) throw signal.reason instanceof AbortError ? signal.reason : new AbortError(signal.reason);
    if (response.action === 'accept') {
      const value = formAnswer(response);
      if (value !== undefined) return { value };
    }
    if (response.action === 'cancel') throw new AbortError('the ACP client cancelled the question');
    throw new AgentAppsError('E_DENIED', `the person at the ACP client declined to answer ${JSON.stringify(question.text.length > 80 ? question.text.slice(0, 80) + '…' : question.text)}`);
  }
}
