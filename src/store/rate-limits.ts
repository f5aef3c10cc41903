import type { Collections } from './collections.js';
import { isDuplicateKey } from './mongo.js';
import { gcraDecide, type RateDecision, type RatePolicy } from '../domain/rate-limit.js';

/**
 * Applies one request to a shared GCRA bucket, so every API process sharing the database enforces
 * the same limit. Two single-document atomic updates, no compare-and-set: concurrent requests never
 * lose a race and get a 429 the limit did not call for. First the arrival time is raised to now
 * ($max), then one interval is added only if the bucket still has room (tat <= now + tolerance).
 */
export async function consumeRate(c: Collections, bucketId: string, policy: RatePolicy, nowMs: number): Promise<RateDecision> {
  const interval = 60_000 / policy.perMinute;
  const tolerance = interval * (policy.burst - 1);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await c.rateLimits.updateOne({ _id: bucketId }, { $max: { tat: nowMs } }, { upsert: true });
    } catch (err) {
      // Two first requests upserting at once: the loser retries against the winner's document.
      if (isDuplicateKey(err)) continue;
      throw err;
    }
    const taken = await c.rateLimits.findOneAndUpdate({ _id: bucketId, tat: { $lte: nowMs + tolerance } }, { $inc: { tat: interval } }, { returnDocument: 'after' });
    if (taken) return gcraDecide(taken.tat - interval, nowMs, policy);
    // The arrival time only ever grows, so a miss means the bucket is full: this is the refusal.
    return gcraDecide((await c.rateLimits.findOne({ _id: bucketId }))?.tat ?? null, nowMs, policy);
  }
  return { allowed: false, newTat: nowMs, limit: policy.burst, remaining: 0, resetSeconds: 1, retryAfterSeconds: 1 };
}
