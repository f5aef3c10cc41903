import type { Db } from 'mongodb';
import { parseScopeString, type Scope } from '@credit-facilitator/wire/onboarding';

/**
 * The access-token claim naming the OAuth grant the token was issued under (set by the
 * authorization server's JWT customizer, src/auth/oauth/provider.ts).
 */
export const GRANT_ID_CLAIM = 'grant_id';

/** Where oidc-provider keeps grants (its `Grant` model in src/store/oauth-state.ts). */
const GRANT_COLLECTION = 'oauth_grant';

export interface LiveGrant {
  /** The scopes the borrower consented to for `resource` under this grant (known scopes only). */
  consentedScopes: Scope[];
}

/** The grant payload's `resources[resource]` scope string (oidc-provider's Grant layout), or '' when absent or unreadable. */
function resourceScopeOf(payload: unknown, resource: string): string {
  if (typeof payload !== 'string') return '';
  try {
    const resources = (JSON.parse(payload) as { resources?: unknown }).resources;
    if (typeof resources !== 'object' || resources === null) return '';
    const scope = (resources as Record<string, unknown>)[resource];
    return typeof scope === 'string' ? scope : '';
  } catch {
    return '';
  }
}

/**
 * The grant if it still stands: oidc-provider deletes it when it revokes the grant (refresh-token
 * reuse, authorization-code replay, revocation of a refresh token), and it expires with its TTL.
 * One `_id` lookup per /mcp request, answered from the primary-key index; the consented scopes
 * feed the step-up challenge (src/http/mcp-errors.ts, insufficientScope).
 */
export async function findLiveGrant(db: Db, grantId: string, resource: string, nowMs: number): Promise<LiveGrant | null> {
  const doc = await db
    .collection<{ _id: string; expiresAt: Date | null; payload?: string }>(GRANT_COLLECTION)
    .findOne({ _id: grantId }, { projection: { _id: 1, expiresAt: 1, payload: 1 } });
  if (doc === null || (doc.expiresAt !== null && doc.expiresAt.getTime() <= nowMs)) return null;
  return { consentedScopes: parseScopeString(resourceScopeOf(doc.payload, resource)) };
}
