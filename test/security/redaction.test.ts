// Secrets stay out of every output (docs/security.md, "Secrets"): one redaction, src/core/redact.ts,
// used by the log (so the run files), get() from agent code, stream-json, describe, runs show and
// the CLI's error lines. The unit tests pin the rules; the rest attack each output the way a user
// or an attacker would, through the real CLI or the real agent with a replayed cassette.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { isSecretKey, redact, redactString, REDACTED } from '../../src/core/redact.ts';
import { attackWorkspace, cli, tryAll } from './attack.ts';

describe('src/core/redact.ts', () => {
  test('isSecretKey: secret-looking key names, whatever their case and separators', () => {
    for (const key of ['apiKey', 'api_key', 'APIKey', 'X-Api-Key', 'X-Auth-Token', 'x-auth', 'DB_PASS', 'password', 'PGPASSWORD', 'passwd', 'secret', 'clientSecret', 'SECRET_KEY_BASE', 'token', 'refresh_token', 'Authorization', 'Proxy-Authorization', 'Cookie', 'Set-Cookie', 'credentials', 'session', 'sessionToken', 'x-session', 'privateKey', 'passphrase', 'apiKeys', 'secrets']) {
      assert.equal(isSecretKey(key), true, key);
    }
  });

  test('isSecretKey: what names or counts something is not a secret', () => {
    for (const key of ['rootContextId', 'contextId', 'toolUseId', 'sessionId', 'session_id', 'sessionUpdate', 'keyId', 'apiKeyEnv', 'passwordFile', 'tokenType', 'authMethods', 'authority', 'passGate', 'passed', 'keepAlive', 'keyword', 'monkey', 'region', 'text', '']) {
      assert.equal(isSecretKey(key), false, key);
    }
    // Counts named …Tokens holding numbers, booleans, null and empty values say nothing.
    assert.equal(isSecretKey('maxTokens', 100), false);
    assert.equal(isSecretKey('inputTokens', 12), false);
    assert.equal(isSecretKey('tokens', 5), false);
    assert.equal(isSecretKey('hasKey', true), false);
    assert.equal(isSecretKey('password', null), false);
    assert.equal(isSecretKey('password', ''), false);
    assert.equal(isSecretKey('password', []), false);
    assert.equal(isSecretKey('password', {}), false);
    // …but a number under a secret key is hidden (a PIN, a numeric token), and so is a list of tokens.
    assert.equal(isSecretKey('token', 123456), true);
    assert.equal(isSecretKey('password', 4242), true);
    assert.equal(isSecretKey('tokens', ['sk-a']), true);
    assert.equal(isSecretKey('maxTokens', '100'), true, 'a string under …Tokens is not a count');
  });

  test('redactString: credentials inside any string, the rest of it kept', () => {
    const cases: [string, string][] = [
      ['Authorization: Bearer abc.def-123', 'Authorization: Bearer [REDACTED]'],
      ['Bearer sk-live-1234', 'Bearer [REDACTED]'],
      ['Basic dXNlcjpwYXNz', 'Basic [REDACTED]'],
      ['token ghp_abcdefgh12345', 'token [REDACTED]'],
      ['https://u:p4ss@h/mcp?access_token=abc&x=1', 'https://u:[REDACTED]@h/mcp?access_token=[REDACTED]&x=1'],
      ['nats://s3cr3t-token@nats.example:4222', 'nats://[REDACTED]@nats.example:4222'],
      ['postgres://me:pw123@db/x', 'postgres://me:[REDACTED]@db/x'],
      ['redis://:pw@cache:6379', 'redis://:[REDACTED]@cache:6379'],
      ['https://x-access-token:ghs_123@github.com/o/r.git', 'https://x-access-token:[REDACTED]@github.com/o/r.git'],
      ['GET https://maps.example/v1?key=AIzaSy123&sig=zzz&q=x', 'GET https://maps.example/v1?key=[REDACTED]&sig=[REDACTED]&q=x'],
      ['?api_key=1&apikey=2&secret=3&password=4&token=5&signature=6', '?api_key=[REDACTED]&apikey=[REDACTED]&secret=[REDACTED]&password=[REDACTED]&token=[REDACTED]&signature=[REDACTED]'],
      ['host=db port=5432 password=s3cret dbname=app', 'host=db port=5432 password=[REDACTED] dbname=app'],
      ["host=db password='a b' user=me", "host=db password='[REDACTED]' user=me"],
      ['mysql --password hunter2 -h db', 'mysql --password [REDACTED] -h db'],
      ['run with --password=hunter2', 'run with --password=[REDACTED]'],
      ['{"password":"hunter2","maxTokens":100,"region":"eu"}', '{"password":"[REDACTED]","maxTokens":100,"region":"eu"}'],
      ['curl -H "X-Auth: secretvalue" https://h', 'curl -H "X-Auth: [REDACTED]" https://h'],
      ['Cookie: sid=abc', 'Cookie: [REDACTED]'],
      ['-----BEGIN RSA PRIVATE KEY-----\nMIIabc\n-----END RSA PRIVATE KEY-----', '-----BEGIN RSA PRIVATE KEY----- [REDACTED] -----END RSA PRIVATE KEY-----'],
      ['jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2ln here', 'jwt [REDACTED] here'],
    ];
    for (const [input, expected] of cases) {
      assert.equal(redactString(input), expected, input);
      assert.equal(redactString(expected), expected, `redacting twice changes nothing: ${expected}`);
    }
  });

  test('redactString: what only looks like a credential stays', () => {
    for (const s of [
      'https://example.com/docs?page=2',
      'ssh://git@github.com/o/r.git',
      'the token is empty',
      '--token: the token is empty',
      'Unexpected token u in JSON at position 0',
      'allowed-tools: constraint must look like key=glob',
      '--set KEY.PATH=VALUE',
      'maxTokens=100 max_tokens=200',
      'send Authorization: Bearer <token> (--token-file / AGENT_APPS_MCP_TOKEN / --token)',
      'basic usage: agent-apps run greet',
      'sessionId=abc',
      'needs a bearer token — pass --token TOKEN or set AGENT_APPS_MCP_TOKEN',
      'give --token or --token-file, not both',
      'token=<token> password=… apiKey=API_KEY',
      'required as Authorization: Bearer … on every request',
      '',
    ]) {
      assert.equal(redactString(s), s, s);
    }
  });

  test('redact: by key and by content at any depth, copy-on-write, cycle-safe, bounded', () => {
    const input = {
      maxTokens: 100,
      usage: { inputTokens: 3, outputTokens: 4 },
      rootContextId: 'r-1',
      url: 'https://example.com/plain',
      headers: { 'X-Auth': 'secretvalue', Accept: 'json' },
      dsn: 'postgres://me:pw123@db/x',
      env: [{ name: 'DB_PASSWORD', value: 'v' }, { name: 'REGION', value: 'eu' }],
      params: { type: 'object', properties: { password: { type: 'string' }, user: { type: 'string' } } },
      list: ['Bearer abcdefgh123', 'plain'],
    };
    const out = redact(input) as typeof input;
    assert.deepEqual(out, {
      ...input,
      headers: { 'X-Auth': REDACTED, Accept: 'json' },
      dsn: 'postgres://me:[REDACTED]@db/x',
      env: [{ name: 'DB_PASSWORD', value: REDACTED }, { name: 'REGION', value: 'eu' }],
      list: ['Bearer [REDACTED]', 'plain'],
    });
    assert.equal(input.headers['X-Auth'], 'secretvalue', 'the input is not changed');
    assert.equal(out.usage, input.usage, 'what had nothing to hide is the same object');
    assert.equal(out.params, input.params, "a schema's properties named password are schemas, not secrets");
    const clean = { a: { b: [1, { c: 'x' }] } };
    assert.equal(redact(clean), clean);
    const cyclic: Record<string, unknown> = { token: 'abc' };
    cyclic.self = cyclic;
    assert.deepEqual(redact(cyclic), { token: REDACTED, self: '[Circular]' });
    let deep: Record<string, unknown> = { password: 'bottom' };
    for (let i = 0; i < 100; i++) deep = { next: deep };
    assert.doesNotMatch(JSON.stringify(redact(deep)), /bottom/, 'past the depth bound nothing is passed on unread');
  });
});

