// The `yaml` package, loaded on first use: from the build's one-file bundle (dist/bundles/yaml.cjs,
// scripts/build.js) when built — ~5 ms instead of ~30 ms for its ~70 modules, on every run that
// reads a Markdown skill's frontmatter — else the package. Our modules take yaml from here (a skill,
// which cannot import src/, has its own copy of this loader for the same file), so one copy loads.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export type Yaml = typeof import('yaml');

let loaded: Yaml | undefined;

export function yaml(): Yaml {
  if (!loaded) {
    const bundle = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '../../dist/bundles/yaml.cjs' : '../bundles/yaml.cjs', import.meta.url));
    loaded = createRequire(import.meta.url)(existsSync(bundle) ? bundle : 'yaml') as Yaml;
  }
  return loaded;
}
