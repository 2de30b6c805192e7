// The Strands SDK as the provider uses it: the values named in sdk-names.ts, from the light bundle
// that scripts/build.js makes (dist/bundles/strands-sdk.js) when it fits the installed SDK, else from
// `@strands-agents/sdk` itself. The SDK's index loads Bedrock's AWS client, the MCP SDK, zod and
// more — about 450 ms — on every agent run; the bundle holds the agent loop without them (about
// 20 ms), so a replayed run does not wait for clients it never calls. Model providers (openai,
// anthropic, bedrock) are still the SDK's own modules (models.ts); the bundle imports the modules
// they share with it (Model, the errors, the messages, the logger) from the installed SDK, so both
// see one copy of each and `instanceof` holds across them.
// AGENT_APPS_STRANDS_BUNDLE=0 loads the SDK itself.

import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as Sdk from '@strands-agents/sdk';
import type { BaseModelConfig } from '@strands-agents/sdk';
import { SDK_NAMES, type SdkName } from './sdk-names.ts';

type Light = Pick<typeof Sdk, SdkName>;

/** What scripts/build.js writes beside the bundle. */
interface Manifest {
  /** The SDK version the bundle was made from. */
  sdkVersion: string;
  /** The SDK's dist/src/ folder, relative to the bundle's: where its shared modules are imported from. */
  sdk: string;
}

/**
 * The light bundle's URL when the one in `dir` was built from the SDK installed here, else
 * undefined. By default dist/bundles/ from skills/extensions/agent/strands/, or from the build's
 * copy of this file in dist/skills/ (src/loader/search-paths.ts, the library).
 */
export function lightBundleUrl(dir = new URL(import.meta.url.endsWith('.ts') ? '../../../../dist/bundles/' : '../../../../bundles/', import.meta.url)): string | undefined {
  if (process.env.AGENT_APPS_STRANDS_BUNDLE === '0') return undefined;
  try {
    const manifest = JSON.parse(readFileSync(new URL('strands-sdk.json', dir), 'utf8')) as Manifest;
    // The SDK this process would load, and the one the bundle's imports reach: the same files,
    // of the same version (an `npm update` without a rebuild falls back to the SDK).
    const installed = realpathSync(path.dirname(fileURLToPath(import.meta.resolve('@strands-agents/sdk'))));
    if (realpathSync(fileURLToPath(new URL(manifest.sdk, dir))) !== installed) return undefined;
    const { version } = JSON.parse(readFileSync(path.join(installed, '..', '..', 'package.json'), 'utf8')) as { version: string };
    if (version !== manifest.sdkVersion) return undefined;
  } catch {
    return undefined; // not built, or built for another layout
  }
  return new URL('strands-sdk.js', dir).href;
}

async function load(): Promise<Light> {
  const url = lightBundleUrl();
  if (url) {
    const light = (await import(url)) as Partial<Light>;
    // A bundle built before a name was added lacks it: the SDK has it.
    if (SDK_NAMES.every((name) => name in light)) return light as Light;
  }
  return import('@strands-agents/sdk');
}

const sdk = await load();

// Each value with its type under the same name, so that the provider's files only change where
// they import from.
export const Agent = sdk.Agent;
export type Agent = Sdk.Agent;
export const AfterModelCallEvent = sdk.AfterModelCallEvent;
export type AfterModelCallEvent = Sdk.AfterModelCallEvent;
export const AfterToolCallEvent = sdk.AfterToolCallEvent;
export type AfterToolCallEvent = Sdk.AfterToolCallEvent;
export const AfterToolsEvent = sdk.AfterToolsEvent;
export type AfterToolsEvent = Sdk.AfterToolsEvent;
export const BeforeModelCallEvent = sdk.BeforeModelCallEvent;
export type BeforeModelCallEvent = Sdk.BeforeModelCallEvent;
export const BeforeToolCallEvent = sdk.BeforeToolCallEvent;
export type BeforeToolCallEvent = Sdk.BeforeToolCallEvent;
export const FunctionTool = sdk.FunctionTool;
export type FunctionTool = Sdk.FunctionTool;
export const ModelStreamUpdateEvent = sdk.ModelStreamUpdateEvent;
export type ModelStreamUpdateEvent = Sdk.ModelStreamUpdateEvent;
export const NullConversationManager = sdk.NullConversationManager;
export type NullConversationManager = Sdk.NullConversationManager;
export const SlidingWindowConversationManager = sdk.SlidingWindowConversationManager;
export type SlidingWindowConversationManager = Sdk.SlidingWindowConversationManager;
export const configureLogging = sdk.configureLogging;
export const Model = sdk.Model;
export type Model<T extends BaseModelConfig = BaseModelConfig> = Sdk.Model<T>;
