import type { PaymentDeps } from './deps.js';
import { ApiError } from '../domain/errors.js';
import { isUuid } from '@credit-facilitator/wire/ids';
import { paymentStateInBatch, type Receipt } from '../domain/payment.js';
import type { PaymentDoc } from '../store/documents.js';
import { findPayment } from '../store/payments.js';
import { batchHolds, findClaim, isVoidClaim } from '../store/settlement/claims.js';
import { findSpendIntentFate } from '../store/spend-intents.js';
import { PaymentStatusCache } from './status-cache.js';
import { toReceipt } from '../settlement/receipt.js';

const fallbackCache = new PaymentStatusCache();

/** The cache status answers use: the deps' own, else one module-wide. */
export function statusCacheOf(deps: Pick<PaymentDeps, 'statusCache'>): PaymentStatusCache {
  return deps.statusCache ?? fallbackCache;
}

/** What answering a status needs: the API's deps, or an operator CLI's. */
export type StatusDeps = Pick<PaymentDeps, 'store' | 'env' | 'nowMs' | 'statusCache'>;

/**
 * Answers a status poll from the state the workflows record, without a worker round trip: a
 * payment waits QUEUED until its settlement shard claims it for a batch; from then on its state is
 * the batch's (SUBMITTED, CONFIRMED, FAILED, or QUEUED again while a reverted or dropped batch is
 * retried), which the shard's activities record as the batch moves and before they signal the
 * payment workflows. The batch record keeps the outcome for good: a batch end does not write it
 * onto the payment's document, which stays CAPTURING (a void marks it VOIDED). Payments captured
 * before settlement shards keep the projection their workflow writes, and those settled before
 * this release their written outcome. Which batch a payment rides in
 * comes from the batches the shards announce (PaymentStatusCache), so a poll costs about one
 * store read. Another merchant's payment is indistinguishable from a missing one.
 */
export async function paymentStatus(deps: PaymentDeps, merchantId: string, paymentId: string): Promise<Receipt> {
  if (!isUuid(paymentId)) throw ApiError.notFound('payment');
  const c = deps.store.c;
  const cache = statusCacheOf(deps);
  const id = paymentId.toLowerCase();
  const doc = cache.payments.get(id) ?? (await findPayment(c, id));
  if (!doc || doc.merchantId !== merchantId) throw ApiError.notFound('payment');
  const receipt = await acceptedReceipt(deps, doc);
  if (!receipt) throw ApiError.notFound('payment');
  return receipt;
}

/**
 * What a poll answers for this payment, or null while its capture is still being checked. A
 * replayed capture answers the same, so a retry never reports an older state than a poll did.
 */
export async function acceptedReceipt(deps: StatusDeps, doc: PaymentDoc): Promise<Receipt | null> {
  const cache = statusCacheOf(deps);
  const id = doc._id;
  if (doc.status === 'CONFIRMED' || doc.status === 'FAILED' || doc.status === 'VOIDED') {
    cache.payments.set(id, doc);
    return toReceipt(doc);
  }
  if (doc.status !== 'CAPTURING') return toReceipt(doc); // a legacy workflow's projection, still moving
  if (!cache.accepted.get(id)) {
    // Accepted once its spend intent is consumed by it; before that the capture is still being checked.
    // A payment a batch holds was accepted (a shard batches only accepted captures): no fate read then.
    const batched = await cache.batchOf(deps.store.c, deps.env.SETTLEMENT_SHARDS, id, deps.nowMs());
    const fate = batched ? undefined : await findSpendIntentFate(deps.store.c, doc.spendIntentId);
    if (!batched && (fate?.fate !== 'CONSUMED' || fate.paymentId !== doc._id)) return null;
    cache.accepted.set(id, true);
    cache.payments.set(id, doc);
  }
  return receiptFromBatch(deps, cache, doc);
}

/**
 * Past this age a payment the shards' announcements do not name is looked up by its claim (an older
 * shard, a missed announcement), at most every CLAIM_RECHECK_MS per payment (status-cache.ts).
 */
const CLAIM_LOOKUP_AFTER_MS = 30_000;

async function receiptFromBatch(deps: StatusDeps, cache: PaymentStatusCache, doc: PaymentDoc): Promise<Receipt> {
  const c = deps.store.c;
  const now = deps.nowMs();
  let batchId = await cache.batchOf(c, deps.env.SETTLEMENT_SHARDS, doc._id, now);
  let voided = false;
  if (!batchId && now - doc.capturedAt.getTime() > CLAIM_LOOKUP_AFTER_MS && cache.mayLookUpClaim(doc._id, now)) {
    batchId = (await findClaim(c, doc._id))?.batchId;
    if (batchId && isVoidClaim(batchId)) {
      voided = true;
      batchId = undefined;
    }
    if (batchId) cache.rememberBatchOf(doc._id, batchId);
  }
  if (!batchId) {
    // This process's copy predates a void made by any API process: the void board (or, later, its claim) says so.
    if (voided || (await cache.wasVoided(c, deps.env.SETTLEMENT_SHARDS, doc._id, now))) {
      const fresh = await findPayment(c, doc._id);
      if (fresh?.status === 'VOIDED') {
        cache.payments.set(doc._id, fresh);
        return toReceipt(fresh);
      }
    }
    return toReceipt(doc);
  }
  const batch = await cache.batch(c, deps.env.SETTLEMENT_SHARDS, batchId, now);
  // A claim orphaned by a batch that ended without the payment says nothing of it (sortForeignClaims).
  return batch && batchHolds(batch, doc._id) ? toReceipt(doc, paymentStateInBatch(batch)) : toReceipt(doc);
}
