// A command line as a person reads it (in a trust question, a refusal, `list`): each word as it
// is when it needs no quoting, else JSON-quoted.
export function commandLine(command: string, args: readonly string[] = []): string {
  return [command, ...args].map((w) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : JSON.stringify(w))).join(' ');
}
