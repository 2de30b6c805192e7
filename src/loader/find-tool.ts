// findTool (docs/concepts.md) as a standalone function: resolve a ref on a list of search paths without a
// runtime. Each call shares one registry (and its caches) per library root.
import path from 'node:path';
import { Registry } from './registry.ts';
import { LIBRARY_ROOT } from './search-paths.ts';
import type { LoadedTool, ToolDef } from '../core/types.ts';

let shared: Registry | undefined;

export function findTool(ref: string | ToolDef, paths: readonly string[] = [LIBRARY_ROOT], cwd: string = process.cwd()): Promise<LoadedTool> {
  shared ??= new Registry(LIBRARY_ROOT, new Map());
  // Search roots given relative are relative to the cwd, like --path: a tool's uri is always file:///….
  const roots = paths.every((p) => path.isAbsolute(p)) ? paths : paths.map((p) => path.resolve(cwd, p));
  return shared.find(ref, Object.isFrozen(roots) ? roots : Object.freeze([...roots]), cwd);
}
