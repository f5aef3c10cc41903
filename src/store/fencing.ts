import type { Collection, Filter, OptionalUnlessRequiredId, UpdateFilter } from 'mongodb';
import type { Collections } from './collections.js';
import { withLease, type LeaseOptions } from './lease-lock.js';
import { isDuplicateKey } from './mongo.js';

/**
 * Read-modify-write of one document under its lease lock (lease-lock.ts), with a fencing token.
 * A lease can expire while its holder is stalled (a long GC pause, a frozen VM) and the next
 * holder takes over; without a fence the stalled holder would wake and overwrite the next
 * holder's change with one computed from a stale read. So each holder stamps the document as it
 * reads it (`fence` + 1, one atomic write by _id) and every write it makes matches its own stamp:
 * `{_id, fence: token}`. Once a later holder has stamped, an earlier holder's write matches
 * nothing and throws FencedOut; nothing of it lands. (FerretDB resolves such an `_id` + equality
 * filter by _id under its write lock, tools/ferretdb/idfilter.go; MongoDB does it natively.)
 */
export class FencedOut extends Error {
  override readonly name = 'FencedOut';
  constructor(readonly key: string) {
    super(`${key} was taken over by a later lease holder; this write was refused`);
  }
}

export type Fenceable = { _id: string; fence?: number };

/** The writes a holder may make to the document it read; each refuses with FencedOut once a later holder read it. */
export interface FencedWrites<T extends Fenceable> {
  update(update: UpdateFilter<T>): Promise<void>;
  /** Creates the document this holder read as absent; if someone created it meanwhile, that one was later. */
  insert(doc: T): Promise<void>;
  delete(): Promise<void>;
}

export function withFencedDocument<T extends Fenceable, R>(
  c: Collections,
  col: Collection<T>,
  id: string,
  lockKey: string,
  work: (doc: T | null, write: FencedWrites<T>) => Promise<R>,
  lease?: LeaseOptions,
): Promise<R> {
  return withLease(
    c,
    lockKey,
    async () => {
      const stamped = (await col.findOneAndUpdate({ _id: id } as Filter<T>, { $inc: { fence: 1 } } as unknown as UpdateFilter<T>, {
        returnDocument: 'after',
      })) as T | null;
      const mine = { _id: id, fence: stamped?.fence ?? 0 } as Filter<T>;
      const refused = () => new FencedOut(`${col.collectionName}:${id}`);
      return work(stamped, {
        async update(update) {
          if ((await col.updateOne(mine, update)).matchedCount === 0) throw refused();
        },
        async insert(doc) {
          try {
            await col.insertOne({ ...doc, fence: 1 } as OptionalUnlessRequiredId<T>);
          } catch (err) {
            throw isDuplicateKey(err) ? refused() : err;
          }
        },
        async delete() {
          if ((await col.deleteOne(mine)).deletedCount === 0) throw refused();
        },
      });
    },
    lease,
  );
}
