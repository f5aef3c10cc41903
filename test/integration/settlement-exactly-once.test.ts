import assert from 'node:assert/strict';
import type { BatchOutcome } from '../../src/domain/payment.js';
import type { ShardSettlement } from '../../src/settlement/shard.js';
import { submitSettleBatch } from '../../src/chain/settlement.js';
import { sortForeignClaims } from '../../src/settlement/foreign-claims.js';
import { decideBatchSet, findBatchSet } from '../../src/store/settlement/batch-sets.js';
import { claimForBatch, findClaims } from '../../src/store/settlement/claims.js';
import { findBatch, recordBatch } from '../../src/store/settlement/batches.js';
import { announceBatch, writeResyncCheckpoint } from '../../src/store/settlement/board.js';
import { resyncFromChain } from '../../src/settlement/chain-resync.js';
import { newId } from '@credit-facilitator/wire/ids';
import { assertChainAgrees, heldStep, newShard, queueAccepted, shardHarness, type ShardHarness } from '../helpers/shard-harness.js';
import { world, type World } from '../helpers/world.js';

const GATHER = { shard: 0, shards: 1 };

/** Submits, confirms and ends one gathered batch as the shard workflow would, and returns its confirmation. */
async function settleGathered(shard: ShardSettlement, batchId: string, gathered: { paymentIds: string[]; queues: number[] }) {
  const ref = { shard: 0, batchId, paymentIds: gathered.paymentIds, queues: gathered.queues };
  const step = heldStep();
  const sent = await shard.submitBatch(ref, step);
  const r = await shard.confirmBatch({ ...ref, transaction: sent.transaction ?? null }, step);
  if (r.status !== 'confirmed') return r;
  const outcome: BatchOutcome = { status: 'CONFIRMED', batchId, transaction: r.transaction, blockNumber: r.blockNumber, confirmedAt: r.confirmedAt };
  await shard.endBatch({ ...ref, outcome, notify: 'separately' });
  return r;
}

/**
 * Issue 42: a batch settles exactly the set decided for it once (store/settlement/batch-sets.ts), whatever a
 * stale gather attempt (one Temporal already gave up on, still running in the worker) claims or
 * caches after the live attempt returned; and a batch is CONFIRMED only when what settled on chain
 * under its id is that set. Each ends with the check against the chain's events.
 */
