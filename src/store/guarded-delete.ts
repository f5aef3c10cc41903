import type { Collection } from 'mongodb';
import type { Collections } from './collections.js';
import { withFencedDocument, type Fenceable } from './fencing.js';

/**
 * Deletes document `id` only while `still(stored)` holds, e.g. "still the expired claim I saw".
 * A guarded deleteOne is a read then a delete on FerretDB v1, so two callers could both pass the
 * guard and the second delete a document inserted meanwhile; under the document's lease lock the
 * check and the delete cannot interleave with another guarded delete. Inserts need no lock: they
 * only succeed while no document exists. The delete is fenced (fencing.ts): a holder that outlived
 * its lease deletes nothing and throws FencedOut.
 */
export function deleteIfStill<T extends Fenceable>(c: Collections, col: Collection<T>, id: string, still: (stored: T) => boolean): Promise<boolean> {
  return withFencedDocument(c, col, id, `${col.collectionName}:${id}`, async (stored, write) => {
    if (!stored || !still(stored)) return false;
    await write.delete();
    return true;
  });
}
