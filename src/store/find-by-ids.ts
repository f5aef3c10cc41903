import type { Collection, Document, Filter } from 'mongodb';

/** Ids a single read asks for; our FerretDB launcher answers `{_id: {$in}}` by _id up to 1,000 (tools/ferretdb/idsfind.go). */
export const IDS_PER_READ = 500;

/**
 * The documents of these ids that exist, one `{_id: {$in}}` command per IDS_PER_READ ids (none for
 * none). The one way the store reads many documents by _id, so every such read takes the
 * launcher's lookup by _id instead of FerretDB's scan.
 */
export async function findByIds<T extends Document & { _id: string }>(col: Collection<T>, ids: readonly string[]): Promise<T[]> {
  const unique = [...new Set(ids)];
  const found: T[] = [];
  for (let i = 0; i < unique.length; i += IDS_PER_READ) {
    const filter = { _id: { $in: unique.slice(i, i + IDS_PER_READ) } } as Filter<T>;
    found.push(...((await col.find(filter).toArray()) as T[]));
  }
  return found;
}