// ── through the CLI and the agent ─────────────────────────────────────────────────────────────

/** Secrets no output may show, each distinct so a hit says which one leaked. */
const S = { pass: 'hunter2-pw', url: 'p4ss-url', query: 'tok-7c2e', header: 'secretvalue-hdr', dsn: 'pw123-dsn', bearer: 'S3KRIT-bearer', code: 'S3KRIT-code' } as const;
const LEAKS = new RegExp(Object.values(S).join('|'));
const CRED_URL = `https://u:${S.url}@127.0.0.1:9/mcp?access_token=${S.query}`;

const LOGIN = `export const frontmatter = { name: 'login', description: 'Logs in.', metadata: { params: { type: 'object', properties: { user: { type: 'string' }, password: { type: 'string' } } } } };
export default (ctx, { user }) => 'hi ' + user;
`;
const LEAKY = `export const frontmatter = { name: 'leaky', description: 'Logs what it connects to.', metadata: {} };
export default (ctx) => {
  ctx.manager.log({ type: 'connect', level: 'warn', text: 'connecting to ${CRED_URL} with postgres://me:${S.dsn}@db/x', headers: { 'X-Auth': '${S.header}', Authorization: 'Bearer ${S.bearer}' }, maxTokens: 100, usage: { inputTokens: 3 }, plain: 'https://example.com/plain' });
  return 'ok';
};
`;
const FETCHER = `export const frontmatter = { name: 'fetcher', description: 'Fetches a URL.', metadata: { params: { type: 'object', properties: { url: { type: 'string' } } } } };
export default async (ctx, { url }) => (await fetch(url)).status;
`;
const MAIN = `---
name: main
description: the workspace main
metadata:
  service:
    headers: { X-Auth: ${S.header}, Accept: application/json }
    dsn: postgres://me:${S.dsn}@db/x
    endpoint: ${CRED_URL}
    plain: https://example.com/plain
  maxTokens: 100
---
main
`;

