// The bundled Strands provider's modules, for tests that use them directly — loaded the way the
// runtime loads them. They import the bare specifier `agent-apps`, which the runtime's module hooks
// resolve to src/index.ts (createRuntime installs them). Without the hooks, Node would resolve it to
// the package itself (dist/index.js): a second copy of the error classes, the bug of issue 8.
// Hence the imports below are dynamic, after the hooks are in.
import { installModuleHooks } from '../src/loader/module-hooks.ts';

installModuleHooks(new URL('../src/index.ts', import.meta.url).href);

const models = await import('../skills/extensions/agent/strands/models.ts');
const loop = await import('../skills/extensions/agent/strands/loop.ts');
const replay = await import('../skills/extensions/agent/strands/replay-model.ts');
const recorder = await import('../skills/extensions/agent/strands/recorder.ts');
const cassette = await import('../skills/extensions/agent/strands/cassette.ts');
const skill = await import('../skills/extensions/agent/strands/agent-strands.skill.ts');

export const { createModel, describeModel, explainModelError } = models;
export const { runAgentLoop } = loop;
export const { ReplayModel } = replay;
export type ReplayModel = InstanceType<typeof ReplayModel>;
export const { RecordingModel } = recorder;
export const { parseCassette, stringifyCassette } = cassette;
export const agentStrands = skill.default;
export const strandsFrontmatter = skill.frontmatter;
export type { AgentLoopOptions } from '../skills/extensions/agent/strands/loop.ts';
