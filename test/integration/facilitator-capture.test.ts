import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { decodeEventLog, encodeEventTopics } from 'viem';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { uuidToBytes32 } from '@credit-facilitator/wire/ids';
import { call, capture, erc20BalanceOf, newBorrower, newMerchant, newVoucher, paymentSettledEvent, pollUntil, world, type TestBorrower, type World } from '../helpers/world.js';
import { findBorrower } from '../../src/store/borrowers.js';

describe('facilitator: capture to CONFIRMED on chain', function () {
  let w: World;
  /** For tests that do not look at the borrower's credit; fresh merchants keep them apart. */
  let shared: TestBorrower;
  before(async function () {
    w = await world();
    shared = await newBorrower(w);
  });

  it('captures a voucher, answers QUEUED at once, and settles it on chain with a matching event', async function () {
    const m = await newMerchant(w);
    const b = await newBorrower(w);
    const v = await newVoucher(w, m, b, '1250000', { orderRef: 'order-1' });
    const res = await capture(w, m, v.captureBody);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.equal(res.json.replayed, false);
    const receipt = res.json.receipt;
    assert.equal(receipt.status, 'QUEUED');
    assert.equal(receipt.amount, '1250000');
    assert.equal(receipt.merchantId, m.merchantId);
    assert.equal(receipt.payer, b.borrowerId);
    assert.equal(receipt.orderRef, 'order-1');
    assert.equal(receipt.network, 'eip155:84532');

    const done = await pollUntil(w, m, receipt.paymentId, 'CONFIRMED');
    assert.match(done.transaction, /^0x[0-9a-f]{64}$/);
    assert.ok(done.batchId && done.blockNumber && done.confirmedAt);

    const txReceipt = await w.publicClient.getTransactionReceipt({ hash: done.transaction });
    assert.equal(txReceipt.status, 'success');
    const events = txReceipt.logs
      .filter((l) => l.address.toLowerCase() === w.settlement.toLowerCase())
      .flatMap((l) => {
        try {
          return [decodeEventLog({ abi: [paymentSettledEvent], data: l.data, topics: l.topics })];
        } catch {
          return [];
        }
      })
      .filter((e) => e.args.paymentId === uuidToBytes32(receipt.paymentId));
    assert.equal(events.length, 1, 'exactly one PaymentSettled for the payment');
    assert.equal(events[0]!.args.borrowerId, uuidToBytes32(b.borrowerId));
    assert.equal(events[0]!.args.merchantId, uuidToBytes32(m.merchantId));
    assert.equal(events[0]!.args.amount, 1_250_000n);

    const balance = await w.publicClient.readContract({ address: w.asset, abi: [erc20BalanceOf], functionName: 'balanceOf', args: [m.payoutAddress] });
    assert.equal(balance, 1_250_000n);
    // The store books the debt just after CONFIRMED (the chain is the source of truth for debt).
    const deadline = Date.now() + 10_000;
    let borrower = await findBorrower(w.store.c, b.borrowerId);
    while (borrower?.debt !== 1_250_000 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      borrower = await findBorrower(w.store.c, b.borrowerId);
    }
    assert.equal(borrower?.debt, 1_250_000);
    assert.deepEqual(borrower?.holds, {});
  });

  it('settles many payments from several merchants in one settleBatch transaction per settlement shard', async function () {
    const merchants = await Promise.all([newMerchant(w), newMerchant(w), newMerchant(w)]);
    const borrowers = [shared, await newBorrower(w)];
    const bodies = [];
    for (let i = 0; i < 12; i++) {
      const m = merchants[i % 3]!;
      bodies.push({ m, body: (await newVoucher(w, m, borrowers[i % 2]!, String(1000 + i))).captureBody });
    }
    const receipts = await Promise.all(bodies.map(async ({ m, body }) => ({ m, res: await capture(w, m, body) })));
    for (const r of receipts) assert.equal(r.res.status, 200, JSON.stringify(r.res.json));
    const confirmed = await Promise.all(receipts.map((r) => pollUntil(w, r.m, r.res.json.receipt.paymentId, 'CONFIRMED')));
    // Each settlement shard settles its own batch, and captures can straddle a batch window, so ask
    // for batching (at most two windows per shard), not for exactly one transaction.
    const shards = Number(w.env.SETTLEMENT_SHARDS ?? 2);
    const txs = [...new Set(confirmed.map((c) => c.transaction as `0x${string}`))];
    assert.ok(txs.length <= 2 * shards, `12 payments took ${txs.length} transactions with ${shards} shards`);
    const topic = encodeEventTopics({ abi: [paymentSettledEvent], eventName: 'PaymentSettled' })[0];
    const settledIds = new Set<string>();
    let largest = 0;
    for (const hash of txs) {
      const tx = await w.publicClient.getTransactionReceipt({ hash });
      const ids = tx.logs.filter((l) => l.topics[0] === topic).map((l) => l.topics[1] as string);
      largest = Math.max(largest, ids.length);
      ids.forEach((id) => settledIds.add(id));
    }
    assert.ok(largest >= 6, `the largest batch carried ${largest} payments`);
    for (const c of confirmed) assert.ok(settledIds.has(uuidToBytes32(c.paymentId)), `event for ${c.paymentId}`);
    for (const [i, m] of merchants.entries()) {
      const expected: bigint = bodies.filter((b) => b.m === m).reduce((s: bigint, b) => s + BigInt(b.body.paymentPayload.payload.voucher.amount), 0n);
      const balance = await w.publicClient.readContract({ address: w.asset, abi: [erc20BalanceOf], functionName: 'balanceOf', args: [m.payoutAddress] });
      assert.equal(balance, expected, `merchant ${i} payout`);
    }
  });

  it('replays the same key and body with replayed: true, and refuses the same key with another body', async function () {
    const m = await newMerchant(w);
    const first = (await newVoucher(w, m, shared, '5000')).captureBody;
    const key = randomUUID();
    const a = await capture(w, m, first, key);
    assert.equal(a.status, 200);
    const again = await capture(w, m, first, key);
    assert.equal(again.status, 200);
    assert.equal(again.json.replayed, true);
    assert.equal(again.json.receipt.paymentId, a.json.receipt.paymentId);
    // Once a poll says CONFIRMED, a replay must not answer an older state (the store's projection lags the batch).
    const polled = await pollUntil(w, m, a.json.receipt.paymentId, 'CONFIRMED');
    const settled = await capture(w, m, first, key);
    assert.equal(settled.json.receipt.status, 'CONFIRMED');
    assert.equal(settled.json.receipt.transaction, polled.transaction);
    const other = (await newVoucher(w, m, shared, '6000')).captureBody;
    const conflict = await capture(w, m, other, key);
    assert.equal(conflict.status, 409);
    assert.equal(conflict.json.error.code, 'IDEMPOTENCY_KEY_CONFLICT');
    assert.ok(conflict.json.error.requestId);
  });

  it('gives concurrent duplicates of one capture a single payment', async function () {
    const m = await newMerchant(w);
    const body = (await newVoucher(w, m, shared, '7000')).captureBody;
    const key = randomUUID();
    const results = await Promise.all(Array.from({ length: 8 }, () => capture(w, m, body, key)));
    const ok = results.filter((r) => r.status === 200);
    assert.ok(ok.length >= 1);
    for (const r of results) assert.ok(r.status === 200 || r.status === 429, `status ${r.status} ${JSON.stringify(r.json)}`);
    assert.equal(new Set(ok.map((r) => r.json.receipt.paymentId)).size, 1);
    assert.equal(ok.filter((r) => r.json.replayed === false).length <= 1, true);
    assert.equal(await w.store.c.payments.countDocuments({ voucherId: body.paymentPayload.payload.voucher.voucherId }), 1);
  });

  it('accepts one voucher once across different idempotency keys', async function () {
    const m = await newMerchant(w);
    const body = (await newVoucher(w, m, shared, '8000')).captureBody;
    const a = await capture(w, m, body);
    const c = await capture(w, m, body);
    assert.equal(a.status, 200);
    assert.equal(c.status, 422);
    assert.equal(c.json.error.code, 'PAYMENT_REJECTED');
    assert.equal(c.json.error.invalidReason, 'voucher_already_used');
  });

  it('refuses a Protocol V1 PaymentIntent before looking at the version', async function () {
    const m = await newMerchant(w);
    const res = await capture(w, m, { x402Version: 1, paymentPayload: { paymentIntent: { amount: '1' } } });
    assert.equal(res.status, 400);
    assert.equal(res.json.error.code, 'X402_AGENT_VOUCHER_REQUIRED');
    const typed = await capture(w, m, { x402Version: 2, paymentPayload: { payload: { type: 'PaymentIntent' } } });
    assert.equal(typed.json.error.code, 'X402_AGENT_VOUCHER_REQUIRED');
  });

  it('requires a UUID v4 Idempotency-Key', async function () {
    const m = await newMerchant(w);
    const body = { x402Version: 2, paymentPayload: {} };
    const missing = await call(w, 'POST', '/facilitator/capture', { token: m.apiKey, body });
    assert.equal(missing.status, 400);
    assert.equal(missing.json.error.code, 'IDEMPOTENCY_KEY_REQUIRED');
    const bad = await call(w, 'POST', '/facilitator/capture', { token: m.apiKey, body, idempotencyKey: 'not-a-uuid' });
    assert.equal(bad.json.error.code, 'IDEMPOTENCY_KEY_INVALID');
    const v1uuid = await call(w, 'POST', '/facilitator/capture', { token: m.apiKey, body, idempotencyKey: '6ba7b810-9dad-11d1-80b4-00c04fd430c8' });
    assert.equal(v1uuid.json.error.code, 'IDEMPOTENCY_KEY_INVALID');
  });

  it('takes the x402 payment-identifier extension as the key when no Idempotency-Key is sent (same rules)', async function () {
    const m = await newMerchant(w);
    const withId = (body: { x402Version: 2; paymentPayload: Record<string, unknown> }, id: string) => ({
      ...body,
      paymentPayload: { ...body.paymentPayload, extensions: { 'payment-identifier': { info: { required: false, id } } } },
    });
    const id = `pay_${randomUUID().replace(/-/g, '')}`;
    const first = withId((await newVoucher(w, m, shared, '4100')).captureBody, id);
    const a = await call(w, 'POST', '/facilitator/capture', { token: m.apiKey, body: first });
    assert.equal(a.status, 200, JSON.stringify(a.json));
    assert.equal(a.json.replayed, false);
    const again = await call(w, 'POST', '/facilitator/capture', { token: m.apiKey, body: first });
    assert.equal(again.json.replayed, true);
    assert.equal(again.json.receipt.paymentId, a.json.receipt.paymentId);
    const other = withId((await newVoucher(w, m, shared, '4200')).captureBody, id);
    const conflict = await call(w, 'POST', '/facilitator/capture', { token: m.apiKey, body: other });
    assert.equal(conflict.status, 409);
    assert.equal(conflict.json.error.code, 'IDEMPOTENCY_KEY_CONFLICT');
    // The id is case-sensitive, and a header key (a UUID) lives apart from it.
    const upper = await call(w, 'POST', '/facilitator/capture', { token: m.apiKey, body: withId(other, id.toUpperCase()) });
    assert.equal(upper.status, 200, JSON.stringify(upper.json));
    const tooShort = await call(w, 'POST', '/facilitator/capture', { token: m.apiKey, body: withId(first, 'short') });
    assert.equal(tooShort.json.error.code, 'IDEMPOTENCY_KEY_INVALID');
    const supported = await call(w, 'GET', '/facilitator/supported');
    assert.deepEqual(supported.json.extensions, ['payment-identifier']);
  });

  it('signs a CONFIRMED receipt that anyone verifies offline with the published key; earlier states are 409', async function () {
    const m = await newMerchant(w);
    const v = await newVoucher(w, m, shared, '4300', { orderRef: 'signed-1' });
    const res = await capture(w, m, v.captureBody);
    const id = res.json.receipt.paymentId as string;
    const early = await call(w, 'GET', `/facilitator/payments/${id}/receipt`, { token: m.apiKey });
    if (early.status === 409) assert.equal(early.json.error.code, 'PAYMENT_NOT_CONFIRMED');
    const done = await pollUntil(w, m, id, 'CONFIRMED');
    const signed = await call(w, 'GET', `/facilitator/payments/${id}/receipt`, { token: m.apiKey });
    assert.equal(signed.status, 200, JSON.stringify(signed.json));
    const keys = await call(w, 'GET', '/facilitator/receipt-keys');
    const jwks = createLocalJWKSet(keys.json);
    const { payload, protectedHeader } = await jwtVerify(signed.json.jws, jwks, { issuer: w.baseUrl, subject: id, typ: 'x402-receipt+jwt' });
    assert.equal(protectedHeader.alg, 'ES256');
    const r = payload.receipt as { transaction: string; blockNumber: string; amount: string; merchantId: string; status: string };
    assert.deepEqual([r.status, r.transaction, r.blockNumber, r.amount, r.merchantId], ['CONFIRMED', done.transaction, done.blockNumber, '4300', m.merchantId]);
    const [h, p, sig] = (signed.json.jws as string).split('.');
    const forged = Buffer.from(JSON.stringify({ ...payload, receipt: { ...r, amount: '999999' } })).toString('base64url');
    await assert.rejects(jwtVerify(`${h}.${forged}.${sig}`, jwks), /signature/);
    assert.ok(p);
    const stranger = await newMerchant(w);
    assert.equal((await call(w, 'GET', `/facilitator/payments/${id}/receipt`, { token: stranger.apiKey })).status, 404);
  });

  it('answers malformed bodies with 400, 413 and 415 in the one error shape', async function () {
    const m = await newMerchant(w);
    const key = randomUUID();
    const notJson = await call(w, 'POST', '/facilitator/capture', { token: m.apiKey, rawBody: '{nope', headers: { 'content-type': 'application/json' }, idempotencyKey: key });
    assert.equal(notJson.status, 400);
    assert.equal(notJson.json.error.code, 'INVALID_REQUEST');
    const wrongType = await call(w, 'POST', '/facilitator/capture', { token: m.apiKey, rawBody: 'x=1', headers: { 'content-type': 'text/plain' }, idempotencyKey: key });
    assert.equal(wrongType.status, 415);
    const huge = await call(w, 'POST', '/facilitator/capture', { token: m.apiKey, body: { x402Version: 2, paymentPayload: { pad: 'x'.repeat(70_000) } }, idempotencyKey: key });
    assert.equal(huge.status, 413);
    const shape = await call(w, 'POST', '/facilitator/capture', { token: m.apiKey, body: { x402Version: 'two' }, idempotencyKey: key });
    assert.equal(shape.status, 400);
    assert.ok(Array.isArray(shape.json.error.fields) && shape.json.error.fields.length > 0, JSON.stringify(shape.json));
    for (const r of [notJson, wrongType, huge, shape]) {
      assert.equal(typeof r.json.error.requestId, 'string');
      assert.ok(!JSON.stringify(r.json).includes('    at '), 'no stack trace');
    }
  });
});