/** A workspace with the code skills above, the main (when asked) and `agents` as replayed agent skills. */
function ws(t: TestContext, opts: { main?: boolean; agents?: Parameters<typeof attackWorkspace>[1] } = {}): string {
  return attackWorkspace(t, opts.agents ?? {}, { 'skills/login.skill.mjs': LOGIN, 'skills/leaky.skill.mjs': LEAKY, 'skills/fetcher.skill.mjs': FETCHER, ...(opts.main ? { 'skills/main.md': MAIN } : {}) });
}

function runFiles(dir: string): string {
  const runs = path.join(dir, '.agent-apps', 'runs');
  return fs.readdirSync(runs).filter((f) => f.endsWith('.jsonl')).map((f) => fs.readFileSync(path.join(runs, f), 'utf8')).join('');
}

const lines = (stdout: string) => stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);

describe('secrets stay out of every output', () => {
  test('stream-json: the start line of `run login --password …` shows the password redacted, the other args as given', (t) => {
    const dir = ws(t);
    const r = cli(['run', 'login', '--user', 'ada', '--password', S.pass, '--output-format', 'stream-json'], dir);
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stdout, LEAKS);
    const [start, result] = lines(r.stdout);
    assert.deepEqual(start!.args, { user: 'ada', password: REDACTED });
    assert.equal(result!.result, 'hi ada', 'the result is what the skill returned');
    assert.doesNotMatch(runFiles(dir), LEAKS);
  });

  test('run files: strings with credentials a skill logs, and a --set MCP URL with userinfo and access_token, are redacted; counts and plain URLs stay', (t) => {
    const dir = ws(t);
    const logged = cli(['run', 'leaky'], dir);
    assert.equal(logged.status, 0, logged.stderr);
    const mcp = cli(['--set', `mcp.servers.x.url=${CRED_URL}`, 'run', 'mcp://x/echo'], dir);
    assert.equal(mcp.status, 1, mcp.stderr);
    const files = runFiles(dir);
    assert.doesNotMatch(files, LEAKS);
    assert.doesNotMatch(logged.stderr + mcp.stderr, LEAKS, 'nor the console');
    const connect = lines(files).find((e) => e.type === 'connect')!;
    assert.equal(connect.text, `connecting to https://u:${REDACTED}@127.0.0.1:9/mcp?access_token=${REDACTED} with postgres://me:${REDACTED}@db/x`);
    assert.deepEqual(connect.headers, { 'X-Auth': REDACTED, Authorization: REDACTED });
    assert.equal(connect.maxTokens, 100);
    assert.deepEqual(connect.usage, { inputTokens: 3 });
    assert.equal(connect.plain, 'https://example.com/plain');
    assert.match(connect.rootContextId, /^[0-9a-f-]{36}$/, 'rootContextId is not a secret');
    assert.match(files, /MCP server 'x' \(https:\/\/u:\[REDACTED\]@127\.0\.0\.1:9\/mcp\?access_token=\[REDACTED\]\)/, 'the run-end record keeps the rest of the error');
  });

  test('describe: a header X-Auth and a DSN the main sets are redacted in the resolved cascade, text and --json; a password param stays a schema', (t) => {
    const dir = ws(t, { main: true });
    const text = cli(['describe', 'login'], dir);
    assert.equal(text.status, 0, text.stderr);
    assert.doesNotMatch(text.stdout, LEAKS);
    assert.match(text.stdout, /X-Auth: "\[REDACTED\]"/);
    assert.match(text.stdout, /dsn: postgres:\/\/me:\[REDACTED\]@db\/x/);
    assert.match(text.stdout, /plain: https:\/\/example\.com\/plain/);
    assert.match(text.stdout, /maxTokens: 100/);
    assert.match(text.stdout, /password:\n\s+type: string/);
    const json = cli(['describe', 'login', '--json'], dir);
    assert.equal(json.status, 0, json.stderr);
    assert.doesNotMatch(json.stdout, LEAKS);
    const d = JSON.parse(json.stdout);
    assert.equal(d.metadata.service.headers['X-Auth'], REDACTED);
    assert.equal(d.metadata.service.headers.Accept, 'application/json');
    assert.equal(d.metadata.maxTokens, 100);
    assert.deepEqual(d.metadata.params.properties.password, { type: 'string' });
  });

  test('agent code: get() and skill-describe of a config with credentials in URLs, an X-Auth header and a DSN return them redacted; counts and plain URLs stay', async (t) => {
    const { out } = await tryAll(
      t,
      {
        service: "return ctx.manager.get('run.middleware.service')",
        run: "return ctx.manager.get('run')",
        locals: "return ctx.manager.get('locals')",
        maxTokens: "return ctx.manager.get('run.middleware.maxTokens')",
        describe: "return await ctx.manager.invoke('skill-describe', { name: 'wordcount' })",
      },
      { 'allowed-tools': 'skill-describe wordcount' },
      { files: { 'skills/main.md': MAIN } },
    );
    for (const [k, v] of Object.entries(out)) {
      assert.match(v, /^ok:/, `${k}: ${v}`);
      assert.doesNotMatch(v, LEAKS, k);
    }
    const service = JSON.parse(out.service!.slice(3));
    assert.deepEqual(service, {
      headers: { 'X-Auth': REDACTED, Accept: 'application/json' },
      dsn: `postgres://me:${REDACTED}@db/x`,
      endpoint: `https://u:${REDACTED}@127.0.0.1:9/mcp?access_token=${REDACTED}`,
      plain: 'https://example.com/plain',
    });
    assert.equal(out.maxTokens, 'ok:100');
    assert.match(out.describe!, /https:\/\/example\.com\/plain/);
  });

  test('error lines: a URL with userinfo in an error message is printed redacted on stderr, in the stream-json result and in `runs`', (t) => {
    const dir = ws(t);
    const text = cli(['run', 'fetcher', '--url', CRED_URL], dir);
    assert.equal(text.status, 1);
    assert.match(text.stderr, /^error(?: \[[A-Z_]+\])?: Request cannot be constructed from a URL that includes credentials: https:\/\/u:\[REDACTED\]@127\.0\.0\.1:9\/mcp\?access_token=\[REDACTED\]/m);
    assert.doesNotMatch(text.stderr, LEAKS);
    const stream = cli(['run', 'fetcher', '--url', CRED_URL, '--output-format', 'stream-json'], dir);
    assert.equal(stream.status, 1);
    assert.doesNotMatch(stream.stdout + stream.stderr, LEAKS);
    const result = lines(stream.stdout).at(-1)!;
    assert.match(result.error.message, /credentials: https:\/\/u:\[REDACTED\]@127\.0\.0\.1:9/);
    const listed = cli(['runs', '--json'], dir);
    assert.equal(listed.status, 0, listed.stderr);
    assert.doesNotMatch(listed.stdout, LEAKS);
    assert.match(JSON.parse(listed.stdout)[0].error.message, /u:\[REDACTED\]@/);
  });

  test('runs show: a real agent run reads as a transcript with what its code logged redacted; a run file written unredacted is redacted when shown', (t) => {
    const code = [
      `const n = await ctx.manager.invoke('wordcount', { text: 'postgres://me:${S.code}@db/x has words' });`,
      `console.log('Authorization: Bearer ${S.bearer}');`,
      'ctx.manager.finish({ words: n, maxTokens: 100 });',
    ].join('\n');
    const dir = ws(t, { agents: { counter: { 'allowed-tools': 'wordcount', turns: [{ text: 'Counting.', invoke: code }] } } });
    const run = cli(['run', 'counter', '--output-format', 'stream-json'], dir);
    assert.equal(run.status, 0, run.stderr);
    assert.doesNotMatch(run.stdout, LEAKS, 'the stream-json agent events');
    assert.ok(lines(run.stdout).some((l) => l.type === 'tool-call'));
    const id = lines(run.stdout)[0]!.run as string;
    const shown = cli(['runs', 'show', id.slice(0, 8)], dir);
    assert.equal(shown.status, 0, shown.stderr);
    assert.doesNotMatch(shown.stdout, LEAKS);
    assert.match(shown.stdout, /agent counter — 1 turn/);
    assert.match(shown.stdout, /model: Counting\./);
    assert.match(shown.stdout, /postgres:\/\/me:\[REDACTED\]@db\/x has words/);
    assert.match(shown.stdout, /Authorization: Bearer \[REDACTED\]/);
    assert.match(shown.stdout, /result: \{"words":3,"maxTokens":100\}/);

    // A run file from before this redaction (or written by hand): shown, listed and tailed redacted.
    const old = 'aaaaaaaa-0000-4000-8000-000000000001';
    const events = [
      { type: 'run-start', tag: 'cli', level: 'info', text: 'run login', skill: 'login', args: { user: 'ada', password: S.pass }, pid: 1, record: true, timestamp: 1, rootContextId: old, contextId: old, tool: 'root' },
      { type: 'connect', tag: 'user', level: 'warn', text: `connecting to ${CRED_URL}`, tool: 'login', timestamp: 2, rootContextId: old, contextId: old },
      { type: 'run-end', tag: 'cli', level: 'error', skill: 'login', code: 'E_SKILL', text: `run login: cannot reach postgres://me:${S.dsn}@db/x`, exitCode: 1, durationMs: 1, record: true, timestamp: 3, rootContextId: old, contextId: old, tool: 'root' },
    ];
    fs.writeFileSync(path.join(dir, '.agent-apps', 'runs', `${old}.jsonl`), events.map((e) => JSON.stringify(e) + '\n').join(''));
    for (const args of [['runs', 'show', old], ['runs', 'show', old, '--json'], ['runs', '--json'], ['tail', '--run', old], ['tail', '--run', old, '--json']]) {
      const r = cli(args, dir);
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.doesNotMatch(r.stdout, LEAKS, args.join(' '));
    }
    assert.match(cli(['runs', 'show', old], dir).stdout, /args +\{"user":"ada","password":"\[REDACTED\]"\}/);
  });
});
