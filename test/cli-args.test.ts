// The CLI's pure parsers (SPEC §12): `--PARAM VALUE` coercion by the params schema, global
// options after `run SKILL`, `--set KEY.PATH=VALUE` overrides, `--args-json`, result printing
// and exit-code mapping. The end-to-end behaviour is in cli.test.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { mentionsRunOption, parseSkillArgs, readArgsJson, splitRunTokens } from '../src/surfaces/shared/skill-args.ts';
import { mergeOverrides, parseOverrides } from '../src/surfaces/shared/overrides.ts';
import { mergeGlobals } from '../src/surfaces/shared/runtime-options.ts';
import { EXIT, exitCodeFor, formatError, formatResult, type Painter } from '../src/surfaces/shared/output.ts';
import { skillHelp } from '../src/surfaces/shared/skill-help.ts';
import { AbortError, AgentAppsError, ConfigurationError, ToolNotFoundError, ValidationError } from '../src/core/errors.ts';

const params = {
  type: 'object',
  properties: {
    text: { type: 'string' },
    count: { type: 'number' },
    n: { type: 'integer' },
    loud: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' } },
    nums: { type: 'array', items: { type: 'number' } },
    opts: { type: 'object', properties: { format: { type: 'string' }, size: { type: 'integer' }, deep: { type: 'object', properties: { on: { type: 'boolean' } } } } },
    mode: { enum: ['fast', 'slow'] },
    maybe: { type: ['integer', 'null'] },
    path: { type: 'string' },
  },
};

function usageError(fn: () => unknown, pattern: RegExp) {
  assert.throws(fn, (err: unknown) => err instanceof AgentAppsError && err.code === 'E_USAGE' && pattern.test(err.message));
}

