// A part of the agent suite against the BUILT package (issue 8): dist/index.js and the bin on
// dist, the way an installed agent-apps runs — not src/. The bundled Strands provider stays
// TypeScript in skills/ and imports `agent-apps`, which resolves to the running entry. A provider
// file that imported src/ directly would load a second copy of the error classes next to dist's,
// and `instanceof AbortError` would fail only in an installed build; these tests catch that.
//
// The package is dist/ when it is current (`.ci/run` builds before `npm test`); otherwise it is
// built once into a temp package (src, skills and node_modules linked), leaving dist/ alone.
// This file imports nothing from src/, so that one copy of the runtime is loaded: dist's.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import YAML from 'yaml';

type Api = typeof import('../src/index.ts');

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const AGENT_WS = path.join(REPO, 'test', 'fixtures', 'agent-ws');
const HOME = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-built-home-'));
process.env.AGENT_APPS_HOME = HOME;
delete process.env.AGENT_APPS_PATH;

function newest(dir: string): number {
  let max = 0;
  for (const ent of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, ent.name);
    max = Math.max(max, ent.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs);
  }
  return max;
}

/** The repository when its dist/ is current (bin/agent-apps.js's own rule), else a fresh build in a temp package. */
function builtPackage(): string {
  const stamp = path.join(REPO, 'dist', '.build-stamp');
  if (fs.existsSync(stamp) && newest(path.join(REPO, 'src')) <= fs.statSync(stamp).mtimeMs) return REPO;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-built-'));
  for (const dir of ['src', 'skills', 'templates', 'node_modules']) fs.symlinkSync(path.join(REPO, dir), path.join(root, dir), 'dir');
  for (const file of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'bin/agent-apps.js', 'scripts/build.js']) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.copyFileSync(path.join(REPO, file), path.join(root, file));
  }
  execFileSync(process.execPath, [path.join(root, 'scripts', 'build.js')], { cwd: root, stdio: 'pipe' });
  return root;
}

const COUNT_RETURNS = { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] };

/** Markdown agent skills with their cassettes, in a temp search path. */
function agentSkills(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-apps-built-skills-'));
  const skills: Record<string, { model?: object; returns?: object; turns: object[] }> = {
    sleeper: { turns: [{ invoke: 'await new Promise((resolve) => setTimeout(resolve, 20000));' }, { text: 'never' }] },
    'turns-out': { model: { maxTurns: 1 }, returns: COUNT_RETURNS, turns: [{ invoke: 'return 1' }, { invoke: 'return 2' }] },
    'no-cassette': { model: { cassette: 'missing.cassette.yaml' }, turns: [] },
  };
  for (const [name, spec] of Object.entries(skills)) {
    const metadata = { ...(spec.returns ? { returns: spec.returns } : {}), model: { provider: 'replay', cassette: `${name}.cassette.yaml`, ...spec.model } };
    fs.writeFileSync(path.join(dir, `${name}.md`), `---\n${YAML.stringify({ name, description: `built-package agent ${name}`, metadata })}---\nYou are ${name}.\n`);
    fs.writeFileSync(path.join(dir, `${name}.cassette.yaml`), YAML.stringify({ turns: spec.turns }, { lineWidth: 0 }));
  }
  // A TypeScript skill that imports the subpath: the test checks it gets dist's own module.
  fs.writeFileSync(path.join(dir, 'probe-subpath.skill.ts'), "import * as agent from 'agent-apps/agent';\nimport { kernelOf } from 'agent-apps';\nexport default { description: 'probe', fn: (ctx: any) => ({ same: agent.AgentTrace === (globalThis as any).__probeTrace, kernel: typeof kernelOf(ctx).resolve }) };\n");
  return dir;
}

