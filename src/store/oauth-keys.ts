import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import { loadOrCreateKeyDoc } from './keys.js';
import type { Store } from './mongo.js';

/** The authorization server's keys and cookie secrets, shared by every API process through the store. */
export interface OAuthKeys {
  /** Private signing JWKS for oidc-provider. */
  privateJwks: { keys: Record<string, unknown>[] };
  /** Public half, which the MCP endpoint verifies borrower tokens against. */
  publicJwks: { keys: Record<string, unknown>[] };
  cookieKeys: string[];
}

interface OAuthKeysDoc {
  _id: 'current';
  privateJwks: OAuthKeys['privateJwks'];
  cookieKeys: string[];
  createdAt: Date;
}

const PUBLIC_MEMBERS = ['kty', 'crv', 'x', 'y', 'n', 'e', 'kid', 'alg', 'use'];

/**
 * The authorization server's signing keys and cookie secrets. The first API process generates
 * them; every later one (and every restart) reads the same document, so tokens stay valid
 * across processes; two first starts agree on one set (loadOrCreateKeyDoc).
 */
export async function loadOrCreateOAuthKeys(store: Store): Promise<OAuthKeys> {
  const doc = await loadOrCreateKeyDoc<OAuthKeysDoc>(store, 'oauth_keys', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = await exportJWK(privateKey);
    const kid = randomBytes(8).toString('hex');
    return {
      _id: 'current',
      privateJwks: { keys: [{ ...jwk, kid, alg: 'ES256', use: 'sig' }] },
      cookieKeys: [randomBytes(32).toString('base64url'), randomBytes(32).toString('base64url')],
      createdAt: new Date(),
    };
  });
  const publicKeys = doc.privateJwks.keys.map((k) => Object.fromEntries(Object.entries(k).filter(([name]) => PUBLIC_MEMBERS.includes(name))));
  return { privateJwks: doc.privateJwks, publicJwks: { keys: publicKeys }, cookieKeys: doc.cookieKeys };
}
