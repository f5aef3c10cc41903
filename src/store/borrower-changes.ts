import type { Collections } from './collections.js';
import type { BorrowerDoc } from './documents.js';
import { BUSY_WAIT_MS, busyBackoff, inTurn, LeaseBusy } from './lease-lock.js';

export type BorrowerChange = Partial<Omit<BorrowerDoc, '_id' | 'createdAt' | 'updatedAt' | 'fence'>>;

export interface BorrowerDecision<R> {
  result: R;
  /** Fields to write; absent when nothing changes. */
  change?: BorrowerChange;
}

/**
 * The one way to change an existing borrower document: read it by _id, let `decide` compute the
 * change in JS, and write the changed fields only if nobody wrote in between: the write's filter
 * is `{_id, fence: <the version read>}` and it increments `fence`. A lost race reads again and
 * decides again. Two commands per change (a lease took four: lock, stamp, write, unlock), so a
 * settled batch books each borrower with one read and one write.
 *
 * Every writer goes through here because FerretDB v1 writes the whole document on any update: a
 * plain $set of `stage` elsewhere could put back an `available` a concurrent hold just lowered.
 * The launcher resolves the `_id` + equality filter under its write lock
 * (tools/ferretdb/idfilter.go); MongoDB does it natively. Writers of the lease-based release
 * stamp and match the same `fence`, so during a rolling deploy the two kinds refuse each other's
 * stale writes instead of losing one. Writers in one process take turns per borrower, so only
 * writers in different processes ever race.
 */
export function changeBorrower<R>(c: Collections, borrowerId: string, decide: (b: BorrowerDoc | null) => BorrowerDecision<R>): Promise<R> {
  const key = `borrower:${borrowerId}`;
  const deadline = Date.now() + BUSY_WAIT_MS;
  return inTurn(key, deadline, async () => {
    const wait = busyBackoff();
    for (;;) {
      const b = await c.borrowers.findOne({ _id: borrowerId });
      const { result, change } = decide(b);
      if (!b || !change || Object.keys(change).length === 0) return result;
      if (b.fence === undefined) {
        // A document no writer has versioned yet: give it a version first (an atomic $inc by _id).
        await c.borrowers.updateOne({ _id: borrowerId }, { $inc: { fence: 1 } });
        continue;
      }
      const written = await c.borrowers.updateOne({ _id: borrowerId, fence: b.fence }, { $set: { ...change, updatedAt: new Date() }, $inc: { fence: 1 } });
      if (written.matchedCount === 1) return result;
      if (Date.now() >= deadline) throw new LeaseBusy(key);
      await wait();
    }
  });
}
