// `createModel(config)`: the cascade's `model` object → a Strands model (docs/agents.md, docs/ci.md).
// Every provider's module is imported lazily, so loading this file costs nothing; credentials
// come only from the environment. A config this file cannot use (an unknown provider, a key in
// it, replay without a cassette) is E_CONFIG; a model that cannot be reached or used is E_MODEL:
// `explainModelError` turns a provider failure into one line that says what to configure.
// The SDK clients never retry (maxRetries 0, Bedrock maxAttempts 1): the agent loop retries
// transient failures itself, `model.retries` times, and then moves to `model.fallback` (loop.ts).

import { isAbsolute, resolve } from 'node:path';
import type { Model, BaseModelConfig } from '@strands-agents/sdk';
import { AgentAppsError, ConfigurationError } from 'agent-apps';
import { readRetryConfig, type RetryConfig } from './retry.ts';

export type ModelProvider = 'bedrock' | 'openai' | 'anthropic' | 'replay';

/** The keys of the cascade's `model` object this provider reads; any others are ignored. */
export interface ModelConfig {
  provider?: ModelProvider | string;
  modelId?: string;
  /** OpenAI-compatible server (Ollama, llama.cpp, vLLM, LM Studio …) or an Anthropic proxy. */
  baseURL?: string;
  /** Name of the environment variable that holds the API key (default per provider). */
  apiKeyEnv?: string;
  /** Bedrock region (else AWS_REGION / AWS_DEFAULT_REGION). */
  region?: string;
  temperature?: number;
  maxTokens?: number;
  topP?: number;
  /** Extra request parameters passed to the provider as-is (OpenAI / Anthropic). */
  params?: Record<string, unknown>;
  /** Extra attempts of a model call that failed transiently (429, 5xx, a reset), default 3 (loop.ts). */
  retries?: number;
  /** The older name of `retries`, read when `retries` is unset. */
  maxRetries?: number;
  /** The wait before the first retry, doubled for each next one (default 1000 ms); a Retry-After wins. */
  retryDelayMs?: number;
  /** Model configs tried in order when a model call still fails after its retries (docs/ci.md). */
  fallback?: ModelConfig[];
  /** replay: `strict` (default) checks each recorded request; `loose` plays the turns regardless. */
  replay?: 'strict' | 'loose';
  /** Per-request timeout in ms. */
  timeoutMs?: number;
  /** replay: the cassette to play back, relative to the skill's folder unless absolute. */
  cassette?: string;
  /** Any provider: write a cassette of the run here (relative to the skill's folder). */
  record?: string;
  [key: string]: unknown;
}

export interface CreateModelOptions {
  /** The skill's folder: `cassette` and `record` paths resolve against it (default: cwd). */
  baseDir?: string;
  /** Where credentials are read from (default: process.env). */
  env?: Record<string, string | undefined>;
  /** Wraps the model (the fallback chain included) before `record` does: the journal (docs/runs.md), so a recording holds every turn. */
  wrap?: (model: Model<BaseModelConfig>) => Model<BaseModelConfig>;
}

/** What a model was built from, for error messages. */
export interface ModelInfo {
  provider: ModelProvider;
  modelId?: string;
  baseURL?: string;
  region?: string;
  cassette?: string;
  /** `model.provider` was not set: the default (bedrock) is in use. */
  defaulted?: boolean;
  /** How this model's failed calls are retried (model.retries, model.retryDelayMs). */
  retry?: RetryConfig;
  /** `model` or `model.fallback[N]`: which config this model came from. */
  where?: string;
}

const infos = new WeakMap<object, ModelInfo>();

/** What `model` was built from; for a wrapper (a recorder, the fallback chain), the model in use inside it. */
export function describeModel(model: object): ModelInfo | undefined {
  for (let m: unknown = model, i = 0; m && typeof m === 'object' && i < 8; m = (m as { inner?: unknown }).inner, i++) {
    const info = infos.get(m);
    if (info) return info;
  }
  return undefined;
}

/**
 * The keys a `model.fallback` entry takes from the model config unless it sets them: how to
 * sample and how long to wait — not which model, where, or with which key.
 */
const INHERITED_BY_FALLBACK = ['temperature', 'maxTokens', 'topP', 'timeoutMs', 'retries', 'maxRetries', 'retryDelayMs', 'replay'] as const;

