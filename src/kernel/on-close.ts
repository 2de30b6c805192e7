// Cleanup for `runtime.close()`, registered by whatever opened something for a runtime (the MCP
// connections, ACP runs): one list per kernel. In kernel/, not in src/runtime.ts, so the folders
// below the composition root can register without importing it (docs/architecture.md, The rules).
import type { Kernel } from './orchestrator.ts';

const shutdownHandlers = new WeakMap<Kernel, (() => Promise<void>)[]>();

/** Runs `fn` when this kernel's runtime closes. */
export function onClose(kernel: Kernel, fn: () => Promise<void>): void {
  const list = shutdownHandlers.get(kernel) ?? [];
  list.push(fn);
  shutdownHandlers.set(kernel, list);
}

/** The handlers registered for this kernel, in order (runtime.close() runs them). */
export function closeHandlers(kernel: Kernel): readonly (() => Promise<void>)[] {
  return shutdownHandlers.get(kernel) ?? [];
}
