// The import rules of src/ and skills/ (docs/architecture.md, The rules): which folder may import
// which. `npm run deps` checks them, beside `npm run cycles`, in .ci/run.
//
// The layers, bottom up — a folder imports only the ones below it:
//   core/                               nothing of ours outside core/
//   loader/, sandbox/                   core/
//   kernel/                             core/, loader/
//   policy/                             core/, kernel/, loader/
//   events/ nats/ agent/ mcp/ acp/ evals/ otel/
//                                       everything above, and each other — never both ways
//   src/runtime.ts                      the composition root: everything but surfaces/
//   src/index.ts                        the public API: everything but surfaces/
//   surfaces/                           anything; nothing outside it imports it
//   skills/                             the package (`agent-apps`, `agent-apps/agent`) only
//
// Type-only imports count: a type imported from a folder above still couples the two (a change
// there breaks a build here), so the fix is the same as for a value — move the type down, or
// give the lower folder an interface the upper one implements (loader/tool-source.ts).
// Dynamic `import()` counts too: loading later is still depending.
'use strict';

/** Our folders under src/, one regular expression each. */
const CORE = '^src/core/';
const LOADER = '^src/loader/';
const SANDBOX = '^src/sandbox/';
const KERNEL = '^src/kernel/';
const POLICY = '^src/policy/';
const MIDDLE = '^src/(events|nats|agent|mcp|acp|evals|otel)/';
const MIDDLE_FOLDER = '^src/(events|nats|agent|mcp|acp|evals|otel)$';
const SURFACES = '^src/surfaces/';
/** Everything of ours in src/ (a file or a folder). */
const OURS = '^src/';

module.exports = {
  forbidden: [
    {
      name: 'core-imports-only-core',
      comment: 'core/ is the bottom layer: errors, types, JSON, paths. It imports nothing of ours outside core/.',
      severity: 'error',
      from: { path: CORE },
      to: { path: OURS, pathNot: CORE },
    },
    {
      name: 'loader-imports-only-core',
      comment:
        'loader/ finds and reads skills: it imports core/ only. Tool sources above it (the MCP client) plug in through its ToolSource interface (src/loader/tool-source.ts), registered by src/runtime.ts.',
      severity: 'error',
      from: { path: LOADER },
      to: { path: OURS, pathNot: `${CORE}|${LOADER}` },
    },
    {
      name: 'sandbox-imports-only-core',
      comment: 'sandbox/ runs agent code in isolation: it imports core/ only.',
      severity: 'error',
      from: { path: SANDBOX },
      to: { path: OURS, pathNot: `${CORE}|${SANDBOX}` },
    },
    {
      name: 'kernel-imports-core-and-loader',
      comment:
        'kernel/ (middleware, invoke) imports core/ and loader/ only. What policy/ adds to the runtime state (workspaceTrust) reaches it by declaration merging, with no import.',
      severity: 'error',
      from: { path: KERNEL },
      to: { path: OURS, pathNot: `${CORE}|${LOADER}|${KERNEL}` },
    },
    {
      name: 'policy-imports-core-kernel-loader',
      comment: 'policy/ (approval, trust, what a workspace would start) imports core/, kernel/ and loader/ only.',
      severity: 'error',
      from: { path: POLICY },
      to: { path: OURS, pathNot: `${CORE}|${LOADER}|${KERNEL}|${POLICY}` },
    },
    {
      name: 'middle-not-composition-root',
      comment:
        'events/ nats/ agent/ mcp/ acp/ evals/ otel/ sit below src/runtime.ts and src/index.ts: what they need of a runtime comes in through RuntimeState or a parameter (evals: the runtime factory).',
      severity: 'error',
      from: { path: MIDDLE },
      to: { path: '^src/(runtime|index)\\.ts$' },
    },
    {
      name: 'middle-no-folder-cycle',
      comment: 'The middle folders may import each other, but never both ways: a pair that does is one layer in two folders.',
      severity: 'error',
      scope: 'folder',
      // Folders are named without a trailing slash here (src/acp).
      from: { path: MIDDLE_FOLDER },
      to: { path: MIDDLE_FOLDER, circular: true },
    },
    {
      name: 'nothing-imports-surfaces',
      comment:
        'surfaces/ (cli, tui, mcp-serve, acp-agent, worker) are the ways in: they import anything, nothing outside surfaces/ imports them. src/index.ts included: terminalOf hands skills the terminal the CLI put on the runtime state.',
      severity: 'error',
      from: { path: OURS, pathNot: SURFACES },
      to: { path: SURFACES },
    },
    {
      name: 'skills-import-the-package',
      comment:
        'A skill imports the package — `agent-apps`, `agent-apps/agent` (tsconfig paths) — never a file under src/: skills are written as any user writes them (docs/writing-skills.md).',
      severity: 'error',
      from: { path: '^skills/' },
      to: { path: OURS, dependencyTypesNot: ['aliased-tsconfig-paths'] },
    },
    {
      name: 'skills-import-only-the-package-entries',
      comment: 'Through the package, a skill reaches the two public entries only.',
      severity: 'error',
      from: { path: '^skills/' },
      to: { path: OURS, pathNot: '^src/(index|agent/index)\\.ts$' },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import that resolves to nothing: a typo, or a file that moved.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // Type-only imports count (see the top of this file).
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
    enhancedResolveOptions: {
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      exportsFields: ['exports'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
