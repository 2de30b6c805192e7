// The build's bundles (scripts/build.js, dist/bundles/) stand in for the packages they replace
// without changing what runs: the Strands agent loop without the clients a run may not need, remark
// and ajv. And the sandbox process starts while the agent prepares (SPEC §14, cli.agent). How fast
// is for `npm run bench -- cli.agent`; these tests check what is loaded and that it behaves the same.
// The bundles exist once `npm run build` has run (.ci/run builds before the tests).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as fullSdk from '@strands-agents/sdk';
import { REPO, runtimeAt, tempDir, workspace } from './helpers.ts';
import { cliEnv } from './cli-process.ts';
import { AJV_OPTIONS, validator } from '../src/kernel/schema.ts';
import { sandboxProcessPid } from '../src/sandbox/process.ts';
import { SDK_NAMES } from '../skills/extensions/agent/strands/sdk-names.ts';

const BUNDLES = path.join(REPO, 'dist', 'bundles');
const BIN = path.join(REPO, 'bin', 'agent-apps.js');
const notBuilt = !['strands-sdk.json', 'remark.js', 'ajv.js', 'gray-matter.cjs', 'yaml.cjs'].every((f) => fs.existsSync(path.join(BUNDLES, f))) && 'dist/bundles is not built (npm run build)';

/** A module that records every module URL the process loads (resolving is not loading), written to $LOADED_LOG at exit. */
function loadedHook(dir: string): string {
  const file = path.join(dir, 'loaded-hook.mjs');
  fs.writeFileSync(
    file,
    `import { registerHooks } from 'node:module';
import fs from 'node:fs';
const seen = new Set();
registerHooks({ load(url, context, next) { seen.add(url); return next(url, context); } });
process.on('exit', () => fs.writeFileSync(process.env.LOADED_LOG, [...seen].join('\\n')));
`,
  );
  return pathToFileURL(file).href;
}

