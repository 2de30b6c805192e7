// The pipeline tree of a `debug` run, rebuilt from its debug events (pipeline-enter / -exit,
// next-enter / -exit, breakpoint-hit): printed by `debug` at the end (debug.ts), and drawn live
// at a breakpoint by the terminal UI (src/surfaces/tui/debug-view.ts), where some nodes are still open.
import type { LogEvent } from '../../core/types.ts';

export interface TreeNode {
  label: string;
  kind: 'pipeline' | 'next' | 'break';
  contextId?: string;
  duration?: number;
  error?: string;
  /** Entered and not yet left (a tree drawn while the run is paused). */
  open?: boolean;
  children: TreeNode[];
}

/**
 * A pipeline's chain entries are listed side by side under it (the onion nests them, but reading
 * them as a list is clearer); a pipeline started inside an entry — the tool that entry invoked —
 * is indented under that entry.
 */
export function buildTree(events: LogEvent[]): TreeNode[] {
  const roots: TreeNode[] = [];
  const stack: TreeNode[] = [];
  const top = () => (stack.length ? stack[stack.length - 1]!.children : roots);
  /** The open pipeline of a context: its chain entries (and breakpoints) are listed under it. */
  const pipelineOf = (contextId: string): TreeNode | undefined => {
    for (let i = stack.length - 1; i >= 0; i--) if (stack[i]!.kind === 'pipeline' && stack[i]!.contextId === contextId) return stack[i];
    return undefined;
  };
  for (const e of events) {
    if (e.type === 'pipeline-enter') {
      const node: TreeNode = { label: e.tool, kind: 'pipeline', contextId: e.contextId, open: true, children: [] };
      top().push(node);
      stack.push(node);
    } else if (e.type === 'next-enter') {
      const node: TreeNode = { label: String(e.entry), kind: 'next', contextId: e.contextId, open: true, children: [] };
      (pipelineOf(e.contextId)?.children ?? top()).push(node);
      stack.push(node);
    } else if (e.type === 'pipeline-exit' || e.type === 'next-exit') {
      const node = stack.pop();
      if (node) {
        delete node.open;
        node.duration = e.duration as number | undefined;
        if (e.error) node.error = String(e.error);
      }
    } else if (e.type === 'breakpoint-hit') {
      // A breakpoint at an entry sits beside that entry, in its pipeline; one at a tool, where its pipeline starts.
      (pipelineOf(e.contextId)?.children ?? top()).push({ label: e.text ?? 'breakpoint', kind: 'break', contextId: e.contextId, children: [] });
    }
  }
  return roots;
}

/** One line of the tree: its depth and the node, with an entry's own time (its time minus the next entry's: the onion nests them). */
export interface TreeLine {
  depth: number;
  node: TreeNode;
  ms?: number;
}

export function treeLines(roots: TreeNode[]): TreeLine[] {
  const out: TreeLine[] = [];
  const walk = (node: TreeNode, depth: number, own?: number) => {
    out.push({ depth, node, ms: own ?? node.duration });
    const entries = node.children.filter((c) => c.kind === 'next');
    for (const c of node.children) {
      let self: number | undefined;
      if (c.kind === 'next' && c.duration !== undefined) {
        const next = entries[entries.indexOf(c) + 1];
        self = next?.duration !== undefined ? Math.max(0, c.duration - next.duration) : c.duration;
      }
      walk(c, depth + 1, self);
    }
  };
  for (const r of roots) walk(r, 0);
  return out;
}