export async function createModel(config: ModelConfig = {}, options: CreateModelOptions = {}): Promise<Model<BaseModelConfig>> {
  const baseDir = options.baseDir ?? process.cwd();
  readRetryConfig(config);
  if (config.replay !== undefined && config.replay !== 'strict' && config.replay !== 'loose') {
    throw new ConfigurationError(`model.replay must be 'strict' (check each recorded request, the default) or 'loose' (replay regardless) — got ${JSON.stringify(config.replay)}`);
  }
  let model = await createOne(config, options, 'model');
  if (config.fallback !== undefined && config.fallback !== null) {
    if (!Array.isArray(config.fallback)) throw new ConfigurationError('model.fallback must be a list of model configs: [{ provider, modelId, … }, …]');
    const chain: Model<BaseModelConfig>[] = [model];
    for (const [i, entry] of config.fallback.entries()) {
      const where = `model.fallback[${i}]`;
      if (!isRecord(entry)) throw new ConfigurationError(`${where} must be a model config: { provider, modelId, … } (got ${JSON.stringify(entry)})`);
      for (const key of ['fallback', 'record']) {
        if (key in entry) throw new ConfigurationError(`${where}.${key} is not read: ${key === 'record' ? 'model.record records the run, whichever model answers' : 'fallbacks are one list, model.fallback'}`);
      }
      const inherited = Object.fromEntries(INHERITED_BY_FALLBACK.filter((k) => config[k] !== undefined && entry[k] === undefined).map((k) => [k, config[k]]));
      const merged: ModelConfig = { ...inherited, ...entry };
      readRetryConfig(merged, where);
      chain.push(await createOne(merged, options, where));
    }
    const { FallbackModel } = await import('./fallback.ts');
    model = new FallbackModel(chain);
  }
  if (options.wrap) model = options.wrap(model);

  if (typeof config.record === 'string' && config.record) {
    const file = isAbsolute(config.record) ? config.record : resolve(baseDir, config.record);
    const { RecordingModel } = await import('./recorder.ts');
    return new RecordingModel(model, file, { baseDir });
  }
  return model;
}

