import type { BatchOutcome } from '../domain/payment.js';
import type { Collections } from './collections.js';
import type { PaymentDoc } from './documents.js';
import { isDuplicateKey } from './mongo.js';

export async function insertPayment(c: Collections, doc: PaymentDoc): Promise<void> {
  await c.payments.insertOne(doc);
}

export function findPayment(c: Collections, paymentId: string): Promise<PaymentDoc | null> {
  return c.payments.findOne({ _id: paymentId });
}

export function findPaymentByVoucher(c: Collections, voucherId: string): Promise<PaymentDoc | null> {
  return c.payments.findOne({ voucherId });
}

/** Captures still CAPTURING since before `before`: left half-way by the code before settlement queues. */
export function paymentsCapturingSince(c: Collections, before: Date): Promise<PaymentDoc[]> {
  return c.payments.find({ status: 'CAPTURING', updatedAt: { $lt: before } }).toArray();
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

/**
 * Statements per update command. FerretDB v1 keeps each statement's cursor (and its SQLite
 * connection) open until the whole command ends (handler/msg_update.go closes them in a deferred
 * call inside its loop), so one command with as many statements as its connection pool (100)
 * deadlocks the store: the next statement waits for a connection that only the command's own end
 * would free, while it holds the launcher's write lock. Seen under load as a store that stops
 * answering; kept well below the pool. The embedded launcher now also forwards a longer command in
 * parts (tools/ferretdb/parts.go), so any client is safe there; chunking here still bounds how long
 * one command holds the write lock, and keeps an operator's own FerretDB safe.
 */
export const MAX_UPDATES_PER_COMMAND = 50;

/**
 * Writes a finished batch's outcome onto each of its payments' projections, one update by _id per
 * payment, MAX_UPDATES_PER_COMMAND to a command. The batch's shard is these payments' only writer
 * after capture, and every write is idempotent, so a retry after a partial write is safe.
 */
export async function recordBatchProjections(c: Collections, paymentIds: readonly string[], o: BatchOutcome): Promise<void> {
  if (paymentIds.length === 0) return;
  const now = new Date();
  const set =
    o.status === 'CONFIRMED'
      ? { status: o.status, batchId: o.batchId, transaction: o.transaction, blockNumber: o.blockNumber, confirmedAt: new Date(o.confirmedAt), updatedAt: now }
      : { status: o.status, batchId: o.batchId, failureReason: o.failureReason, ...(o.transaction ? { transaction: o.transaction } : {}), updatedAt: now };
  for (let i = 0; i < paymentIds.length; i += MAX_UPDATES_PER_COMMAND) {
    const chunk = paymentIds.slice(i, i + MAX_UPDATES_PER_COMMAND);
    await c.payments.bulkWrite(
      chunk.map((id) => ({ updateOne: { filter: { _id: id }, update: { $set: set } } })),
      { ordered: false },
    );
  }
}

/** The projection of a voided payment; only the holder of its void claim writes it. */
export async function markVoided(c: Collections, paymentId: string, voidedAt: Date): Promise<void> {
  await c.payments.updateOne({ _id: paymentId }, { $set: { status: 'VOIDED', voidedAt, updatedAt: new Date() } });
}
