import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import type { McpDeps } from './deps.js';
import type { BorrowerPrincipal } from '../agents/types.js';
import { mcpUrl, oauthIssuer } from '../config/env.js';
import { isUuid } from '@credit-facilitator/wire/ids';
import { parseScopeString, type Scope } from '@credit-facilitator/wire/onboarding';
import { findLiveGrant, GRANT_ID_CLAIM } from '../store/oauth-grants.js';

/** Small allowance for clock drift between the authorization server and this process. */
const CLOCK_TOLERANCE_SECONDS = 5;

export type BorrowerAuthResult =
  /** consentedScopes: what the borrower granted this client for {mcp_url}; the token carries the stage's share of it. */
  | { ok: true; principal: BorrowerPrincipal; authInfo: AuthInfo; consentedScopes: Scope[] }
  | { ok: false; tokenPresented: boolean; reason: string };

const keySets = new WeakMap<McpDeps['oauthKeys'], JWTVerifyGetKey>();

function keySetFor(deps: McpDeps): JWTVerifyGetKey {
  let keys = keySets.get(deps.oauthKeys);
  if (!keys) {
    keys = createLocalJWKSet(deps.oauthKeys.publicJwks as unknown as JSONWebKeySet);
    keySets.set(deps.oauthKeys, keys);
  }
  return keys;
}

/** The bearer credential of an Authorization header, or undefined when there is none. */
export function bearerToken(header: string | undefined): string | undefined {
  const m = /^Bearer\s+([^\s]+)\s*$/i.exec(header ?? '');
  return m?.[1];
}

/**
 * Verifies a borrower access token (RFC 9068 JWT from our authorization server) for {mcp_url},
 * and that the grant it names still stands (not revoked). Anything else, a merchant API key
 * included, is simply an invalid token.
 */
export async function authenticateBorrower(deps: McpDeps, authorization: string | undefined): Promise<BorrowerAuthResult> {
  const token = bearerToken(authorization);
  if (!token) return { ok: false, tokenPresented: authorization !== undefined && authorization !== '', reason: 'missing bearer token' };
  let payload;
  try {
    ({ payload } = await jwtVerify(token, keySetFor(deps), {
      issuer: oauthIssuer(deps.env),
      audience: mcpUrl(deps.env),
      algorithms: ['ES256'],
      typ: 'at+jwt',
      requiredClaims: ['exp', 'sub'],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      currentDate: new Date(deps.nowMs()),
    }));
  } catch (err) {
    return { ok: false, tokenPresented: true, reason: err instanceof Error ? err.name : 'verification failed' };
  }
  const { sub, exp } = payload;
  const clientId = payload.client_id;
  if (typeof sub !== 'string' || !isUuid(sub)) return { ok: false, tokenPresented: true, reason: 'sub is not a borrower id' };
  if (typeof clientId !== 'string' || clientId === '') return { ok: false, tokenPresented: true, reason: 'client_id missing' };
  if (typeof exp !== 'number') return { ok: false, tokenPresented: true, reason: 'exp missing' };
  // A revoked grant takes its access tokens with it at once, not at their expiry.
  const grantId = payload[GRANT_ID_CLAIM];
  if (typeof grantId !== 'string' || grantId === '') return { ok: false, tokenPresented: true, reason: 'grant id missing' };
  const grant = await findLiveGrant(deps.store.db, grantId, mcpUrl(deps.env), deps.nowMs());
  if (!grant) return { ok: false, tokenPresented: true, reason: 'grant revoked or expired' };
  const scopes = parseScopeString(payload.scope);
  const borrowerId = sub.toLowerCase();
  const principal: BorrowerPrincipal = { borrowerId, clientId, scopes, expiresAt: exp };
  const authInfo: AuthInfo = {
    token,
    clientId,
    scopes: [...scopes],
    expiresAt: exp,
    resource: new URL(mcpUrl(deps.env)),
    extra: { borrowerId, principal },
  };
  return { ok: true, principal, authInfo, consentedScopes: grant.consentedScopes };
}

/** The principal the endpoint attached to a tool call's authInfo (undefined if none). */
export function principalFromAuthInfo(authInfo: AuthInfo | undefined): BorrowerPrincipal | undefined {
  const p = authInfo?.extra?.principal as BorrowerPrincipal | undefined;
  return p && typeof p.borrowerId === 'string' ? p : undefined;
}
