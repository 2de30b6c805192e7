// The webhook signature checks (src/surfaces/serve/verify.ts, docs/serve.md "webhook"), against
// signatures computed here the way GitHub and Slack document them.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { hmacHex, safeEqual, SLACK_WINDOW_SECONDS, verifyGithub, verifyHmacSha256, verifySlack } from '../src/surfaces/serve/verify.ts';

const SECRET = "It's a Secret to Everybody";
const body = Buffer.from('Hello, World!');

describe('webhook signatures', () => {
  test('hmacHex is HMAC-SHA256 in hex (GitHub’s documented example)', () => {
    // docs.github.com, "Validating webhook deliveries": this secret and payload give this digest.
    assert.equal(hmacHex(SECRET, body), '757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17');
  });

  test('safeEqual: equal, different, different lengths', () => {
    assert.equal(safeEqual('abc', 'abc'), true);
    assert.equal(safeEqual('abc', 'abd'), false);
    assert.equal(safeEqual('abc', 'abcd'), false);
  });

  test('github: sha256= + HMAC of the raw body', () => {
    const good = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';
    assert.equal(verifyGithub(SECRET, body, good), true);
    assert.equal(verifyGithub(SECRET, body, good.toUpperCase().replace('SHA256=', 'sha256=')), true);
    assert.equal(verifyGithub(SECRET, Buffer.from('Hello, World?'), good), false);
    assert.equal(verifyGithub('another secret', body, good), false);
    assert.equal(verifyGithub(SECRET, body, good.slice('sha256='.length)), false, 'the prefix is required');
    assert.equal(verifyGithub(SECRET, body, undefined), false);
    assert.equal(verifyGithub(SECRET, body, 'sha1=abc'), false);
  });

  test('slack: v0 signature over v0:timestamp:body, within five minutes', () => {
    const now = 1_700_000_000_000;
    const ts = String(now / 1000);
    const sig = (t: string, b: Buffer = body) => 'v0=' + crypto.createHmac('sha256', SECRET).update(`v0:${t}:${b.toString()}`).digest('hex');
    assert.equal(verifySlack(SECRET, body, ts, sig(ts), now), true);
    assert.equal(verifySlack(SECRET, body, ts, sig(ts), now + SLACK_WINDOW_SECONDS * 1000), true, 'the edge of the window');
    const stale = String(now / 1000 - 6 * 60);
    assert.equal(verifySlack(SECRET, body, stale, sig(stale), now), false, 'six minutes old');
    const future = String(now / 1000 + 6 * 60);
    assert.equal(verifySlack(SECRET, body, future, sig(future), now), false, 'six minutes ahead');
    assert.equal(verifySlack(SECRET, body, ts, sig(ts, Buffer.from('other')), now), false, 'another body');
    assert.equal(verifySlack(SECRET, body, String(now / 1000 - 1), sig(ts), now), false, 'the timestamp is signed');
    assert.equal(verifySlack(SECRET, body, 'soon', sig('soon'), now), false);
    assert.equal(verifySlack(SECRET, body, undefined, sig(ts), now), false);
    assert.equal(verifySlack(SECRET, body, ts, undefined, now), false);
  });

  test('hmac-sha256: the hex HMAC, bare or with sha256=', () => {
    const hex = hmacHex(SECRET, body);
    assert.equal(verifyHmacSha256(SECRET, body, hex), true);
    assert.equal(verifyHmacSha256(SECRET, body, `sha256=${hex}`), true);
    assert.equal(verifyHmacSha256(SECRET, body, hex.slice(1)), false);
    assert.equal(verifyHmacSha256('x', body, hex), false);
    assert.equal(verifyHmacSha256(SECRET, body, undefined), false);
  });
});
