import type { Collections } from './collections.js';
import { insertNew } from './insert-new.js';
import { acquireSlot, newBucketState, type BucketState } from '../domain/rate-limit-blocks.js';
import { slotWindow, type RateDecision, type RatePolicy } from '../domain/rate-limit.js';

/** This process's knowledge per bucket (see BucketState); dropped wholesale if merchants ever make it large. */
const buckets = new Map<string, BucketState>();
const MAX_BUCKETS = 100_000;

function stateOf(bucket: string): BucketState {
  let state = buckets.get(bucket);
  if (!state) {
    if (buckets.size >= MAX_BUCKETS) buckets.clear();
    state = newBucketState();
    buckets.set(bucket, state);
  }
  return state;
}

export const slotId = (bucket: string, slot: number) => `${bucket}:${slot}`;

/** One insert command for all `slots` (one document each); false for a slot someone else holds. */
async function insertSlots(c: Collections, bucket: string, slots: number[], intervalMs: number): Promise<boolean[]> {
  const docs = slots.map((k) => ({ _id: slotId(bucket, k), bucket, slot: k, expiresAt: new Date((k + 1) * intervalMs) }));
  const taken = await insertNew(c.rateLimitSlots, docs);
  return slots.map((_, i) => !taken.has(i));
}

/**
 * Applies one request to a bucket shared by every API process through the database (see
 * domain/rate-limit.ts and domain/rate-limit-blocks.ts). A claim is one insert command of one or
 * more slot documents by _id; nothing is read, and a busy process needs a claim only every few
 * requests. The slot space is keyed by the rate, so an operator changing a merchant's rate starts
 * it on a fresh bucket. Expired slots are removed off the request path (sweepExpiredSlots).
 */
export async function consumeRate(c: Collections, bucketId: string, policy: RatePolicy, nowMs: number): Promise<RateDecision> {
  const bucket = `${bucketId}@${policy.perMinute}`;
  const { intervalMs } = slotWindow(nowMs, policy);
  return acquireSlot(stateOf(bucket), nowMs, policy, (slots) => insertSlots(c, bucket, slots, intervalMs));
}

/** FerretDB v1 has no TTL index; each API process runs this now and then, never on a request. */
export async function sweepExpiredSlots(c: Collections, now: Date): Promise<number> {
  return (await c.rateLimitSlots.deleteMany({ expiresAt: { $lte: now } })).deletedCount;
}
