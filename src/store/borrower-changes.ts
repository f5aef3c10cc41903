import type { Collections } from './collections.js';
import { borrowerFromStored, storedChange } from './borrower-record.js';
import type { BorrowerDoc } from './documents.js';
import { findByIds } from './find-by-ids.js';
import { MAX_UPDATES_PER_COMMAND } from './update-commands.js';
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
      const stored = await c.borrowers.findOne({ _id: borrowerId });
      const b = stored && borrowerFromStored(stored);
      const { result, change } = decide(b);
      if (!b || !change || Object.keys(change).length === 0) return result;
      if (b.fence === undefined) {
        // A document no writer has versioned yet: give it a version first (an atomic $inc by _id).
        await c.borrowers.updateOne({ _id: borrowerId }, { $inc: { fence: 1 } });
        continue;
      }
      const written = await c.borrowers.updateOne({ _id: borrowerId, fence: b.fence }, fencedUpdate(change, new Date()));
      if (written.matchedCount === 1) return result;
      if (Date.now() >= deadline) throw new LeaseBusy(key);
      await wait();
    }
  });
}

/** Fenced writes per update command (update-commands.ts); reads go by IDS_PER_READ (find-by-ids.ts). */
const WRITES_PER_COMMAND = MAX_UPDATES_PER_COMMAND;

/**
 * Changes many borrowers in a few commands whatever their number (a settled batch books all its
 * borrowers at once): one read of them all ($in, looked up by _id), then one update command of
 * fenced writes, each `{_id, fence}` as in changeBorrower. The borrowers whose write lost a race
 * are read and decided again, alone. `decide` must be idempotent by the document's content (a
 * borrower already changed yields no change), because a lost race cannot tell whose write won;
 * a missing borrower is skipped.
 */
export async function changeBorrowers(c: Collections, borrowerIds: readonly string[], decide: (b: BorrowerDoc) => BorrowerChange | undefined): Promise<void> {
  const deadline = Date.now() + BUSY_WAIT_MS;
  const wait = busyBackoff();
  let pending = [...new Set(borrowerIds)];
  while (pending.length > 0) {
    const writes: { b: BorrowerDoc; change: BorrowerChange }[] = [];
    const unversioned: string[] = [];
    for (const b of await readBorrowers(c, pending)) {
      const change = decide(b);
      if (!change || Object.keys(change).length === 0) continue;
      if (b.fence === undefined) unversioned.push(b._id);
      else writes.push({ b, change });
    }
    const again = [...unversioned];
    // A document no writer has versioned yet gets a version first (an atomic $inc by _id), then is decided again.
    for (let i = 0; i < unversioned.length; i += WRITES_PER_COMMAND) {
      await c.borrowers.bulkWrite(unversioned.slice(i, i + WRITES_PER_COMMAND).map((_id) => ({ updateOne: { filter: { _id }, update: { $inc: { fence: 1 } } } })), { ordered: false });
    }
    for (let i = 0; i < writes.length; i += WRITES_PER_COMMAND) {
      const chunk = writes.slice(i, i + WRITES_PER_COMMAND);
      const now = new Date();
      const written = await c.borrowers.bulkWrite(
        chunk.map(({ b, change }) => ({ updateOne: { filter: { _id: b._id, fence: b.fence }, update: fencedUpdate(change, now) } })),
        { ordered: false },
      );
      if (written.matchedCount < chunk.length) again.push(...chunk.map(({ b }) => b._id));
    }
    pending = again;
    if (pending.length > 0) {
      if (Date.now() >= deadline) throw new LeaseBusy(`borrowers:${pending[0]}`);
      await wait();
    }
  }
}

async function readBorrowers(c: Collections, ids: readonly string[]): Promise<BorrowerDoc[]> {
  return (await findByIds(c.borrowers, ids)).map(borrowerFromStored);
}

/** The update that writes `change` and moves the fence on (its holds in their stored form, borrower-record.ts). */
function fencedUpdate(change: BorrowerChange, now: Date) {
  const { $set, $unset } = storedChange(change);
  return { $set: { ...$set, updatedAt: now }, ...($unset ? { $unset } : {}), $inc: { fence: 1 } };
}
