import { randomUUID } from 'node:crypto';
import type { Collections } from '../collections.js';
import { isDuplicateKey } from '../mongo.js';
import { minuteKey } from '../../domain/payment-ledger.js';
import { batchBoardOf, boardWithBatch, type BatchBoard } from '../../domain/batch-board.js';

const RESYNC_CHECKPOINT = 'chain-resync';

/** The last block the chain resync covered (src/settlement/chain-resync.ts), or null before the first. */
export async function readResyncCheckpoint(c: Collections): Promise<bigint | null> {
  const doc = await c.shardStatus.findOne({ _id: RESYNC_CHECKPOINT });
  return doc?.block === undefined ? null : BigInt(doc.block);
}

export async function writeResyncCheckpoint(c: Collections, block: bigint): Promise<void> {
  await c.shardStatus.updateOne({ _id: RESYNC_CHECKPOINT }, { $set: { block: block.toString(), at: new Date() } }, { upsert: true });
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
  /** The sum of the shards' last reported queue lengths, stale ones included (then a lower bound: see staleShards). */
  backlog: number;
  /**
   * Shards whose last report is older than the board's limit but said their queue was not empty: a
   * shard stuck in a step, or no worker. Their queues may be growing unreported, so admission counts
   * them itself (SettlementBoardReader.backlog). A stale report of an empty queue is an idle shard's.
   */
  staleShards: number[];
  /** Each shard's last reported queue length (0 without a report), by shard number. */
  pendingByShard: number[];
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
  const staleShards: number[] = [];
  const pendingByShard: number[] = [];
  const batchIds: string[] = [];
  const batchVersions = new Map<string, string>();
  for (let i = 0; i < shards; i++) {
    const board = batchBoardOf(byId.get(`batches-${i}`));
    batchIds.push(...board.batchIds);
    for (const [id, v] of Object.entries(board.versions)) batchVersions.set(id, v);
    const report = byId.get(`shard-${i}`);
    pendingByShard.push(report?.pending ?? 0);
    if (!report) continue;
    const pending = report.pending ?? 0;
    backlog += pending;
    if (now.getTime() - report.at.getTime() > backlogMaxAgeMs && pending > 0) staleShards.push(i);
  }
  const coversSinceMs = Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS - MINUTE_MS;
  return { batchIds, batchVersions, voids: listed('voids'), refunds: listed('refunds'), coversSinceMs, backlog, staleShards, pendingByShard };
}
