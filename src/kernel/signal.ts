// A context's `run.signal` (docs/concepts.md): its own controller, composed with its parent's
// signal and a seed signal *by listeners* — not `AbortSignal.any`, whose followers live as long as
// their sources — and those listeners are removed when the invocation settles, so a long-lived
// parent never collects one per child. Created on first read: most contexts never need one.
export interface SignalSources {
  /** The parent context's signal (composed lazily in turn), if there is a parent. */
  parent(): AbortSignal | undefined;
  /** The signal given in the context seed (`{ signal }` or `{ run: { signal } }`). */
  readonly seed: AbortSignal | undefined;
  /** Already refused (this context or one above): the reason, so the signal starts aborted. */
  aborted(): { reason: unknown } | undefined;
}

export class ComposedSignal {
  #controller: AbortController | undefined;
  #release: (() => void)[] | undefined;

  /** The signal, created and linked to its sources on first read. */
  get(sources: SignalSources): AbortSignal {
    if (this.#controller) return this.#controller.signal;
    const controller = new AbortController();
    this.#controller = controller;
    const already = sources.aborted();
    if (already) {
      controller.abort(already.reason);
      return controller.signal;
    }
    const follow = (source: AbortSignal) => {
      const onAbort = () => controller.abort(source.reason);
      source.addEventListener('abort', onAbort, { once: true });
      (this.#release ??= []).push(() => source.removeEventListener('abort', onAbort));
    };
    const parent = sources.parent();
    if (parent) follow(parent);
    if (sources.seed) follow(sources.seed);
    return controller.signal;
  }

  /** Fires the signal if anyone has read it (nobody listens otherwise). */
  abort(reason: unknown): void {
    this.#controller?.abort(reason);
  }

  /** Removes the listeners this signal put on its sources. */
  release(): void {
    if (this.#release) {
      for (const r of this.#release) r();
      this.#release = undefined;
    }
  }
}
