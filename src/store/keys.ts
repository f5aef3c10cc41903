import type { Filter } from 'mongodb';
import { insertOnce } from './claim.js';
import type { Store } from './mongo.js';

/** The process-wide key sets, one `current` document each: the authorization server's and the receipt signer's. */
export type KeyCollection = 'oauth_keys' | 'receipt_signing_keys';

/**
 * The `current` key document of `collection`: read it, or make it with `make` and store it once.
 * Two processes starting together agree on one (the first insert wins; the other reads it).
 */
export async function loadOrCreateKeyDoc<T extends { _id: 'current' }>(store: Store, collection: KeyCollection, make: () => Promise<T>): Promise<T> {
  const col = store.db.collection<T>(collection);
  const found = (await col.findOne({ _id: 'current' } as Filter<T>)) as T | null;
  return found ?? insertOnce(col, await make());
}
