import { paymentViews, type CapturedPayment, type PaymentView } from './captures.js';
import { findClaims } from '../../src/store/settlement/claims.js';
import { findBatches } from '../../src/store/settlement/batches.js';
import assert from 'node:assert/strict';
import { getAbiItem, type Hex } from 'viem';
import { creditSettlementAbi } from '../../src/chain/abi.js';
import { uuidToBytes32 } from '@credit-facilitator/wire/ids';
import { erc20BalanceOf, paymentSettledEvent, pollUntil, type World } from './world.js';
import { findBorrower } from '../../src/store/borrowers.js';
import { allQueues, readQueues } from '../../src/store/settlement/queue.js';
import { batchSetIds, findBatchSets } from '../../src/store/settlement/batch-sets.js';

const batchSettledEvent = getAbiItem({ abi: creditSettlementAbi, name: 'BatchSettled' });

function canonicalRange(w: World) {
  return { address: w.settlement, fromBlock: BigInt(w.env.DEPLOY_BLOCK ?? '0'), toBlock: 'latest' as const };
}

/** PaymentSettled logs on the canonical chain for these payments. */
export async function settledEventsFor(w: World, paymentIds: string[]) {
  const wanted = new Set(paymentIds.map((id) => uuidToBytes32(id).toLowerCase()));
  const logs = await w.publicClient.getLogs({ ...canonicalRange(w), event: paymentSettledEvent });
  return logs.filter((l) => wanted.has(String(l.args.paymentId).toLowerCase()));
}

function sumBy<K>(payments: CapturedPayment[], key: (p: CapturedPayment) => K): Map<K, bigint> {
  const sums = new Map<K, bigint>();
  for (const p of payments) sums.set(key(p), (sums.get(key(p)) ?? 0n) + p.amount);
  return sums;
}

