// Secrets stay out of every output (docs/security.md, "Secrets"): one redaction, src/core/redact.ts,
// used by the log (so the run files), get() from agent code, stream-json, describe, runs show and
// the CLI's error lines. The unit tests pin the rules; the rest attack each output the way a user
// or an attacker would, through the real CLI or the real agent with a replayed cassette.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isSecretKey, redact, redactString, REDACTED } from '../../src/core/redact.ts';

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
