import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { metricSum, scrapeApiMetrics } from '../helpers/metrics.js';
import { ensureAgentKey, ensureOperationalAgent, findAgentKey, revokeAgentKey, revokeKeyCopies, revokeOperationalAgent } from '../../src/store/operational-agents.js';
import { setBorrowerSuspension } from '../../src/store/borrowers.js';
import { devVoucher } from '../../tools/cli/dev-commands.js';
import { capture, newBorrower, newMerchant, newVoucher, UNTHROTTLED, world, type TestBorrower, type TestMerchant, type World } from '../helpers/world.js';

/** The collections a capture reads to check a voucher (merchant auth and the claim's own writes aside). */
const CONTEXT_COLLECTIONS = ['operational_agents', 'agent_keys', 'borrowers', 'spend_intents', 'spend_intent_fates'] as const;

function contextReads(metrics: string): Record<string, number> {
  return Object.fromEntries(CONTEXT_COLLECTIONS.map((col) => [col, metricSum(metrics, 'x402_store_commands_total', `command="find",collection="${col}"`)]));
}

/**
 * What a capture reads from the store (issue 21): the operational agent, with a copy of its keys
 * and of its borrower's standing, and the spend intent, two documents. The borrower is read only
 * when the agent's copy does not say it may spend (absent, or anything but ACTIVE and not suspended). The intent's fate is not read on the way to
 * an accepted payment (the consume insert decides); a refused claim reads it to give the reason a
 * client got before.
 */
