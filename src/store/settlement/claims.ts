import type { Collections } from '../collections.js';
import type { BatchDoc, SettlementClaimDoc } from '../documents.js';
import { insertNew } from '../insert-new.js';
import { findByIds } from '../find-by-ids.js';

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
