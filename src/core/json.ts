// Results are data, but a skill may return a BigInt, a Map or a cycle: a JSON.stringify replacer
// that prints them instead of throwing (the CLI's result printer and the terminal UI share it).
export function safeJsonReplacer(): (this: unknown, key: string, value: unknown) => unknown {
  const stack: object[] = [];
  return function (this: unknown, _key: string, value: unknown): unknown {
    if (typeof value === 'bigint') return value.toString();
    if (value instanceof Map) return Object.fromEntries(value);
    if (value instanceof Set) return [...value];
    if (value !== null && typeof value === 'object') {
      // Ancestors only: a value seen twice side by side is fine, a value inside itself is not.
      while (stack.length && stack[stack.length - 1] !== this) stack.pop();
      if (stack.includes(value)) return '[Circular]';
      stack.push(value);
    }
    return value;
  };
}