/** One model config → its model; `where` names it in errors (`model`, `model.fallback[0]`). */
async function createOne(config: ModelConfig, options: CreateModelOptions, where: string): Promise<Model<BaseModelConfig>> {
  const env = options.env ?? process.env;
  const baseDir = options.baseDir ?? process.cwd();
  // A cassette with no provider means replay it (docs/agents.md, "Cassettes"; the `model`
  // middleware says so too): a skill that names only its cassette does not want Bedrock.
  const cassetteOnly = config.provider === undefined && typeof config.cassette === 'string' && config.cassette !== '';
  const provider = config.provider ?? (cassetteOnly ? 'replay' : 'bedrock');
  if ('apiKey' in config && config.apiKey !== undefined) {
    throw new ConfigurationError(`${where}.apiKey is not read from configuration — put the key in the environment (${defaultKeyEnv(provider)}, or name a variable with model.apiKeyEnv)`);
  }
  const common: BaseModelConfig = {};
  if (config.modelId !== undefined) common.modelId = String(config.modelId);
  if (typeof config.temperature === 'number') common.temperature = config.temperature;
  if (typeof config.maxTokens === 'number') common.maxTokens = config.maxTokens;
  if (typeof config.topP === 'number') common.topP = config.topP;
  const baseURL = typeof config.baseURL === 'string' && config.baseURL ? config.baseURL : undefined;
  // The loop retries (model.retries); a client that retried too would make that count a guess.
  const maxRetries = 0;
  const timeout = typeof config.timeoutMs === 'number' ? config.timeoutMs : undefined;
  const params = isRecord(config.params) ? config.params : undefined;

  let model: Model<BaseModelConfig>;
  const info: ModelInfo = { provider: 'bedrock', ...(config.provider === undefined && !cassetteOnly ? { defaulted: true } : {}) };
  switch (provider) {
    case 'bedrock': {
      const { BedrockModel } = await import('@strands-agents/sdk/models/bedrock');
      const region = typeof config.region === 'string' ? config.region : env.AWS_REGION || env.AWS_DEFAULT_REGION;
      model = new BedrockModel({ ...common, ...(region ? { region } : {}), ...(timeout ? { requestTimeout: timeout } : {}), clientConfig: { maxAttempts: 1 } });
      Object.assign(info, { provider: 'bedrock', region });
      break;
    }
    case 'openai': {
      const keyEnv = typeof config.apiKeyEnv === 'string' ? config.apiKeyEnv : 'OPENAI_API_KEY';
      const apiKey = env[keyEnv] || (baseURL ? 'local' : undefined);
      if (!apiKey) {
        throw new AgentAppsError('E_MODEL', `model.provider openai needs ${keyEnv} in the environment, or model.baseURL for a local OpenAI-compatible server`);
      }
      const { OpenAIModel } = await import('@strands-agents/sdk/models/openai');
      model = new OpenAIModel({
        api: 'chat',
        ...common,
        apiKey,
        // One `invoke` per response: the chat adapter keeps only the last of parallel tool calls
        // (Strands 1.19), and the prompt tells the model to batch work into one code block.
        params: { parallel_tool_calls: false, ...params },
        clientConfig: { ...(baseURL ? { baseURL } : {}), maxRetries, ...(timeout ? { timeout } : {}) },
      });
      // Text streamed before a tool call would be dropped by the SDK's chat adapter (1.19).
      const { TextBeforeToolFix } = await import('./stream-fix.ts');
      model = new TextBeforeToolFix(model);
      Object.assign(info, { provider: 'openai', baseURL });
      break;
    }
    case 'anthropic': {
      const keyEnv = typeof config.apiKeyEnv === 'string' ? config.apiKeyEnv : 'ANTHROPIC_API_KEY';
      const apiKey = env[keyEnv];
      if (!apiKey) throw new AgentAppsError('E_MODEL', `model.provider anthropic needs ${keyEnv} in the environment`);
      let mod: typeof import('@strands-agents/sdk/models/anthropic');
      try {
        mod = await import('@strands-agents/sdk/models/anthropic');
      } catch (err) {
        if (isModuleNotFound(err)) {
          throw new AgentAppsError('E_MODEL', 'model.provider anthropic needs the @anthropic-ai/sdk package — run: npm install @anthropic-ai/sdk', { cause: err });
        }
        throw err;
      }
      model = new mod.AnthropicModel({
        ...common,
        ...(params ? { params } : {}),
        apiKey,
        clientConfig: { ...(baseURL ? { baseURL } : {}), maxRetries, ...(timeout ? { timeout } : {}) },
      }) as Model<BaseModelConfig>;
      Object.assign(info, { provider: 'anthropic', baseURL });
      break;
    }
    case 'replay': {
      if (typeof config.cassette !== 'string' || !config.cassette) {
        throw new ConfigurationError(`${where}.provider replay needs ${where}.cassette: the path of a cassette YAML file`);
      }
      const file = isAbsolute(config.cassette) ? config.cassette : resolve(baseDir, config.cassette);
      const { ReplayModel } = await import('./replay-model.ts');
      model = await ReplayModel.fromFile(file, {
        ...(common.modelId ? { modelId: common.modelId } : {}),
        check: config.replay === 'loose' ? 'loose' : 'strict',
        paths: { baseDir },
      });
      Object.assign(info, { provider: 'replay', cassette: file });
      break;
    }
    default:
      throw new ConfigurationError(`unknown ${where}.provider '${String(provider)}' — use bedrock, openai, anthropic or replay`);
  }
  if (common.modelId) info.modelId = common.modelId;
  info.retry = readRetryConfig(config, where);
  info.where = where;
  infos.set(model, info);
  return model;
}

/**
 * One line saying what failed and what to configure. Keeps AgentAppsErrors (ours, e.g. a
 * replay cassette running out) as they are; anything else becomes `E_MODEL`.
 */
