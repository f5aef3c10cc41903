import type { Collections } from './collections.js';
import type { RepaymentDoc } from './documents.js';
import { insertOnce } from './mongo.js';

export async function ensureRepayment(c: Collections, doc: RepaymentDoc): Promise<RepaymentDoc> {
  return insertOnce(c.repayments, doc);
}

export function findRepayment(c: Collections, id: string): Promise<RepaymentDoc | null> {
  return c.repayments.findOne({ _id: id });
}

export async function updateRepayment(c: Collections, id: string, set: Partial<RepaymentDoc>, unlessStatus: RepaymentDoc['status'][] = []): Promise<void> {
  await c.repayments.updateOne({ _id: id, status: { $nin: ['CONFIRMED', 'FAILED', ...unlessStatus] } }, { $set: { ...set, updatedAt: new Date() } });
}

/**
 * Lowers booked debt and restores available credit once per repayment: the borrower document
 * remembers which repayments it booked, so a retried activity cannot book twice.
 */
export async function bookRepayment(c: Collections, borrowerId: string, repaymentId: string, amount: number): Promise<boolean> {
  const field = `bookedRepayments.${repaymentId}`;
  const r = await c.borrowers.updateOne(
    { _id: borrowerId, [field]: { $exists: false } },
    { $inc: { debt: -amount, available: amount }, $set: { [field]: amount, updatedAt: new Date() } },
  );
  return r.modifiedCount === 1;
}
