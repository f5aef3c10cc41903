import type { Collections } from './collections.js';
import type { SigningRequestDoc } from './documents.js';
import { insertOnce } from './mongo.js';

/** Creates the request once: a second call with the same _id keeps the first document. */
export async function ensureSigningRequest(c: Collections, doc: SigningRequestDoc): Promise<SigningRequestDoc> {
  return insertOnce(c.signingRequests, doc);
}

export function findSigningRequest(c: Collections, id: string): Promise<SigningRequestDoc | null> {
  return c.signingRequests.findOne({ _id: id });
}

/** PENDING -> SIGNED for the first valid signature; false when another post won or it closed. */
export async function markSigned(c: Collections, id: string, signature: string, now: Date): Promise<boolean> {
  const r = await c.signingRequests.updateOne({ _id: id, status: 'PENDING', expiresAt: { $gt: now } }, { $set: { status: 'SIGNED', signature, updatedAt: now } });
  return r.modifiedCount === 1;
}

export async function markExpired(c: Collections, id: string, now: Date): Promise<void> {
  await c.signingRequests.updateOne({ _id: id, status: 'PENDING', expiresAt: { $lte: now } }, { $set: { status: 'EXPIRED', updatedAt: now } });
}

/** SIGNED -> COMPLETED/FAILED, once. */
export async function closeSigningRequest(
  c: Collections,
  id: string,
  outcome: { status: 'COMPLETED'; result: Record<string, unknown> } | { status: 'FAILED'; failureReason: string },
  now: Date,
): Promise<void> {
  const set =
    outcome.status === 'COMPLETED'
      ? { status: outcome.status, result: outcome.result, updatedAt: now }
      : { status: outcome.status, failureReason: outcome.failureReason, updatedAt: now };
  await c.signingRequests.updateOne({ _id: id, status: 'SIGNED' }, { $set: set });
}

export function listOpenSigningRequests(c: Collections, borrowerId: string, now: Date): Promise<SigningRequestDoc[]> {
  return c.signingRequests
    .find({ borrowerId, $or: [{ status: 'PENDING', expiresAt: { $gt: now } }, { status: 'SIGNED' }] })
    .sort({ createdAt: -1 })
    .limit(20)
    .toArray();
}
