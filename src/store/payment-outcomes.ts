import type { Collections } from './collections.js';
import type { BatchDoc, PaymentDoc } from './documents.js';
import { findPayment } from './payments.js';
import { batchHolds, findClaims, isVoidClaim } from './settlement/claims.js';
import { findBatches } from './settlement/batches.js';

/**
 * A payment as its batch left it. The batch end no longer writes each payment's outcome onto its
 * document: the outcome is kept once, in the batch record its settlement claim names. A batch
 * still moving (SUBMITTED, RETRYING) leaves the payment as it is.
 */
export function paymentAfterBatch(doc: PaymentDoc, batch: BatchDoc): PaymentDoc {
  if (batch.status === 'CONFIRMED') {
    return {
      ...doc,
      status: 'CONFIRMED',
      batchId: batch._id,
      ...(batch.transaction ? { transaction: batch.transaction } : {}),
      ...(batch.blockNumber ? { blockNumber: batch.blockNumber } : {}),
      ...(batch.confirmedAt ? { confirmedAt: batch.confirmedAt } : {}),
    };
  }
  if (batch.status === 'FAILED') {
    return {
      ...doc,
      status: 'FAILED',
      batchId: batch._id,
      failureReason: batch.failureReason ?? 'settlement failed',
      ...(batch.transaction ? { transaction: batch.transaction } : {}),
    };
  }
  return doc;
}

/**
 * These payments with their batches' outcomes: each one still CAPTURING takes its claimed batch's
 * (paymentAfterBatch). Two reads by ids for any number of payments, claims then batches, and none
 * when every payment is already terminal. For readers off the poll path (the borrower page, a
 * refund's webhook, operators' tools, tests); polls answer from the shards' board (payments/status.ts).
 */
export async function withBatchOutcomes(c: Collections, docs: readonly PaymentDoc[]): Promise<PaymentDoc[]> {
  const open = docs.filter((d) => d.status === 'CAPTURING').map((d) => d._id);
  if (open.length === 0) return [...docs];
  const claims = await findClaims(c, open);
  const batchOf = new Map(claims.filter((cl) => !isVoidClaim(cl.batchId)).map((cl) => [cl._id, cl.batchId]));
  const batches = new Map((await findBatches(c, [...new Set(batchOf.values())])).map((b) => [b._id, b]));
  return docs.map((d) => {
    const batch = d.status === 'CAPTURING' ? batches.get(batchOf.get(d._id) ?? '') : undefined;
    return batch && batchHolds(batch, d._id) ? paymentAfterBatch(d, batch) : d;
  });
}

/** One payment with its batch's outcome (withBatchOutcomes), or null if there is none of this id. */
export async function findPaymentWithOutcome(c: Collections, paymentId: string): Promise<PaymentDoc | null> {
  const doc = await findPayment(c, paymentId);
  return doc ? ((await withBatchOutcomes(c, [doc]))[0] ?? null) : null;
}
