import type { Collections } from './collections.js';
import type { SigningRequestDoc } from './documents.js';
import { withFencedDocument } from './fencing.js';
import { insertOnce } from './claim.js';

/** Creates the request once: a second call with the same _id keeps the first document. */
export async function ensureSigningRequest(c: Collections, doc: SigningRequestDoc): Promise<SigningRequestDoc> {
  return insertOnce(c.signingRequests, doc);
}

export function findSigningRequest(c: Collections, id: string): Promise<SigningRequestDoc | null> {
  return c.signingRequests.findOne({ _id: id });
}

/**
 * Moves a request on from `from` if `allowed` holds, deciding against concurrent posts under the
 * request's fenced lease lock (a guarded update is not atomic on FerretDB v1). True when this call moved it.
 */
function transition(
  c: Collections,
  id: string,
  allowed: (doc: SigningRequestDoc) => boolean,
  set: Partial<SigningRequestDoc>,
): Promise<boolean> {
  return withFencedDocument(c, c.signingRequests, id, `signing-request:${id}`, async (doc, write) => {
    if (!doc || !allowed(doc)) return false;
    await write.update({ $set: set });
    return true;
  });
}

/** PENDING -> SIGNED for the first valid signature; false when another post won or it closed. */
export function markSigned(c: Collections, id: string, signature: string, now: Date): Promise<boolean> {
  return transition(c, id, (d) => d.status === 'PENDING' && d.expiresAt > now, { status: 'SIGNED', signature, updatedAt: now });
}

export async function markExpired(c: Collections, id: string, now: Date): Promise<void> {
  await transition(c, id, (d) => d.status === 'PENDING' && d.expiresAt <= now, { status: 'EXPIRED', updatedAt: now });
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
  await transition(c, id, (d) => d.status === 'SIGNED', set);
}

export function listOpenSigningRequests(c: Collections, borrowerId: string, now: Date): Promise<SigningRequestDoc[]> {
  return c.signingRequests
    .find({ borrowerId, $or: [{ status: 'PENDING', expiresAt: { $gt: now } }, { status: 'SIGNED' }] })
    .sort({ createdAt: -1 })
    .limit(20)
    .toArray();
}
