// Interpolation of cascade values (docs/concepts.md): `${dir}`, `${root}`, `${workspace}`, `${cwd}`,
// `${name}`, `${env.NAME}` in string values, per level, before merging. `$${` escapes.
import { ConfigurationError } from '../core/errors.ts';
import { isPlainObject } from '../core/path.ts';

export interface InterpolationVars {
  dir: string;
  root: string;
  workspace: string;
  cwd: string;
  name: string;
}

const PATTERN = /\$\$\{|\$\{([^}]*)\}/g;

export function interpolate(value: unknown, vars: InterpolationVars, place: { file?: string; key: string }): unknown {
  if (typeof value === 'string') return interpolateString(value, vars, place);
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((v, i) => {
      const r = interpolate(v, vars, { file: place.file, key: `${place.key}[${i}]` });
      if (r !== v) changed = true;
      return r;
    });
    return changed ? out : value;
  }
  if (isPlainObject(value)) {
    let out: Record<string, unknown> | undefined;
    for (const k of Object.keys(value)) {
      const v = value[k];
      const r = interpolate(v, vars, { file: place.file, key: `${place.key}.${k}` });
      if (r !== v) {
        out ??= { ...value };
        out[k] = r;
      }
    }
    return out ?? value;
  }
  return value;
}

function interpolateString(s: string, vars: InterpolationVars, place: { file?: string; key: string }): string {
  if (!s.includes('${')) return s;
  return s.replace(PATTERN, (match, expr: string | undefined) => {
    if (match === '$${') return '${';
    const name = (expr ?? '').trim();
    if (name.startsWith('env.')) {
      const envName = name.slice(4);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(envName)) throw unknown(name, place);
      return process.env[envName] ?? '';
    }
    if (name === 'dir' || name === 'root' || name === 'workspace' || name === 'cwd' || name === 'name') return vars[name];
    throw unknown(name, place);
  });
}

function unknown(name: string, place: { file?: string; key: string }): ConfigurationError {
  return new ConfigurationError(
    `unknown interpolation variable '\${${name}}' — use \${dir}, \${root}, \${workspace}, \${cwd}, \${name} or \${env.NAME} (write $\${ for a literal)`,
    { place: { file: place.file, key: place.key } },
  );
}
