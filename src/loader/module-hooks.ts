// Module hooks (notes/loading.md): the bare specifier `agent-apps` resolves to the running
// runtime from a skill anywhere on disk, and `*.skill.ts` / `*.skill.js` load as ES modules even
// under a `package.json` that says `"type": "commonjs"`. In-thread hooks (`registerHooks`) cost
// nothing at start-up, unlike a loader worker.
import module from 'node:module';

let installed = false;

export function installModuleHooks(runtimeEntryUrl: string): void {
  if (installed) return;
  installed = true;
  module.registerHooks({
    resolve(specifier, context, nextResolve) {
      if (specifier === 'agent-apps') return { url: runtimeEntryUrl, shortCircuit: true, format: runtimeEntryUrl.endsWith('.ts') ? 'module-typescript' : 'module' };
      return nextResolve(specifier, context);
    },
    load(url, context, nextLoad) {
      if (url.startsWith('file:')) {
        const clean = url.replace(/[?#].*$/, '');
        if (clean.endsWith('.skill.ts')) return nextLoad(url, { ...context, format: 'module-typescript' });
        if (clean.endsWith('.skill.js')) return nextLoad(url, { ...context, format: 'module' });
      }
      return nextLoad(url, context);
    },
  });
}
