import type { Collections } from './collections.js';
import { isDuplicateKey } from './mongo.js';

/**
 * Marks a token spent until it would expire anyway. True the first time, false when it already
 * was spent (a replay): one insert by _id, so two concurrent uses cannot both win.
 */
export async function spendOnce(c: Collections, id: string, expiresAt: Date): Promise<boolean> {
  try {
    await c.spentTokens.insertOne({ _id: id, expiresAt });
    return true;
  } catch (err) {
    if (isDuplicateKey(err)) return false;
    throw err;
  }
}

/** Whether the token was spent (or ended early). One _id lookup. */
export async function isSpent(c: Collections, id: string): Promise<boolean> {
  return (await c.spentTokens.findOne({ _id: id }, { projection: { _id: 1 } })) !== null;
}

/** FerretDB v1 has no TTL index; the API's sweeper runs this now and then, never on a request. */
export async function sweepSpentTokens(c: Collections, now: Date): Promise<number> {
  return (await c.spentTokens.deleteMany({ expiresAt: { $lte: now } })).deletedCount;
}
