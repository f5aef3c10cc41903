import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPair, importJWK, SignJWT } from 'jose';
import { jwtIssue } from '../../tools/cli/merchant-commands.js';
import { loadEnv } from '../../src/config/env.js';
import { revokeApiKey } from '../../src/store/merchants.js';
import { call, capture, newBorrower, newMerchant, newVoucher, UNTHROTTLED, world, type TestBorrower, type World } from '../helpers/world.js';

describe('facilitator: merchant credentials and permissions', function () {
  let w: World;
  let b: TestBorrower;
  before(async function () {
    w = await world();
    b = await newBorrower(w);
  });

  const routes = [
    { method: 'POST', path: '/facilitator/verify' },
    { method: 'POST', path: '/facilitator/capture' },
    { method: 'GET', path: `/facilitator/payments/${randomUUID()}` },
  ];

  it('answers 401 with WWW-Authenticate for missing, malformed and unknown credentials', async function () {
    for (const r of routes) {
      for (const token of [undefined, 'garbage', 'sk_live_short', `sk_live_${'A'.repeat(43)}`, 'eyJhbGciOiJub25lIn0.e30.']) {
        const res = await call(w, r.method, r.path, { ...(token ? { token } : {}), body: {}, idempotencyKey: randomUUID() });
        assert.equal(res.status, 401, `${r.method} ${r.path} with ${token}`);
        assert.equal(res.json.error.code, 'UNAUTHENTICATED');
        assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
      }
    }
  });

  it('refuses a revoked API key: at once when the API has not seen it live, within MERCHANT_AUTH_CACHE_MS when it has', async function () {
    const poll = (m: { apiKey: string }) => call(w, 'GET', `/facilitator/payments/${randomUUID()}`, { token: m.apiKey });
    const unseen = await newMerchant(w);
    await revokeApiKey(w.store.c, unseen.merchantId, unseen.keyId, new Date());
    assert.equal((await poll(unseen)).status, 401);

    const seen = await newMerchant(w);
    assert.equal((await poll(seen)).status, 404);
    const ttlMs = loadEnv({ ...process.env, ...w.env }).MERCHANT_AUTH_CACHE_MS;
    const revokedAt = Date.now();
    await revokeApiKey(w.store.c, seen.merchantId, seen.keyId, new Date());
    while ((await poll(seen)).status !== 401) {
      assert.ok(Date.now() - revokedAt <= ttlMs + 1000, `still accepted ${Date.now() - revokedAt} ms after revocation (cache ${ttlMs} ms)`);
      await new Promise((r) => setTimeout(r, 200));
    }
  });

  it("hides another merchant's payment behind 404", async function () {
    const owner = await newMerchant(w);
    const other = await newMerchant(w);
    const res = await capture(w, owner, (await newVoucher(w, owner, b, '1000')).captureBody);
    assert.equal(res.status, 200);
    const id = res.json.receipt.paymentId;
    assert.equal((await call(w, 'GET', `/facilitator/payments/${id}`, { token: owner.apiKey })).status, 200);
    const peek = await call(w, 'GET', `/facilitator/payments/${id}`, { token: other.apiKey });
    assert.equal(peek.status, 404);
    assert.equal(peek.json.error.code, 'NOT_FOUND');
    assert.equal((await call(w, 'GET', '/facilitator/payments/not-a-uuid', { token: owner.apiKey })).status, 404);
  });

  it('checks JWT permissions and demands step-up for capture by a user', async function () {
    const m = await newMerchant(w);
    const readOnly = (await jwtIssue(w.cli, { merchant: m.merchantId, permissions: 'x402:settle:read', mfa: true })).token;
    const noMfa = (await jwtIssue(w.cli, { merchant: m.merchantId })).token;
    const full = (await jwtIssue(w.cli, { merchant: m.merchantId, mfa: true })).token;
    const noRead = (await jwtIssue(w.cli, { merchant: m.merchantId, permissions: 'x402:settle:create', mfa: true })).token;

    const body = (await newVoucher(w, m, b, '2000')).captureBody;
    const forbidden = await call(w, 'POST', '/facilitator/capture', { token: readOnly, body, idempotencyKey: randomUUID() });
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.json.error.code, 'FORBIDDEN');
    const stepUp = await call(w, 'POST', '/facilitator/capture', { token: noMfa, body, idempotencyKey: randomUUID() });
    assert.equal(stepUp.status, 403);
    assert.equal(stepUp.json.error.code, 'STEP_UP_REQUIRED');
    const ok = await call(w, 'POST', '/facilitator/capture', { token: full, body, idempotencyKey: randomUUID() });
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    const poll = await call(w, 'GET', `/facilitator/payments/${ok.json.receipt.paymentId}`, { token: noMfa });
    assert.equal(poll.status, 200, 'a read needs no step-up');
    const cannotRead = await call(w, 'GET', `/facilitator/payments/${ok.json.receipt.paymentId}`, { token: noRead });
    assert.equal(cannotRead.status, 403);
  });

  it('refuses a JWT for another audience or signed by another key', async function () {
    const m = await newMerchant(w);
    const token = (await jwtIssue(w.cli, { merchant: m.merchantId, mfa: true })).token;
    const [h, p, s] = token.split('.');
    const payload = JSON.parse(Buffer.from(p!, 'base64url').toString());
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...payload, aud: 'someone-else' })).toString('base64url')}.${s}`;
    assert.equal((await call(w, 'GET', `/facilitator/payments/${randomUUID()}`, { token: forged })).status, 401);
    const file = JSON.parse(readFileSync(join(w.env.DATA_DIR as string, 'dev-merchant-jwt.json'), 'utf8'));
    const now = Math.floor(Date.now() / 1000);
    const devKey = await importJWK(file.privateJwk, 'EdDSA');
    const sign = async (claims: Record<string, unknown>, exp: number, key = devKey) =>
      new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', kid: file.kid }).setIssuer(file.issuer).setAudience(w.cli.env.MERCHANT_JWT_AUDIENCE).setSubject('u').setExpirationTime(exp).sign(key);
    const claims = { merchant_id: m.merchantId, permissions: ['x402:settle:read'] };
    assert.equal((await call(w, 'GET', `/facilitator/payments/${randomUUID()}`, { token: await sign(claims, now + 600) })).status, 404, 'a fresh token works');
    assert.equal((await call(w, 'GET', `/facilitator/payments/${randomUUID()}`, { token: await sign(claims, now - 120) })).status, 401, 'expired');
    const stranger = (await generateKeyPair('EdDSA')).privateKey;
    assert.equal((await call(w, 'GET', `/facilitator/payments/${randomUUID()}`, { token: await sign(claims, now + 600, stranger as never) })).status, 401, 'foreign key');
  });

  it('rate-limits verify per merchant with RateLimit headers and Retry-After', async function () {
    const m = await newMerchant(w);
    const statuses: number[] = [];
    let limited: Awaited<ReturnType<typeof call>> | null = null;
    for (let i = 0; i < 40 && !limited; i++) {
      const r = await call(w, 'POST', '/facilitator/verify', { token: m.apiKey, body: {} });
      statuses.push(r.status);
      assert.ok(r.headers.get('ratelimit-limit'));
      if (r.status === 429) limited = r;
    }
    assert.ok(limited, `no 429 in ${statuses.length} calls`);
    assert.equal(limited.json.error.code, 'RATE_LIMITED');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    assert.equal(limited.headers.get('ratelimit-remaining'), '0');
    const other = await newMerchant(w);
    assert.equal((await call(w, 'POST', '/facilitator/verify', { token: other.apiKey, body: {} })).status, 400, 'limits are per merchant');
  });

  it('never refuses a request for losing a race on the shared bucket, however many arrive at once', async function () {
    const m = await newMerchant(w, 'Busy Merchant', { rateLimits: UNTHROTTLED });
    const statuses = await Promise.all(Array.from({ length: 256 }, () => call(w, 'POST', '/facilitator/verify', { token: m.apiKey, body: {} }).then((r) => r.status)));
    assert.deepEqual(statuses.filter((s) => s === 429), [], 'an unthrottled merchant is never rate-limited');
    const n = await newMerchant(w);
    const burst = w.cli.env.RATE_LIMIT_VERIFY_BURST;
    const served = (await Promise.all(Array.from({ length: burst }, () => call(w, 'POST', '/facilitator/verify', { token: n.apiKey, body: {} })))).filter((r) => r.status !== 429);
    assert.equal(served.length, burst, 'a concurrent burst within the burst size is served whole');
  });
});
