import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { metricSum, scrapeApiMetrics } from '../helpers/metrics.js';
import { ensureAgentKey, findAgentKey, revokeAgentKey, revokeKeyCopies, revokeOperationalAgent } from '../../src/store/operational-agents.js';
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

  async function readsOfOneCapture(body: unknown): Promise<Record<string, number>> {
    const before = contextReads(await scrapeApiMetrics(w));
    const res = await capture(w, m, body);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const after = contextReads(await scrapeApiMetrics(w));
    return Object.fromEntries(CONTEXT_COLLECTIONS.map((col) => [col, after[col]! - before[col]!]));
  }

  async function refusedAs(body: unknown, reason: string): Promise<void> {
    const res = await capture(w, m, body);
    assert.equal(res.status, 422, JSON.stringify(res.json));
    assert.equal(res.json.error.invalidReason, reason);
  }

  it('a new capture reads three documents: the operational agent (with its keys), the borrower and the spend intent', async function () {
    const b = await newBorrower(w);
    const v = await newVoucher(w, m, b, '1000');
    assert.deepEqual(await readsOfOneCapture(v.captureBody), { operational_agents: 1, agent_keys: 0, borrowers: 1, spend_intents: 1, spend_intent_fates: 0 });
  });

  it("the agent's copy of its key matches the key document", async function () {
    const b = await newBorrower(w);
    const key = await findAgentKey(w.store.c, b.agentKeyId);
    const agent = await w.store.c.operationalAgents.findOne({ _id: b.operationalAgentId });
    assert.ok(key && agent);
    assert.deepEqual(agent.keys, [{ keyId: key._id, publicKey: key.publicKey, status: 'active', borrowerId: key.borrowerId, createdAt: key.createdAt }]);
  });

  it('an older agent document without the copy is read the old way, and its revoked key is refused', async function () {
    const b = await newBorrower(w);
    await w.store.c.operationalAgents.updateOne({ _id: b.operationalAgentId }, { $unset: { keys: '' } });
    const v = await newVoucher(w, m, b, '1000');
    assert.deepEqual(await readsOfOneCapture(v.captureBody), { operational_agents: 1, agent_keys: 1, borrowers: 1, spend_intents: 1, spend_intent_fates: 0 });
    const next = await newVoucher(w, m, b, '1000');
    assert.equal(await revokeAgentKey(w.store.c, b.agentKeyId, new Date()), 'changed');
    assert.equal((await w.store.c.operationalAgents.findOne({ _id: b.operationalAgentId }))?.keys, undefined, 'no partial copy is made');
    await refusedAs(next.captureBody, 'agent_key_revoked');
  });

  it("a revocation that stopped after the agent's copy (a crash) already refuses the key's captures; a re-run finishes it", async function () {
    const b = await newBorrower(w);
    const v = await newVoucher(w, m, b, '1000');
    const key = await findAgentKey(w.store.c, b.agentKeyId);
    assert.ok(key);
    await revokeKeyCopies(w.store.c, b.operationalAgentId, [key]);
    assert.equal((await findAgentKey(w.store.c, b.agentKeyId))?.status, 'active', 'the key document is not revoked yet');
    await refusedAs(v.captureBody, 'agent_key_revoked');
    assert.equal(await revokeAgentKey(w.store.c, b.agentKeyId, new Date()), 'changed');
    assert.equal((await findAgentKey(w.store.c, b.agentKeyId))?.status, 'revoked');
  });

  it("revoking the whole agent refuses its next capture, and a key added to it afterwards lands revoked in its copy", async function () {
    const b = await newBorrower(w);
    const v = await newVoucher(w, m, b, '1000');
    const out = await revokeOperationalAgent(w.store.c, b.operationalAgentId, new Date());
    assert.deepEqual(out, { change: 'changed', revokedKeyIds: [b.agentKeyId] });
    await refusedAs(v.captureBody, 'agent_key_revoked');
    const late = randomUUID();
    await ensureAgentKey(w.store.c, { _id: late, borrowerId: b.borrowerId, operationalAgentId: b.operationalAgentId, publicKey: v.agentPublicKey, status: 'active', createdAt: new Date(), revokedAt: null });
    const agent = await w.store.c.operationalAgents.findOne({ _id: b.operationalAgentId });
    assert.deepEqual(agent?.keys?.map((k) => [k.keyId, k.status]), [[b.agentKeyId, 'revoked'], [late, 'revoked']]);
    assert.deepEqual(agent?.agentKeyIds, [b.agentKeyId, late]);
    assert.equal((await findAgentKey(w.store.c, late))?.status, 'revoked');
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
