// The `yaml` package as src/core/yaml.ts loads it — the build's bundle (dist/bundles/yaml.cjs) when
// built, else the package — so that the cassette and the runtime share one copy.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

let loaded: typeof import('yaml') | undefined;

export function yaml(): typeof import('yaml') {
  if (!loaded) {
    // skills/extensions/agent/strands/ → the package root's dist/; built, dist/skills/… → dist/.
    const bundle = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '../../../../dist/bundles/yaml.cjs' : '../../../../bundles/yaml.cjs', import.meta.url));
    loaded = createRequire(import.meta.url)(existsSync(bundle) ? bundle : 'yaml') as typeof import('yaml');
  }
  return loaded;
}
