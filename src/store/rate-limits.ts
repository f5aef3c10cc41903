import type { Collections } from './collections.js';
import { isDuplicateKey } from './mongo.js';
import { admittedOn, claimSlot, refused, slotWindow, type RateDecision, type RatePolicy, type SlotHint } from '../domain/rate-limit.js';

/** This process's hint per bucket (see SlotHint); dropped wholesale if merchants ever make it large. */
const hints = new Map<string, SlotHint>();
const MAX_HINTS = 100_000;

function hintFor(bucket: string): SlotHint {
  let hint = hints.get(bucket);
  if (!hint) {
    if (hints.size >= MAX_HINTS) hints.clear();
    hint = { next: 0 };
    hints.set(bucket, hint);
  }
  return hint;
}

export const slotId = (bucket: string, slot: number) => `${bucket}:${slot}`;

/**
 * Applies one request to a bucket shared by every API process through the database (see
 * domain/rate-limit.ts). Each probe is one insert by _id; nothing is read. The slot space is keyed
 * by the rate, so an operator changing a merchant's rate starts it on a fresh bucket. Expired
 * slots are removed off the request path (sweepExpiredSlots).
 */
export async function consumeRate(c: Collections, bucketId: string, policy: RatePolicy, nowMs: number): Promise<RateDecision> {
  const bucket = `${bucketId}@${policy.perMinute}`;
  const window = slotWindow(nowMs, policy);
  const slot = await claimSlot(window, hintFor(bucket), async (k) => {
    try {
      await c.rateLimitSlots.insertOne({ _id: slotId(bucket, k), bucket, slot: k, expiresAt: new Date((k + 1) * window.intervalMs) });
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  });
  return slot === null ? refused(window, nowMs, policy) : admittedOn(window, slot, nowMs, policy);
}

/** FerretDB v1 has no TTL index; each API process runs this now and then, never on a request. */
export async function sweepExpiredSlots(c: Collections, now: Date): Promise<number> {
  return (await c.rateLimitSlots.deleteMany({ expiresAt: { $lte: now } })).deletedCount;
}