describe('capture: the store reads of one capture', function () {
  this.timeout(120_000);
  let w: World;
  let m: TestMerchant;
  before(async function () {
    w = await world();
    m = await newMerchant(w, 'Capture reads merchant', { rateLimits: UNTHROTTLED });
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

  it("a new capture reads two documents: the operational agent (with its keys and its borrower's standing) and the spend intent", async function () {
    const b = await newBorrower(w);
    const v = await newVoucher(w, m, b, '1000');
    assert.deepEqual(await readsOfOneCapture(v.captureBody), { operational_agents: 1, agent_keys: 0, borrowers: 0, spend_intents: 1, spend_intent_fates: 0 });
  });

  it("the agent's copy of its key matches the key document", async function () {
    const b = await newBorrower(w);
    const key = await findAgentKey(w.store.c, b.agentKeyId);
    const agent = await w.store.c.operationalAgents.findOne({ _id: b.operationalAgentId });
    assert.ok(key && agent);
    assert.deepEqual(agent.keys, [{ keyId: key._id, publicKey: key.publicKey, status: 'active', borrowerId: key.borrowerId, createdAt: key.createdAt }]);
  });

  it('an older agent document without the copies is read the old way, and its revoked key is refused', async function () {
    const b = await newBorrower(w);
    await w.store.c.operationalAgents.updateOne({ _id: b.operationalAgentId }, { $unset: { keys: '', borrowerStanding: '' } });
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

  /**
   * A second operational agent of `b` (with `b`'s public key), created by `create` the way
   * register_borrower does. Its vouchers (dev vouchers: a spend intent and its hold, no agent check)
   * can be made before the agent exists, because no voucher can be prepared once `b` is suspended.
   */
  function secondAgent(b: TestBorrower): { agentId: string; create: () => Promise<void>; voucher: () => Promise<{ captureBody: unknown }> } {
    const c = w.store.c;
    const agentId = randomUUID();
    return {
      agentId,
      async create() {
        await ensureOperationalAgent(c, { _id: agentId, borrowerId: b.borrowerId, clientId: 'second-terminal', createdAt: new Date() });
        const publicKey = (await findAgentKey(c, b.agentKeyId))!.publicKey;
        await ensureAgentKey(c, { _id: randomUUID(), borrowerId: b.borrowerId, operationalAgentId: agentId, publicKey, status: 'active', createdAt: new Date(), revokedAt: null });
      },
      voucher: () => devVoucher(w.cli, { merchant: m.merchantId, borrower: b.borrowerId, agent: agentId, agentPrivateKey: b.agentPrivateKey, amount: '1000' }),
    };
  }

  const standingOf = async (agentId: string) => (await w.store.c.operationalAgents.findOne({ _id: agentId }))?.borrowerStanding;
  const suspend = (b: TestBorrower) => setBorrowerSuspension(w.store.c, b.borrowerId, { at: new Date(), reason: 'test' });
  const TWO_READS = { operational_agents: 1, agent_keys: 0, borrowers: 0, spend_intents: 1, spend_intent_fates: 0 };

  it("a suspension refuses the very next capture through the agent's copy; reinstating makes captures read two documents again", async function () {
    const b = await newBorrower(w);
    const [refused, later] = [await newVoucher(w, m, b, '1000'), await newVoucher(w, m, b, '1000')];
    assert.equal(await suspend(b), 'changed');
    assert.deepEqual(await standingOf(b.operationalAgentId), { status: 'ACTIVE', suspended: true, version: (await w.store.c.borrowers.findOne({ _id: b.borrowerId }))!.fence });
    await refusedAs(refused.captureBody, 'borrower_not_active');
    assert.equal(await setBorrowerSuspension(w.store.c, b.borrowerId, null), 'changed');
    assert.equal((await standingOf(b.operationalAgentId))?.suspended, false);
    assert.deepEqual(await readsOfOneCapture(later.captureBody), TWO_READS);
  });

  it('a copy that does not say the borrower may spend costs one read of the borrower, never a wrong refusal', async function () {
    const b = await newBorrower(w);
    const v = await newVoucher(w, m, b, '1000');
    await w.store.c.operationalAgents.updateOne({ _id: b.operationalAgentId }, { $set: { borrowerStanding: { status: 'ONBOARDING', suspended: true, version: 0 } } });
    assert.deepEqual(await readsOfOneCapture(v.captureBody), { ...TWO_READS, borrowers: 1 });
  });

  it('an agent created before a suspension is refused after it; one created after a suspension is refused too; reinstating lets it pay', async function () {
    const before = await newBorrower(w);
    const early = secondAgent(before);
    await early.create();
    const [accepted, refused] = [await early.voucher(), await early.voucher()];
    assert.deepEqual(await readsOfOneCapture(accepted.captureBody), TWO_READS);
    await suspend(before);
    assert.equal((await standingOf(early.agentId))?.suspended, true);
    await refusedAs(refused.captureBody, 'borrower_not_active');

    const after = await newBorrower(w);
    const late = secondAgent(after);
    const [refusedLate, acceptedLate] = [await late.voucher(), await late.voucher()];
    await suspend(after);
    await late.create();
    assert.equal((await standingOf(late.agentId))?.suspended, true, 'the new agent copied the suspension');
    await refusedAs(refusedLate.captureBody, 'borrower_not_active');
    await setBorrowerSuspension(w.store.c, after.borrowerId, null);
    assert.deepEqual(await readsOfOneCapture(acceptedLate.captureBody), TWO_READS);
  });

  it('agents created while their borrower is being suspended all end refused', async function () {
    const borrowers = await Promise.all([newBorrower(w), newBorrower(w), newBorrower(w)]);
    const agents = borrowers.flatMap((b) => [secondAgent(b), secondAgent(b)].map((a) => ({ b, a })));
    const vouchers = await Promise.all(agents.map(({ a }) => a.voucher()));
    await Promise.all([...agents.map(({ a }) => a.create()), ...borrowers.map(suspend)]);
    for (const [i, { a }] of agents.entries()) {
      assert.equal((await standingOf(a.agentId))?.suspended, true, `agent ${i} copied the suspension`);
      await refusedAs(vouchers[i]!.captureBody, 'borrower_not_active');
    }
  });
});
