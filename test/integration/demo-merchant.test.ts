import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, decodePaymentSignatureHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import { createDemoMerchant, type DemoMerchant } from '../../examples/demo-merchant/app.js';
import { demoMerchantConfig, type DemoMerchantConfig } from '../../examples/demo-merchant/config.js';
import { createLogger } from '../../src/observability/logger.js';
import { newBorrower, newMerchant, pollUntil, voucherFor402, world, type TestBorrower, type TestMerchant, type World } from '../helpers/world.js';

const PRICE = '250000';

describe('demo merchant: 402, capture, delivery on the real stack', function () {
  let w: World;
  let m: TestMerchant;
  let b: TestBorrower;
  const started: DemoMerchant[] = [];

  async function startMerchant(patch: Partial<DemoMerchantConfig> = {}): Promise<DemoMerchant> {
    const config = demoMerchantConfig({
      apiKey: m.apiKey,
      merchantId: m.merchantId,
      payTo: m.payoutAddress,
      facilitatorUrl: w.baseUrl,
      price: PRICE,
      port: 0,
      pollIntervalMs: 200,
      confirmTimeoutMs: 60_000,
      ...patch,
    });
    const dm = await createDemoMerchant(config, { logger: createLogger('silent') });
    started.push(dm);
    return dm;
  }

  const buy = (dm: DemoMerchant, item: string, headers: Record<string, string> = {}, query = '') =>
    fetch(`${dm.url}/premium/${item}${query}`, { headers });

  /**
   * What the agent would send: it asks the merchant for the item under `orderRef`, hands the 402's
   * PAYMENT-REQUIRED to prepare_x402_payment and signs the voucher with its agent key.
   */
  async function paymentFor(dm: DemoMerchant, item: string, orderRef: string) {
    const unpaid = await buy(dm, item, {}, `?order=${encodeURIComponent(orderRef)}`);
    assert.equal(unpaid.status, 402);
    await unpaid.body?.cancel();
    return voucherFor402(w, b, unpaid.headers.get('payment-required') as string);
  }

  before(async function () {
    w = await world();
    b = await newBorrower(w);
  });

  // A merchant per test keeps each test inside the facilitator's per-merchant capture burst.
  beforeEach(async function () {
    m = await newMerchant(w, 'Demo Merchant');
  });

  after(async function () {
    await Promise.all(started.map((dm) => dm.close()));
  });

  it('answers an unpaid request with 402 and an x402 v2 PAYMENT-REQUIRED for the credit scheme', async function () {
    const dm = await startMerchant();
    const res = await buy(dm, 'report');
    assert.equal(res.status, 402);
    const header = res.headers.get('payment-required');
    assert.ok(header, 'PAYMENT-REQUIRED header');
    const required = decodePaymentRequiredHeader(header);
    assert.equal(required.x402Version, 2);
    assert.equal(required.resource.url, `${dm.url}/premium/report`);
    assert.equal(required.resource.mimeType, 'application/json');
    assert.equal(required.accepts.length, 1);
    const offer = required.accepts[0]!;
    assert.equal(offer.scheme, 'credit');
    assert.equal(offer.network, 'eip155:84532');
    assert.equal(offer.asset, w.asset.toLowerCase());
    assert.equal(offer.amount, PRICE);
    assert.equal(offer.payTo, m.payoutAddress.toLowerCase());
    assert.ok(offer.maxTimeoutSeconds > 0);
    assert.equal(offer.extra.merchantId, m.merchantId);
    assert.equal(offer.extra.facilitator, w.baseUrl);
    assert.match(String(offer.extra.orderRef), /^order-/);
    assert.deepEqual(await res.json(), required, 'the body repeats the header');

    const again = decodePaymentRequiredHeader((await buy(dm, 'report')).headers.get('payment-required')!);
    assert.notEqual(again.accepts[0]!.extra.orderRef, offer.extra.orderRef, 'a fresh order per 402');
    const pinned = decodePaymentRequiredHeader((await buy(dm, 'report', {}, '?order=inv-77')).headers.get('payment-required')!);
    assert.equal(pinned.accepts[0]!.extra.orderRef, 'inv-77');
    assert.equal((await buy(dm, 'report', {}, '?order=' + encodeURIComponent('bad order!'))).status, 400);
  });

  it('delivers with PAYMENT-RESPONSE once the payment is CONFIRMED on chain', async function () {
    const dm = await startMerchant();
    const pay = await paymentFor(dm, 'report', 'confirmed-1');
    const res = await buy(dm, 'report', { 'payment-signature': pay.paymentSignatureHeader, 'idempotency-key': randomUUID() });
    assert.equal(res.status, 200, await res.clone().text());
    const body = (await res.json()) as { item: string; paymentStatus: string; paymentId: string };
    assert.equal(body.item, 'report');
    assert.equal(body.paymentStatus, 'CONFIRMED');
    const settle = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    assert.equal(settle.success, true);
    assert.match(settle.transaction, /^0x[0-9a-f]{64}$/);
    assert.equal(settle.network, 'eip155:84532');
    assert.equal(settle.payer, b.borrowerId);
    assert.equal(settle.amount, PRICE);
    assert.equal(settle.extra?.paymentId, body.paymentId);
    assert.equal(settle.extra?.orderRef, 'confirmed-1');
    const tx = await w.publicClient.getTransactionReceipt({ hash: settle.transaction as `0x${string}` });
    assert.equal(tx.status, 'success');
  });

  it('with delivery=captured, delivers right after capture, before settlement', async function () {
    const dm = await startMerchant({ delivery: 'captured' });
    const pay = await paymentFor(dm, 'chart', 'captured-1');
    const res = await buy(dm, 'chart', { 'payment-signature': pay.paymentSignatureHeader, 'idempotency-key': randomUUID() });
    assert.equal(res.status, 200, await res.clone().text());
    const settle = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    assert.equal(settle.success, true);
    assert.equal(settle.extra?.status, 'QUEUED');
    assert.equal(settle.transaction, '', 'no transaction yet');
    await pollUntil(w, m, String(settle.extra?.paymentId), 'CONFIRMED');
  });

  it('answers 402 with the reason when the facilitator rejects the voucher', async function () {
    const dm = await startMerchant();
    const pay = await paymentFor(dm, 'report', 'bad-sig-1');
    const payload = decodePaymentSignatureHeader(pay.paymentSignatureHeader) as PaymentPayload & { payload: { signature: string } };
    const sig = payload.payload.signature;
    payload.payload.signature = (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1);
    const res = await buy(dm, 'report', { 'payment-signature': encodePaymentSignatureHeader(payload), 'idempotency-key': randomUUID() });
    assert.equal(res.status, 402);
    const required = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
    assert.equal(required.error, 'invalid_signature');
    assert.equal(required.accepts[0]!.extra.orderRef, 'bad-sig-1', 'the 402 keeps the order');
    assert.equal(await w.store.c.payments.countDocuments({ merchantId: m.merchantId, orderRef: 'bad-sig-1' }), 0);

    const garbage = await buy(dm, 'report', { 'payment-signature': 'not base64 json!' });
    assert.equal(garbage.status, 402);
    assert.equal(decodePaymentRequiredHeader(garbage.headers.get('payment-required')!).error, 'invalid_payment_signature_header');
  });

  it('refuses a voucher made for another item or order without capturing it', async function () {
    const dm = await startMerchant();
    const pay = await paymentFor(dm, 'report', 'other-item-1');
    const wrongItem = await buy(dm, 'chart', { 'payment-signature': pay.paymentSignatureHeader });
    assert.equal(wrongItem.status, 402);
    assert.equal(decodePaymentRequiredHeader(wrongItem.headers.get('payment-required')!).error, 'resource_mismatch');
    const wrongOrder = await buy(dm, 'report', { 'payment-signature': pay.paymentSignatureHeader }, '?order=other-order');
    assert.equal(decodePaymentRequiredHeader(wrongOrder.headers.get('payment-required')!).error, 'order_mismatch');
    assert.equal(await w.store.c.payments.countDocuments({ merchantId: m.merchantId, orderRef: 'other-item-1' }), 0);
  });

  it('retries with the same Idempotency-Key make one payment; a pending 202 resolves on retry', async function () {
    const impatient = await startMerchant({ confirmTimeoutMs: 0 });
    const key = randomUUID();
    const impatientPay = await paymentFor(impatient, 'report', 'retry-2');
    const h2 = { 'payment-signature': impatientPay.paymentSignatureHeader, 'idempotency-key': key };
    const first = await buy(impatient, 'report', h2);
    assert.equal(first.status, 202, await first.clone().text());
    const firstBody = (await first.json()) as { paymentId: string; status: string };
    assert.equal(firstBody.status, 'pending');
    const [a, c] = await Promise.all([buy(impatient, 'report', h2), buy(impatient, 'report', h2)]);
    assert.ok([200, 202].includes(a.status) && [200, 202].includes(c.status));
    for (const r of [a, c]) assert.equal(((await r.json()) as { paymentId: string }).paymentId, firstBody.paymentId);
    await pollUntil(w, m, firstBody.paymentId, 'CONFIRMED');
    const done = await buy(impatient, 'report', h2);
    assert.equal(done.status, 200);
    assert.equal(decodePaymentResponseHeader(done.headers.get('payment-response')!).extra?.paymentId, firstBody.paymentId);
    assert.equal(await w.store.c.payments.countDocuments({ merchantId: m.merchantId, orderRef: 'retry-2' }), 1);

    const patient = await startMerchant();
    const pay = await paymentFor(patient, 'report', 'retry-1');
    const headers = { 'payment-signature': pay.paymentSignatureHeader, 'idempotency-key': randomUUID() };
    const sameOrder = await buy(patient, 'report', headers);
    assert.equal(sameOrder.status, 200);
    const again = await buy(patient, 'report', headers);
    assert.equal(again.status, 200);
    assert.equal(
      decodePaymentResponseHeader(again.headers.get('payment-response')!).extra?.paymentId,
      decodePaymentResponseHeader(sameOrder.headers.get('payment-response')!).extra?.paymentId,
    );
    assert.equal(await w.store.c.payments.countDocuments({ merchantId: m.merchantId, orderRef: 'retry-1' }), 1);
  });
});
