import { refundTotals } from '../domain/refunds.js';
import type { Collections } from './collections.js';
import { findByIds } from './find-by-ids.js';
import type { PaymentRefundsDoc, RefundRecord } from './documents.js';
import { withFencedDocument } from './fencing.js';
import { announceRefund } from './settlement/board.js';

export function findPaymentRefunds(c: Collections, paymentId: string): Promise<PaymentRefundsDoc | null> {
  return c.refunds.findOne({ _id: paymentId });
}

/** The refund documents of these payments (one $in read per IDS_PER_READ). */
export function findRefundsOf(c: Collections, paymentIds: readonly string[]): Promise<PaymentRefundsDoc[]> {
  return findByIds(c.refunds, paymentIds);
}

export type ReserveRefundResult =
  | { kind: 'reserved' }
  /** The same refund id is already recorded (a retried request). */
  | { kind: 'exists'; record: RefundRecord }
  /** Another refund of this payment already carries this authorization nonce. */
  | { kind: 'nonce_used'; refundId: string }
  | { kind: 'exceeds'; refundable: bigint };

const lockKey = (paymentId: string) => `refunds:${paymentId}`;

/**
 * Records a refund as PENDING if, with every refund not FAILED, it stays within the payment. The
 * check and the write happen under the payment's fenced lease, so concurrent refunds from any
 * number of API processes can never together exceed the payment. The refund is announced on the
 * shards' board first (announceRefund), so a poll that trusts the board's silence never misses a
 * recorded refund for longer than the board's read interval.
 */
export async function reserveRefund(c: Collections, payment: Omit<PaymentRefundsDoc, 'refunds' | 'fence'>, record: RefundRecord): Promise<ReserveRefundResult> {
  await announceRefund(c, payment._id, new Date());
  return withFencedDocument(c, c.refunds, payment._id, lockKey(payment._id), async (doc, write): Promise<ReserveRefundResult> => {
    const refunds = doc?.refunds ?? [];
    const same = refunds.find((r) => r.refundId === record.refundId);
    if (same) return { kind: 'exists', record: same };
    const nonce = record.authorization.nonce.toLowerCase();
    const twin = refunds.find((r) => r.authorization.nonce.toLowerCase() === nonce);
    if (twin) return { kind: 'nonce_used', refundId: twin.refundId };
    const { reserved } = refundTotals(refunds);
    const amount = BigInt(doc?.amount ?? payment.amount);
    if (reserved + BigInt(record.amount) > amount) return { kind: 'exceeds', refundable: amount - reserved };
    if (doc) await write.update({ $set: { refunds: [...refunds, record] } });
    else await write.insert({ ...payment, refunds: [record] });
    return { kind: 'reserved' };
  });
}

/**
 * Moves one refund on; a refund that already ended (SUCCEEDED, FAILED) is never changed again.
 * Returns the refund as stored afterwards.
 */
export function updateRefund(c: Collections, paymentId: string, refundId: string, set: Partial<Omit<RefundRecord, 'refundId'>>): Promise<RefundRecord | null> {
  return withFencedDocument(c, c.refunds, paymentId, lockKey(paymentId), async (doc, write) => {
    const current = doc?.refunds.find((r) => r.refundId === refundId);
    if (!doc || !current) return null;
    if (current.status === 'SUCCEEDED' || current.status === 'FAILED') return current;
    const next: RefundRecord = { ...current, ...set, updatedAt: new Date() };
    await write.update({ $set: { refunds: doc.refunds.map((r) => (r.refundId === refundId ? next : r)) } });
    return next;
  });
}
