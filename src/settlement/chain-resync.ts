import { findBatchSettlement, readPaymentSettledEvents, settledBatchesBetween, settledContentOf, submitSettleBatch, type SettledBatchLog, type SettlementItem } from '../chain/settlement.js';
import type { BatchOutcome } from '../domain/payment.js';
import { batchSetIds, decideBatchSet, findBatchSets } from '../store/settlement/batch-sets.js';
import { findByIds } from '../store/find-by-ids.js';
import type { BatchDoc, SettlementQueueDoc } from '../store/documents.js';
import { allQueues, queueEntryOf, readQueues, shardOf } from '../store/settlement/queue.js';
import { claimForBatch, findClaims, releaseClaims } from '../store/settlement/claims.js';
import { findBatches, isFinishedBatch, recordBatch } from '../store/settlement/batches.js';
import { announceBatch, readResyncCheckpoint, readSettlementBoard, writeResyncCheckpoint } from '../store/settlement/board.js';
import { batchIdsOfRunningShards } from '../temporal/shard-batches.js';
import type { ShardDeps, ShardSettlement } from './shard.js';

export interface ResyncReport {
  fromBlock: string;
  toBlock: string;
  /** Batches the chain settled that the store had not recorded CONFIRMED: now decided, claimed and ended. */
  settledOnChain: string[];
  /** Decided sets no running shard knows and the chain never settled: recorded ABANDONED, their claims released. */
  abandoned: string[];
  /** Batches the store recorded CONFIRMED that the chain (a copy older than the store) lacks: sent again with their set. */
  resent: string[];
  /** CONFIRMED batches the chain settled in another transaction than the recorded one (a block lost, the batch re-sent): the record follows the chain. */
  moved: string[];
  /** Payments the chain settled that the store does not know, or that another batch claims: an operator's to look at. */
  conflicts: string[];
}

type Log = (msg: string, fields: Record<string, unknown>) => void;

/** How old a decided set must be, besides unnamed by any running shard, before it counts as lost. */
const LOST_SET_AGE_MS = 10 * 60_000;

/**
 * Brings the store in line with the chain and with the shards Temporal runs, for a store, a
 * Temporal and a chain restored from copies taken moments apart (docs/operations.md, "Backup and
 * restore"). The worker starts it beside its own start (workers/resync-in-background.ts):
 * - a batch the chain settled (BatchSettled since the last resync) that the store does not record
 *   CONFIRMED gets its set and claims from the chain's PaymentSettled events, then is ended as its
 *   shard would have ended it (record, credit, ledger, webhooks, payment workflows told, dequeued),
 *   so its payments are never gathered again;
 * - a decided set that a queued payment's claim names, which no running shard names and the chain
 *   never settled, is recorded ABANDONED and its claims released, so later batches take them;
 * - a batch among the shards' latest that the store recorded CONFIRMED but the chain lacks (a chain
 *   copy older than the store's) is sent again, exactly its set, and its record moves to the new
 *   transaction.
 */
export async function resyncFromChain(deps: ShardDeps, shard: ShardSettlement, log: Log): Promise<ResyncReport> {
  const c = deps.store.c;
  const ctx = deps.chain;
  const head = await ctx.publicClient.getBlockNumber({ cacheTime: 0 });
  const checkpoint = await readResyncCheckpoint(c);
  const fromBlock = checkpoint === null ? BigInt(ctx.deployment.deployBlock) : checkpoint + 1n;
  const report: ResyncReport = { fromBlock: fromBlock.toString(), toBlock: head.toString(), settledOnChain: [], abandoned: [], resent: [], moved: [], conflicts: [] };

  // A batch a running shard names is that shard's to finish, whatever the chain says of it.
  const known = await batchIdsOfRunningShards(deps.temporal);
  const settled = fromBlock <= head ? await settledBatchesBetween(ctx, fromBlock, head) : [];
  const records = new Map((await findBatches(c, settled.map((b) => b.batchId))).map((b) => [b._id, b]));
  for (const b of settled) {
    if (records.get(b.batchId)?.status === 'CONFIRMED' || known.has(b.batchId)) continue;
    if (await endSettledBatch(deps, shard, b, report, log)) report.settledOnChain.push(b.batchId);
  }

  await sortLostSets(deps, shard, known, report, log);
  await resendConfirmedMissingOnChain(deps, report, log);
  await writeResyncCheckpoint(c, head);
  return report;
}