/** Runs the CLI in `cwd` with the hook; returns the run and the module URLs it loaded. */
function tracedRun(cwd: string, hook: string, args: string[], env: Record<string, string> = {}) {
  const log = path.join(cwd, `loaded-${Math.random().toString(36).slice(2)}.log`);
  const r = spawnSync(process.execPath, ['--import', hook, BIN, ...args], { cwd, env: cliEnv({ LOADED_LOG: log, ...env }), encoding: 'utf8', timeout: 60_000 });
  return { ...r, loaded: fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n') : [] };
}

const SDK_INDEX = /@strands-agents\/sdk\/dist\/src\/index(\.node)?\.js$/;
const HEAVY = /node_modules\/(@aws-sdk|@smithy|@modelcontextprotocol|zod)\//;

describe('the Strands light bundle (dist/bundles/strands-sdk.js)', { skip: notBuilt }, () => {
  test('the facade loads it: the agent loop is its own, the modules the SDK providers import are the installed SDK’s', async () => {
    const sdk = await import('../skills/extensions/agent/strands/sdk.ts');
    assert.equal(sdk.lightBundleUrl(), pathToFileURL(path.join(BUNDLES, 'strands-sdk.js')).href);
    const bundle = await import(pathToFileURL(path.join(BUNDLES, 'strands-sdk.js')).href);
    assert.deepEqual(Object.keys(bundle).sort(), [...SDK_NAMES].sort(), 'the bundle exports exactly sdk-names.ts');
    assert.notEqual(sdk.Agent, fullSdk.Agent, 'Agent is the bundle’s');
    assert.equal(sdk.Agent, bundle.Agent);
    // One class of each for instanceof across the bundle and OpenAIModel & co, one logger binding.
    assert.equal(sdk.Model, fullSdk.Model);
    assert.equal(sdk.configureLogging, fullSdk.configureLogging);
  });

  test('what the bundle leaves out fails naming itself, and how to get the whole SDK', async () => {
    const sdk = await import('../skills/extensions/agent/strands/sdk.ts');
    // An Agent with no model would make a BedrockModel: the AWS SDK is not in the bundle.
    assert.throws(() => new sdk.Agent({ printer: false }), /BedrockModel is not in agent-apps' light Strands bundle .*AGENT_APPS_STRANDS_BUNDLE=0/);
    // The SDK itself has it.
    assert.ok(new fullSdk.Agent({ printer: false }).model instanceof fullSdk.BedrockModel);
  });

  test('a bundle built for another SDK version or another SDK folder is not used, nor one with AGENT_APPS_STRANDS_BUNDLE=0', async (t) => {
    const { lightBundleUrl } = await import('../skills/extensions/agent/strands/sdk.ts');
    const real = JSON.parse(fs.readFileSync(path.join(BUNDLES, 'strands-sdk.json'), 'utf8'));
    const dir = tempDir(t);
    const sdkFromDir = path.relative(dir, path.resolve(BUNDLES, real.sdk)) + '/';
    const at = (manifest: object) => {
      fs.writeFileSync(path.join(dir, 'strands-sdk.json'), JSON.stringify(manifest));
      return lightBundleUrl(pathToFileURL(dir + '/'));
    };
    assert.equal(at({ ...real, sdk: sdkFromDir }), pathToFileURL(path.join(dir, 'strands-sdk.js')).href, 'the same SDK from elsewhere: used');
    assert.equal(at({ ...real, sdk: sdkFromDir, sdkVersion: '0.0.1' }), undefined, 'another version');
    assert.equal(at({ ...real, sdk: '../' }), undefined, 'another folder');
    fs.rmSync(path.join(dir, 'strands-sdk.json'));
    assert.equal(lightBundleUrl(pathToFileURL(dir + '/')), undefined, 'no manifest');
    process.env.AGENT_APPS_STRANDS_BUNDLE = '0';
    try {
      assert.equal(lightBundleUrl(), undefined);
    } finally {
      delete process.env.AGENT_APPS_STRANDS_BUNDLE;
    }
  });

  test('a replayed agent run loads neither the SDK’s index nor Bedrock, MCP or zod; remark, ajv, gray-matter and yaml come from their bundles', (t) => {
    const dir = tempDir(t);
    const hook = loadedHook(dir);
    const ws = path.join(dir, 'ws');
    assert.equal(spawnSync(process.execPath, [BIN, 'init', ws], { env: cliEnv(), encoding: 'utf8' }).status, 0);
    const r = tracedRun(ws, hook, ['run', 'hello', '--name', 'Ada']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, 'Hello, Ada!\n');
    assert.ok(r.loaded.some((u) => u.endsWith('/dist/bundles/strands-sdk.js')), 'the hook saw the bundle load');
    assert.deepEqual(r.loaded.filter((u) => SDK_INDEX.test(u) || HEAVY.test(u)), []);
    assert.ok(r.loaded.some((u) => u.endsWith('/dist/bundles/remark.js')) && r.loaded.some((u) => u.endsWith('/dist/bundles/ajv.js')));
    assert.deepEqual(r.loaded.filter((u) => /node_modules\/(remark|micromark|ajv|gray-matter|js-yaml|esprima|yaml)\//.test(u)), []);

    // The same run on the whole SDK: same answer.
    const full = tracedRun(ws, hook, ['run', 'hello', '--name', 'Ada'], { AGENT_APPS_STRANDS_BUNDLE: '0' });
    assert.equal(full.status, 0, full.stderr);
    assert.equal(full.stdout, 'Hello, Ada!\n');
    assert.ok(full.loaded.some((u) => SDK_INDEX.test(u)), 'AGENT_APPS_STRANDS_BUNDLE=0 loads the SDK itself');
  });
});

describe('ajv from dist/bundles/ajv.js', { skip: notBuilt }, () => {
  test('a schema is checked against draft-07 as ajv itself checks it: same verdict, same message', async () => {
    const require = createRequire(import.meta.url);
    const Ajv = require('ajv').default;
    const addFormats = require('ajv-formats').default;
    const plain = new Ajv(AJV_OPTIONS);
    addFormats(plain);
    const schemas: object[] = [
      { type: 'object', properties: { name: { type: 'string', default: 'world' } }, required: ['name'] },
      { type: 'strin' },
      { properties: 5 },
      { type: 'object', required: 'name' },
      { type: 'string', pattern: '(' },
      { type: 'string', format: 'email', minLength: -1 },
      { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { n: { type: 'integer', minimum: 'one' } } },
      { anyOf: [], enum: 'a' },
    ];
    for (const schema of schemas) {
      const expected = (() => {
        try {
          plain.compile(schema);
          return 'valid';
        } catch (err) {
          return (err as Error).message;
        }
      })();
      const got = await validator(schema).then(
        () => 'valid',
        (err: Error) => err.message,
      );
      assert.equal(got, expected, JSON.stringify(schema));
    }
    // And data is validated as ajv does, formats included.
    const email = await validator({ type: 'string', format: 'email' });
    assert.equal(email('ada@example.com'), true);
    assert.equal(email('not an email'), false);
  });
});

describe('the sandbox process starts while the agent prepares', () => {
  const files = (isolation: string) => ({
    'skills/greet.md': `---
name: greet
description: Greets.
metadata:
  model: { provider: replay, cassette: greet.cassette.yaml, sandbox: { isolation: ${isolation} } }
---
Say hello.
`,
    'skills/greet.cassette.yaml': 'turns:\n  - text: Hello.\n',
  });

  test('inline isolation never starts it; process isolation starts it for an agent that runs no code at all', async (t) => {
    // Nothing in this test file has started a sandbox yet (the CLI runs are other processes).
    assert.equal(sandboxProcessPid(), undefined);
    const inline = await runtimeAt(t, workspace(t, files('inline')));
    assert.equal(await inline.invoke('greet'), 'Hello.');
    assert.equal(sandboxProcessPid(), undefined, 'inline: no sandbox process');
    const processed = await runtimeAt(t, workspace(t, files('process')));
    assert.equal(await processed.invoke('greet'), 'Hello.');
    assert.equal(typeof sandboxProcessPid(), 'number', 'process: started before any code came (the model wrote none)');
  });
});