/** Polls `probe` until it answers true; on timeout the error shows its last `seen`. */
async function waitFor(what: string, timeoutMs: number, probe: () => Promise<{ ok: boolean; seen: unknown }>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { ok, seen } = await probe();
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last seen ${JSON.stringify(seen)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** For each payment the store does not show CONFIRMED: its document, its claim, its claimed batch's record and the API's receipt. */
async function whyNotConfirmed(w: World, ids: string[], views: PaymentView[], receipts: Map<string, { batchId: string }>) {
  const claims = new Map((await findClaims(w.store.c, ids)).map((c) => [c._id, c.batchId]));
  const batchIds = [...new Set([...claims.values(), ...ids.map((id) => receipts.get(id)?.batchId ?? '')].filter(Boolean))];
  const batches = new Map((await findBatches(w.store.c, batchIds)).map((b) => [b._id, b]));
  const viewOf = new Map(views.map((v) => [v._id, v]));
  // Where each payment stands in settlement's own documents, so a failure says which invariant broke.
  const queued = new Set((await readQueues(w.store.c, await allQueues(w.store.db))).map((e) => e._id));
  const sets = new Map((await findBatchSets(w.store.c, batchIds)).map((s) => [s._id, new Set(batchSetIds(s))]));
  return ids.map((id) => {
    const claimed = claims.get(id);
    const answered = receipts.get(id)?.batchId;
    const record = (batchId: string | undefined) => {
      const b = batchId ? batches.get(batchId) : undefined;
      return b && { batchId: b._id, status: b.status, listsPayment: b.paymentIds?.includes(id) ?? null, setLists: sets.get(b._id)?.has(id) ?? 'no set' };
    };
    return { paymentId: id, view: viewOf.get(id)?.status ?? 'no document', inQueue: queued.has(id), claimedBy: record(claimed) ?? claimed ?? null, apiSaid: record(answered) ?? answered ?? null };
  });
}

/**
 * The ledger agrees: every payment is CONFIRMED by the API with the transaction and block that
 * carry its one PaymentSettled event on the canonical chain; each batch settled once; payout
 * balances and debtOf equal the captured sums; the store's projection and booked debt caught up.
 * The merchants and borrowers must be used by these payments only.
 */
export async function assertLedgerAgrees(w: World, payments: CapturedPayment[], opts: { timeoutMs?: number } = {}): Promise<void> {
  const ids = payments.map((p) => p.paymentId);
  const receipts = new Map<string, { transaction: Hex; blockNumber: string; batchId: string }>();
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  for (const p of payments) {
    const r = await pollUntil(w, p.merchant, p.paymentId, 'CONFIRMED', Math.max(1000, deadline - Date.now()));
    assert.ok(r.transaction && r.blockNumber && r.batchId, `receipt of ${p.paymentId} names its settlement: ${JSON.stringify(r)}`);
    receipts.set(p.paymentId, r);
  }

  const events = await settledEventsFor(w, ids);
  const byPayment = new Map<string, typeof events>();
  for (const e of events) {
    const key = String(e.args.paymentId).toLowerCase();
    byPayment.set(key, [...(byPayment.get(key) ?? []), e]);
  }
  const canonicalHash = new Map<bigint, Hex>();
  for (const p of payments) {
    const found = byPayment.get(uuidToBytes32(p.paymentId).toLowerCase()) ?? [];
    assert.equal(found.length, 1, `payment ${p.paymentId}: exactly one PaymentSettled on the canonical chain, got ${found.length}`);
    const e = found[0]!;
    const r = receipts.get(p.paymentId)!;
    assert.equal(e.args.amount, p.amount, `payment ${p.paymentId}: settled amount`);
    assert.equal(String(e.args.merchantId).toLowerCase(), uuidToBytes32(p.merchant.merchantId).toLowerCase());
    assert.equal(String(e.args.borrowerId).toLowerCase(), uuidToBytes32(p.borrowerId).toLowerCase());
    assert.equal(r.transaction.toLowerCase(), e.transactionHash.toLowerCase(), `payment ${p.paymentId}: the API's transaction is the one that paid`);
    assert.equal(BigInt(r.blockNumber), e.blockNumber, `payment ${p.paymentId}: the API's block is the one that holds the payment`);
    if (!canonicalHash.has(e.blockNumber)) canonicalHash.set(e.blockNumber, (await w.publicClient.getBlock({ blockNumber: e.blockNumber })).hash);
    assert.equal(e.blockHash, canonicalHash.get(e.blockNumber), `payment ${p.paymentId}: its block is canonical`);
  }

  const batches = [...new Set([...receipts.values()].map((r) => r.batchId))];
  const batchLogs = await w.publicClient.getLogs({ ...canonicalRange(w), event: batchSettledEvent });
  for (const batchId of batches) {
    const settled = batchLogs.filter((l) => String(l.args.batchId).toLowerCase() === uuidToBytes32(batchId).toLowerCase());
    assert.equal(settled.length, 1, `batch ${batchId}: exactly one BatchSettled`);
    const paidBy = [...receipts.values()].filter((r) => r.batchId === batchId).map((r) => r.transaction.toLowerCase());
    assert.deepEqual([...new Set(paidBy)], [settled[0]!.transactionHash.toLowerCase()], `batch ${batchId}: its payments name the transaction that settled it`);
  }

  for (const [payTo, sum] of sumBy(payments, (p) => p.merchant.payoutAddress)) {
    const balance = await w.publicClient.readContract({ address: w.asset, abi: [erc20BalanceOf], functionName: 'balanceOf', args: [payTo] });
    assert.equal(balance, sum, `payout balance of ${payTo}`);
  }
  for (const [borrowerId, sum] of sumBy(payments, (p) => p.borrowerId)) {
    const debt = await w.publicClient.readContract({ address: w.settlement, abi: creditSettlementAbi, functionName: 'debtOf', args: [uuidToBytes32(borrowerId) as Hex] });
    assert.equal(debt, sum, `debtOf borrower ${borrowerId}`);
  }

  // The store trails the workflows by an activity or two: it must catch up, not stay behind.
  await waitFor('the store to say CONFIRMED (each payment by its claimed batch)', 20_000, async () => {
    const docs = await paymentViews(w, ids);
    const confirmed = new Set(docs.filter((d) => d.status === 'CONFIRMED').map((d) => d._id));
    const behind = ids.filter((id) => !confirmed.has(id));
    return { ok: behind.length === 0, seen: behind.length === 0 ? [] : await whyNotConfirmed(w, behind, docs, receipts) };
  });
  for (const doc of await paymentViews(w, ids)) {
    const r = receipts.get(doc._id)!;
    assert.equal(doc.settlementBatchId, r.batchId, `payment ${doc._id}: bound to the batch that paid it`);
    assert.equal(doc.batchId, r.batchId);
    assert.equal(doc.transaction?.toLowerCase(), r.transaction.toLowerCase(), `payment ${doc._id}: projected transaction`);
    assert.equal(doc.blockNumber, r.blockNumber, `payment ${doc._id}: projected block`);
  }
  const holds = new Map((await w.store.c.payments.find({ _id: { $in: ids } }).toArray()).map((d) => [d._id, d.spendIntentId]));
  for (const [borrowerId, sum] of sumBy(payments, (p) => p.borrowerId)) {
    const mine = payments.filter((p) => p.borrowerId === borrowerId).map((p) => holds.get(p.paymentId)!);
    await waitFor(`borrower ${borrowerId}'s booked debt to reach ${sum} with the payments' holds closed`, 20_000, async () => {
      const b = await findBorrower(w.store.c, borrowerId);
      return { ok: b !== null && BigInt(b.debt) === sum && mine.every((h) => b.holds[h] === undefined), seen: b && { debt: b.debt, holds: b.holds } };
    });
  }
}
