import assert from 'node:assert/strict';
import { newId } from '@credit-facilitator/wire/ids';
import type { BatchDoc, PaymentDoc } from '../../src/store/documents.js';
import { findPaymentWithOutcome, withBatchOutcomes } from '../../src/store/payment-outcomes.js';
import { paymentsCapturingSince } from '../../src/store/payments.js';
import { voidClaimId } from '../../src/store/settlement/claims.js';
import { call, capture, newBorrower, newMerchant, newVoucher, pollUntil, UNTHROTTLED, world, type World } from '../helpers/world.js';
import { metricSum, scrapeApiMetrics } from '../helpers/metrics.js';
import { isFindByIds, recordStoreCommands } from '../helpers/store-commands.js';

/** A payment's outcome is kept once, in its batch's record: the batch end does not write it onto the payment. */
describe('store: payments read with their batches\' outcomes', function () {
  this.timeout(120_000);
  let w: World;
  before(async function () {
    w = await world();
  });

  /** A payment document as capture writes it; `outcomeIn: undefined` leaves the field out, as earlier releases did. */
  const payment = (over: Partial<PaymentDoc> = {}): PaymentDoc => {
    const now = new Date();
    const doc: PaymentDoc = {
      _id: newId(),
      voucherId: newId(),
      spendIntentId: newId(),
      merchantId: 'outcomes-test',
      borrowerId: 'borrower-1',
      operationalAgentId: 'agent-1',
      payTo: '0x0000000000000000000000000000000000000002',
      amount: '1000',
      asset: '0x0000000000000000000000000000000000000001',
      network: 'eip155:84532',
      orderRef: `order-${newId()}`,
      resource: 'https://example.test/item',
      idempotencyKey: newId(),
      status: 'CAPTURING',
      capturedAt: now,
      updatedAt: now,
      outcomeIn: 'batch',
      ...over,
    };
    if (doc.outcomeIn === undefined) delete doc.outcomeIn;
    return doc;
  };
  const batch = (status: BatchDoc['status'], over: Partial<BatchDoc> = {}): BatchDoc => ({
    _id: newId(),
    shard: 0,
    status,
    payments: 1,
    updatedAt: new Date(),
    ...over,
  });

  it('a captured payment settles with its document untouched, and reads CONFIRMED as its poll does', async function () {
    const m = await newMerchant(w);
    const b = await newBorrower(w);
    const v = await newVoucher(w, m, b, '1500');
    const res = await capture(w, m, v.captureBody);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const paymentId = res.json.receipt.paymentId as string;
    const polled = await pollUntil(w, m, paymentId, 'CONFIRMED', 90_000);

    const stored = await w.store.c.payments.findOne({ _id: paymentId });
    assert.equal(stored?.status, 'CAPTURING', 'the batch end wrote nothing onto the payment');
    assert.equal(stored?.outcomeIn, 'batch');
    const read = await findPaymentWithOutcome(w.store.c, paymentId);
    assert.equal(read?.status, 'CONFIRMED');
    assert.equal(read?.batchId, polled.batchId);
    assert.equal(read?.transaction, polled.transaction);
    assert.equal(read?.blockNumber, polled.blockNumber);
    assert.equal(read?.confirmedAt?.toISOString(), polled.confirmedAt);
  });

  it("takes each open payment's claimed batch outcome in two reads by ids, and leaves the rest as they are", async function () {
    const c = w.store.c;
    const confirmedBatch = batch('CONFIRMED', { transaction: `0x${'ab'.repeat(32)}`, blockNumber: '42', confirmedAt: new Date('2026-05-06T07:08:09.000Z') });
    const failedBatch = batch('FAILED', { failureReason: 'reverted' });
    const movingBatch = batch('SUBMITTED', { transaction: `0x${'cd'.repeat(32)}` });
    await c.batches.insertMany([confirmedBatch, failedBatch, movingBatch]);
    const settled = payment();
    const failed = payment();
    const moving = payment();
    const voided = payment();
    const waiting = payment();
    const older = payment({ status: 'CONFIRMED', batchId: 'written-by-an-earlier-release', transaction: '0x01', blockNumber: '7', outcomeIn: undefined });
    await c.payments.insertMany([settled, failed, moving, voided, waiting, older]);
    const at = new Date();
    await c.settlementClaims.insertMany([
      { _id: settled._id, batchId: confirmedBatch._id, at },
      { _id: failed._id, batchId: failedBatch._id, at },
      { _id: moving._id, batchId: movingBatch._id, at },
      { _id: voided._id, batchId: voidClaimId(voided._id), at },
    ]);

    let read: PaymentDoc[] = [];
    const commands = await recordStoreCommands(w, async (mc) => {
      read = await withBatchOutcomes(mc, [settled, failed, moving, voided, waiting, older]);
    });
    assert.deepEqual(
      commands.map((cmd) => [cmd.collection, cmd.filters.every((f) => isFindByIds(cmd, f))]),
      [
        ['settlement_claims', true],
        ['settlement_batches', true],
      ],
    );
    const [s, f, mv, vd, wt, o] = read;
    assert.deepEqual(
      { status: s?.status, batchId: s?.batchId, transaction: s?.transaction, blockNumber: s?.blockNumber, confirmedAt: s?.confirmedAt?.toISOString() },
      { status: 'CONFIRMED', batchId: confirmedBatch._id, transaction: confirmedBatch.transaction, blockNumber: '42', confirmedAt: '2026-05-06T07:08:09.000Z' },
    );
    assert.deepEqual({ status: f?.status, batchId: f?.batchId, failureReason: f?.failureReason }, { status: 'FAILED', batchId: failedBatch._id, failureReason: 'reverted' });
    assert.equal(mv?.status, 'CAPTURING', 'a batch still moving leaves the payment as it is');
    assert.equal(vd?.status, 'CAPTURING', "a void's claim names no batch");
    assert.equal(wt?.status, 'CAPTURING', 'an unclaimed payment waits');
    assert.deepEqual(o, older, 'an outcome an earlier release wrote is kept');

    const none = await recordStoreCommands(w, (mc) => withBatchOutcomes(mc, [older]));
    assert.deepEqual(none, [], 'terminal payments cost no read');
  });

  it("a batch's view reads its settled payments by ids: the same few store commands whatever their number", async function () {
    const m = await newMerchant(w, 'Batch view merchant', { rateLimits: UNTHROTTLED });
    const b = await newBorrower(w);
    const vouchers = await Promise.all(['1100', '1200', '1300', '1400'].map((amount) => newVoucher(w, m, b, amount)));
    const ids: string[] = [];
    for (const res of await Promise.all(vouchers.map((v) => capture(w, m, v.captureBody, v.idempotencyKey)))) {
      assert.equal(res.status, 200, JSON.stringify(res.json));
      ids.push(res.json.receipt.paymentId as string);
    }
    const confirmed = await Promise.all(ids.map((id) => pollUntil(w, m, id, 'CONFIRMED', 90_000)));
    const counts = new Map<string, number>();
    for (const r of confirmed) counts.set(r.batchId as string, (counts.get(r.batchId as string) ?? 0) + 1);
    const [batchId, mine] = [...counts].sort((x, y) => y[1] - x[1])[0]!;

    const reads = async (collection: string) => metricSum(await scrapeApiMetrics(w), 'x402_store_commands_total', `command="find",collection="${collection}"`);
    const before = { payments: await reads('payments'), claims: await reads('settlement_claims'), fates: await reads('spend_intent_fates') };
    const view = await call(w, 'GET', `/facilitator/batches/${batchId}`, { token: m.apiKey });
    assert.equal(view.status, 200, JSON.stringify(view.json));
    assert.equal(view.json.payments.length, mine);
    assert.ok(view.json.payments.every((r: { status: string; batchId: string }) => r.status === 'CONFIRMED' && r.batchId === batchId));
    const after = { payments: await reads('payments'), claims: await reads('settlement_claims'), fates: await reads('spend_intent_fates') };
    assert.deepEqual(
      { payments: after.payments - before.payments, claims: after.claims - before.claims, fates: after.fates - before.fates },
      { payments: 1, claims: 1, fates: 0 },
      `${mine} payments in the batch`,
    );
  });

  it("the legacy capture sweep's scan passes over captures whose outcome their batch keeps", async function () {
    const long = new Date(Date.now() - 3600_000);
    const marked = payment({ updatedAt: long });
    const legacy = payment({ updatedAt: long, outcomeIn: undefined });
    await w.store.c.payments.insertMany([marked, legacy]);
    const found = new Set((await paymentsCapturingSince(w.store.c, new Date(Date.now() - 60_000))).map((d) => d._id));
    assert.ok(found.has(legacy._id), 'a capture of the code before settlement queues is found');
    assert.ok(!found.has(marked._id), "a capture of today's code is its shard's");
    await w.store.c.payments.deleteMany({ _id: { $in: [marked._id, legacy._id] } });
  });
});
