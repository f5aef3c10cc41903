import { createHash, randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import { SETTLEMENT_QUEUE_PREFIX, type Collections } from './collections.js';
import type { BatchDoc, BatchStatus, PaymentDoc, SettlementClaimDoc, SettlementQueueDoc } from './documents.js';
import { insertOnce } from './claim.js';
import { insertNew } from './insert-new.js';
import { findByIds } from './find-by-ids.js';
import { isDuplicateKey } from './mongo.js';
import { minuteKey } from '../domain/payment-ledger.js';
import { batchBoardOf, boardWithBatch, type BatchBoard } from '../domain/batch-board.js';

/** The shard a payment settles in: a stable hash of its id, so every API process agrees. */
export function shardOf(paymentId: string, shards: number): number {
  return createHash('sha256').update(paymentId).digest().readUInt32BE(0) % shards;
}

export function queueEntryOf(doc: PaymentDoc): SettlementQueueDoc {
  return {
    _id: doc._id,
    spendIntentId: doc.spendIntentId,
    borrowerId: doc.borrowerId,
    merchantId: doc.merchantId,
    payTo: doc.payTo,
    amount: doc.amount,
    workflow: { asset: doc.asset, network: doc.network, orderRef: doc.orderRef, capturedAt: doc.capturedAt.toISOString() },
    at: doc.capturedAt,
  };
}

/** Puts a payment in its shard's queue; a repeat (a resumed capture) is a no-op. */
export async function enqueueForSettlement(c: Collections, shards: number, doc: PaymentDoc): Promise<void> {
  try {
    await c.settlementQueue(shardOf(doc._id, shards)).insertOne(queueEntryOf(doc));
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

/** Each non-empty queue's oldest entry time (capture time), by queue number: one indexed-free read of one document per queue. */
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

/** Every entry of the given queues, oldest first. Each queue holds only pending payments. */
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

/**
 * Binds payments to batchId with one unique insert each (one command for all): a payment rides in
 * the first batch that claims it, and a retry of that batch finds the same claims. Returns the ids
 * this batch holds.
 */
export async function claimForBatch(c: Collections, batchId: string, paymentIds: readonly string[]): Promise<Set<string>> {
  if (paymentIds.length === 0) return new Set();
  const at = new Date();
  const docs: SettlementClaimDoc[] = paymentIds.map((id) => ({ _id: id, batchId, at }));
  const held = new Set(paymentIds);
  const taken = [...(await insertNew(c.settlementClaims, docs))].map((i) => paymentIds[i] as string);
  const owners = await Promise.all(taken.map((id) => c.settlementClaims.findOne({ _id: id })));
  taken.forEach((id, i) => {
    if (owners[i]?.batchId !== batchId) held.delete(id);
  });
  return held;
}

/** The claim a void takes in settlement_claims: the same unique insert a batch takes, so exactly one of them wins. */
export const voidClaimId = (paymentId: string) => `void:${paymentId}`;
export const isVoidClaim = (batchId: string) => batchId.startsWith('void:');

export function findClaim(c: Collections, paymentId: string): Promise<SettlementClaimDoc | null> {
  return c.settlementClaims.findOne({ _id: paymentId });
}

/** The claims of these payments that exist (a payment without one was never batched nor voided). */
export function findClaims(c: Collections, paymentIds: readonly string[]): Promise<SettlementClaimDoc[]> {
  return findByIds(c.settlementClaims, paymentIds);
}

/** Whether a batch's record lists this payment; a record older than paymentIds lists every payment claimed for it. */
export const batchHolds = (batch: Pick<BatchDoc, 'paymentIds'>, paymentId: string): boolean => batch.paymentIds === undefined || batch.paymentIds.includes(paymentId);

/**
 * Deletes these payments' claims where they still name `batchId` (a compare-and-set per claim, so
 * a claim another batch made since stands), for the next batch to take them.
 */
export async function releaseClaims(c: Collections, batchId: string, paymentIds: readonly string[]): Promise<void> {
  // Rare (a stale gather attempt's leftovers): one compare-and-set each, by _id.
  for (const _id of paymentIds) await c.settlementClaims.deleteOne({ _id, batchId });
}

export function findBatch(c: Collections, batchId: string): Promise<BatchDoc | null> {
  return c.batches.findOne({ _id: batchId });
}

const RECORD_ATTEMPTS = 5;

/** A batch record that says how the batch ended; it never changes after (recordBatch). */
export const isFinishedBatch = (status: BatchStatus): boolean => status === 'CONFIRMED' || status === 'FAILED';

/**
 * Records the batch's state for polls; written only by its shard's activities. A finished record
 * (CONFIRMED, FAILED) is final: it is the one place the payments' outcome is kept
 * (payment-outcomes.ts) and readers keep it for good (status-cache.ts). An attempt of an earlier
 * step that Temporal already gave up on (a heartbeat timeout while the store or the server was
 * down) can still finish after the batch ended, so a state still moving (SUBMITTED, RETRYING) is
 * written only over a record that is not finished: read by _id, then a compare-and-set on the
 * status it read (one write under the store launcher's lock, tools/ferretdb/idfilter.go).
 * Returns whether the record now says `doc.status`.
 */
export async function recordBatch(c: Collections, doc: Omit<BatchDoc, 'updatedAt'>): Promise<boolean> {
  const { _id, ...rest } = doc;
  const set = { ...rest, updatedAt: new Date() };
  if (isFinishedBatch(doc.status)) {
    await c.batches.updateOne({ _id }, { $set: set }, { upsert: true });
    return true;
  }
  for (let attempt = 1; attempt <= RECORD_ATTEMPTS; attempt++) {
    const current = await findBatch(c, _id);
    if (current && isFinishedBatch(current.status)) return false;
    if (!current) {
      try {
        await c.batches.insertOne({ _id, ...set });
        return true;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        continue;
      }
    }
    if ((await c.batches.updateOne({ _id, status: current.status }, { $set: set })).matchedCount === 1) return true;
  }
  throw new Error(`the record of batch ${_id} kept changing under its ${doc.status} write`);
}

export async function recordShardBacklog(c: Collections, shard: number, pending: number): Promise<void> {
  await c.shardStatus.updateOne({ _id: `shard-${shard}` }, { $set: { shard, pending, at: new Date() } }, { upsert: true });
}

/** What this process last wrote on each shard's board of batches, and the revision it wrote. */
export type AnnouncedBoards = Map<number, BatchBoard & { rev: string }>;

const ANNOUNCE_ATTEMPTS = 5;

/**
 * Lists a batch on its shard's board and gives it a new version there: called when the batch is
 * broadcast and after every later write of its record (record first, then this), so a reader that
 * sees a version reads a record at least that new (see status-cache.ts). The shard's own writer,
 * one at a time; each write is a compare-and-set on the revision (FerretDB v1 ignores $push's
 * $slice, so the list is written whole). Usually one command, on the revision this process last
 * wrote; on a process's first announce, or when another process wrote since (a shard that moved),
 * it reads the board first.
 */
export async function announceBatch(c: Collections, shard: number, batchId: string, boards: AnnouncedBoards = new Map()): Promise<void> {
  const _id = `batches-${shard}`;
  const write = (rev: string, board: BatchBoard) => ({ $set: { shard, rev, ...board, versionsRev: rev, at: new Date() } });
  const mine = boards.get(shard);
  if (mine) {
    const rev = randomUUID();
    const next = boardWithBatch(mine, batchId, rev);
    const written = await c.shardStatus.updateOne({ _id, rev: mine.rev }, write(rev, next));
    if (written.matchedCount === 1) {
      boards.set(shard, { ...next, rev });
      return;
    }
  }
  for (let attempt = 1; attempt <= ANNOUNCE_ATTEMPTS; attempt++) {
    const doc = await c.shardStatus.findOne({ _id });
    const rev = randomUUID();
    const next = boardWithBatch(batchBoardOf(doc), batchId, rev);
    if (doc) {
      const filter = doc.rev === undefined ? { _id, rev: { $exists: false } } : { _id, rev: doc.rev };
      if ((await c.shardStatus.updateOne(filter, write(rev, next))).matchedCount === 1) {
        boards.set(shard, { ...next, rev });
        return;
      }
    } else {
      try {
        await c.shardStatus.insertOne({ _id, shard, rev, ...next, versionsRev: rev, at: new Date() });
        boards.set(shard, { ...next, rev });
        return;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
    }
  }
  throw new Error(`the board of shard ${shard} kept changing under its announce of batch ${batchId}`);
}

/** Tells every API process's polls that a payment was voided (read with the batch board; see status-cache.ts). */
export async function announceVoid(c: Collections, paymentId: string, at: Date): Promise<void> {
  await c.shardStatus.updateOne({ _id: `voids-${minuteKey(at)}` }, { $addToSet: { paymentIds: paymentId }, $set: { at } }, { upsert: true });
  await pruneBoardMinutes(c, new Date());
}

/**
 * Tells every API process's polls that a payment may have a refund. Called before the refund is
 * recorded, with the writer's clock, so the board is never behind the refund it names.
 */
export async function announceRefund(c: Collections, paymentId: string, at: Date): Promise<void> {
  await c.shardStatus.updateOne({ _id: `refunds-${minuteKey(at)}` }, { $addToSet: { paymentIds: paymentId }, $set: { at } }, { upsert: true });
  await pruneBoardMinutes(c, at);
}

const MINUTE_MS = 60_000;
const PRUNE_EVERY_MS = 5 * MINUTE_MS;
let prunedAt = 0;

/**
 * Drops the minute documents (voids, refunds) the board no longer reads, at most once every few
 * minutes per process, so the board stays a handful of documents and its one read stays cheap.
 * Best effort: an announcement stands whether or not the sweep succeeds.
 */
async function pruneBoardMinutes(c: Collections, now: Date): Promise<void> {
  if (now.getTime() - prunedAt < PRUNE_EVERY_MS) return;
  prunedAt = now.getTime();
  await sweepBoardMinutes(c, now).catch(() => undefined);
}

/** Deletes the minute documents (voids, refunds) older than the board's three minutes; what pruneBoardMinutes runs. */
export async function sweepBoardMinutes(c: Collections, now: Date): Promise<number> {
  return (await c.shardStatus.deleteMany({ paymentIds: { $exists: true }, at: { $lt: new Date(now.getTime() - 3 * MINUTE_MS) } })).deletedCount;
}

/** What the shards' board holds for API processes, as read at one instant (readSettlementBoard). */
export interface SettlementBoard {
  /** The latest batches every shard announced, newest last per shard. */
  batchIds: string[];
  /** The version of each listed batch's latest record write, for the batches a shard versions (see announceBatch). */
  batchVersions: ReadonlyMap<string, string>;
  /** Payments voided in the board's minutes. */
  voids: ReadonlySet<string>;
  /** Payments a refund was announced for in the board's minutes. */
  refunds: ReadonlySet<string>;
  /** Every announcement made at or after this instant (by the announcer's clock) is on the board. */
  coversSinceMs: number;
  /**
   * The sum of the shards' last reported queue lengths; Infinity when a shard's last report is
   * stale but said its queue was not empty (a shard stuck in a step, or no worker), which counts as
   * over any limit. A stale report of an empty queue is an idle shard's.
   */
  backlog: number;
}

/** The minutes the board keeps voids and refunds for: the last one, this one, and the next (a writer whose clock runs ahead). */
function boardMinutes(now: Date): string[] {
  return [-1, 0, 1].map((k) => minuteKey(new Date(now.getTime() + k * MINUTE_MS)));
}

/** The _ids of the board's documents an API process reads. */
function boardIds(shards: number, now: Date): string[] {
  const perShard = Array.from({ length: shards }, (_, i) => [`batches-${i}`, `shard-${i}`]).flat();
  return [...perShard, ...boardMinutes(now).flatMap((m) => [`voids-${m}`, `refunds-${m}`])];
}

/** The whole board in one command (one find over its _ids). */
export async function readSettlementBoard(c: Collections, shards: number, now: Date, backlogMaxAgeMs = 30_000): Promise<SettlementBoard> {
  const docs = await c.shardStatus.find({ _id: { $in: boardIds(shards, now) } }).toArray();
  const byId = new Map(docs.map((d) => [d._id, d]));
  const listed = (prefix: string) => new Set(boardMinutes(now).flatMap((m) => byId.get(`${prefix}-${m}`)?.paymentIds ?? []));
  let backlog = 0;
  const batchIds: string[] = [];
  const batchVersions = new Map<string, string>();
  for (let i = 0; i < shards; i++) {
    const board = batchBoardOf(byId.get(`batches-${i}`));
    batchIds.push(...board.batchIds);
    for (const [id, v] of Object.entries(board.versions)) batchVersions.set(id, v);
    const report = byId.get(`shard-${i}`);
    if (!report) continue;
    const pending = report.pending ?? 0;
    if (now.getTime() - report.at.getTime() <= backlogMaxAgeMs) backlog += pending;
    else if (pending > 0) backlog = Number.POSITIVE_INFINITY;
  }
  const coversSinceMs = Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS - MINUTE_MS;
  return { batchIds, batchVersions, voids: listed('voids'), refunds: listed('refunds'), coversSinceMs, backlog };
}

/** Batches by _id (one $in read per IDS_PER_READ). */
export function findBatches(c: Collections, batchIds: readonly string[]): Promise<BatchDoc[]> {
  return findByIds(c.batches, batchIds);
}
