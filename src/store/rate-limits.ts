import type { Collections } from './collections.js';
import { isDuplicateKey } from './mongo.js';
import { gcraDecide, type RateDecision, type RatePolicy } from '../domain/rate-limit.js';

/**
 * Applies one request to a shared GCRA bucket with compare-and-set on its arrival time, so every
 * API process sharing the database enforces the same limit.
 */
export async function consumeRate(c: Collections, bucketId: string, policy: RatePolicy, nowMs: number): Promise<RateDecision> {
  for (let attempt = 0; attempt < 8; attempt++) {
    const doc = await c.rateLimits.findOne({ _id: bucketId });
    const decision = gcraDecide(doc?.tat ?? null, nowMs, policy);
    if (!decision.allowed) return decision;
    if (doc === null) {
      try {
        await c.rateLimits.insertOne({ _id: bucketId, tat: decision.newTat });
        return decision;
      } catch (err) {
        if (isDuplicateKey(err)) continue;
        throw err;
      }
    }
    const r = await c.rateLimits.updateOne({ _id: bucketId, tat: doc.tat }, { $set: { tat: decision.newTat } });
    if (r.modifiedCount === 1) return decision;
  }
  return { allowed: false, newTat: nowMs, limit: policy.burst, remaining: 0, resetSeconds: 1, retryAfterSeconds: 1 };
}
