import type { Collections } from './collections.js';
import type { IdempotencyDoc } from './documents.js';
import { claimInsertFirst } from './claim.js';

/** Concurrent requests with the same key kept taking and releasing it: none could be judged against it. */
export class IdempotencyKeyBusy extends Error {
  override name = 'IdempotencyKeyBusy';
}

export type ClaimResult = { kind: 'claimed'; doc: IdempotencyDoc } | { kind: 'existing'; doc: IdempotencyDoc };

export function idempotencyId(merchantId: string, key: string): string {
  return `${merchantId}:${key}`;
}

/**
 * Binds a key to one request fingerprint and payment id. An expired record is replaced, so a key
 * can be reused after the retention window, as with Stripe.
 */
export function claimIdempotencyKey(c: Collections, doc: IdempotencyDoc, now: Date): Promise<ClaimResult> {
  return claimInsertFirst<IdempotencyDoc, ClaimResult>(c.idempotency, {
    attempts: 3,
    doc: () => doc,
    won: (claimed) => ({ kind: 'claimed', doc: claimed }),
    held: async (existing) => {
      if (existing.expiresAt > now) return { answer: { kind: 'existing', doc: existing } };
      await c.idempotency.deleteOne({ _id: doc._id, expiresAt: existing.expiresAt });
      return 'retry';
    },
    unsettled: () => new IdempotencyKeyBusy('idempotency key claim did not settle after 3 attempts'),
  });
}

/** Frees a key whose request was refused, so the caller can fix the request and retry with it. */
export async function releaseIdempotencyKey(c: Collections, id: string, paymentId: string): Promise<void> {
  await c.idempotency.deleteOne({ _id: id, paymentId });
}

export async function sweepExpiredIdempotencyKeys(c: Collections, now: Date): Promise<number> {
  const r = await c.idempotency.deleteMany({ expiresAt: { $lte: now } });
  return r.deletedCount;
}
