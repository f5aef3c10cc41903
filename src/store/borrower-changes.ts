import type { Collections } from './collections.js';
import type { BorrowerDoc } from './documents.js';
import { withFencedDocument } from './fencing.js';
import type { LeaseOptions } from './lease-lock.js';

export type BorrowerChange = Partial<Omit<BorrowerDoc, '_id' | 'createdAt' | 'updatedAt' | 'fence'>>;

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
 * The write is fenced: a holder that stalled past its lease throws FencedOut and writes nothing.
 */
export function changeBorrower<R>(
  c: Collections,
  borrowerId: string,
  decide: (b: BorrowerDoc | null) => BorrowerDecision<R>,
  lease?: LeaseOptions,
): Promise<R> {
  return withFencedDocument(
    c,
    c.borrowers,
    borrowerId,
    `borrower:${borrowerId}`,
    async (b, write) => {
      const { result, change } = decide(b);
      if (b && change && Object.keys(change).length > 0) await write.update({ $set: { ...change, updatedAt: new Date() } });
      return result;
    },
    lease,
  );
}
