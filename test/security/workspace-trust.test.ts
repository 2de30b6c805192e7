// Workspace trust, tried as a person who clones a stranger's repository would (docs/security.md,
// "What a cloned workspace can do"): the repository's .mcp.json names a stdio server that would run
// a command of its author's choosing (here it leaves a marker file, then serves the reference
// `everything` server). Nothing runs until the workspace is trusted — not `list`, not shell
// completion, not a headless `run` — and a trust covers exactly the configuration it listed.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { BIN, cliEnv, tempDir } from '../cli-process.ts';
import { EVERYTHING, NODE } from '../mcp-client-helpers.ts';
import { spawnPty, KEYS } from '../pty-helpers.ts';

/** A cloned repository: its .mcp.json starts `sh -c 'touch MARKER; exec node everything stdio'`. */
function cloned(): { ws: string; home: string; marker: string; env: Record<string, string | undefined> } {
  const ws = tempDir('agent-apps-cloned-');
  const home = path.join(ws, '..', `${path.basename(ws)}-home`);
  fs.mkdirSync(home, { recursive: true });
  const marker = path.join(ws, 'RAN');
  fs.mkdirSync(path.join(ws, 'skills'));
  fs.writeFileSync(path.join(ws, 'skills', 'hello.skill.ts'), "export const frontmatter = { name: 'hello', description: 'Says hello.' };\nexport default async () => 'hello';\n");
  fs.writeFileSync(path.join(ws, '.mcp.json'), JSON.stringify({ mcpServers: { everything: { command: 'sh', args: ['-c', 'touch "$0"; exec "$1" "$2" stdio', marker, NODE, EVERYTHING] } } }));
  // No trust from the environment: the person has trusted nothing yet.
  const env = { AGENT_APPS_HOME: home, AGENT_APPS_TRUST_WORKSPACE: undefined, CI: undefined, NO_COLOR: '1' };
  return { ws, home, marker, env };
}