describe('parseSkillArgs: --PARAM VALUE coerced by the params schema', () => {
  test('a string param keeps its value as written, digits included', () => {
    assert.deepEqual(parseSkillArgs(['--text', '007'], params), { text: '007' });
  });

  test('number and integer params become numbers', () => {
    assert.deepEqual(parseSkillArgs(['--count', '2.5', '--n', '3'], params), { count: 2.5, n: 3 });
  });

  test('a value that is not a number stays a string, so validate-args reports it in the schema’s words', () => {
    assert.deepEqual(parseSkillArgs(['--count', 'many'], params), { count: 'many' });
  });

  test('a negative number is a value, not a short option', () => {
    assert.deepEqual(parseSkillArgs(['--n', '-3', '--count', '-2.5', '--text', 'x'], params), { n: -3, count: -2.5, text: 'x' });
  });

  test('a boolean flag alone is true; --no-flag is false', () => {
    assert.deepEqual(parseSkillArgs(['--loud'], params), { loud: true });
    assert.deepEqual(parseSkillArgs(['--no-loud'], params), { loud: false });
  });

  test('a boolean flag may spell out true or false, as the next word or after =', () => {
    assert.deepEqual(parseSkillArgs(['--loud', 'false'], params), { loud: false });
    assert.deepEqual(parseSkillArgs(['--loud=true'], params), { loud: true });
  });

  test('a boolean flag does not swallow the next word', () => {
    usageError(() => parseSkillArgs(['--loud', 'please'], params), /unexpected argument 'please'/);
  });

  test('a repeated flag is an array; an array param is an array even when given once', () => {
    assert.deepEqual(parseSkillArgs(['--tags', 'a', '--tags', 'b'], params), { tags: ['a', 'b'] });
    assert.deepEqual(parseSkillArgs(['--tags', 'a'], params), { tags: ['a'] });
    assert.deepEqual(parseSkillArgs(['--nums', '1', '--nums', '2'], params), { nums: [1, 2] });
  });

  test('an array param given once as a JSON array is that array', () => {
    assert.deepEqual(parseSkillArgs(['--tags', '["a","b"]'], params), { tags: ['a', 'b'] });
  });

  test('a repeated flag the schema does not declare is an array of strings', () => {
    assert.deepEqual(parseSkillArgs(['--x', '1', '--x', '2'], params), { x: ['1', '2'] });
  });

  test('--obj.key v nests, coerced by the nested schema', () => {
    assert.deepEqual(parseSkillArgs(['--opts.format', 'png', '--opts.size', '16', '--opts.deep.on'], params), {
      opts: { format: 'png', size: 16, deep: { on: true } },
    });
    assert.deepEqual(parseSkillArgs(['--no-opts.deep.on'], params), { opts: { deep: { on: false } } });
  });

  test('an object param takes JSON; bad JSON is a usage error', () => {
    assert.deepEqual(parseSkillArgs(['--opts', '{"format":"gif"}'], params), { opts: { format: 'gif' } });
    usageError(() => parseSkillArgs(['--opts', '{nope'], params), /--opts: expected JSON for an object/);
  });

  test('an enum of strings is a string; a nullable integer is an integer', () => {
    assert.deepEqual(parseSkillArgs(['--mode', 'fast', '--maybe', '4'], params), { mode: 'fast', maybe: 4 });
  });

  test('--name=value works like --name value', () => {
    assert.deepEqual(parseSkillArgs(['--text=a b', '--n=2'], params), { text: 'a b', n: 2 });
  });

  test('without a schema every value is a string and a lone flag is true', () => {
    assert.deepEqual(parseSkillArgs(['--a', '1', '--b', '--c', 'true'], undefined), { a: '1', b: true, c: 'true' });
  });

  test('a positional word is a usage error that says how to pass args', () => {
    usageError(() => parseSkillArgs(['stray'], params), /unexpected argument 'stray' — pass args as --NAME VALUE/);
    usageError(() => parseSkillArgs(['--text', 'a', 'b', 'c'], params), /unexpected arguments 'b' 'c'/);
  });

  test('a declared param that is not a boolean needs a value: a bare flag is a usage error, not true', () => {
    usageError(() => parseSkillArgs(['--text'], params), /^--text needs a value \(a string\)$/);
    usageError(() => parseSkillArgs(['--loud', '--mode'], params), /^--mode needs a value \(one of fast, slow\)$/);
    assert.deepEqual(parseSkillArgs(['--undeclared'], params), { undeclared: true });
  });

  test('a one-value param given twice is a usage error naming it; arrays and undeclared flags collect', () => {
    usageError(() => parseSkillArgs(['--text', 'a', '--text', 'b'], params), /^--text was given 2 times, but it takes one value \(a string\)/);
    assert.deepEqual(parseSkillArgs(['--tags', 'a', '--tags', 'b', '--x', '1', '--x', '2'], params), { tags: ['a', 'b'], x: ['1', '2'] });
  });

  test('a mis-cased flag, or a near miss where no other property is allowed, suggests the declared one', () => {
    usageError(() => parseSkillArgs(['--Text', 'a'], params), /^unknown flag --Text — did you mean --text\?$/);
    usageError(() => parseSkillArgs(['--opts.Format', 'png'], params), /did you mean --opts\.format\?/);
    assert.deepEqual(parseSkillArgs(['--txet', 'a'], params), { txet: 'a' });
    usageError(() => parseSkillArgs(['--txet', 'a'], { ...params, additionalProperties: false }), /did you mean --text\?/);
    usageError(() => parseSkillArgs(['--JSON'], params), /did you mean --json\?/);
  });

  test('numbers are decimal: 0x10, 0b1, an empty value and a padded one stay strings', () => {
    assert.deepEqual(parseSkillArgs(['--count', '0x10', '--n', '0b1'], params), { count: '0x10', n: '0b1' });
    assert.deepEqual(parseSkillArgs(['--count=', '--n', ' 3'], params), { count: '', n: ' 3' });
    assert.deepEqual(parseSkillArgs(['--count', '+1.5e2', '--n', '-.5'], params), { count: 150, n: -0.5 });
  });

  test('prototype keys are refused', () => {
    usageError(() => parseSkillArgs(['--__proto__.polluted', '1'], params), /not a usable arg name/);
    usageError(() => parseSkillArgs(['--constructor', 'x'], params), /not a usable arg name/);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});

describe('splitRunTokens: global options after `run SKILL`', () => {
  test('global flags are taken out; the rest are the skill’s', () => {
    const s = splitRunTokens(['--text', 'hi', '--json', '--debug', '--no-color', '--log-level', 'warn', '--profile'], params);
    assert.deepEqual(s.globals, { json: true, debug: true, color: false, logLevel: 'warn', profile: true });
    assert.deepEqual(s.tokens, ['--text', 'hi']);
    assert.equal(s.help, false);
  });

  test('repeatable globals collect; --opt=value works', () => {
    const s = splitRunTokens(['--set', 'a=1', '--set=b.c=2', '--cwd=/tmp'], params);
    assert.deepEqual(s.globals, { set: ['a=1', 'b.c=2'], cwd: '/tmp' });
  });

  test('a name the skill declares stays the skill’s (file-read --path)', () => {
    const s = splitRunTokens(['--path', 'README.md', '--json'], params);
    assert.deepEqual(s.tokens, ['--path', 'README.md']);
    assert.deepEqual(s.globals, { json: true });
    assert.deepEqual(splitRunTokens(['--path', 'x'], undefined).globals, { path: ['x'] });
  });

  test('--args-json and --help are always the CLI’s', () => {
    const s = splitRunTokens(['--args-json', '{"a":1}', '-h'], { properties: { 'args-json': {}, help: {} } });
    assert.equal(s.argsJson, '{"a":1}');
    assert.equal(s.help, true);
    assert.deepEqual(s.tokens, []);
  });

  test('nothing after -- is a global option', () => {
    const s = splitRunTokens(['--json', '--', '--debug'], params);
    assert.deepEqual(s.globals, { json: true });
    assert.deepEqual(s.tokens, ['--', '--debug']);
  });

  test('a missing value and a value on a flag are usage errors', () => {
    usageError(() => splitRunTokens(['--set'], params), /--set needs a value/);
    usageError(() => splitRunTokens(['--json=1'], params), /--json takes no value/);
  });

  test('mentionsRunOption tells whether there is anything to split', () => {
    assert.equal(mentionsRunOption(['--text', 'hi']), false);
    assert.equal(mentionsRunOption(['--text', 'hi', '--json']), true);
    assert.equal(mentionsRunOption(['--log-level=warn']), true);
    assert.equal(mentionsRunOption(['-h']), true);
    assert.equal(mentionsRunOption(['--', '--json']), false);
  });

  test('globals given before and after the command combine: lists append, flags win', () => {
    assert.deepEqual(mergeGlobals({ path: ['a'], json: false, set: ['x=1'] }, { path: ['b'], json: true }), { path: ['a', 'b'], json: true, set: ['x=1'] });
  });
});

describe('parseOverrides: --set KEY.PATH=VALUE with a YAML value', () => {
  test('values are YAML: numbers, booleans, lists, maps, strings', () => {
    assert.deepEqual(parseOverrides(['a=5', 'b=true', 'c=[1, two]', 'd={ x: 1 }', 'e=hello world', 'f=']), {
      a: 5,
      b: true,
      c: [1, 'two'],
      d: { x: 1 },
      e: 'hello world',
      f: null,
    });
  });

  test('dotted keys nest and merge; only the first = separates key from value', () => {
    assert.deepEqual(parseOverrides(['model.provider=replay', 'model.sandbox.timeoutMs=500', 'q=a=b']), {
      model: { provider: 'replay', sandbox: { timeoutMs: 500 } },
      q: 'a=b',
    });
  });

  test('$ annotations can be set', () => {
    assert.deepEqual(parseOverrides(['$remove=[log]']), { $remove: ['log'] });
  });

  test('a missing =, a bad key and bad YAML are usage errors', () => {
    usageError(() => parseOverrides(['debug']), /--set expects KEY.PATH=VALUE, got 'debug'/);
    usageError(() => parseOverrides(['a..b=1']), /not a dotted key path/);
    usageError(() => parseOverrides(['x=[1']), /--set x: value is not valid YAML/);
  });

  test('mergeOverrides merges maps deeply, the later winning', () => {
    assert.deepEqual(mergeOverrides({ a: { b: 1, c: 2 }, d: [1] }, { a: { c: 3 }, d: [2] }), { a: { b: 1, c: 3 }, d: [2] });
  });
});

describe('readArgsJson: --args-json JSON, or - for stdin', () => {
  test('parses an object given inline or on stdin', async () => {
    assert.deepEqual(await readArgsJson('{"a":1}'), { a: 1 });
    assert.deepEqual(await readArgsJson('-', Readable.from(['{"b":', '[1,2]}'])), { b: [1, 2] });
    assert.equal(await readArgsJson(undefined), undefined);
  });

  test('bad JSON and non-objects are usage errors', async () => {
    await assert.rejects(readArgsJson('{bad'), (e: AgentAppsError) => e.code === 'E_USAGE' && /not valid JSON/.test(e.message));
    await assert.rejects(readArgsJson('[1]'), (e: AgentAppsError) => e.code === 'E_USAGE' && /must be a JSON object/.test(e.message));
  });

  test('empty stdin is a usage error that says so', async () => {
    await assert.rejects(readArgsJson('-', Readable.from([' \n'])), (e: AgentAppsError) => e.code === 'E_USAGE' && /^--args-json -: stdin was empty/.test(e.message));
  });
});

describe('output: results and exit codes', () => {
  test('a string prints raw, anything else as pretty JSON; --json is always one line', () => {
    assert.equal(formatResult('a\nb', false), 'a\nb');
    assert.equal(formatResult({ a: [1] }, false), '{\n  "a": [\n    1\n  ]\n}');
    assert.equal(formatResult({ a: [1] }, true), '{"a":[1]}');
    assert.equal(formatResult('hi', true), '"hi"');
    assert.equal(formatResult(42, false), '42');
  });

  test('undefined prints nothing, or null with --json', () => {
    assert.equal(formatResult(undefined, false), undefined);
    assert.equal(formatResult(undefined, true), 'null');
  });

  test('exit codes: 1 failed, 2 usage or configuration, 3 refused', () => {
    assert.equal(exitCodeFor(new Error('boom')), EXIT.failed);
    assert.equal(exitCodeFor(new ToolNotFoundError('x')), EXIT.usage);
    assert.equal(exitCodeFor(new ConfigurationError('cycle')), EXIT.usage);
    assert.equal(exitCodeFor(new AgentAppsError('E_USAGE', 'bad')), EXIT.usage);
    assert.equal(exitCodeFor(new ValidationError('invalid args', [], 'args')), EXIT.usage);
    assert.equal(exitCodeFor(new ValidationError('invalid result', [], 'returns')), EXIT.failed);
    assert.equal(exitCodeFor(new AbortError('no')), EXIT.refused);
    assert.deepEqual(EXIT, { ok: 0, failed: 1, usage: 2, refused: 3, interrupted: 130, terminated: 143 });
  });

  test('an error is one line with its code; the stack only with --debug', () => {
    const plain: Painter = { red: (s) => s, yellow: (s) => s, dim: (s) => s, bold: (s) => s, cyan: (s) => s, green: (s) => s };
    const err = new AgentAppsError('E_CONFIG', 'line one\n  line two');
    assert.equal(formatError(err, { debug: false, paint: plain }), 'error [E_CONFIG]: line one line two');
    const withStack = formatError(err, { debug: true, paint: plain });
    assert.match(withStack, /^error \[E_CONFIG\]: line one line two\n\s+at /);
    assert.equal(formatError(new Error('boom'), { debug: false, paint: plain }), 'error: boom  (run with --debug for the stack)');
  });

  test('a message that starts with its code prints the code once; enum violations list the allowed values', () => {
    const plain: Painter = { red: (s) => s, yellow: (s) => s, dim: (s) => s, bold: (s) => s, cyan: (s) => s, green: (s) => s };
    const enoent = Object.assign(new Error("ENOENT: no such file or directory, open 'x'"), { code: 'ENOENT' });
    assert.equal(formatError(enoent, { debug: false, paint: plain }), "error [ENOENT]: no such file or directory, open 'x'");
    const enumError = new ValidationError("invalid args for 'model'", [{ instancePath: '/provider', keyword: 'enum', params: { allowedValues: ['bedrock', 'openai', 1] }, schemaPath: '#', message: 'must be equal to one of the allowed values' }]);
    assert.equal(formatError(enumError, { debug: false, paint: plain }), "error [E_VALIDATION]: invalid args for 'model': /provider must be one of: bedrock, openai, 1");
  });
});

describe('skillHelp: `run SKILL --help`', () => {
  test('lists every param as a flag, nested ones dotted, with required and default', () => {
    const help = skillHelp({
      name: 'resize',
      description: 'Resizes an image.',
      params: { type: 'object', properties: { file: { type: 'string', description: 'The image.' }, sizes: { type: 'array', items: { type: 'integer' } }, opts: { type: 'object', properties: { fast: { type: 'boolean', default: false } } } }, required: ['file'] },
      visibility: 'public',
      role: 'skill',
      tags: [],
    });
    assert.match(help, /^Usage: agent-apps run resize --file <string> \[--sizes <integer…>\] \[--opts <json>\]\n/);
    assert.match(help, /Resizes an image\./);
    assert.match(help, /--file <string> +The image\. \(required\)\n/);
    assert.match(help, /--sizes <integer…> +repeat the flag for more items/);
    assert.match(help, /--opts\.fast +--no-opts\.fast for false; default: false/);
  });
});

test('results that JSON cannot hold (BigInt, Map, Set, a cycle) still print', async () => {
  const { formatResult } = await import('../src/surfaces/shared/output.ts');
  const value: Record<string, unknown> = { big: 10n, map: new Map([['k', 1]]), set: new Set(['a']) };
  value.self = value;
  assert.equal(formatResult(value, true), '{"big":"10","map":{"k":1},"set":["a"],"self":"[Circular]"}');
});
