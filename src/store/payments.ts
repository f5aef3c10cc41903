import type { Collections } from './collections.js';
import type { PaymentDoc, StoredPaymentStatus } from './documents.js';

export async function insertPayment(c: Collections, doc: PaymentDoc): Promise<void> {
  await c.payments.insertOne(doc);
}

export function findPayment(c: Collections, paymentId: string): Promise<PaymentDoc | null> {
  return c.payments.findOne({ _id: paymentId });
}

export function findPaymentByVoucher(c: Collections, voucherId: string): Promise<PaymentDoc | null> {
  return c.payments.findOne({ voucherId });
}

export async function deletePayment(c: Collections, paymentId: string, status: StoredPaymentStatus): Promise<void> {
  await c.payments.deleteOne({ _id: paymentId, status });
}

/** Moves the projection forward; never backwards from a terminal state. */
export async function updatePaymentProjection(
  c: Collections,
  paymentId: string,
  patch: Partial<Pick<PaymentDoc, 'status' | 'batchId' | 'transaction' | 'blockNumber' | 'confirmedAt' | 'failureReason'>>,
  unset: ('batchId' | 'transaction' | 'blockNumber')[] = [],
): Promise<void> {
  const update: Record<string, unknown> = { $set: { ...patch, updatedAt: new Date() } };
  if (unset.length > 0) update.$unset = Object.fromEntries(unset.map((k) => [k, '']));
  await c.payments.updateOne({ _id: paymentId, status: { $nin: ['CONFIRMED', 'FAILED'] } }, update);
}

/**
 * Binds payments to a batch. Only payments not yet bound to any batch are taken, and a retry with
 * the same batchId finds the same set, so a payment can never be settled in two batches. A payment
 * still CAPTURING is taken too: the batcher only hears of payments whose workflow has started, which
 * happens after capture accepted them, and the move to QUEUED may not have landed yet.
 */
export async function claimPaymentsForBatch(c: Collections, batchId: string, paymentIds: string[]): Promise<PaymentDoc[]> {
  await c.payments.updateMany(
    { _id: { $in: paymentIds }, settlementBatchId: { $exists: false }, status: { $in: ['CAPTURING', 'QUEUED', 'SUBMITTED'] } },
    { $set: { settlementBatchId: batchId } },
  );
  const docs = await c.payments.find({ settlementBatchId: batchId }).toArray();
  const order = new Map(paymentIds.map((id, i) => [id, i]));
  return docs.sort((a, b) => (order.get(a._id) ?? 0) - (order.get(b._id) ?? 0));
}
