// Tarjan's strongly connected components (docs/concepts.md):
// a toolKey whose tool sits in the same SCC as the current tool is demoted to data.

export function stronglyConnected(nodes: Iterable<string>, edges: (node: string) => Iterable<string>): Map<string, number> {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const component = new Map<string, number>();
  let counter = 0;
  let components = 0;

  // Iterative to survive deep graphs without blowing the call stack.
  const visit = (start: string) => {
    const work: { node: string; it: Iterator<string> }[] = [];
    const open = (node: string) => {
      index.set(node, counter);
      low.set(node, counter);
      counter++;
      stack.push(node);
      onStack.add(node);
      work.push({ node, it: edges(node)[Symbol.iterator]() });
    };
    open(start);
    while (work.length) {
      const frame = work[work.length - 1]!;
      const step = frame.it.next();
      if (!step.done) {
        const next = step.value;
        if (!index.has(next)) open(next);
        else if (onStack.has(next)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(next)!));
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1]!.node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.set(member, components);
        } while (member !== frame.node);
        components++;
      }
    }
  };
  for (const node of nodes) if (!index.has(node)) visit(node);
  return component;
}