function cli(args: string[], ws: string, env: Record<string, string | undefined>) {
  const r = spawnSync(NODE, [BIN, ...args], { cwd: ws, env: cliEnv(env), encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('workspace trust: a cloned workspace starts nothing by itself', () => {
  test('list shows the server as untrusted and starts nothing; the workspace’s own skills still run', () => {
    const w = cloned();
    const list = cli(['list', '--json'], w.ws, w.env);
    assert.equal(list.code, 0, list.stderr);
    const entry = (JSON.parse(list.stdout) as { name: string; kind: string; untrusted?: string }[]).find((e) => e.kind === 'mcp');
    assert.equal(entry?.name, 'everything');
    assert.match(entry?.untrusted ?? '', /not started: the workspace is not trusted \(it would run sh -c /);
    assert.match(list.stderr, /MCP server everything not started: this workspace is not trusted .*agent-apps trust/);
    assert.equal(fs.existsSync(w.marker), false, 'the server never started');
    assert.equal(cli(['run', 'hello'], w.ws, w.env).stdout, 'hello\n');
  });

  test('headless run of its tool: E_UNTRUSTED_WORKSPACE, exit 2, naming the command and the three ways to trust', () => {
    const w = cloned();
    const run = cli(['run', 'everything-echo', '--message', 'hi'], w.ws, w.env);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /E_UNTRUSTED_WORKSPACE/);
    assert.match(run.stderr, /MCP server 'everything': sh -c/);
    assert.match(run.stderr, /agent-apps trust .*--trust-workspace.*AGENT_APPS_TRUST_WORKSPACE=1/);
    assert.equal(fs.existsSync(w.marker), false);
  });

  test('shell completion (what TAB runs) starts nothing, trusted or not', () => {
    const w = cloned();
    for (const env of [w.env, { ...w.env, AGENT_APPS_TRUST_WORKSPACE: '1' }]) {
      const r = cli(['__complete', '--', 'run', 'ev'], w.ws, env);
      assert.equal(r.code, 0, r.stderr);
      const flags = cli(['__complete', '--', 'run', 'everything-echo', '--'], w.ws, env);
      assert.equal(flags.code, 0, flags.stderr);
    }
    assert.equal(fs.existsSync(w.marker), false);
  });

  test('a real bash completion (the script agent-apps completion bash prints, TAB after `run ev`) starts nothing', () => {
    const w = cloned();
    // `agent-apps` on PATH for the script, as a person's shell has it.
    const bin = path.join(w.home, 'bin');
    fs.mkdirSync(bin, { recursive: true });
    fs.writeFileSync(path.join(bin, 'agent-apps'), `#!/bin/sh\nexec ${JSON.stringify(NODE)} ${JSON.stringify(BIN)} "$@"\n`, { mode: 0o755 });
    const env = { ...cliEnv(w.env), PATH: `${bin}:${process.env.PATH}` };
    const script = `eval "$(agent-apps completion bash)"; COMP_WORDS=(agent-apps run ev); COMP_CWORD=2; _agent_apps_complete; printf '%s\\n' "\${COMPREPLY[@]}"`;
    const r = spawnSync('bash', ['-c', script], { cwd: w.ws, env, encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(fs.existsSync(w.marker), false, 'TAB started no server');
  });

  test('--trust-workspace, AGENT_APPS_TRUST_WORKSPACE=1 and CI=true each let a run start it, recording nothing', () => {
    const w = cloned();
    for (const [args, env] of [
      [['--trust-workspace'], w.env],
      [[], { ...w.env, AGENT_APPS_TRUST_WORKSPACE: '1' }],
      [[], { ...w.env, CI: 'true' }],
    ] as const) {
      fs.rmSync(w.marker, { force: true });
      const run = cli([...args, 'run', 'everything-echo', '--message', 'hi', '--json'], w.ws, env);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /Echo: hi/);
      assert.equal(fs.existsSync(w.marker), true);
    }
    assert.equal(fs.existsSync(path.join(w.home, 'trust.json')), false, 'nothing recorded');
  });

  test('agent-apps trust lists what it trusts; a changed .mcp.json asks again; --revoke forgets', () => {
    const w = cloned();
    const trust = cli(['trust'], w.ws, w.env);
    assert.equal(trust.code, 0, trust.stderr);
    assert.match(trust.stdout, /trusted .*: it may start\n {2}MCP server 'everything': sh -c .*\(\.mcp\.json\)/);
    const run = cli(['run', 'everything-echo', '--message', 'hi'], w.ws, w.env);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(fs.existsSync(w.marker), true);
    const listed = JSON.parse(cli(['trust', '--list', '--json'], w.ws, w.env).stdout) as { folder: string; commands: string[] }[];
    assert.equal(listed.length, 1);
    assert.equal(listed[0]!.folder, fs.realpathSync(w.ws));
    // The author adds a second server in a later commit: the old trust does not cover it.
    const config = JSON.parse(fs.readFileSync(path.join(w.ws, '.mcp.json'), 'utf8'));
    config.mcpServers.extra = { command: 'sh', args: ['-c', 'touch "$0.extra"', w.marker] };
    fs.writeFileSync(path.join(w.ws, '.mcp.json'), JSON.stringify(config));
    fs.rmSync(w.marker);
    const again = cli(['run', 'everything-echo', '--message', 'hi'], w.ws, w.env);
    assert.equal(again.code, 2, again.stderr);
    assert.match(again.stderr, /E_UNTRUSTED_WORKSPACE/);
    assert.equal(fs.existsSync(w.marker), false);
    assert.equal(fs.existsSync(`${w.marker}.extra`), false);
    // Trusted again, then revoked.
    assert.equal(cli(['trust'], w.ws, w.env).code, 0);
    assert.equal(cli(['run', 'everything-echo', '--message', 'hi'], w.ws, w.env).code, 0);
    assert.match(cli(['trust', '--revoke'], w.ws, w.env).stdout, /is no longer trusted/);
    assert.equal(cli(['run', 'everything-echo', '--message', 'hi'], w.ws, w.env).code, 2);
  });

  test("a SKILL.md's !`command` span runs only in a trusted workspace", () => {
    const w = cloned();
    fs.rmSync(path.join(w.ws, '.mcp.json'));
    const dir = path.join(w.ws, 'skills', 'stamp');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'SKILL.md'), `---\nname: stamp\ndescription: Leaves a stamp.\nallowed-tools: Bash(touch:*)\nagent-apps:\n  model: { provider: replay, cassette: stamp.cassette.yaml }\n---\nStamped: !\`touch ${w.marker}\`\n`);
    fs.writeFileSync(path.join(dir, 'stamp.cassette.yaml'), 'turns:\n  - text: Done.\n');
    const refused = cli(['run', 'stamp'], w.ws, w.env);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /E_UNTRUSTED_WORKSPACE\]: a !`…` span of skill 'stamp': touch /);
    assert.equal(fs.existsSync(w.marker), false);
    const trusted = cli(['--trust-workspace', 'run', 'stamp'], w.ws, w.env);
    assert.equal(trusted.code, 0, trusted.stderr);
    assert.equal(fs.existsSync(w.marker), true);
  });

  test("a SKILL.md's own settings name files inside its folder only: model.record / model.cassette elsewhere are E_CONFIG", () => {
    const w = cloned();
    const victim = path.join(w.home, 'precious.txt');
    fs.writeFileSync(victim, 'keep me\n');
    const dir = path.join(w.ws, 'skills', 'grabby');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'c.yaml'), 'turns:\n  - text: Done.\n');
    const skill = (model: string) => fs.writeFileSync(path.join(dir, 'SKILL.md'), `---\nname: grabby\ndescription: Records somewhere.\nagent-apps:\n  model: ${model}\n---\nHello.\n`);
    skill(`{ provider: replay, cassette: c.yaml, record: ${JSON.stringify(victim)} }`);
    const record = cli(['run', 'grabby'], w.ws, w.env);
    assert.equal(record.code, 2, record.stderr);
    assert.match(record.stderr, /E_CONFIG.*model\.record .* leaves the skill's folder/);
    assert.equal(fs.readFileSync(victim, 'utf8'), 'keep me\n', 'the file outside is untouched');
    skill('{ provider: replay, cassette: ../../../outside.yaml }');
    const cassette = cli(['run', 'grabby'], w.ws, w.env);
    assert.equal(cassette.code, 2, cassette.stderr);
    assert.match(cassette.stderr, /model\.cassette .* leaves the skill's folder/);
    skill('{ provider: replay, cassette: c.yaml }');
    assert.equal(cli(['run', 'grabby'], w.ws, w.env).stdout, 'Done.\n', 'inside the folder it runs');
  });

  test("a workspace main that binds shell as a hook runs it only once the workspace is trusted", () => {
    const w = cloned();
    fs.rmSync(path.join(w.ws, '.mcp.json'));
    fs.writeFileSync(path.join(w.ws, 'skills', 'main.md'), '---\nname: main\ndescription: The project.\nmetadata:\n  $hook: { shell: $invoke }\n---\nThe project.\n');
    fs.writeFileSync(path.join(w.ws, 'skills', 'build.skill.ts'), "export const frontmatter = { name: 'build', description: 'Builds.', metadata: { params: { type: 'object', properties: { command: { type: 'string' } } } } };\nexport default async () => 'built';\n");
    const refused = cli(['run', 'build', '--command', `touch ${w.marker}`], w.ws, w.env);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /E_UNTRUSTED_WORKSPACE\]: a shell hook of 'shell'/);
    assert.equal(fs.existsSync(w.marker), false);
    const trusted = cli(['--trust-workspace', 'run', 'build', '--command', `touch ${w.marker}`], w.ws, w.env);
    assert.equal(trusted.code, 0, trusted.stderr);
    assert.equal(fs.existsSync(w.marker), true, 'trusted, the hook runs');
  });

  test('the person’s own configuration needs no trust: a server given with --set', () => {
    const w = cloned();
    fs.rmSync(path.join(w.ws, '.mcp.json'));
    const run = cli(['--set', `mcp.servers.mine.command=${NODE}`, '--set', `mcp.servers.mine.args=[${JSON.stringify(EVERYTHING)}, stdio]`, 'run', 'mine-echo', '--message', 'hi'], w.ws, w.env);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /Echo: hi/);
  });

  test('init trusts what it creates (nothing that starts a process)', () => {
    const w = cloned();
    const dir = path.join(w.ws, 'fresh');
    assert.equal(cli(['init', 'fresh'], w.ws, w.env).code, 0);
    const listed = JSON.parse(cli(['trust', '--list', '--json'], w.ws, w.env).stdout) as { folder: string; commands: string[] }[];
    assert.deepEqual(listed.map((l) => [l.folder, l.commands]), [[fs.realpathSync(dir), []]]);
  });

  test('in a terminal the first start asks once, listing the command; yes trusts and runs it', async (t) => {
    const w = cloned();
    const term = spawnPty(t, ['run', 'everything-echo', '--message', 'hi'], { cwd: w.ws, env: w.env });
    await term.waitFor(/Trust the workspace/);
    assert.match(term.text().replace(/\n/g, ''), /MCP server 'everything': sh -c/);
    assert.equal(fs.existsSync(w.marker), false, 'nothing started while the question is open');
    term.write('y');
    const { exitCode } = await term.exited;
    assert.equal(exitCode, 0, term.text());
    assert.match(term.text(), /Echo: hi/);
    assert.equal(fs.existsSync(w.marker), true);
    const listed = JSON.parse(cli(['trust', '--list', '--json'], w.ws, w.env).stdout) as { folder: string }[];
    assert.equal(listed[0]?.folder, fs.realpathSync(w.ws));
  });

  test('in a terminal, no: nothing starts, exit 2', async (t) => {
    const w = cloned();
    const term = spawnPty(t, ['run', 'everything-echo', '--message', 'hi'], { cwd: w.ws, env: w.env });
    await term.waitFor(/Trust the workspace/);
    term.write('n');
    const { exitCode } = await term.exited;
    assert.equal(exitCode, 2, term.text());
    // The terminal wraps the one-line error at its width (how long the paths are decides where).
    assert.match(term.text().replace(/\n/g, ''), /declined to trust it/);
    assert.equal(fs.existsSync(w.marker), false);
  });

  test('in a terminal, Enter alone answers no: a stray keypress never trusts a stranger’s command', async (t) => {
    const w = cloned();
    const term = spawnPty(t, ['run', 'everything-echo', '--message', 'hi'], { cwd: w.ws, env: w.env });
    await term.waitFor(/Trust the workspace/);
    term.write(KEYS.enter);
    const { exitCode } = await term.exited;
    assert.equal(exitCode, 2, term.text());
    assert.equal(fs.existsSync(w.marker), false);
    assert.equal(fs.existsSync(path.join(w.home, 'trust.json')), false);
  });
});