export function explainModelError(err: unknown, model: object): AgentAppsError {
  const chain: Array<Record<string, any>> = [];
  for (let e: unknown = err, i = 0; e && typeof e === 'object' && i < 8; e = (e as { cause?: unknown }).cause, i++) {
    chain.push(e as Record<string, any>);
  }
  const ours = chain.find((e) => e instanceof AgentAppsError);
  if (ours) return ours as AgentAppsError;

  const info = describeModel(model) ?? { provider: 'bedrock' as const };
  const names = chain.map((e) => String(e.name && e.name !== 'Error' ? e.name : e.constructor?.name ?? ''));
  const has = (...n: string[]) => names.some((x) => n.includes(x));
  const status = chain.map((e) => e.status ?? e.$metadata?.httpStatusCode).find((s) => typeof s === 'number') as number | undefined;
  const codes = chain.map((e) => e.code).filter((c) => typeof c === 'string') as string[];
  const message = oneLine(chain.map((e) => String(e.message ?? '')).find(Boolean) ?? String(err));
  // No model configured at all: the fix is a `model:` in the metadata, not AWS (a new user's first run).
  const unset = info.defaulted ? " — no model is configured: set model: in the skill's metadata or a main.md (provider: openai, anthropic or bedrock, or replay with a cassette to run offline)" : '';
  const make = (text: string) => new AgentAppsError('E_MODEL', text + unset, { cause: err });
  const network = has('APIConnectionError', 'APIConnectionTimeoutError', 'TimeoutError') ||
    codes.some((c) => ['ECONNREFUSED', 'ENOTFOUND', 'ECONNRESET', 'EHOSTUNREACH', 'ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'EAI_AGAIN'].includes(c));
  const timedOut = has('APIConnectionTimeoutError', 'TimeoutError') || codes.includes('ETIMEDOUT');

  // The server closed the connection (a reset, or a stream cut off mid-answer): it was reached.
  const cut = codes.some((c) => ['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED'].includes(c)) || chain.some((e) => /^terminated$/i.test(String(e.message ?? '')));
  if (cut && (info.provider === 'openai' || info.provider === 'anthropic')) {
    const where = info.provider === 'openai' ? `the model at ${info.baseURL ?? 'https://api.openai.com/v1'}` : `the Anthropic API${info.baseURL ? ` at ${info.baseURL}` : ''}`;
    return make(`the connection to ${where} was cut before the answer was complete`);
  }
  if (has('MaxTokensError')) return make('the model stopped at its output token limit — raise model.maxTokens');
  if (has('ContextWindowOverflowError')) return make("the conversation no longer fits the model's context window — shorten the prompt or use a model with a larger window");

  switch (info.provider) {
    case 'openai': {
      const where = info.baseURL ?? 'https://api.openai.com/v1';
      if (network) {
        return info.baseURL
          ? make(`${timedOut ? 'timed out reaching' : 'cannot reach'} the model at ${where} — check model.baseURL (is the server running?)`)
          : make(`${timedOut ? 'timed out reaching' : 'cannot reach'} the OpenAI API at ${where} — check the network, or set model.baseURL for a local server`);
      }
      if (status === 401 || status === 403) return make(`the model server at ${where} refused the API key (${status}) — set OPENAI_API_KEY (or model.apiKeyEnv)`);
      if (status === 404) return make(`the model server at ${where} has no model '${info.modelId ?? '(default)'}' or no chat completions endpoint (404) — check model.modelId, and that model.baseURL ends in /v1`);
      break;
    }
    case 'anthropic': {
      if (network) return make(`cannot reach the Anthropic API${info.baseURL ? ` at ${info.baseURL}` : ''} — check the network${info.baseURL ? ' and model.baseURL' : ''}`);
      if (status === 401 || status === 403) return make(`the Anthropic API refused the API key (${status}) — set ANTHROPIC_API_KEY (or model.apiKeyEnv)`);
      if (status === 404) return make(`the Anthropic API has no model '${info.modelId ?? '(default)'}' — check model.modelId`);
      break;
    }
    case 'bedrock': {
      if (has('CredentialsProviderError', 'UnrecognizedClientException', 'InvalidSignatureException', 'ExpiredTokenException', 'ExpiredToken') || /could not load credentials|security token/i.test(message)) {
        return make('Bedrock needs AWS credentials and a region: set AWS_REGION and AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (or AWS_BEARER_TOKEN_BEDROCK), or use another model.provider');
      }
      if (has('AccessDeniedException')) {
        return make(`Bedrock denied access to model '${info.modelId ?? '(default)'}'${info.region ? ` in ${info.region}` : ''} — enable model access in the Bedrock console, or set model.modelId / model.region`);
      }
      if (has('ResourceNotFoundException') || (has('ValidationException') && /model identifier|model id/i.test(message))) {
        return make(`Bedrock has no model '${info.modelId ?? '(default)'}'${info.region ? ` in ${info.region}` : ''} — check model.modelId and model.region`);
      }
      if (network) return make(`cannot reach Bedrock${info.region ? ` in ${info.region}` : ''} — check AWS_REGION (or model.region) and the network`);
      break;
    }
    case 'replay':
      break;
  }
  return make(`the model failed (${info.provider}${info.modelId ? ` ${info.modelId}` : ''}): ${message}`);
}

function defaultKeyEnv(provider: string): string {
  if (provider === 'openai') return 'OPENAI_API_KEY';
  if (provider === 'anthropic') return 'ANTHROPIC_API_KEY';
  return 'the provider\'s usual variables';
}

function oneLine(s: string): string {
  const line = s.split('\n').map((l) => l.trim()).find(Boolean) ?? '';
  return line.length > 300 ? `${line.slice(0, 297)}…` : line;
}

function isModuleNotFound(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
