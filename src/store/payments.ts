import type { Collections } from './collections.js';
import type { PaymentDoc } from './documents.js';
import { findByIds } from './find-by-ids.js';
import { isDuplicateKey } from './mongo.js';

export async function insertPayment(c: Collections, doc: PaymentDoc): Promise<void> {
  await c.payments.insertOne(doc);
}

export function findPayment(c: Collections, paymentId: string): Promise<PaymentDoc | null> {
  return c.payments.findOne({ _id: paymentId });
}

/** The payments of these ids that exist, read by ids (find-by-ids.ts), in no particular order. */
export function findPayments(c: Collections, paymentIds: readonly string[]): Promise<PaymentDoc[]> {
  return findByIds(c.payments, paymentIds);
}

export function findPaymentByVoucher(c: Collections, voucherId: string): Promise<PaymentDoc | null> {
  return c.payments.findOne({ voucherId });
}

/**
 * Captures still CAPTURING since before `before` that a settlement shard does not answer for:
 * left half-way by the code before settlement queues. A capture of today's code is marked
 * `outcomeIn: 'batch'` (it stays CAPTURING once settled; its batch keeps the outcome).
 */
export function paymentsCapturingSince(c: Collections, before: Date): Promise<PaymentDoc[]> {
  return c.payments.find({ status: 'CAPTURING', updatedAt: { $lt: before }, outcomeIn: { $ne: 'batch' } }).toArray();
}

/** A borrower's latest payments, newest first (the borrower page; may scan). */
export function recentBorrowerPayments(c: Collections, borrowerId: string, limit: number): Promise<PaymentDoc[]> {
  return c.payments.find({ borrowerId }).sort({ capturedAt: -1 }).limit(limit).toArray();
}

/** Removes a payment whose capture was never accepted (its spend intent went elsewhere); no workflow exists for it. */
export async function deleteUnacceptedPayment(c: Collections, paymentId: string): Promise<void> {
  await c.payments.deleteOne({ _id: paymentId });
}

/**
 * Moves the projection forward; never backwards from a terminal state. The payment workflow is
 * the document's only writer after capture, so read-check-write by _id is safe (and FerretDB v1
 * only looks a document up by its index when the filter is _id alone).
 */
export async function updatePaymentProjection(
  c: Collections,
  paymentId: string,
  patch: Partial<Pick<PaymentDoc, 'status' | 'batchId' | 'transaction' | 'blockNumber' | 'confirmedAt' | 'failureReason'>>,
  unset: ('batchId' | 'transaction' | 'blockNumber')[] = [],
): Promise<void> {
  const current = await findPayment(c, paymentId);
  if (!current || current.status === 'CONFIRMED' || current.status === 'FAILED') return;
  const update: Record<string, unknown> = { $set: { ...patch, updatedAt: new Date() } };
  if (unset.length > 0) update.$unset = Object.fromEntries(unset.map((k) => [k, '']));
  await c.payments.updateOne({ _id: paymentId }, update);
}

/**
 * Binds payments to a batch with one unique insert each into settlement_claims (_id = paymentId):
 * a payment is only ever taken by the first batch that claims it, and a retry of that batch finds
 * the same set. Any payment the batcher hears of was accepted (its workflow starts after capture
 * consumed the spend intent), whatever its projection says yet.
 */
export async function claimPaymentsForBatch(c: Collections, batchId: string, paymentIds: string[]): Promise<PaymentDoc[]> {
  const at = new Date();
  const claimed = await Promise.all(
    paymentIds.map(async (id) => {
      try {
        await c.settlementClaims.insertOne({ _id: id, batchId, at });
        return true;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        return (await c.settlementClaims.findOne({ _id: id }))?.batchId === batchId;
      }
    }),
  );
  const docs = await Promise.all(paymentIds.filter((_, i) => claimed[i]).map((id) => findPayment(c, id)));
  return docs.filter((d): d is PaymentDoc => d !== null);
}

/** The projection of a voided payment; only the holder of its void claim writes it. */
export async function markVoided(c: Collections, paymentId: string, voidedAt: Date): Promise<void> {
  await c.payments.updateOne({ _id: paymentId }, { $set: { status: 'VOIDED', voidedAt, updatedAt: new Date() } });
}
