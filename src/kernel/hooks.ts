// `$hook` wrappers (docs/events.md): `$next` hooks wrap each chain entry, `$invoke` hooks the
// whole pipeline. Each hook is a tool run as middleware serving the context; its
// `target.manager.next()` runs the next hook, and the last one runs the wrapped operation — so
// hooks form an onion of their own around one operation. Hooks observe, they do not gate: a hook
// that never calls next() still lets the operation run. No hook declared means no wrapper at all.
import type { ChainEntry, HookRef } from './plan.ts';

export interface HookInfo {
  trigger: '$next' | '$invoke';
  /** The wrapped chain entry, for `$next`. */
  entry?: string;
  /** The entry's args ($next) or the tool's args ($invoke), handed to the hook. */
  args: unknown;
}

/** A running chain entry or hook: whether it called next(), and what its next() runs. */
export interface HookFrame {
  entry: Pick<ChainEntry, 'name' | 'args'>;
  calledNext: boolean;
  /** For hook frames: what the hook's `target.manager.next()` runs (the next hook, or the operation). */
  onNext?: () => Promise<unknown>;
}

/** Runs `hooks[i…]` around `inner`; `invoke` runs one hook tool. Frames go on the chain's stack. */
export function runHooks(frames: HookFrame[], hooks: readonly HookRef[], i: number, inner: () => Promise<unknown>, info: HookInfo, invoke: (hook: HookRef) => Promise<unknown>): Promise<unknown> {
  if (i >= hooks.length) return inner();
  const hook = hooks[i]!;
  const frame: HookFrame = { entry: { name: hook.name, args: hook.args }, calledNext: false, onNext: () => runHooks(frames, hooks, i + 1, inner, info, invoke) };
  frames.push(frame);
  const done = () => {
    const at = frames.lastIndexOf(frame);
    if (at !== -1) frames.splice(at, 1);
  };
  return invoke(hook).then(
    async (value) => {
      done();
      if (!frame.calledNext) await inner();
      return value;
    },
    (err) => {
      done();
      throw err;
    },
  );
}