describe('settlement: one set per batch, decided once and checked against the chain', function () {
  this.timeout(120_000);
  let w: World;
  let h: ShardHarness;
  before(async function () {
    w = await world();
    h = await shardHarness(w);
  });
  after(async function () {
    await h?.close();
  });
  beforeEach(async function () {
    await h.store.c.settlementQueue(0).deleteMany({});
  });

  it('a stale attempt that claims more (S + P) after the live one returned adopts S: P is released at once and paid once, by the next batch', async function () {
    const shard = newShard(h);
    const batchId = newId();
    const staleStep = heldStep();
    const staleSleeping = staleStep.holdSleep();
    // The stale attempt starts on an empty queue and sleeps until the test wakes it.
    const stale = shard.gatherBatch({ ...GATHER, batchId }, staleStep, 1);
    await staleSleeping.reached;

    const s = await queueAccepted(h, 2);
    const live = await shard.gatherBatch({ ...GATHER, batchId }, heldStep(), 2);
    assert.deepEqual(live.paymentIds, s.map((e) => e._id), 'the live attempt claims S');

    const [p] = await queueAccepted(h, 1);
    staleSleeping.wake();
    const staleAnswer = await stale; // Temporal drops this answer: the workflow already holds the live one
    const pClaimAfterStale = (await findClaims(h.store.c, [p!._id])).length;

    const r = await settleGathered(shard, batchId, live);
    assert.equal(r.status, 'confirmed');
    assert.deepEqual((await findBatch(h.store.c, batchId))?.paymentIds, live.paymentIds);

    const next = newId();
    const gathered = await shard.gatherBatch({ ...GATHER, batchId: next }, heldStep(), 1);
    assert.deepEqual(gathered.paymentIds, [p!._id], 'the next batch takes P');
    assert.equal((await settleGathered(shard, next, gathered)).status, 'confirmed');
    await assertChainAgrees(h, w, [...s.map((e) => e._id), p!._id]);
    assert.deepEqual(staleAnswer.paymentIds, live.paymentIds, 'the stale attempt adopted the decided set');
    assert.equal(pClaimAfterStale, 0, "P's stale claim was released at once");
    assert.ok(staleStep.logs.some((l) => l.msg.includes('adopted the batch')), 'the adoption is logged');
  });

  it('a stale attempt whose smaller snapshot lands last changes nothing: every payment of the set is sent and paid once', async function () {
    const shard = newShard(h);
    const batchId = newId();
    const older = await queueAccepted(h, 2);
    let release!: () => void;
    const held = h.accepted.holdNext(new Promise<void>((r) => (release = r)));
    // The stale attempt reads the two-payment queue, then is held before it claims.
    const stale = shard.gatherBatch({ ...GATHER, batchId }, heldStep(), 1);
    await held;

    const newer = await queueAccepted(h, 2);
    const live = await shard.gatherBatch({ ...GATHER, batchId }, heldStep(), 2);
    assert.deepEqual(live.paymentIds, [...older, ...newer].map((e) => e._id), 'the live attempt claims all four');
    release();
    const staleAnswer = await stale;

    assert.equal((await settleGathered(shard, batchId, live)).status, 'confirmed');
    await assertChainAgrees(h, w, live.paymentIds);
    assert.deepEqual(staleAnswer.paymentIds, live.paymentIds, 'the stale attempt adopted the four, not its two');
    assert.equal(await h.store.c.settlementQueue(0).countDocuments({}), 0, 'every payment of the set left the queue, each paid');
  });

  it('a step of a batch whose set differs from the ids its workflow holds refuses: nothing is sent', async function () {
    const shard = newShard(h);
    const batchId = newId();
    const [a, b] = await queueAccepted(h, 2);
    await decideBatchSet(h.store.c, batchId, 0, [a!]);
    await assert.rejects(shard.submitBatch({ shard: 0, batchId, paymentIds: [a!._id, b!._id], queues: [0] }, heldStep()), /differs from the 2 its workflow holds/);
    assert.equal(await findBatch(h.store.c, batchId), null, 'no record, no transaction');
  });

  it('a batch id already settled on chain with other content halts the shard at it: recorded HALTED, never CONFIRMED, nothing more sent', async function () {
    const shard = newShard(h);
    const batchId = newId();
    const [onChain, ours] = await queueAccepted(h, 2);
    // The chain already holds this batch id with another payment: as after a restore that reissued an id.
    const item = (e: typeof onChain) => ({ paymentId: e!._id, borrowerId: e!.borrowerId, merchantId: e!.merchantId, payTo: e!.payTo as `0x${string}`, amount: BigInt(e!.amount) });
    const sent = await submitSettleBatch(h.chain, batchId, [item(onChain)]);
    assert.equal(sent.kind, 'sent');
    await h.chain.publicClient.waitForTransactionReceipt({ hash: (sent as { txHash: `0x${string}` }).txHash });

    await decideBatchSet(h.store.c, batchId, 0, [ours!]);
    const ref = { shard: 0, batchId, paymentIds: [ours!._id], queues: [0] };
    assert.deepEqual(await shard.submitBatch(ref, heldStep()), {}, 'already settled by id: not sent again');
    const r = await shard.confirmBatch({ ...ref, transaction: null }, heldStep());
    assert.equal(r.status, 'mismatch');
    const record = await findBatch(h.store.c, batchId);
    assert.equal(record?.status, 'HALTED');
    assert.match(record?.haltReason ?? '', /entries root 0x[0-9a-f]{64}, but its set of 1 payments has root 0x[0-9a-f]{64}/);
    const logs = await w.publicClient.getLogs({ address: w.settlement, fromBlock: BigInt(w.env.DEPLOY_BLOCK ?? '0'), toBlock: 'latest' });
    assert.ok(!logs.some((l) => l.topics.some((t) => t?.toLowerCase().includes(ours!._id.replace(/-/g, '')))), 'our payment was never sent');
  });

  it('a claim the decided set does not list is an orphan at once, and a set decided empty keeps a stale attempt from claiming for good', async function () {
    const batchId = newId();
    const [listed, stray] = await queueAccepted(h, 2);
    await claimForBatch(h.store.c, batchId, [listed!._id, stray!._id]);
    await decideBatchSet(h.store.c, batchId, 0, [listed!]);
    const sorted = await sortForeignClaims(h.store.c, [listed!._id, stray!._id]);
    assert.deepEqual(sorted, { voided: [], elsewhere: [], inBatch: [listed!._id], released: [stray!._id], undecided: [] }, 'a batch still going keeps its listed payment queued; the unlisted claim is released');

    const empty = newId();
    assert.deepEqual((await decideBatchSet(h.store.c, empty, 0, [])).entries, []);
    const gathered = await newShard(h).gatherBatch({ ...GATHER, batchId: empty }, heldStep(), 3);
    assert.deepEqual(gathered.paymentIds, [], 'a later attempt of a batch decided empty returns it empty at once');
    assert.deepEqual((await findBatchSet(h.store.c, empty))?.entries, []);
  });

  describe('after a restore whose copies were taken moments apart, the chain resync', function () {
    it('ends a batch the chain settled but the store copy never recorded: its payments are never gathered again', async function () {
      const shard = newShard(h);
      const before = await w.publicClient.getBlockNumber();
      await writeResyncCheckpoint(h.store.c, before);
      const entries = await queueAccepted(h, 2);
      const batchId = newId();
      const gathered = await shard.gatherBatch({ ...GATHER, batchId }, heldStep(), 1);
      const ref = { shard: 0, batchId, paymentIds: gathered.paymentIds, queues: gathered.queues };
      const sent = await shard.submitBatch(ref, heldStep());
      assert.equal((await shard.confirmBatch({ ...ref, transaction: sent.transaction ?? null }, heldStep())).status, 'confirmed');
      // The store as copied before that batch: no set, no claims, no record; the payments still queued.
      await h.store.c.batchSets.deleteOne({ _id: batchId });
      await h.store.c.settlementClaims.deleteMany({ _id: { $in: gathered.paymentIds } });
      await h.store.c.batches.deleteOne({ _id: batchId });

      const logs: string[] = [];
      const report = await resyncFromChain(h.deps, newShard(h), (msg) => logs.push(msg));
      assert.ok(report.settledOnChain.includes(batchId), `the resync ended the batch: ${JSON.stringify(report)}`);
      assert.equal((await findBatch(h.store.c, batchId))?.status, 'CONFIRMED');
      assert.deepEqual((await findClaims(h.store.c, gathered.paymentIds)).map((cl) => cl.batchId), [batchId, batchId]);
      assert.equal(await h.store.c.settlementQueue(0).countDocuments({ _id: { $in: entries.map((e) => e._id) } }), 0, 'dequeued: no later batch gathers them');
      await assertChainAgrees(h, w, gathered.paymentIds);
    });

    it('abandons a decided set no shard runs and the chain never settled: its payments settle once, in a later batch', async function () {
      await writeResyncCheckpoint(h.store.c, await w.publicClient.getBlockNumber());
      const entries = await queueAccepted(h, 2);
      const ids = entries.map((e) => e._id);
      const lost = newId(); // gathered by a shard run that Temporal's older copy does not have
      await claimForBatch(h.store.c, lost, ids);
      await decideBatchSet(h.store.c, lost, 0, entries);
      // Decided before the restore, long enough ago that no live gather can be behind it.
      await h.store.c.batchSets.updateOne({ _id: lost }, { $set: { at: new Date(Date.now() - 11 * 60_000) } });

      const report = await resyncFromChain(h.deps, newShard(h), () => undefined);
      assert.deepEqual(report.abandoned, [lost]);
      assert.equal((await findBatch(h.store.c, lost))?.status, 'ABANDONED');
      assert.equal((await findClaims(h.store.c, ids)).length, 0, 'its claims are released');

      const shard = newShard(h);
      const next = newId();
      const gathered = await shard.gatherBatch({ ...GATHER, batchId: next }, heldStep(), 1);
      assert.deepEqual([...gathered.paymentIds].sort(), [...ids].sort());
      assert.equal((await settleGathered(shard, next, gathered)).status, 'confirmed');
      await assertChainAgrees(h, w, ids);
    });

    it('sends again, exactly its set, a batch the store recorded CONFIRMED that the chain copy lacks', async function () {
      await writeResyncCheckpoint(h.store.c, await w.publicClient.getBlockNumber());
      const entries = await queueAccepted(h, 2);
      const ids = entries.map((e) => e._id);
      const batchId = newId(); // ended in the store after the chain was copied
      await claimForBatch(h.store.c, batchId, ids);
      await decideBatchSet(h.store.c, batchId, 0, entries);
      await recordBatch(h.store.c, { _id: batchId, shard: 0, status: 'CONFIRMED', payments: 2, paymentIds: ids, transaction: `0x${'ee'.repeat(32)}`, blockNumber: '1', confirmedAt: new Date() });
      await announceBatch(h.store.c, 0, batchId);
      await h.store.c.settlementQueue(0).deleteMany({ _id: { $in: ids } });

      const report = await resyncFromChain(h.deps, newShard(h), () => undefined);
      assert.deepEqual(report.resent, [batchId]);
      const record = await findBatch(h.store.c, batchId);
      assert.notEqual(record?.transaction, `0x${'ee'.repeat(32)}`, 'the record moved to the transaction that paid');
      await assertChainAgrees(h, w, ids);
      assert.deepEqual((await resyncFromChain(h.deps, newShard(h), () => undefined)).resent, [], 'a second resync sends nothing');
    });

    it('moves a CONFIRMED record to the transaction that paid, when the recorded one was lost with its block and the batch sent again', async function () {
      await writeResyncCheckpoint(h.store.c, await w.publicClient.getBlockNumber());
      const shard = newShard(h);
      await queueAccepted(h, 1);
      const batchId = newId();
      const gathered = await shard.gatherBatch({ ...GATHER, batchId }, heldStep(), 1);
      const r = await settleGathered(shard, batchId, gathered);
      assert.equal(r.status, 'confirmed');
      const paid = (r as { transaction: string }).transaction;
      // As if the recorded transaction's block was lost and the nonce manager's resend paid instead.
      await h.store.c.batches.updateOne({ _id: batchId }, { $set: { transaction: `0x${'ab'.repeat(32)}` } });
      const report = await resyncFromChain(h.deps, newShard(h), () => undefined);
      assert.deepEqual(report.moved, [batchId]);
      assert.equal((await findBatch(h.store.c, batchId))?.transaction?.toLowerCase(), paid.toLowerCase());
      await assertChainAgrees(h, w, gathered.paymentIds);
    });

    it('moves a CONFIRMED record to the block its transaction was mined again in, when the node lost the first one (same hash)', async function () {
      await writeResyncCheckpoint(h.store.c, await w.publicClient.getBlockNumber());
      const shard = newShard(h);
      await queueAccepted(h, 1);
      const batchId = newId();
      const gathered = await shard.gatherBatch({ ...GATHER, batchId }, heldStep(), 1);
      const r = await settleGathered(shard, batchId, gathered);
      assert.equal(r.status, 'confirmed');
      const { transaction, blockNumber } = r as { transaction: string; blockNumber: string };
      // As if the confirm step saw it in a block the node then lost, and the nonce manager's resend of the same bytes was mined later.
      await h.store.c.batches.updateOne({ _id: batchId }, { $set: { blockNumber: String(BigInt(blockNumber) - 1n), confirmedAt: new Date(0) } });
      const report = await resyncFromChain(h.deps, newShard(h), () => undefined);
      assert.deepEqual(report.moved, [batchId]);
      const record = await findBatch(h.store.c, batchId);
      assert.equal(record?.transaction?.toLowerCase(), transaction.toLowerCase(), 'the same transaction');
      assert.equal(record?.blockNumber, blockNumber, 'the block it is in on chain');
      const block = await w.publicClient.getBlock({ blockNumber: BigInt(blockNumber) });
      assert.equal(record?.confirmedAt?.getTime(), Number(block.timestamp) * 1000, "that block's time");
      assert.deepEqual((await resyncFromChain(h.deps, newShard(h), () => undefined)).moved, [], 'a record that matches the chain stays');
    });
  });
});

