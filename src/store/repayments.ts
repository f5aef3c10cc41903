import type { Collections } from './collections.js';
import type { RepaymentDoc } from './documents.js';
import { changeBorrower } from './borrower-changes.js';
import { withFencedDocument } from './fencing.js';
import { insertOnce } from './claim.js';

export async function ensureRepayment(c: Collections, doc: RepaymentDoc): Promise<RepaymentDoc> {
  return insertOnce(c.repayments, doc);
}

export function findRepayment(c: Collections, id: string): Promise<RepaymentDoc | null> {
  return c.repayments.findOne({ _id: id });
}

/** Writes `set` unless the repayment already ended (CONFIRMED, FAILED) or is in `unlessStatus`. */
export async function updateRepayment(c: Collections, id: string, set: Partial<RepaymentDoc>, unlessStatus: RepaymentDoc['status'][] = []): Promise<void> {
  await withFencedDocument(c, c.repayments, id, `repayment:${id}`, async (rep, write) => {
    if (!rep || ['CONFIRMED', 'FAILED', ...unlessStatus].includes(rep.status)) return;
    await write.update({ $set: { ...set, updatedAt: new Date() } });
  });
}

/**
 * Lowers booked debt and restores available credit once per repayment: the borrower document
 * remembers which repayments it booked, so a retried activity cannot book twice.
 */
export function bookRepayment(c: Collections, borrowerId: string, repaymentId: string, amount: number): Promise<boolean> {
  return changeBorrower(c, borrowerId, (b) => {
    if (!b || b.bookedRepayments?.[repaymentId] !== undefined) return { result: false };
    return {
      result: true,
      change: { debt: b.debt - amount, available: b.available + amount, bookedRepayments: { ...(b.bookedRepayments ?? {}), [repaymentId]: amount } },
    };
  });
}
