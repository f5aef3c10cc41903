import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { metricSum, scrapeApiMetrics } from '../helpers/metrics.js';
import { capture, newBorrower, newMerchant, newVoucher, world, type TestMerchant, type World } from '../helpers/world.js';

/** The collections a capture reads to check a voucher (merchant auth and the claim's own writes aside). */
const CONTEXT_COLLECTIONS = ['operational_agents', 'agent_keys', 'borrowers', 'spend_intents', 'spend_intent_fates'] as const;

function contextReads(metrics: string): Record<string, number> {
  return Object.fromEntries(CONTEXT_COLLECTIONS.map((col) => [col, metricSum(metrics, 'x402_store_commands_total', `command="find",collection="${col}"`)]));
}

/**
 * What a capture reads from the store (issue 21): the operational agent with a copy of its keys,
 * the borrower and the spend intent, three documents. The intent's fate is not read on the way to
 * an accepted payment (the consume insert decides); a refused claim reads it to give the reason a
 * client got before.
 */
describe('capture: the store reads of one capture', function () {
  this.timeout(120_000);
  let w: World;
  let m: TestMerchant;
  before(async function () {
    w = await world();
    m = await newMerchant(w);
  });

  it('a new capture reads three documents: the operational agent (with its keys), the borrower and the spend intent', async function () {
    const b = await newBorrower(w);
    const v = await newVoucher(w, m, b, '1000');
    const before = contextReads(await scrapeApiMetrics(w));
    const res = await capture(w, m, v.captureBody);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const after = contextReads(await scrapeApiMetrics(w));
    const delta = Object.fromEntries(CONTEXT_COLLECTIONS.map((col) => [col, after[col]! - before[col]!]));
    assert.deepEqual(delta, { operational_agents: 1, agent_keys: 0, borrowers: 1, spend_intents: 1, spend_intent_fates: 0 });
  });

  it('an intent whose expiry was decided (its copy not yet written) is refused with unknown_spend_intent, and no payment stays', async function () {
    const b = await newBorrower(w);
    const v = await newVoucher(w, m, b, '1000');
    // The window between the fate's insert and the copy onto the intent (expireSpendIntentOnce).
    await w.store.c.spendIntentFates.insertOne({ _id: v.prepared.spend_intent_id, fate: 'EXPIRED', at: new Date() });
    for (const key of [randomUUID(), randomUUID()]) {
      const res = await capture(w, m, v.captureBody, key);
      assert.equal(res.status, 422, JSON.stringify(res.json));
      assert.equal(res.json.error.invalidReason, 'unknown_spend_intent');
    }
    assert.equal(await w.store.c.payments.countDocuments({ voucherId: String(v.prepared.voucher.voucherId) }), 0);
  });

  it('an intent another voucher consumed is refused with voucher_already_used', async function () {
    const b = await newBorrower(w);
    const v = await newVoucher(w, m, b, '1000');
    await w.store.c.spendIntentFates.insertOne({ _id: v.prepared.spend_intent_id, fate: 'CONSUMED', voucherId: randomUUID(), paymentId: randomUUID(), at: new Date() });
    const res = await capture(w, m, v.captureBody);
    assert.equal(res.status, 422, JSON.stringify(res.json));
    assert.equal(res.json.error.invalidReason, 'voucher_already_used');
    assert.equal(await w.store.c.payments.countDocuments({ voucherId: String(v.prepared.voucher.voucherId) }), 0);
  });
});