/** Decides, claims and ends one batch the chain settled; false when a conflict leaves it to an operator. */
async function endSettledBatch(deps: ShardDeps, shard: ShardSettlement, b: SettledBatchLog, report: ResyncReport, log: Log): Promise<boolean> {
  const c = deps.store.c;
  const events = await readPaymentSettledEvents(deps.chain, b.txHash);
  const ids = events.map((e) => e.paymentId);
  const payments = new Map((await findByIds(c.payments, ids)).map((d) => [d._id, d]));
  const unknown = ids.filter((id) => !payments.has(id));
  if (unknown.length > 0) {
    report.conflicts.push(...unknown);
    log('RESYNC CONFLICT: the chain settled payments the store does not know', { batchId: b.batchId, transaction: b.txHash, paymentIds: unknown });
    return false;
  }
  const entries: SettlementQueueDoc[] = ids.map((id) => queueEntryOf(payments.get(id)!));
  const set = await decideBatchSet(c, b.batchId, shardOf(ids[0]!, deps.shards ?? 1), entries);
  if (batchSetIds(set).join() !== ids.join()) {
    report.conflicts.push(...ids);
    log('RESYNC CONFLICT: a batch settled on chain with content other than its decided set', { batchId: b.batchId, transaction: b.txHash });
    return false;
  }
  const held = await claimForBatch(c, b.batchId, ids);
  const taken = ids.filter((id) => !held.has(id));
  if (taken.length > 0) {
    report.conflicts.push(...taken);
    log('RESYNC CONFLICT: payments the chain settled in one batch are claimed by another', { batchId: b.batchId, transaction: b.txHash, paymentIds: taken });
    return false;
  }
  const block = await deps.chain.publicClient.getBlock({ blockNumber: b.blockNumber });
  const outcome: BatchOutcome = { status: 'CONFIRMED', batchId: b.batchId, transaction: b.txHash, blockNumber: b.blockNumber.toString(), confirmedAt: new Date(Number(block.timestamp) * 1000).toISOString() };
  const ref = { shard: set.shard, batchId: b.batchId, paymentIds: ids, queues: await allQueues(deps.store.db) };
  await shard.endBatch({ ...ref, outcome, notify: 'separately' });
  await shard.notifyBatch({ ...ref, outcome });
  log('resync: a batch the chain settled is ended in the store', { batchId: b.batchId, transaction: b.txHash, payments: ids.length });
  return true;
}

/**
 * The sets queued payments' claims name that nobody ended and no running shard knows: ended as
 * CONFIRMED when the chain settled them, else ABANDONED.
 */
async function sortLostSets(deps: ShardDeps, shard: ShardSettlement, known: ReadonlySet<string>, report: ResyncReport, log: Log): Promise<void> {
  const c = deps.store.c;
  const queued = await readQueues(c, await allQueues(deps.store.db));
  const claims = await findClaims(c, queued.map((e) => e._id));
  const batchIds = [...new Set(claims.map((cl) => cl.batchId).filter((id) => !id.startsWith('void:')))];
  if (batchIds.length === 0) return;
  const sets = await findBatchSets(c, batchIds);
  const finished = new Set((await findBatches(c, batchIds)).filter((b) => isFinishedBatch(b.status)).map((b) => b._id));
  const open = sets.filter((s) => !finished.has(s._id));
  const now = Date.now();
  for (const set of open) {
    // A set younger than this may be a live gather's that began after `known` was read: never judged lost.
    if (known.has(set._id) || now - new Date(set.at).getTime() < LOST_SET_AGE_MS) continue;
    const ids = batchSetIds(set);
    const onChain = await findBatchSettlement(deps.chain, set._id);
    if (onChain) {
      if (await endSettledBatch(deps, shard, { ...onChain, batchId: set._id }, report, log)) report.settledOnChain.push(set._id);
      continue;
    }
    await recordBatch(c, { _id: set._id, shard: set.shard, status: 'ABANDONED', payments: ids.length, paymentIds: ids, failureReason: 'no shard runs this batch and the chain never settled it: its payments go in later batches' });
    await releaseClaims(c, set._id, ids);
    report.abandoned.push(set._id);
    log('resync: a batch no shard runs and the chain never settled is abandoned; its payments go in later batches', { batchId: set._id, payments: ids.length });
  }
}

