import type { Collections } from '../store/collections.js';
import { findApiKeyByHash, findMerchant } from '../store/merchants.js';
import type { MerchantCache } from '../store/merchant-cache.js';
import { hashApiKey, hashesEqual, isWellFormedApiKey, looksLikeApiKey } from './api-keys.js';
import { isSteppedUp, type JwtVerifier } from './merchant-jwt.js';
import { noteApiKeyUse } from './api-key-use.js';
import type { MerchantPrincipal } from './permissions.js';

/**
 * Resolves a bearer credential to a merchant, or null. Every failure looks the same to the
 * caller (401), so the response never tells an attacker which part was wrong.
 */
export async function authenticateMerchant(
  c: Collections,
  verifyJwt: JwtVerifier,
  authorization: string | undefined,
  nowSeconds: number,
  merchants?: MerchantCache,
): Promise<MerchantPrincipal | null> {
  const match = /^Bearer ([^\s]+)$/i.exec(authorization ?? '');
  const token = match?.[1];
  if (!token || token.length > 4096) return null;

  const caller = looksLikeApiKey(token) ? await apiKeyCaller(c, token, nowSeconds, merchants) : await jwtCaller(verifyJwt, token, nowSeconds);
  if (!caller) return null;
  const merchant = merchants ? await merchants.find(c, caller.merchantId) : await findMerchant(c, caller.merchantId);
  if (!merchant || merchant.status !== 'ACTIVE') return null;
  return { ...caller, merchantName: merchant.name, payoutAddress: merchant.payoutAddress, ...(merchant.rateLimits ? { rateLimits: merchant.rateLimits } : {}) };
}

type Caller = Omit<MerchantPrincipal, 'merchantName' | 'payoutAddress' | 'rateLimits'>;

async function apiKeyCaller(c: Collections, token: string, nowSeconds: number, merchants?: MerchantCache): Promise<Caller | null> {
  if (!isWellFormedApiKey(token)) return null;
  const hash = hashApiKey(token);
  const key = merchants ? await merchants.findLiveApiKey(c, hash) : await findApiKeyByHash(c, hash);
  if (!key || !hashesEqual(key._id, hash) || key.revokedAt !== null) return null;
  noteApiKeyUse(c, hash, nowSeconds * 1000);
  return { merchantId: key.merchantId, permissions: key.permissions, credential: 'api_key', subject: key.keyId, steppedUp: false };
}

async function jwtCaller(verifyJwt: JwtVerifier, token: string, nowSeconds: number): Promise<Caller | null> {
  const claims = await verifyJwt(token);
  if (!claims) return null;
  return { merchantId: claims.merchantId, permissions: claims.permissions, credential: 'jwt', subject: claims.sub, steppedUp: isSteppedUp(claims, nowSeconds) };
}
