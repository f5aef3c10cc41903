import type { Collection, Filter } from 'mongodb';
import type { Collections } from './collections.js';
import { withLease } from './lease-lock.js';

/**
 * Deletes document `id` only while `still(stored)` holds, e.g. "still the expired claim I saw".
 * A guarded deleteOne is a read then a delete on FerretDB v1, so two callers could both pass the
 * guard and the second delete a document inserted meanwhile; under the document's lease lock the
 * check and the delete cannot interleave with another guarded delete. Inserts need no lock: they
 * only succeed while no document exists.
 */
export function deleteIfStill<T extends { _id: string }>(c: Collections, col: Collection<T>, id: string, still: (stored: T) => boolean): Promise<boolean> {
  const filter = { _id: id } as Filter<T>;
  return withLease(c, `${col.collectionName}:${id}`, async () => {
    const stored = (await col.findOne(filter)) as T | null;
    if (!stored || !still(stored)) return false;
    await col.deleteOne(filter);
    return true;
  });
}
