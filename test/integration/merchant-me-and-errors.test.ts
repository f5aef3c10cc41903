import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { devBorrowerCreate, devVoucher } from '../../tools/cli/dev-commands.js';
import { jwtIssue, keyRevoke } from '../../tools/cli/merchant-commands.js';
import { setMerchantRateLimits } from '../../src/store/merchants.js';
import { call, capture, newMerchant, world, type TestMerchant, type World } from '../helpers/world.js';

/** One error shape: code, message, requestId, and nothing that says which part of a credential was wrong. */
function assertUnauthenticated(res: { status: number; json: { error: Record<string, unknown> }; headers: Headers }) {
  assert.equal(res.status, 401);
  assert.deepEqual(Object.keys(res.json.error).sort(), ['code', 'message', 'requestId']);
  assert.equal(res.json.error.code, 'UNAUTHENTICATED');
  assert.equal(res.headers.get('www-authenticate'), 'Bearer');
}

describe('merchant: GET /facilitator/me and the small error answers (issue 43)', function () {
  this.timeout(120_000);
  let w: World;
  let m: TestMerchant;

  before(async function () {
    w = await world();
    m = await newMerchant(w, 'Me Shop');
  });

  async function voucherFor(merchant: TestMerchant, amount = '1000') {
    const b = await devBorrowerCreate(w.cli, { credit: '100000000' });
    const v = await devVoucher(w.cli, { merchant: merchant.merchantId, borrower: b.borrowerId, agent: b.operationalAgentId, agentPrivateKey: b.agentPrivateKey as string, amount });
    return v;
  }

  it('answers the key\'s merchant, permissions and limits (the defaults, then the merchant\'s own)', async function () {
    const res = await call(w, 'GET', '/facilitator/me', { token: m.apiKey });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.equal(res.json.merchantId, m.merchantId);
    assert.equal(res.json.name, 'Me Shop');
    assert.equal(res.json.payoutAddress.toLowerCase(), m.payoutAddress.toLowerCase());
    assert.deepEqual(res.json.credential, { type: 'api_key', id: m.keyId });
    assert.deepEqual([...res.json.permissions].sort(), ['x402:settle:create', 'x402:settle:read']);
    const env = w.cli.env;
    assert.deepEqual(res.json.limits.verify, { perMinute: env.RATE_LIMIT_VERIFY_PER_MIN, burst: env.RATE_LIMIT_VERIFY_BURST, source: 'default' });
    assert.deepEqual(res.json.limits.capture, { perMinute: env.RATE_LIMIT_CAPTURE_PER_MIN, burst: env.RATE_LIMIT_CAPTURE_BURST, source: 'default' });
    // The test stack turns the per-merchant capture share off (CAPTURE_MERCHANT_SHARE=1).
    assert.equal(res.json.limits.captureShare, undefined);

    const own = await newMerchant(w, 'Me Shop limited');
    await setMerchantRateLimits(w.store.c, own.merchantId, { capture: { perMinute: 7, burst: 3 } });
    const limited = await call(w, 'GET', '/facilitator/me', { token: own.apiKey });
    assert.deepEqual(limited.json.limits.capture, { perMinute: 7, burst: 3, source: 'merchant' });
    assert.equal(limited.json.limits.verify.source, 'default');
  });

  it('answers 401 in the one error shape for a wrong, a malformed, a revoked or no key', async function () {
    const revoked = await newMerchant(w, 'Me Shop revoked');
    await keyRevoke(w.cli, revoked.merchantId, revoked.keyId);
    for (const token of [`sk_live_${'x'.repeat(40)}`, 'not-a-key', revoked.apiKey, undefined]) {
      const res = await call(w, 'GET', '/facilitator/me', token === undefined ? {} : { token });
      assertUnauthenticated(res);
    }
  });

  it('answers a merchant user JWT: its subject, permissions and whether it is stepped up', async function () {
    const jwt = await jwtIssue(w.cli, { merchant: m.merchantId, permissions: 'x402:settle:read', mfa: true });
    const res = await call(w, 'GET', '/facilitator/me', { token: jwt.token });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.equal(res.json.merchantId, m.merchantId);
    assert.equal(res.json.credential.type, 'jwt');
    assert.equal(res.json.credential.steppedUp, true);
    assert.match(res.json.credential.id, /^dev-user-/);
    assert.deepEqual(res.json.permissions, ['x402:settle:read']);
    // A JWT without either permission still learns who it is (and that it can do nothing).
    const none = await jwtIssue(w.cli, { merchant: m.merchantId, permissions: 'other:scope' });
    const bare = await call(w, 'GET', '/facilitator/me', { token: none.token });
    assert.equal(bare.status, 200);
    assert.deepEqual(bare.json.permissions, ['other:scope']);
    assert.equal(bare.json.credential.steppedUp, false);
    assertUnauthenticated(await call(w, 'GET', '/facilitator/me', { token: `${jwt.token.slice(0, -4)}AAAA` }));
  });

  it('names a bad query parameter: "The query is invalid", path = the parameter', async function () {
    const unknown = await call(w, 'GET', '/facilitator/payments?limt=5', { token: m.apiKey });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.json.error.message, 'The query is invalid; see fields.');
    assert.deepEqual(unknown.json.error.fields, [{ path: 'limt', message: 'is not a query parameter of this route' }]);
    const bad = await call(w, 'GET', '/facilitator/payments?limit=abc', { token: m.apiKey });
    assert.equal(bad.json.error.message, 'The query is invalid; see fields.');
    assert.equal(bad.json.error.fields[0].path, 'limit');
    const refund = await call(w, 'GET', `/facilitator/payments/${randomUUID()}/refund-authorization?amount=1&x=2`, { token: m.apiKey });
    assert.equal(refund.status, 400);
    assert.deepEqual(refund.json.error.fields, [{ path: 'x', message: 'is not a query parameter of this route' }]);
    // A body's unknown field is named too, not "(body)".
    const hook = await call(w, 'POST', '/facilitator/webhook-endpoints', { token: m.apiKey, body: { url: 'https://127.0.0.1:9/h', evnts: [] } });
    assert.equal(hook.status, 400);
    assert.equal(hook.json.error.message, 'The request body is invalid; see fields.');
    assert.deepEqual(hook.json.error.fields, [{ path: 'evnts', message: 'is not a field of this request' }]);
  });

  it('voucher_already_used names the original payment to poll, at capture and at verify', async function () {
    const v = await voucherFor(m);
    const first = await capture(w, m, v.captureBody);
    assert.equal(first.status, 200, JSON.stringify(first.json));
    const paymentId = first.json.receipt.paymentId as string;
    const again = await capture(w, m, v.captureBody);
    assert.equal(again.status, 422);
    assert.equal(again.json.error.invalidReason, 'voucher_already_used');
    assert.equal(again.json.error.paymentId, paymentId);
    assert.match(again.json.error.message, new RegExp(`Poll the original payment.*${paymentId}`));
    const verify = await call(w, 'POST', '/facilitator/verify', { token: m.apiKey, body: { ...v.captureBody, paymentRequirements: v.paymentPayload.accepted } });
    assert.equal(verify.json.isValid, false);
    assert.equal(verify.json.invalidReason, 'voucher_already_used');
    assert.equal(verify.json.paymentId, paymentId);
  });

  it('a 405 carries Allow and the methods in the body', async function () {
    const res = await call(w, 'DELETE', '/facilitator/supported');
    assert.equal(res.status, 405);
    assert.equal(res.json.error.code, 'METHOD_NOT_ALLOWED');
    assert.deepEqual(res.headers.get('allow')?.split(/,\s*/).sort(), ['GET', 'HEAD']);
    assert.deepEqual([...res.json.error.allowedMethods].sort(), ['GET', 'HEAD']);
  });

  it('says "1 second", and a void\'s reused key is named as such', async function () {
    const tight = await newMerchant(w, 'Me Shop tight');
    await setMerchantRateLimits(w.store.c, tight.merchantId, { verify: { perMinute: 1, burst: 1 } });
    let limited;
    for (let i = 0; i < 3 && limited?.status !== 429; i++) limited = await call(w, 'GET', '/facilitator/payments', { token: tight.apiKey });
    assert.equal(limited?.status, 429);
    const seconds = Number(limited?.headers.get('retry-after'));
    assert.match(limited?.json.error.message, seconds === 1 ? /Retry after 1 second\.$/ : new RegExp(`Retry after ${seconds} seconds\\.$`));

    // A key that captured one payment, sent with a void: the reuse is the key's, there is no body.
    const [a, b] = [await voucherFor(m), await voucherFor(m)];
    const pa = (await capture(w, m, a.captureBody)).json.receipt.paymentId as string;
    const key = randomUUID();
    assert.equal((await capture(w, m, b.captureBody, key)).status, 200);
    const reused = await call(w, 'POST', `/facilitator/payments/${pa}/void`, { token: m.apiKey, idempotencyKey: key });
    assert.equal(reused.status, 409);
    assert.equal(reused.json.error.code, 'IDEMPOTENCY_KEY_CONFLICT');
    assert.doesNotMatch(reused.json.error.message, /different body/);
    assert.match(reused.json.error.message, /another request \(a void of another payment/);
  });
});
