import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fs from 'node:fs';
import { ConfigurationError, ctxTarget, type Context, type JsonObject, checkConfig, copyData, kernelOf, servedTool } from 'agent-apps';

export const frontmatter = {
  name: 'model',
  description: "Sets the served tool's model configuration (locals.config.model): provider, modelId, baseURL, cassette, limits, sandbox.",
  metadata: {
    role: 'middleware',
    visibility: 'hidden',
    tags: ['meta-internal', 'meta-config'],
    params: {
      type: 'object',
      properties: {
        provider: { type: 'string', enum: ['bedrock', 'openai', 'anthropic', 'replay'] },
        agent: { type: 'string' },
        modelId: { type: 'string' },
        baseURL: { type: 'string' },
        cassette: { type: 'string' },
        record: { type: 'string' },
        maxTurns: { type: 'number' },
        maxSteps: { type: 'number' },
        persistent: { type: 'boolean' },
        contextEdit: { anyOf: [{ type: 'boolean' }, { type: 'object', properties: { windowSize: { type: 'integer', minimum: 2 } }, additionalProperties: false }] },
        events: { type: 'string' },
        sandbox: { type: 'object', properties: { timeoutMs: { type: 'number' }, memoryMb: { type: 'number' }, isolation: { enum: ['process', 'inline'] } } },
      },
    },
    returns: {},
    // Its value is checked below, naming the file and key that set it (not validate-args's E_VALIDATION).
    'validate-args': false,
  },
};

export default async function model(ctx: Context, value: unknown) {
  const target = ctxTarget(ctx);
  // A prompt skill runs as an agent, whose code runs in the sandbox process: start that process
  // now, so that its ~200 ms start overlaps with the rest of the pipeline (docs/decisions.md, cli.agent).
  // Awaited, so that it is started before checkConfig compiles the config's schema: left to run
  // beside it, the spawn waited ~30 ms behind that compile, on the run's critical path.
  if (target.locals.prompt !== undefined && !servedTool(target).hasFunction) await prestartSandbox(value, target.locals.config.model);
  await checkConfig(ctx, value);
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    // locals.config is the invocation's own (docs/concepts.md: mutable); the cascade's value is shared and frozen.
    const config: JsonObject = { ...(target.locals.config.model ?? {}), ...copyData(value as JsonObject) };
    // Cassette and record paths are relative to the skill's folder (docs/agents.md).
    const uri = target.run.origin.uri;
    const dir = uri?.startsWith('file://') ? path.dirname(fileURLToPath(uri)) : target.locals.config.cwd;
    config.baseDir = dir;
    for (const key of ['cassette', 'record']) {
      if (typeof config[key] === 'string') config[key] = path.resolve(dir, config[key] as string);
    }
    await staysInFolder(ctx, target, config);
    // A cassette and no provider: replay it, whichever agent provider runs the skill (docs/agents.md,
    // "Cassettes"). A provider set anywhere in the cascade (a main.md's, --set) still wins.
    if (config.provider === undefined && typeof config.cassette === 'string' && config.cassette) config.provider = 'replay';
    target.locals.config.model = config;
  }
  return target.manager.next();
}

/** Starts the sandbox process for the `model.sandbox` settings about to be in effect; a start only, never an error here. */
async function prestartSandbox(value: unknown, before: JsonObject | undefined): Promise<void> {
  const record = (v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
  try {
    const { prestartSandbox } = await import('agent-apps/agent');
    prestartSandbox(record(record(value)?.sandbox ?? before?.sandbox));
  } catch {
    // the agent reports any problem with its sandbox when it creates it
  }
}

/**
 * A SKILL.md folder is content someone else may have written (docs/security.md, "What a cloned
 * workspace can do"): the paths its own settings name — `model.cassette`, `model.record` — stay
 * inside its folder, so that running it cannot read or overwrite a file of its choosing elsewhere.
 * The person's own configuration (`--set`, a main.md, ~/.agent-apps) names paths anywhere.
 */
async function staysInFolder(ctx: Context, target: Context, config: JsonObject): Promise<void> {
  const tool = servedTool(target).decl;
  if ((tool.kind !== 'skill-folder' && tool.kind !== 'mcp-skill') || !tool.file) return;
  const dir = path.dirname(tool.file);
  const plan = await kernelOf(ctx).planner.plan(tool, target.locals.config.paths);
  const own = plan.cascade.sources.model?.find((s) => s.file === tool.file)?.value as JsonObject | undefined;
  if (!own || typeof own !== 'object') return;
  for (const key of ['cassette', 'record']) {
    if (typeof own[key] !== 'string' || config[key] !== path.resolve(dir, own[key] as string)) continue;
    const resolved = real(config[key] as string);
    const folder = real(dir);
    if (resolved !== folder && !resolved.startsWith(folder + path.sep)) {
      throw new ConfigurationError(`model.${key} ${JSON.stringify(own[key])} leaves the skill's folder: a SKILL.md's own settings name files inside ${folder} only (set it with --set or in a main.md to use another place)`, { place: { file: tool.file, key: `model.${key}` } });
    }
  }
}

/** The real path of `file`, or of the nearest folder above it that exists (a record file need not exist yet). */
function real(file: string): string {
  let p = path.resolve(file);
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(fs.realpathSync(p), ...rest.reverse());
    } catch {
      const parent = path.dirname(p);
      if (parent === p) return path.resolve(file);
      rest.push(path.basename(p));
      p = parent;
    }
  }
}
