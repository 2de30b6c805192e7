// Structured returns (docs/agents.md): the result is the value agent code passes to
// `ctx.manager.finish()`, checked against `returns` before it is accepted — else the model's final
// text, when it matches. A model that ends its turn without a result gets a reminder.
import { ValidationError } from '../core/errors.ts';
import { check } from '../kernel/schema.ts';
import type { Context, JsonObject } from '../core/types.ts';
import type { HookDirective } from './provider.ts';

export class Returns {
  /** The `returns` schema, if the skill declares one. */
  readonly schema: JsonObject | undefined;
  /** Set by an accepted finish(): the run's result. */
  finished: { value: unknown } | undefined;
  /** The running execution's finish() value broke `returns`. */
  refused: ValidationError | undefined;
  /** The running execution's finish() call, settled or not (agent code's usual idiom does not await it). */
  pending: Promise<undefined> | undefined;

  constructor(schema: JsonObject | undefined) {
    this.schema = schema;
  }

  /** A new execution of agent code starts: what the last one's finish() did is no longer its concern. */
  beginExecution(): void {
    this.refused = undefined;
    this.pending = undefined;
  }

  /** `ctx.manager.finish(value)` from agent code: checked against `returns`, then the served skill's result. */
  finish(codeCtx: Context, raw: unknown): Promise<null> {
    const done = this.#finish(codeCtx, raw);
    this.pending = done.then(
      () => undefined,
      () => undefined,
    );
    return done;
  }

  async #finish(codeCtx: Context, raw: unknown): Promise<null> {
    const value = raw === undefined ? null : raw;
    if (this.schema) {
      const errors = await check(this.schema, value);
      if (errors.length) throw (this.refused = new ValidationError('finish() value does not match the returns schema', errors, 'returns'));
    }
    this.finished = { value };
    codeCtx.manager.finish(value);
    return null;
  }

  /**
   * A turn ended with text only and no finish(). Without `returns` the provider ends with that text
   * (docs/agents.md: the model's final text is the result); with `returns`, a matching text is the result,
   * and anything else gets a reminder to finish.
   */
  async afterText(text: unknown): Promise<HookDirective> {
    if (!this.schema) return undefined;
    if (typeof text === 'string' && text !== '' && (await check(this.schema, text)).length === 0) return { stop: true, result: text };
    return {
      continue: true,
      message: `You have not finished. Call ctx.manager.finish(value) from the invoke tool with a value matching this JSON Schema: ${JSON.stringify(this.schema)}`,
    };
  }
}