const itemOf = (e: SettlementQueueDoc): SettlementItem => ({ paymentId: e._id, borrowerId: e.borrowerId, merchantId: e.merchantId, payTo: e.payTo as `0x${string}`, amount: BigInt(e.amount) });

/** The shards' latest CONFIRMED batches (their boards) that the chain does not hold: sent again with their decided set. */
async function resendConfirmedMissingOnChain(deps: ShardDeps, report: ResyncReport, log: Log): Promise<void> {
  const c = deps.store.c;
  const board = await readSettlementBoard(c, deps.shards ?? 1, new Date());
  const confirmed = (await findBatches(c, board.batchIds)).filter((b) => b.status === 'CONFIRMED');
  if (confirmed.length === 0) return;
  const sets = new Map((await findBatchSets(c, confirmed.map((b) => b._id))).map((s) => [s._id, s]));
  for (const record of confirmed) {
    const set = sets.get(record._id);
    if (!set || set.entries.length === 0) continue; // a batch from before sets: nothing to send it again from
    const items = set.entries.map(itemOf);
    const content = await settledContentOf(deps.chain, record._id, items);
    if (content.matches) {
      await followTheChain(deps, record, report, log);
      continue;
    }
    if (!/^0x0+$/.test(content.onChain)) {
      report.conflicts.push(...batchSetIds(set));
      log('RESYNC CONFLICT: a batch the store recorded CONFIRMED settled on chain with other content', { batchId: record._id, onChainRoot: content.onChain, setRoot: content.expected });
      continue;
    }
    const sent = await submitSettleBatch(deps.chain, record._id, items);
    const found = sent.kind === 'sent' ? null : await findBatchSettlement(deps.chain, record._id);
    const hash = sent.kind === 'sent' ? sent.txHash : found?.txHash;
    if (!hash) continue;
    const receipt = await deps.chain.publicClient.waitForTransactionReceipt({ hash, timeout: 120_000 });
    if (receipt.status !== 'success') {
      log('RESYNC CONFLICT: sending a CONFIRMED batch again reverted', { batchId: record._id, transaction: hash });
      report.conflicts.push(...batchSetIds(set));
      continue;
    }
    // The nonce manager may have handed the node the lost transaction again meanwhile: then this
    // one was a no-op, and the record names the one that paid.
    const paid = (await findBatchSettlement(deps.chain, record._id)) ?? { txHash: hash, blockNumber: receipt.blockNumber };
    const block = await deps.chain.publicClient.getBlock({ blockNumber: paid.blockNumber });
    await recordBatch(c, { ...record, transaction: paid.txHash, blockNumber: paid.blockNumber.toString(), confirmedAt: new Date(Number(block.timestamp) * 1000) });
    await announceBatch(c, record.shard, record._id);
    report.resent.push(record._id);
    log('resync: a CONFIRMED batch the chain copy lacked is sent again', { batchId: record._id, transaction: paid.txHash, sent: hash, payments: set.entries.length });
  }
}

/**
 * A CONFIRMED batch the chain settled in another transaction or another block than its record
 * names: the block that held the recorded one was lost (a node restarted on an older state, a
 * reorg deeper than CONFIRMATIONS) and the settler's nonce manager handed the node the same
 * transaction again (mined in a later block) or the batch was sent again. The record, and so
 * every poll, follows the transaction that paid and its block.
 */
async function followTheChain(deps: ShardDeps, record: BatchDoc, report: ResyncReport, log: Log): Promise<void> {
  const found = await findBatchSettlement(deps.chain, record._id);
  if (!found || !record.transaction) return;
  const sameTransaction = found.txHash.toLowerCase() === record.transaction.toLowerCase();
  if (sameTransaction && record.blockNumber === found.blockNumber.toString()) return;
  const block = await deps.chain.publicClient.getBlock({ blockNumber: found.blockNumber });
  await recordBatch(deps.store.c, { ...record, transaction: found.txHash, blockNumber: found.blockNumber.toString(), confirmedAt: new Date(Number(block.timestamp) * 1000) });
  await announceBatch(deps.store.c, record.shard, record._id);
  report.moved.push(record._id);
  log(sameTransaction ? 'resync: a CONFIRMED batch is recorded in the block its transaction was mined again in' : 'resync: a CONFIRMED batch is recorded with the transaction that paid it on chain', {
    batchId: record._id,
    recorded: record.transaction,
    onChain: found.txHash,
    recordedBlock: record.blockNumber,
    onChainBlock: found.blockNumber.toString(),
  });
}

