import type { Collections } from '../collections.js';
import type { BatchSetDoc, SettlementQueueDoc } from '../documents.js';
import { insertOnce } from '../claim.js';
import { findByIds } from '../find-by-ids.js';

/**
 * Decides a batch's set of payments: the first writer's set stands (a unique insert on the batch
 * id), and every caller gets the stored one back. Never changed after.
 */
export async function decideBatchSet(c: Collections, batchId: string, shard: number, entries: readonly SettlementQueueDoc[]): Promise<BatchSetDoc> {
  const stored = await insertOnce(c.batchSets, { _id: batchId, shard, entries: [...entries], at: new Date() });
  return { ...stored, entries: stored.entries ?? [] }; // a store may drop an empty array
}

export async function findBatchSet(c: Collections, batchId: string): Promise<BatchSetDoc | null> {
  const doc = await c.batchSets.findOne({ _id: batchId });
  return doc && { ...doc, entries: doc.entries ?? [] };
}

/** Decided sets by batch id (one $in read per IDS_PER_READ). */
export async function findBatchSets(c: Collections, batchIds: readonly string[]): Promise<BatchSetDoc[]> {
  return (await findByIds(c.batchSets, batchIds)).map((d) => ({ ...d, entries: d.entries ?? [] }));
}

export const batchSetIds = (set: Pick<BatchSetDoc, 'entries'>): string[] => set.entries.map((e) => e._id);