function cli(root: string, args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, AGENT_APPS_HOME: HOME };
  for (const key of ['AGENT_APPS_PATH', 'NO_COLOR', 'FORCE_COLOR', 'NODE_OPTIONS', 'NODE_TEST_CONTEXT']) delete env[key];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'bin', 'agent-apps.js'), ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('the agent from the built package (dist/)', { timeout: 60_000 }, () => {
  let root: string;
  let api: Api;
  let skills: string;
  let rt: Awaited<ReturnType<Api['createRuntime']>>;

  before(async () => {
    root = builtPackage();
    api = (await import(pathToFileURL(path.join(root, 'dist', 'index.js')).href)) as Api;
    skills = agentSkills();
    rt = await api.createRuntime({ cwd: AGENT_WS, paths: [skills] });
  });
  after(() => rt?.close());
  process.on('exit', () => {
    for (const dir of [HOME, skills, root !== REPO ? root : undefined]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a replay cassette run through the agent and agent-strands returns its finish() value', async () => {
    assert.deepEqual(await rt.invoke('count', { text: 'a b c' }), { count: 3 });
  });

  test('the public API has no internals back door; the agent parts are the subpath agent-apps/agent, one copy with dist', async () => {
    assert.equal('internals' in api, false, 'agent-apps still exports internals');
    for (const name of ['kernelOf', 'servedTool', 'configError', 'checkConfig', 'checkSchema', 'eventBus', 'terminalOf']) assert.equal(typeof (api as Record<string, unknown>)[name], 'function', name);
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { exports: Record<string, { import: string }> };
    const agentUrl = pathToFileURL(path.join(root, pkg.exports['./agent']!.import)).href;
    const agent = (await import(agentUrl)) as typeof import('../src/agent/index.ts');
    for (const name of ['readLimits', 'LimitCounter', 'AgentTrace', 'Returns', 'AgentCode', 'createBridge', 'ApprovalState', 'agentPolicy', 'createSandbox']) assert.equal(typeof (agent as Record<string, unknown>)[name], 'function', name);
    // A skill importing `agent-apps/agent` gets this same module (the runtime's module hook), not a copy.
    (globalThis as Record<string, unknown>).__probeTrace = agent.AgentTrace;
    assert.deepEqual(await rt.invoke('probe-subpath', {}), { same: true, kernel: 'function' });
  });

  test('an abort crossing the Strands provider is an AbortError of the built package', async () => {
    const controller = new AbortController();
    const pending = rt.invoke('sleeper', {}, { context: { signal: controller.signal } });
    setTimeout(() => controller.abort('user cancelled'), 200);
    await assert.rejects(pending, (err) => {
      assert.ok(err instanceof api.AbortError, `not dist's AbortError: ${String(err)}`);
      assert.equal((err as { code?: string }).code, 'E_ABORTED');
      return true;
    });
  });

  test("the Strands loop's own errors are the built package's classes (AbortError, AgentAppsError)", async () => {
    // The provider's modules as the runtime imports them: their `agent-apps` is dist/index.js.
    const loop = (await import(pathToFileURL(path.join(root, 'skills', 'extensions', 'agent', 'strands', 'loop.ts')).href)) as typeof import('../skills/extensions/agent/strands/loop.ts');
    const models = (await import(pathToFileURL(path.join(root, 'skills', 'extensions', 'agent', 'strands', 'models.ts')).href)) as typeof import('../skills/extensions/agent/strands/models.ts');
    const model = await models.createModel({ provider: 'replay', cassette: 'count.cassette.yaml' }, { baseDir: path.join(AGENT_WS, 'skills') });
    const aborted = AbortSignal.abort('stop');
    await assert.rejects(loop.runAgentLoop({ model, systemPrompt: 's', userMessage: 'u', signal: aborted, onCode: async () => 1 }), (err) => err instanceof api.AbortError);
    await assert.rejects(loop.runAgentLoop({ model, systemPrompt: 's', userMessage: 'u', maxTurns: 0, onCode: async () => 1 }), (err) => err instanceof api.AgentAppsError && err.code === 'E_AGENT_LIMIT');
  });

  test('E_AGENT_LIMIT and a missing cassette (E_CONFIG) are errors of the built package', async () => {
    await assert.rejects(rt.invoke('turns-out', {}), (err) => err instanceof api.AgentAppsError && err.code === 'E_AGENT_LIMIT');
    await assert.rejects(rt.invoke('no-cassette', {}), (err) => err instanceof api.ConfigurationError && /cannot read replay cassette/.test(err.message));
  });

  test('the bin on dist: a cassette run prints its result (exit 0); E_AGENT_LIMIT is one line (exit 1)', async () => {
    const ok = await cli(root, ['--path', skills, 'run', 'count', '--text', 'a b', '--json'], AGENT_WS);
    assert.equal(ok.stdout, '{"count":2}\n', ok.stderr);
    assert.equal(ok.code, 0);
    const limit = await cli(root, ['--path', skills, 'run', 'turns-out'], AGENT_WS);
    assert.match(limit.stderr, /^error \[E_AGENT_LIMIT\]: /);
    assert.equal(limit.code, 1);
  });
});
