import { createHash } from 'node:crypto';
import type { Db } from 'mongodb';
import { SETTLEMENT_QUEUE_PREFIX, type Collections } from '../collections.js';
import type { PaymentDoc, SettlementQueueDoc } from '../documents.js';
import { insertOnce } from '../claim.js';
import { isDuplicateKey } from '../mongo.js';

/** The shard a payment settles in: a stable hash of its id, so every API process agrees. */
export function shardOf(paymentId: string, shards: number): number {
  return createHash('sha256').update(paymentId).digest().readUInt32BE(0) % shards;
}

export function queueEntryOf(doc: PaymentDoc, traceparent?: string): SettlementQueueDoc {
  return {
    _id: doc._id,
    spendIntentId: doc.spendIntentId,
    borrowerId: doc.borrowerId,
    merchantId: doc.merchantId,
    payTo: doc.payTo,
    amount: doc.amount,
    workflow: { asset: doc.asset, network: doc.network, orderRef: doc.orderRef, capturedAt: doc.capturedAt.toISOString() },
    at: doc.capturedAt,
    ...(traceparent ? { traceparent } : {}),
  };
}

/** Puts a payment in its shard's queue (with the capture's trace context when traced); a repeat (a resumed capture) is a no-op. */
export async function enqueueForSettlement(c: Collections, shards: number, doc: PaymentDoc, traceparent?: string): Promise<void> {
  try {
    await c.settlementQueue(shardOf(doc._id, shards)).insertOne(queueEntryOf(doc, traceparent));
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
}

/** Puts a queue entry in its shard's queue unless it is there, and returns the stored one. */
export function enqueueEntryOnce(c: Collections, shards: number, entry: SettlementQueueDoc): Promise<SettlementQueueDoc> {
  return insertOnce(c.settlementQueue(shardOf(entry._id, shards)), entry);
}

export function findQueueEntry(c: Collections, shards: number, paymentId: string): Promise<SettlementQueueDoc | null> {
  return c.settlementQueue(shardOf(paymentId, shards)).findOne({ _id: paymentId });
}

/** Entries of queue `queue` enqueued before `before` (the sweeper's stalled captures). */
export function queueEntriesBefore(c: Collections, queue: number, before: Date): Promise<SettlementQueueDoc[]> {
  return c.settlementQueue(queue).find({ at: { $lt: before } }).toArray();
}

/** Takes one entry out of queue `queue` (whatever the shard count is now). */
export async function removeQueueEntry(c: Collections, queue: number, paymentId: string): Promise<void> {
  await c.settlementQueue(queue).deleteOne({ _id: paymentId });
}

/** Takes a refused capture back out of the queue. */
export async function dequeueRefused(c: Collections, shards: number, paymentId: string): Promise<void> {
  await c.settlementQueue(shardOf(paymentId, shards)).deleteOne({ _id: paymentId });
}

/**
 * The queues shard `shard` of `shards` serves: its own, plus any queue of a shard number that a
 * larger SETTLEMENT_SHARDS once created (n % shards === shard), so shrinking the count strands nothing.
 */
export async function queuesServedBy(db: Db, shard: number, shards: number): Promise<number[]> {
  const others = (await allQueues(db)).filter((n) => n >= shards && n % shards === shard);
  return [shard, ...others];
}

/** Every settlement queue that exists, whatever SETTLEMENT_SHARDS was when it was made. */
export async function allQueues(db: Db): Promise<number[]> {
  const names = await db.listCollections({}, { nameOnly: true }).toArray();
  return names
    .filter((n) => n.name.startsWith(SETTLEMENT_QUEUE_PREFIX))
    .map((n) => Number(n.name.slice(SETTLEMENT_QUEUE_PREFIX.length)))
    .filter((n) => Number.isInteger(n) && n >= 0);
}

/** Every entry of the given queues, oldest first. Each queue holds only pending payments. */
/** Each non-empty queue's oldest entry time (capture time), by queue number: one read of one document per queue. */
export async function oldestQueuedAt(c: Collections, db: Db): Promise<Map<number, Date>> {
  const queues = await allQueues(db);
  const oldest = await Promise.all(queues.map((q) => c.settlementQueue(q).findOne({}, { sort: { at: 1 }, projection: { at: 1 } })));
  const byQueue = new Map<number, Date>();
  queues.forEach((q, i) => {
    const at = oldest[i]?.at;
    if (at) byQueue.set(q, new Date(at));
  });
  return byQueue;
}

/** How many entries the given queues hold (what a shard reports as its backlog). */
export async function countQueued(c: Collections, queues: readonly number[]): Promise<number> {
  const counts = await Promise.all(queues.map((q) => c.settlementQueue(q).countDocuments({})));
  return counts.reduce((a, b) => a + b, 0);
}

export async function readQueues(c: Collections, queues: readonly number[]): Promise<SettlementQueueDoc[]> {
  const all = await Promise.all(queues.map((q) => c.settlementQueue(q).find({}).toArray()));
  return all.flat().sort((a, b) => a.at.getTime() - b.at.getTime());
}

export async function removeFromQueues(c: Collections, queues: readonly number[], paymentIds: readonly string[]): Promise<void> {
  if (paymentIds.length === 0) return;
  await Promise.all(queues.map((q) => c.settlementQueue(q).deleteMany({ _id: { $in: [...paymentIds] } })));
}
