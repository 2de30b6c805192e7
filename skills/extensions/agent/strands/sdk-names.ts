// The Strands SDK values the provider's files use — the exports of its light bundle. sdk.ts
// re-exports exactly these; scripts/build.js bundles exactly these (dist/strands-sdk). A name the
// provider starts to import goes here first.
export const SDK_NAMES = [
  'Agent',
  'AfterModelCallEvent',
  'AfterToolCallEvent',
  'AfterToolsEvent',
  'BeforeModelCallEvent',
  'BeforeToolCallEvent',
  'FunctionTool',
  'ModelStreamUpdateEvent',
  'NullConversationManager',
  'SlidingWindowConversationManager',
  'configureLogging',
  'Model',
] as const;

export type SdkName = (typeof SDK_NAMES)[number];
