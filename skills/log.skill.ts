import { ctxTarget, type Context, type LogLevel, checkConfig, configError } from 'agent-apps';

export const frontmatter = {
  name: 'log',
  description: 'Configures logging for the run: `log: { level, scope }` (or just a level).',
  metadata: {
    role: 'middleware',
    visibility: 'hidden',
    tags: ['meta-internal', 'meta-config'],
    params: {
      anyOf: [
        { type: 'string', enum: ['trace', 'debug', 'info', 'warn', 'error'] },
        { type: 'object', properties: { level: { type: 'string', enum: ['trace', 'debug', 'info', 'warn', 'error'] }, scope: { type: 'array', items: { type: 'string' } } } },
      ],
    },
    returns: {},
    // Its value is checked below, naming the file and key that set it (not validate-args's E_VALIDATION).
    'validate-args': false,
  },
};

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error'];

export default async function log(ctx: Context, value: unknown) {
  const target = ctxTarget(ctx);
  if (typeof value === 'string' && !LEVELS.includes(value)) throw configError(ctx, `must be one of ${LEVELS.join(', ')}, got ${JSON.stringify(value)}`);
  if (typeof value !== 'string') await checkConfig(ctx, value, frontmatter.metadata.params.anyOf[1]);
  if (typeof value === 'string') target.manager.configure({ level: value as LogLevel });
  else if (value && typeof value === 'object') {
    const v = value as { level?: LogLevel; scope?: string[] };
    target.manager.configure({ ...(v.level ? { level: v.level } : {}), ...(v.scope ? { scope: v.scope } : {}) });
  }
  return target.manager.next();
}
