import { MongoBulkWriteError, type Collection, type Document, type OptionalUnlessRequiredId } from 'mongodb';

/**
 * Inserts `docs` in one unordered command and returns the indexes of those whose _id was already
 * stored (the others landed). Any error but a duplicate key throws.
 */
export async function insertNew<T extends Document>(col: Collection<T>, docs: OptionalUnlessRequiredId<T>[]): Promise<Set<number>> {
  if (docs.length === 0) return new Set();
  try {
    await col.insertMany(docs, { ordered: false });
    return new Set();
  } catch (err) {
    if (!(err instanceof MongoBulkWriteError)) throw err;
    const errors = Array.isArray(err.writeErrors) ? err.writeErrors : [err.writeErrors];
    if (errors.some((e) => e.code !== 11000)) throw err;
    return new Set(errors.map((e) => e.index));
  }
}
