import type { Collections } from './collections.js';
import type { BorrowerDoc } from './documents.js';
import { withLease } from './lease-lock.js';

export type BorrowerChange = Partial<Omit<BorrowerDoc, '_id' | 'createdAt' | 'updatedAt'>>;

export interface BorrowerDecision<R> {
  result: R;
  /** Fields to write; absent when nothing changes. */
  change?: BorrowerChange;
}

/**
 * The one way to change an existing borrower document: under the borrower's lease lock, read it
 * by _id, let `decide` compute the change in JS, write the changed fields by _id. Every writer
 * goes through here because FerretDB v1 writes the whole document on any update: even a plain
 * $set of `stage` outside the lock could put back an `available` a concurrent hold just lowered.
 */
export function changeBorrower<R>(c: Collections, borrowerId: string, decide: (b: BorrowerDoc | null) => BorrowerDecision<R>): Promise<R> {
  return withLease(c, `borrower:${borrowerId}`, async () => {
    const b = await c.borrowers.findOne({ _id: borrowerId });
    const { result, change } = decide(b);
    if (b && change && Object.keys(change).length > 0) {
      await c.borrowers.updateOne({ _id: borrowerId }, { $set: { ...change, updatedAt: new Date() } });
    }
    return result;
  });
}
