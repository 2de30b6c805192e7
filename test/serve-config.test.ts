// `gateways:` entries are interpolated as the rest of a main is (docs/concepts.md, docs/serve.md):
// `${env.NAME}` and the folder variables in any string, an unset variable empty, as in the cascade.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServe, workspace } from './serve-helpers.ts';

test('${env.NAME} in a gateway entry is the variable’s value, an unset one empty', async (t) => {
  const ws = workspace(
    t,
    `gateways:
  api:
    type: web
    routes:
      - { method: GET, path: '\${env.AGENT_APPS_TEST_API_PREFIX}/hi', skill: hi }
      - { method: GET, path: '/unset\${env.AGENT_APPS_TEST_UNSET_PREFIX}/hi', skill: hi }`,
    { hi: { body: 'async (ctx) => ({ hi: ctx.nonlocals.request.path })' } },
  );
  const proc = await startServe(t, ws, [], { AGENT_APPS_TEST_API_PREFIX: '/v2', AGENT_APPS_TEST_UNSET_PREFIX: undefined });
  const r = await fetch(`${proc.url}/v2/hi`);
  assert.equal(r.status, 200, await r.clone().text());
  assert.deepEqual(await r.json(), { hi: '/v2/hi' });
  assert.equal((await fetch(`${proc.url}/unset/hi`)).status, 200);
  assert.equal((await fetch(`${proc.url}/\${env.AGENT_APPS_TEST_API_PREFIX}/hi`)).status, 404);
  assert.match(proc.stderr(), /web gateway 'api' on http:\/\/127\.0\.0\.1:\d+: GET \/v2\/hi → hi, GET \/unset\/hi → hi/);
});
