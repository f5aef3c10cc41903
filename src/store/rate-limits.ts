import type { Collections } from './collections.js';
import { isDuplicateKey } from './mongo.js';
import { admitted, pickSlot, refused, slotWindow, type RateDecision, type RatePolicy } from '../domain/rate-limit.js';

/** After a collision, pick among this many free slots so concurrent claimers spread out. */
const SPREAD = 32;
/** Each failed claim means another request took a slot, so this bound is only reached under extreme contention. */
const MAX_ATTEMPTS = 64;
/** One admitted request in this many sweeps expired slots (FerretDB v1 has no TTL index). */
const SWEEP_ONE_IN = 16;

export class RateLimitContention extends Error {}

async function takenSlots(c: Collections, bucket: string, first: number, last: number): Promise<Set<number>> {
  const docs = await c.rateLimitSlots.find({ bucket, slot: { $gte: first, $lte: last } }, { projection: { slot: 1 } }).toArray();
  return new Set(docs.map((d) => d.slot));
}

/**
 * Applies one request to a bucket shared by every API process through the database (see
 * domain/rate-limit.ts). Refuses only when every slot of the window is seen taken. The slot space
 * is keyed by the rate, so an operator changing a merchant's rate starts it on a fresh bucket.
 */
export async function consumeRate(
  c: Collections,
  bucketId: string,
  policy: RatePolicy,
  nowMs: number,
  random: () => number = Math.random,
): Promise<RateDecision> {
  const bucket = `${bucketId}@${policy.perMinute}`;
  const window = slotWindow(nowMs, policy);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const taken = await takenSlots(c, bucket, window.first, window.last);
    const slot = pickSlot(window, taken, attempt === 0 ? 1 : SPREAD, random);
    if (slot === null) return refused(window, nowMs, policy);
    try {
      await c.rateLimitSlots.insertOne({ _id: `${bucket}:${slot}`, bucket, slot, expiresAt: new Date((slot + 1) * window.intervalMs) });
    } catch (err) {
      if (isDuplicateKey(err)) continue;
      throw err;
    }
    taken.add(slot);
    if (random() * SWEEP_ONE_IN < 1) await c.rateLimitSlots.deleteMany({ expiresAt: { $lte: new Date(nowMs) } });
    return admitted(window, taken, nowMs, policy);
  }
  throw new RateLimitContention(`rate limit bucket ${bucketId} still contended after ${MAX_ATTEMPTS} claims`);
}
