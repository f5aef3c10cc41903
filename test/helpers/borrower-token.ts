import { randomUUID } from 'node:crypto';
import { importJWK, SignJWT, type JWK } from 'jose';
import { loadOrCreateOAuthKeys } from '../../src/auth/oauth/keys.js';
import { mcpUrl, oauthIssuer } from '../../src/config/env.js';
import type { World } from './world.js';

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
}

/**
 * A borrower access token shaped like the authorization server's (RFC 9068 JWT, ES256, kid of the
 * stored key), minted without the browser flow so MCP tests need no sign-in.
 */
export async function mintBorrowerToken(w: World, o: MintOptions): Promise<string> {
  const env = w.cli.env;
  const jwk = (o.signingJwk ?? (await loadOrCreateOAuthKeys(w.store)).privateJwks.keys[0]) as JWK | undefined;
  if (!jwk) throw new Error('no oauth signing key in the store');
  const key = await importJWK(jwk, 'ES256');
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ scope: o.scopes.join(' '), client_id: o.clientId ?? 'test-agent-host' })
    .setProtectedHeader({ alg: 'ES256', typ: o.typ ?? 'at+jwt', ...(jwk.kid ? { kid: jwk.kid } : {}) })
    .setIssuer(o.issuer ?? oauthIssuer(env))
    .setAudience(o.audience ?? mcpUrl(env))
    .setSubject(o.borrowerId)
    .setJti(randomUUID())
    .setIssuedAt(now)
    .setExpirationTime(now + (o.expiresIn ?? 900))
    .sign(key);
}
