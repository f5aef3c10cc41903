import { batchSetIds, findBatchSets } from '../store/settlement/batch-sets.js';
import type { Collections } from '../store/collections.js';
import { batchHolds, findClaims, isVoidClaim, releaseClaims } from '../store/settlement/claims.js';
import { findBatches, isFinishedBatch } from '../store/settlement/batches.js';

/** Payments a batch could not claim, by why (sortForeignClaims). */
export interface ForeignClaims {
  /** Claimed by a void. */
  voided: string[];
  /** Claimed by another batch that lists them and has ended: their entry leaves this queue. */
  elsewhere: string[];
  /** Claimed by another batch whose decided set lists them, still going: left queued until it ends (its end dequeues them). */
  inBatch: string[];
  /** Their claim named a batch whose set does not list them (an orphan); the claim is gone, so a later batch takes them. */
  released: string[];
  /** Claimed by a batch whose set is not decided yet: left in the queue, looked at again. */
  undecided: string[];
}

/**
 * Sorts the payments a batch found claimed by someone else. A batch settles exactly its decided set
 * (store/settlement/batch-sets.ts), so a claim that set does not list is an orphan at once: left by a gather
 * attempt Temporal gave up on, which ran on after the live attempt decided the set, or died between
 * its claims and the set. Its claim is deleted with a compare-and-set on the orphaning batch, so the
 * next batch claims it, as is every claim of an ABANDONED batch. A payment a set lists stays queued
 * until that batch ends (its end dequeues it), so a batch that never ends strands nothing out of
 * sight (chain-resync.ts finds it). A batch gathered before sets existed has none: its record's
 * list decides. A batch whose set is not decided yet (its first attempt between claim and set) is
 * waited for.
 */
export async function sortForeignClaims(c: Collections, paymentIds: readonly string[]): Promise<ForeignClaims> {
  const sorted: ForeignClaims = { voided: [], elsewhere: [], inBatch: [], released: [], undecided: [] };
  if (paymentIds.length === 0) return sorted;
  const claims = new Map((await findClaims(c, paymentIds)).map((cl) => [cl._id, cl]));
  const batchIds = [...new Set([...claims.values()].map((cl) => cl.batchId).filter((id) => !isVoidClaim(id)))];
  const sets = new Map((await findBatchSets(c, batchIds)).map((s) => [s._id, new Set(batchSetIds(s))]));
  const records = new Map((await findBatches(c, batchIds)).map((b) => [b._id, b]));
  const orphans = new Map<string, string[]>();
  for (const id of paymentIds) {
    const claim = claims.get(id);
    if (!claim) {
      sorted.undecided.push(id);
      continue;
    }
    if (isVoidClaim(claim.batchId)) {
      sorted.voided.push(id);
      continue;
    }
    const set = sets.get(claim.batchId);
    const record = records.get(claim.batchId);
    const abandoned = record?.status === 'ABANDONED';
    const listed = !abandoned && (set ? set.has(id) : record !== undefined && batchHolds(record, id));
    const orphaned = abandoned || (set ? !listed : record !== undefined && !listed && isFinishedBatch(record.status));
    if (listed && set && !(record && isFinishedBatch(record.status))) sorted.inBatch.push(id);
    else if (listed) sorted.elsewhere.push(id);
    else if (orphaned) {
      orphans.set(claim.batchId, [...(orphans.get(claim.batchId) ?? []), id]);
      sorted.released.push(id);
    } else sorted.undecided.push(id);
  }
  for (const [batchId, ids] of orphans) await releaseClaims(c, batchId, ids);
  return sorted;
}
