// A context's `run.signal` (docs/concepts.md): its own controller, composed with its parent's
// signal and a seed signal *by listeners* — not `AbortSignal.any`, whose followers live as long as
// their sources — and those are dropped when the invocation settles, so a long-lived parent never
// collects one per child. Created on first read: most contexts never need one.
//
// One 'abort' listener per source signal, however many signals follow it (`follow`): the
// followers of a source are a Set beside it. An EventTarget looks through all its listeners on
// every addEventListener, so 10,000 invocations in flight reading `run.signal` — each following
// the same root signal — cost 10,000² steps: 2.1 s for a fan-out of 10,000 such skills, against
// 0.1 s for one of no-op skills (docs/events.md, "Performance").
export interface SignalSources {
  /** The parent context's signal (composed lazily in turn), if there is a parent. */
  parentSignal(): AbortSignal | undefined;
  /** The signal given in the context seed (`{ signal }` or `{ run: { signal } }`). */
  readonly seedSignal: AbortSignal | undefined;
  /** Already refused (this context or one above): the reason, so the signal starts aborted. */
  isAborted(): boolean;
  effectiveAbortReason(): unknown;
}

/** What follows one source signal: its controllers, in the order they came, and its one listener. */
interface Followers {
  readonly controllers: Set<AbortController>;
  readonly onAbort: () => void;
}

const followersOf = new WeakMap<AbortSignal, Followers>();

/**
 * `controller` aborts when `source` does, with its reason — as an `abort` listener of its own
 * would, the controllers of one source in the order they followed it. A source already aborted
 * fires no more: nothing follows it (as a listener added then would never run).
 */
function follow(source: AbortSignal, controller: AbortController): void {
  if (source.aborted) return;
  let followers = followersOf.get(source);
  if (followers === undefined) {
    const controllers = new Set<AbortController>();
    const onAbort = () => {
      // One that stops following meanwhile (released) is skipped, as a removed listener would be.
      for (const c of controllers) c.abort(source.reason);
      if (followersOf.get(source) === entry) followersOf.delete(source);
      controllers.clear();
    };
    const entry: Followers = { controllers, onAbort };
    followers = entry;
    followersOf.set(source, followers);
    source.addEventListener('abort', onAbort, { once: true });
  }
  followers.controllers.add(controller);
}

/** `controller` no longer follows `source`; the source's listener goes with its last follower. */
function unfollow(source: AbortSignal, controller: AbortController): void {
  const followers = followersOf.get(source);
  if (followers === undefined || !followers.controllers.delete(controller) || followers.controllers.size > 0) return;
  followersOf.delete(source);
  source.removeEventListener('abort', followers.onAbort);
}

export class ComposedSignal {
  #controller: AbortController | undefined;
  /** The sources this signal follows until release(): its parent's signal, its seed. */
  #parent: AbortSignal | undefined;
  #seed: AbortSignal | undefined;

  /** The signal, created and linked to its sources on first read. */
  get(sources: SignalSources): AbortSignal {
    if (this.#controller) return this.#controller.signal;
    const controller = new AbortController();
    this.#controller = controller;
    if (sources.isAborted()) {
      controller.abort(sources.effectiveAbortReason());
      return controller.signal;
    }
    const parent = sources.parentSignal();
    if (parent) {
      follow(parent, controller);
      this.#parent = parent;
    }
    const seed = sources.seedSignal;
    if (seed) {
      follow(seed, controller);
      this.#seed = seed;
    }
    return controller.signal;
  }

  /** The signal if it was read already (no allocation on a second read). */
  get current(): AbortSignal | undefined {
    return this.#controller?.signal;
  }

  /** Fires the signal if anyone has read it (nobody listens otherwise). */
  abort(reason: unknown): void {
    this.#controller?.abort(reason);
  }

  /** Stops following its sources. */
  release(): void {
    const controller = this.#controller;
    if (controller === undefined) return;
    if (this.#parent) unfollow(this.#parent, controller);
    if (this.#seed) unfollow(this.#seed, controller);
    this.#parent = undefined;
    this.#seed = undefined;
  }
}
