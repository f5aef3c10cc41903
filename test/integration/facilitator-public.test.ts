import assert from 'node:assert/strict';
import { call, world, type World } from '../helpers/world.js';

describe('facilitator: public routes', function () {
  let w: World;
  before(async function () {
    w = await world();
  });

  it('GET /supported lists the credit scheme, x402Version 2, the network and the asset', async function () {
    const res = await call(w, 'GET', '/facilitator/supported');
    assert.equal(res.status, 200);
    const kind = res.json.kinds[0];
    assert.equal(kind.x402Version, 2);
    assert.equal(kind.scheme, 'credit');
    assert.equal(kind.network, 'eip155:84532');
    assert.equal(kind.extra.asset, w.asset.toLowerCase());
    assert.equal(kind.extra.decimals, 6);
    assert.equal(kind.extra.settlement, 'batch');
    assert.deepEqual(res.json.extensions, ['payment-identifier']);
    assert.equal(res.json.signers['eip155:*'].length, 1);
  });

  it('GET /health answers without a credential', async function () {
    const res = await call(w, 'GET', '/facilitator/health');
    assert.equal(res.status, 200);
    assert.equal(res.json.status, 'ok');
  });

  it('has no settle route and answers unknown routes and methods in the error shape', async function () {
    const settle = await call(w, 'POST', '/facilitator/settle', { body: {} });
    assert.equal(settle.status, 404);
    assert.equal(settle.json.error.code, 'NOT_FOUND');
    const unknown = await call(w, 'GET', '/nothing-here');
    assert.equal(unknown.status, 404);
    assert.ok(unknown.json.error.requestId.startsWith('req_'));
    const method = await call(w, 'DELETE', '/facilitator/supported');
    assert.equal(method.status, 405);
    assert.equal(method.json.error.code, 'METHOD_NOT_ALLOWED');
  });
});
