import type { Collections } from '../collections.js';
import type { BatchDoc, BatchStatus } from '../documents.js';
import { findByIds } from '../find-by-ids.js';
import { isDuplicateKey } from '../mongo.js';

export function findBatch(c: Collections, batchId: string): Promise<BatchDoc | null> {
  return c.batches.findOne({ _id: batchId });
}

const RECORD_ATTEMPTS = 5;

/** A batch record that says how the batch ended; it never changes after (recordBatch). */
export const isFinishedBatch = (status: BatchStatus): boolean => status === 'CONFIRMED' || status === 'FAILED' || status === 'ABANDONED';

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

/** Batches by _id (one $in read per IDS_PER_READ). */
export function findBatches(c: Collections, batchIds: readonly string[]): Promise<BatchDoc[]> {
  return findByIds(c.batches, batchIds);
}
