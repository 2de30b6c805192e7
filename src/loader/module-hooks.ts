// Module hooks (docs/writing-skills.md, "Code skills"): the bare specifiers `agent-apps` and `agent-apps/agent` resolve to the running
// runtime from a skill anywhere on disk, and `*.skill.ts` / `*.skill.js` — and the `.ts` helpers
// a skill imports — load as ES modules even under a `package.json` that says `"type": "commonjs"`. In-thread hooks (`registerHooks`) cost
// nothing at start-up, unlike a loader worker.
import module from 'node:module';

let installed = false;
/** TypeScript helpers imported (directly or through each other) by a `.skill.ts`: ESM too. */
const skillSide = new Set<string>();

const clean = (url: string) => url.replace(/[?#].*$/, '');

export function installModuleHooks(runtimeEntryUrl: string): void {
  if (installed) return;
  installed = true;
  const format = runtimeEntryUrl.endsWith('.ts') ? 'module-typescript' : 'module';
  // `agent-apps/agent` (the agent skill's parts) sits beside the entry, in src/ or dist/.
  const agentEntryUrl = new URL(runtimeEntryUrl.endsWith('.ts') ? './agent/index.ts' : './agent/index.js', runtimeEntryUrl).href;
  module.registerHooks({
    resolve(specifier, context, nextResolve) {
      if (specifier === 'agent-apps') return { url: runtimeEntryUrl, shortCircuit: true, format };
      if (specifier === 'agent-apps/agent') return { url: agentEntryUrl, shortCircuit: true, format };
      const resolved = nextResolve(specifier, context);
      const parent = context.parentURL ? clean(context.parentURL) : '';
      if (resolved.url.startsWith('file:') && clean(resolved.url).endsWith('.ts') && (parent.endsWith('.skill.ts') || skillSide.has(parent))) {
        skillSide.add(clean(resolved.url));
      }
      return resolved;
    },
    load(url, context, nextLoad) {
      if (url.startsWith('file:')) {
        const file = clean(url);
        if (file.endsWith('.skill.ts') || skillSide.has(file)) return nextLoad(url, { ...context, format: 'module-typescript' });
        if (file.endsWith('.skill.js')) return nextLoad(url, { ...context, format: 'module' });
      }
      return nextLoad(url, context);
    },
  });
}
