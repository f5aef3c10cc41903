import { randomUUID } from 'node:crypto';
import { importJWK, SignJWT, type JWK } from 'jose';
import { loadOrCreateOAuthKeys } from '../../src/store/oauth-keys.js';
import { mcpUrl, oauthIssuer } from '../../src/config/env.js';
import { GRANT_ID_CLAIM } from '../../src/store/oauth-grants.js';
import type { World } from './world.js';

/**
 * A grant document in oidc-provider's collection (src/store/oauth-state.ts layout), valid for
 * a day; `consentedScopes` are granted for the MCP resource as the sign-in page grants them.
 */
export async function storeGrant(w: World, accountId: string, clientId: string, consentedScopes: readonly string[] = []): Promise<string> {
  const grantId = `test-grant-${randomUUID()}`;
  const resources = consentedScopes.length ? { resources: { [mcpUrl(w.cli.env)]: consentedScopes.join(' ') } } : {};
  await w.store.db.collection<Record<string, unknown> & { _id: string }>('oauth_grant').insertOne({
    _id: grantId,
    payload: JSON.stringify({ kind: 'Grant', jti: grantId, accountId, clientId, ...resources }),
    expiresAt: new Date(Date.now() + 24 * 3600_000),
    consumed: null,
    grantId: null,
    uid: null,
    userCode: null,
  });
  return grantId;
}

export interface MintOptions {
  borrowerId: string;
  scopes: readonly string[];
  audience?: string;
  issuer?: string;
  /** Seconds from now; negative mints an already expired token. Default 900. */
  expiresIn?: number;
  clientId?: string;
  /** Sign with this private JWK instead of the authorization server's key. */
  signingJwk?: JWK;
  typ?: string;
  /** The grant the token names; default: a fresh grant stored as the authorization server stores one. */
  grantId?: string;
  /** Scopes the fresh grant holds for the MCP resource (what the borrower consented to); default none. */
  consentedScopes?: readonly string[];
}

/**
 * A borrower access token shaped like the authorization server's (RFC 9068 JWT, ES256, kid of the
 * stored key, the grant it was issued under), minted without the browser flow so MCP tests need
 * no sign-in. Unless `grantId` is given, a grant is stored for it, as oidc-provider stores one.
 */
export async function mintBorrowerToken(w: World, o: MintOptions): Promise<string> {
  const env = w.cli.env;
  const jwk = (o.signingJwk ?? (await loadOrCreateOAuthKeys(w.store)).privateJwks.keys[0]) as JWK | undefined;
  if (!jwk) throw new Error('no oauth signing key in the store');
  const key = await importJWK(jwk, 'ES256');
  const now = Math.floor(Date.now() / 1000);
  const clientId = o.clientId ?? 'test-agent-host';
  const grantId = o.grantId ?? (await storeGrant(w, o.borrowerId, clientId, o.consentedScopes));
  return new SignJWT({ scope: o.scopes.join(' '), client_id: clientId, [GRANT_ID_CLAIM]: grantId })
    .setProtectedHeader({ alg: 'ES256', typ: o.typ ?? 'at+jwt', ...(jwk.kid ? { kid: jwk.kid } : {}) })
    .setIssuer(o.issuer ?? oauthIssuer(env))
    .setAudience(o.audience ?? mcpUrl(env))
    .setSubject(o.borrowerId)
    .setJti(randomUUID())
    .setIssuedAt(now)
    .setExpirationTime(now + (o.expiresIn ?? 900))
    .sign(key);
}
