import type { Db } from 'mongodb';

/**
 * The access-token claim naming the OAuth grant the token was issued under (set by the
 * authorization server's JWT customizer, src/auth/oauth/provider.ts).
 */
export const GRANT_ID_CLAIM = 'grant_id';

/** Where oidc-provider keeps grants (its `Grant` model in src/auth/oauth/mongo-adapter.ts). */
const GRANT_COLLECTION = 'oauth_grant';

/**
 * Whether the grant still stands: oidc-provider deletes it when it revokes the grant (refresh-token
 * reuse, authorization-code replay, revocation of a refresh token), and it expires with its TTL.
 * One `_id` lookup per /mcp request, answered from the primary-key index.
 */
export async function grantIsLive(db: Db, grantId: string, nowMs: number): Promise<boolean> {
  const doc = await db
    .collection<{ _id: string; expiresAt: Date | null }>(GRANT_COLLECTION)
    .findOne({ _id: grantId }, { projection: { _id: 1, expiresAt: 1 } });
  return doc !== null && (doc.expiresAt === null || doc.expiresAt.getTime() > nowMs);
}
